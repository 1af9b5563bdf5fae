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
//
// Run gathers the facts once (the translation of Flink's configuration, the resource types, the
// ResourceManager's answers), then runs every check of the table (checks.go) over them in order.
func Run(ctx context.Context, in Input) (*Report, error) {
	if in.Flink == nil && in.Container == nil {
		return nil, errors.New("preflight: no Flink configuration")
	}
	if in.Logger == nil {
		in.Logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	f := gatherFacts(in)
	if in.Client != nil {
		f.live = gatherLive(ctx, in.Client, f.log, in.AllowNewApplication)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	c := newCollector()
	for _, chk := range checkTable() {
		chk.run(f, ctx, c.of(chk.id))
	}
	f.unlistedProblems(c)

	rep := &Report{Checks: c.checks(), strict: in.Strict, liveSkip: f.live == nil || f.live.infoErr != nil,
		notApplicable: c.notApplicable()}
	if in.Container != nil {
		rep.subject = f.subj.containers
	}
	for _, res := range f.extendedRequest() {
		rep.resources = append(rep.resources, f.resourceName(res.Name))
	}
	if f.live != nil && yarn.IsAuthError(f.live.infoErr) {
		rep.authErr = f.live.infoErr
	}
	counts := rep.Counts()
	rep.OK = counts.Fail == 0 && (!in.Strict || counts.Warn == 0)
	f.log.Debug("preflight done", "checks", len(rep.Checks), "fail", counts.Fail, "warn", counts.Warn,
		"elapsed", time.Since(start))
	return rep, nil
}

// facts is what the checks look at, gathered once per Run: the input, the translation of Flink's
// configuration, the resource types and NodeManager resources of the Hadoop configuration, the
// ResourceManager's answers, and what several checks derive from them (computed on first use and
// kept). Checks read facts; they never change what another check sees.
type facts struct {
	in  Input
	log *slog.Logger
	// subj names the containers the checks are about in messages.
	subj subject

	// tr is the translation of Flink's configuration (partial when it has errors), or of
	// Input.Container.
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

	// Derived on first use by the checks that share them.
	scripts *discoveryFacts
	prof    *profileFacts
	fit     *fitFacts
}

// subject names, in messages, the containers a preflight is about: Flink's TaskManagers, or the
// containers of Input.Container ("container", "rank container").
type subject struct {
	// one is a single one ("TaskManager", "container"), many the plural ("TaskManagers",
	// "containers").
	one, many string
	// container is one container ("TaskManager container", "container"), containers the plural.
	container, containers string
}

// taskManagers is the subject of a preflight of Flink's configuration.
func taskManagers() subject {
	return subject{one: "TaskManager", many: "TaskManagers", container: "TaskManager container",
		containers: "TaskManager containers"}
}

// containersNamed is the subject of a preflight of Input.Container named name.
func containersNamed(name string) subject {
	return subject{one: name, many: name + "s", container: name, containers: name + "s"}
}

// gatherFacts translates Flink's configuration (or takes the container given) and loads the
// resource types; the live facts come from gatherLive.
func gatherFacts(in Input) *facts {
	f := &facts{in: in, log: in.Logger, subj: taskManagers()}
	opts := profile.TranslateOptions{FlinkVersion: in.FlinkVersion}
	if in.Hadoop != nil {
		f.types, f.typeProblems = profile.LoadResourceTypes(in.Hadoop)
		f.nodeResources, f.nodeProblems = profile.LoadNodeResources(in.Hadoop, f.types)
		opts.ResourceTypes = f.types
	}
	if in.Container != nil {
		f.subj = containersNamed(f.containerName())
		f.tr = directTranslation(*in.Container, f.types)
		return f
	}
	// Translate's errors are also in its Problems, which the checks report.
	f.tr, _ = profile.Translate(in.Flink, opts)
	f.jm, _, f.jmRefusal = profile.DeriveJobManagerMemoryEnv(in.Flink, in.FlinkVersion, in.Getenv)
	return f
}

// containerName is what messages call the container of Input.Container.
func (f *facts) containerName() string {
	if n := strings.TrimSpace(f.in.ContainerName); n != "" {
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
func (f *facts) resourceName(t string) string {
	for _, er := range f.tr.ExternalResources {
		if er.YarnConfigKey == t {
			return er.Name
		}
	}
	return t
}

// extendedRequest returns the requested resources other than memory-mb and vcores, in order.
func (f *facts) extendedRequest() []records.Resource {
	var out []records.Resource
	for _, res := range f.tr.Resource.All() {
		if res.Name != records.MemoryMB && res.Name != records.VCores {
			out = append(out, res)
		}
	}
	return out
}

// origin returns the source of a requested resource's amount as text.
func (f *facts) origin(name string) string {
	return f.tr.Origins[name].Source.String()
}
