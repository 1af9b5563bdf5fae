package preflight

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// Input is what a preflight looks at.
type Input struct {
	// Flink is Flink's configuration (conf.LoadFlink). Required unless Container is set.
	Flink *conf.FlinkConfig
	// Container, when set, is the container to check instead of the TaskManager container that
	// Flink's configuration translates to (e.g. `yarn-er submit --gpus 1`): the flink.* checks then
	// skip, every other check looks at this vector. Amounts are in each type's Hadoop unit
	// (memory-mb in MiB).
	Container *records.Resources
	// ContainerName names the container in messages when Container is set (default
	// "container").
	ContainerName string
	// Hadoop is the Hadoop configuration (conf.LoadHadoop); nil skips the yarn.* checks that need
	// it.
	Hadoop *conf.HadoopConfig
	// Client talks to the ResourceManager; nil skips the live cluster.* checks.
	Client *yarn.Client
	// NoClientReason says why Client is nil, for the skip messages (e.g. "no ResourceManager known:
	// give --rm ..."). Empty: a generic reason.
	NoClientReason string

	// Containers is how many TaskManager containers the job needs (--containers); 0: not given,
	// cluster.capacity then only requires that one fits.
	Containers int
	// Queue is the YARN queue (--queue); "": Flink's yarn.application.queue, else "default".
	Queue string
	// MaxAttempts is the ApplicationMaster attempts the submission asks for with Container
	// (yarn-er submit --max-attempts, the max-app-attempts it sends); 0: none asked for (the RM's
	// yarn.resourcemanager.am.max-attempts applies). Ignored with a Flink configuration, whose
	// yarn.application-attempts (and high-availability.type) say it. cluster.max-attempts checks
	// it against the ResourceManager's cap.
	MaxAttempts int32
	// Priority is the application priority the submission asks for with Container (yarn-er submit
	// --priority); nil: none asked for (the queue's default applies). Ignored with a Flink
	// configuration, whose yarn.application.priority says it. cluster.priority checks it against
	// the cluster's highest priority.
	Priority *int32
	// NodeLabel is the node-label expression of the containers given by Container (yarn-er submit
	// --node-label): the fit and capacity checks then consider only the nodes and the queue
	// capacity of that partition. Ignored with a Flink configuration, whose
	// yarn.taskmanager.node-label and yarn.application.node-label say it.
	NodeLabel string
	// Placement is where the containers given by Container must land (a role's placement); nil:
	// anywhere. cluster.placement checks that the ResourceManager can place them.
	Placement *Placement
	// Docker, when set, is the Docker container the submission asks for (yarn-er submit --image):
	// yarn.docker-runtime checks it against the NodeManagers' configuration.
	Docker *DockerRequest
	// Strict makes warnings count as failures in Report.OK.
	Strict bool
	// RequireCapacity makes cluster.capacity fail, instead of warn, when even an empty cluster
	// (every RUNNING node's totals) holds fewer than Containers: yarn-er submit, whose ranks
	// would wait forever for containers no node will ever free.
	RequireCapacity bool
	// FlinkVersion selects Flink 1.x or 2.x rules where they differ (the TaskManager memory
	// model); FlinkVersionUnset: what the configuration file implies (profile.DefaultFlinkVersion).
	FlinkVersion profile.FlinkVersion

	// FlinkHome is Flink's installation directory ($FLINK_HOME), against which relative discovery
	// script paths are resolved; "": unknown, flink.discovery-script then skips relative paths.
	FlinkHome string
	// FlinkHomeOrigin says where FlinkHome comes from, for messages (e.g. "$FLINK_HOME"); may be
	// empty.
	FlinkHomeOrigin string

	// Discover describes yarn-er's own discover command, so that a discovery script that is a link
	// to yarn-er is recognised and its arguments checked. The zero value recognises nothing.
	Discover DiscoverCommand

	// AllowNewApplication lets the live checks ask the RM for a new application id
	// (POST new-application) to learn its resource types when neither the nodes nor the scheduler
	// list them. Each such call uses up an application id.
	AllowNewApplication bool

	// Getenv is the environment of Flink's client (where `flink run` would run): Flink 1.x sizes
	// the JobManager container from FLINK_JM_HEAP there. nil: an empty environment.
	Getenv func(string) string

	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// DiscoverCommand is what preflight needs to know about `yarn-er discover`.
type DiscoverCommand struct {
	// Executable is the path of the yarn-er binary (os.Executable); a discovery script that
	// resolves to it is yarn-er. A script whose resolved name is "yarn-er" is recognised too.
	Executable string
	// Names are the program names under which yarn-er behaves as discover (e.g.
	// "nvidia-gpu-discovery.sh", "yarn-er-discover"); a link to yarn-er under another name runs
	// the CLI, not discover.
	Names []string
	// ValidateArgs checks the words Flink passes after AMOUNT (discovery-script.args split at
	// white space) the way discover parses them; nil: arguments of yarn-er scripts are not checked.
	ValidateArgs func(args []string) error
}

// Run checks in and returns the report. Problems of the configuration or the cluster become
// check entries, never errors: Run fails only when in has no Flink configuration or ctx ends.
func Run(ctx context.Context, in Input) (*Report, error) {
	if in.Flink == nil && in.Container == nil {
		return nil, errors.New("preflight: no Flink configuration")
	}
	if in.Logger == nil {
		in.Logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	r := &runner{in: in, log: in.Logger, c: newCollector()}
	r.prepare()
	if in.Client != nil {
		r.live = gatherLive(ctx, in.Client, r.log, in.AllowNewApplication)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	r.flinkChecks()
	r.hadoopChecks()
	r.clusterChecks()
	r.appCapChecks()
	r.placementCheck()
	r.securityChecks(ctx)

	rep := &Report{Checks: r.c.checks(), strict: in.Strict, liveSkip: r.live == nil || r.live.infoErr != nil}
	if r.profilesOff {
		// A cluster without resource profiles: their checks do not apply.
		rep.notApplicable += 2
	}
	if r.placementNA {
		rep.notApplicable++
	}
	if in.Container != nil {
		name := r.containerName()
		rep.subject = name + "s"
		for _, id := range IDs() {
			if AreaOf(id) == AreaFlink {
				rep.notApplicable++
			}
		}
		rename := strings.NewReplacer("TaskManager containers", name+"s", "TaskManager container", name,
			"TaskManagers", name+"s", "TaskManager", name)
		for i := range rep.Checks {
			rep.Checks[i].Message = rename.Replace(rep.Checks[i].Message)
			rep.Checks[i].Fix = rename.Replace(rep.Checks[i].Fix)
		}
	}
	for _, res := range r.extendedRequest() {
		rep.resources = append(rep.resources, r.resourceName(res.Name))
	}
	if r.live != nil && yarn.IsAuthError(r.live.infoErr) {
		rep.authErr = r.live.infoErr
	}
	counts := rep.Counts()
	rep.OK = counts.Fail == 0 && (!in.Strict || counts.Warn == 0)
	r.log.Debug("preflight done", "checks", len(rep.Checks), "fail", counts.Fail, "warn", counts.Warn,
		"elapsed", time.Since(start))
	return rep, nil
}

// runner holds what the checks share.
type runner struct {
	// profilesOff says the cluster has no resource profiles (their checks do not apply).
	profilesOff bool
	// placementNA says cluster.placement does not apply (Flink's TaskManagers).
	placementNA bool
	in          Input
	log         *slog.Logger
	c           *collector

	// tr is the translation of Flink's configuration (partial when it has errors).
	tr *profile.Translation
	// types are the resource types of the Hadoop configuration (nil without one).
	types *profile.ResourceTypes
	// typeProblems and nodeProblems are what loading the types and the NodeManager resources found.
	typeProblems, nodeProblems []profile.Problem
	nodeResources              []profile.NodeResource
	// live is what the ResourceManager said (nil without a client).
	live *liveData
	// jm is the JobManager (ApplicationMaster) container as Flink's client derives it; nil when
	// Flink refuses its memory (jmRefusal says why).
	jm        *profile.JobManagerMemory
	jmRefusal *profile.MemoryRefusal
}

// prepare translates Flink's configuration and loads the resource types.
func (r *runner) prepare() {
	opts := profile.TranslateOptions{FlinkVersion: r.in.FlinkVersion}
	if r.in.Hadoop != nil {
		r.types, r.typeProblems = profile.LoadResourceTypes(r.in.Hadoop)
		r.nodeResources, r.nodeProblems = profile.LoadNodeResources(r.in.Hadoop, r.types)
		opts.ResourceTypes = r.types
	}
	if r.in.Container != nil {
		r.tr = directTranslation(*r.in.Container, r.types)
		return
	}
	// Translate's errors are also in its Problems, which the checks report.
	r.tr, _ = profile.Translate(r.in.Flink, opts)
	r.jm, _, r.jmRefusal = profile.DeriveJobManagerMemoryEnv(r.in.Flink, r.in.FlinkVersion, r.in.Getenv)
}

// containerName is what messages call the container of Input.Container.
func (r *runner) containerName() string {
	if n := strings.TrimSpace(r.in.ContainerName); n != "" {
		return n
	}
	return "container"
}

// directTranslation stands in for Flink's translation when the container is given directly:
// each extended type that a Hadoop configuration's yarn.resource-types does not declare is a
// yarn.resource-type-undeclared problem, keyed by the type name.
func directTranslation(v records.Resources, types *profile.ResourceTypes) *profile.Translation {
	tr := &profile.Translation{Resource: v, Origins: map[string]profile.Origin{}}
	if types == nil || !types.FromConfig() {
		return tr
	}
	for _, res := range v.All() {
		if res.Name == records.MemoryMB || res.Name == records.VCores {
			continue
		}
		if _, ok := types.Lookup(res.Name); ok {
			continue
		}
		tr.Problems = append(tr.Problems, profile.Problem{
			Severity: profile.SeverityWarning, Code: profile.CodeResourceTypeUndeclared, Key: res.Name,
			Message: fmt.Sprintf("resource type '%s' is not declared in yarn.resource-types: the ResourceManager drops unknown resource types from requests, so the containers would get no %s", res.Name, res.Name),
			Fix:     fmt.Sprintf("add %s to yarn.resource-types (resource-types.xml) on the ResourceManager and offer it on the NodeManagers, or ask for a declared type", res.Name),
		})
	}
	return tr
}

// resourceName returns the Flink name of the external resource requested as YARN type t, or t.
func (r *runner) resourceName(t string) string {
	for _, er := range r.tr.ExternalResources {
		if er.YarnConfigKey == t {
			return er.Name
		}
	}
	return t
}

// extendedRequest returns the requested resources other than memory-mb and vcores, in order.
func (r *runner) extendedRequest() []records.Resource {
	var out []records.Resource
	for _, res := range r.tr.Resource.All() {
		if res.Name != records.MemoryMB && res.Name != records.VCores {
			out = append(out, res)
		}
	}
	return out
}

// origin returns the source of a requested resource's amount as text.
func (r *runner) origin(name string) string {
	return r.tr.Origins[name].Source.String()
}
