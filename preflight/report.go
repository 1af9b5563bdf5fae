package preflight

import (
	"fmt"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
)

// Status is the outcome of one check entry.
type Status string

// Statuses, from best to worst (skip is neither: the check could not run).
const (
	// StatusPass: the check ran and found nothing wrong.
	StatusPass Status = "pass"
	// StatusWarn: something may keep the resources from the TaskManagers, or cannot be verified.
	StatusWarn Status = "warn"
	// StatusFail: the TaskManagers will not get their resources (or Flink or YARN will fail).
	StatusFail Status = "fail"
	// StatusSkip: the check could not run; the message says why.
	StatusSkip Status = "skip"
)

// Check ids, a public contract: they never change meaning, and every one of them appears in every
// report. Their order in IDs() is the report's order.
const (
	// IDResourceNotListed: external-resource.<name>.* keys for a name that external-resources does
	// not list (a typo), or an external-resources value Flink cannot split.
	IDResourceNotListed = profile.CodeResourceNotListed
	// IDAmountInvalid: external-resource.<name>.amount missing, not positive or not a whole number.
	IDAmountInvalid = profile.CodeAmountInvalid
	// IDNoYarnConfigKey: a listed resource without a (valid) yarn.config-key: not requested on YARN.
	IDNoYarnConfigKey = profile.CodeNoYarnConfigKey
	// IDDuplicateConfigKey: two resources name the same YARN resource type.
	IDDuplicateConfigKey = profile.CodeDuplicateConfigKey
	// IDNoDriverFactory: no driver-factory.class: operators get no ExternalResourceInfo.
	IDNoDriverFactory = profile.CodeNoDriverFactory
	// IDDiscoveryScript: the GPU discovery script is missing or not executable under $FLINK_HOME.
	IDDiscoveryScript = "flink.discovery-script"
	// IDGPUPluginJar: a resource uses Flink's GPU driver but no subdirectory of $FLINK_HOME/plugins/
	// holds its jar, so the TaskManagers get no GPU information.
	IDGPUPluginJar = "flink.gpu-plugin-jar"
	// IDCoordinationArgs: discovery-script.args the script does not understand (e.g.
	// --enable-coordination), so coordination is silently off or discovery fails.
	IDCoordinationArgs = "flink.coordination-args"
	// IDTaskManagerResources: the TaskManager container's memory or vcores cannot be computed
	// (taskmanager.memory.process.size, taskmanager.cpu.cores, ...). An addition to the list.
	IDTaskManagerResources = "flink.taskmanager-resources"

	// IDResourceTypesInvalid: yarn.resource-types and its per-type keys are wrong.
	IDResourceTypesInvalid = profile.CodeResourceTypesInvalid
	// IDResourceTypeUndeclared: a yarn.config-key that yarn.resource-types does not declare.
	IDResourceTypeUndeclared = profile.CodeResourceTypeUndeclared
	// IDResourceTypeUnit: a requested type is declared with a unit; Flink sends a plain amount,
	// which the ResourceManager converts (16 → 0 for Gi).
	IDResourceTypeUnit = profile.CodeResourceTypeUnit
	// IDCalculatorNotDominant: the scheduler ignores every resource but memory (CapacityScheduler
	// without DominantResourceCalculator, FairScheduler without drf, FifoScheduler).
	IDCalculatorNotDominant = "yarn.calculator-not-dominant"
	// IDMaxAllocationExceeded: the request is above a configured maximum allocation.
	IDMaxAllocationExceeded = "yarn.max-allocation-exceeded"
	// IDNMResources: no NodeManager configuration offers a requested type, or a GPU/FPGA plugin
	// runs without LinuxContainerExecutor and cgroups (no isolation).
	IDNMResources = "yarn.nm-resources"
	// IDResourceProfiles: with yarn.resourcemanager.resource-profiles.enabled, the ResourceManager's
	// resource-profiles.json is readable and valid (a default profile, memory-mb and vcores in
	// each, declared types and units, no minimum/maximum): else the ResourceManager does not start.
	IDResourceProfiles = "yarn.resource-profiles"
	// IDProfileMaxAllocation: a resource profile asks for more than the maximum allocation, so
	// every request by that profile is refused.
	IDProfileMaxAllocation = "yarn.profile-max-allocation"
	// IDDockerGPU: the TaskManagers run in Docker containers (Flink's
	// containerized.taskmanager.env.YARN_CONTAINER_RUNTIME_TYPE=docker) and the NodeManagers'
	// configuration cannot run them, or cannot hand them GPUs: no LinuxContainerExecutor, docker not
	// among yarn.nodemanager.runtime.linux.allowed-runtimes, no image, no GPU plugin, or a
	// container-executor.cfg [docker] section that refuses the GPU Docker plugin's runtime (nvidia,
	// nvidia-docker-v2) or its volume driver and devices (nvidia-docker-v1).
	IDDockerGPU = "yarn.docker-gpu"
	// IDDockerRuntime: the submission asks for a Docker image (yarn-er submit --image) or the
	// NodeManagers allow the docker runtime, and their configuration cannot run the containers:
	// no LinuxContainerExecutor, docker not among the allowed runtimes, container-executor.cfg's
	// [docker] module off, an image from no docker.trusted.registries entry (its mounts are
	// dropped), a mount, network or privileged container not allowed, the GPU Docker plugin's
	// needs unmet, or nvidia-docker-v1 (warn: its plugin daemon is retired).
	IDDockerRuntime = "yarn.docker-runtime"
	// IDMIGResources: MIG slices as YARN resource types (a custom type per profile, e.g.
	// nvidia.com/mig-1g.10gb): a name Hadoop refuses (the Kubernetes "+me" names), a name that is no
	// MIG profile (warn), a unit, a requested type no NodeManager offers, or the GPU plugin
	// offering GPUs in MIG mode as yarn.io/gpu next to their slices (warn).
	IDMIGResources = "yarn.mig-resources"

	// IDClusterReachable: the ResourceManager answers.
	IDClusterReachable = "cluster.reachable"
	// IDClusterVersion: the ResourceManager runs Hadoop 3.1 or later.
	IDClusterVersion = "cluster.version"
	// IDTypeUnknown: the ResourceManager does not know a requested resource type.
	IDTypeUnknown = "cluster.type-unknown"
	// IDNoNodeFits: no RUNNING node can hold one TaskManager container, all resources at once.
	IDNoNodeFits = "cluster.no-node-fits"
	// IDCapacity: how many TaskManager containers fit now and on an empty cluster.
	IDCapacity = "cluster.capacity"
	// IDQueueMaxAllocation: the queue's maximum allocation is below the request.
	IDQueueMaxAllocation = "cluster.queue-max-allocation"
	// IDQueueCapacity: the queue's maximum capacity cannot hold the JobManager and the wanted
	// TaskManager containers.
	IDQueueCapacity = "cluster.queue-capacity"
	// IDNodeLabel: a node label Flink asks for (yarn.taskmanager.node-label,
	// yarn.application.node-label) is on no RUNNING node that can hold the container.
	IDNodeLabel = "cluster.node-label"
	// IDMaxAttempts: the ApplicationMaster attempts asked for (yarn-er submit --max-attempts,
	// Flink's yarn.application-attempts: 1, or 2 with high availability, when not set) are above
	// the ResourceManager's cap (yarn.resourcemanager.am.global.max-attempts, else
	// yarn.resourcemanager.am.max-attempts, default 2) or below 1: the RM silently uses its own
	// value (warn). Read from the RM's /conf.
	IDMaxAttempts = "cluster.max-attempts"
	// IDPriority: the application priority asked for (yarn-er submit --priority, Flink's
	// yarn.application.priority when 0 or more) is above the CapacityScheduler's
	// yarn.cluster.max-application-priority (default 0), which the scheduler silently uses
	// instead, or is not 0 on a FairScheduler or FifoScheduler, which give every application 0
	// (warn).
	IDPriority = "cluster.priority"

	// IDLogin: the cluster uses Kerberos (hadoop.security.authentication=kerberos) and yarn-er has
	// no login, its login failed, or its ticket has expired (or expires within the hour: warn).
	IDLogin = "security.login"
	// IDPrincipals: under Kerberos, yarn.resourcemanager.principal (the services' and the HDFS
	// token's renewer) or dfs.namenode.kerberos.principal is not set, or its _HOST cannot be
	// resolved from the service's address (an address without a host, an IP without a name).
	IDPrincipals = "security.principals"
	// IDRPCProtection: hadoop.rpc.protection or dfs.data.transfer.protection holds a value Hadoop
	// does not know, or this configuration shares no hadoop.rpc.protection value with the
	// ResourceManager's own (read from its /conf): "No common protection layer".
	IDRPCProtection = "security.rpc-protection"
	// IDHTTPS: yarn.http.policy is HTTPS_ONLY but the ResourceManager is reached over http, or its
	// certificate does not verify with the trusted CAs (--tls-ca).
	IDHTTPS = "security.https"
	// IDSecureExecutor: under Kerberos, the NodeManagers run containers with another executor than
	// LinuxContainerExecutor, so every user's containers run as the NodeManager's user and GPUs are
	// not isolated (warn).
	IDSecureExecutor = "security.container-executor"
)

// IDs returns every check id in report order: the order of the table of checks (checks.go), which
// is also the order docs/preflight.md documents them in.
func IDs() []string {
	table := checkTable()
	out := make([]string, len(table))
	for i, c := range table {
		out[i] = c.id
	}
	return out
}

// Area groups checks: what they look at.
type Area string

// Areas, in report order.
const (
	AreaFlink   Area = "flink"
	AreaYarn    Area = "yarn"
	AreaCluster Area = "cluster"
	// AreaSecurity: Kerberos, the SASL protection and TLS.
	AreaSecurity Area = "security"
)

// Areas returns the areas in report order.
func Areas() []Area { return []Area{AreaFlink, AreaYarn, AreaCluster, AreaSecurity} }

// AreaOf returns the area of a check id: the text before its first '.'.
func AreaOf(id string) Area {
	a, _, _ := strings.Cut(id, ".")
	return Area(a)
}

// Title is the area's heading: "Flink configuration", "Hadoop configuration", "Live cluster",
// "Security (Kerberos, TLS)".
func (a Area) Title() string {
	switch a {
	case AreaFlink:
		return "Flink configuration"
	case AreaYarn:
		return "Hadoop configuration"
	case AreaCluster:
		return "Live cluster"
	case AreaSecurity:
		return "Security (Kerberos, TLS)"
	}
	return string(a)
}

// Check is one entry of a report. Its JSON form is public:
// {"id", "status", "message", "fix", "source"}, every key always present.
type Check struct {
	// ID is the check id, one of the ID* constants.
	ID string `json:"id"`
	// Status is pass, warn, fail or skip.
	Status Status `json:"status"`
	// Message says what was found (for skip: why the check could not run).
	Message string `json:"message"`
	// Fix says how to repair a warn or fail; "" otherwise.
	Fix string `json:"fix"`
	// Source is where the finding is: "file:line", "-D key", the ResourceManager URL for live
	// checks, or "".
	Source string `json:"source"`
}

// Report is the outcome of a preflight. Its JSON form is public: {"ok": bool, "checks": [...]}.
type Report struct {
	// OK is true when no check failed (with Input.Strict: and none warned).
	OK bool `json:"ok"`
	// Checks are the entries in report order (the order of IDs()).
	Checks []Check `json:"checks"`

	strict    bool
	resources []string // the external resources requested from YARN, for the verdict
	liveSkip  bool     // the live checks did not run
	subject   string   // who gets the resources, for the verdict ("" : TaskManagers)
	// notApplicable is how many of the skips are checks that do not apply (the flink.* checks of
	// a container given directly): they do not make the verdict uncertain.
	notApplicable int
	authErr       error
}

// Counts are the number of entries per status.
type Counts struct {
	Pass, Warn, Fail, Skip int
}

// Counts returns the number of entries per status.
func (r *Report) Counts() Counts {
	var c Counts
	for _, ch := range r.Checks {
		switch ch.Status {
		case StatusPass:
			c.Pass++
		case StatusWarn:
			c.Warn++
		case StatusFail:
			c.Fail++
		case StatusSkip:
			c.Skip++
		}
	}
	return c
}

// Strict reports whether warnings count as failures for OK.
func (r *Report) Strict() bool { return r.strict }

// AuthError returns the error that kept the live checks from running when the ResourceManager
// refused the caller's identity (yarn.ErrUnauthorized, ErrForbidden or ErrAuthentication), nil
// otherwise. Callers may map it to their "authentication failed" exit status.
func (r *Report) AuthError() error { return r.authErr }

// Verdict is the report's one-line summary, e.g. "preflight: 2 failed, 1 warning, 12 passed —
// TaskManagers will NOT get their gpu".
func (r *Report) Verdict() string {
	c := r.Counts()
	var parts []string
	if c.Fail > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", c.Fail))
	}
	if c.Warn > 0 {
		parts = append(parts, plural(c.Warn, "warning", "warnings"))
	}
	parts = append(parts, fmt.Sprintf("%d passed", c.Pass))
	if c.Skip > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", c.Skip))
	}
	what := "their " + joinAnd(r.resources)
	who := "TaskManagers"
	if r.subject != "" {
		who = r.subject
	}
	var tail string
	switch {
	case len(r.resources) == 0 && c.Fail == 0:
		tail = "no external resource is requested from YARN: " + who + " ask for memory and vcores only"
	case len(r.resources) == 0:
		tail = "fix the failures before submitting"
	case c.Fail > 0:
		tail = who + " will NOT get " + what
	case r.strict && c.Warn > 0:
		tail = "warnings count as failures (--strict): review them before submitting"
	case r.liveSkip:
		tail = who + " should get " + what + " as far as the files tell (live checks skipped)"
	case c.Warn > 0:
		tail = who + " should get " + what + "; review the warnings"
	case c.Skip > r.notApplicable:
		tail = who + " should get " + what + " (" + plural(c.Skip-r.notApplicable, "check", "checks") + " could not run)"
	default:
		tail = who + " will get " + what
	}
	return "preflight: " + strings.Join(parts, ", ") + " — " + tail
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// joinAnd joins names as "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// results are the entries one check reports while it runs: every entry gets the check's id.
type results struct {
	id      string
	entries []Check
	// na: the check reported, through notApplicable, that it does not apply (its skip does not
	// make the verdict uncertain).
	na bool
}

// add records one entry.
func (o *results) add(st Status, source, fix, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	if st == StatusPass || st == StatusSkip {
		fix = ""
	}
	o.entries = append(o.entries, Check{ID: o.id, Status: st, Message: msg, Fix: fix, Source: source})
}

func (o *results) pass(source, format string, args ...any) {
	o.add(StatusPass, source, "", format, args...)
}

func (o *results) skip(format string, args ...any) {
	o.add(StatusSkip, "", "", format, args...)
}

// notApplicable records a skip of a check that does not apply to this input (the flink.* checks
// of a container given directly, the profile checks of a cluster without profiles): the verdict
// does not count it as a check that could not run.
func (o *results) notApplicable(format string, args ...any) {
	o.na = true
	o.skip(format, args...)
}

func (o *results) fail(source, fix, format string, args ...any) {
	o.add(StatusFail, source, fix, format, args...)
}

func (o *results) warn(source, fix, format string, args ...any) {
	o.add(StatusWarn, source, fix, format, args...)
}

// has reports whether the check has an entry with one of the statuses.
func (o *results) has(statuses ...Status) bool {
	for _, e := range o.entries {
		if slices.Contains(statuses, e.Status) {
			return true
		}
	}
	return false
}

// collector holds the results of every check, by id, and orders and condenses them into a
// report.
type collector struct {
	byID map[string]*results
}

func newCollector() *collector { return &collector{byID: map[string]*results{}} }

// of returns the results of the check id.
func (c *collector) of(id string) *results {
	if o, ok := c.byID[id]; ok {
		return o
	}
	o := &results{id: id}
	c.byID[id] = o
	return o
}

// notApplicable counts the checks that did not apply: their report entry is the skip they gave.
func (c *collector) notApplicable() int {
	n := 0
	for _, o := range c.byID {
		if o.na && len(o.entries) > 0 && !o.has(StatusPass, StatusWarn, StatusFail) {
			n++
		}
	}
	return n
}

// checks returns the entries in report order. Per id: the warn and fail entries when there are
// any (in the order found); else one pass entry whose message joins every pass message; else one
// skip entry (the first reason). Ids that are not in IDs() (codes a newer profile package may add)
// follow the known ids of their area, sorted.
func (c *collector) checks() []Check {
	order := IDs()
	var extra []string
	for id := range c.byID {
		if !slices.Contains(order, id) {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	var all []string
	for _, area := range Areas() {
		for _, id := range order {
			if AreaOf(id) == area {
				all = append(all, id)
			}
		}
		for _, id := range extra {
			if AreaOf(id) == area {
				all = append(all, id)
			}
		}
	}
	for _, id := range extra {
		if !slices.Contains(Areas(), AreaOf(id)) {
			all = append(all, id)
		}
	}
	out := make([]Check, 0, len(all))
	for _, id := range all {
		var entries []Check
		if o, ok := c.byID[id]; ok {
			entries = o.entries
		}
		out = append(out, condense(id, entries)...)
	}
	return out
}

// condense applies the per-id rule of checks.
func condense(id string, entries []Check) []Check {
	var problems, passes, skips []Check
	for _, e := range entries {
		switch e.Status {
		case StatusWarn, StatusFail:
			problems = append(problems, e)
		case StatusPass:
			passes = append(passes, e)
		default:
			skips = append(skips, e)
		}
	}
	switch {
	case len(problems) > 0:
		return problems
	case len(passes) > 0:
		msgs := make([]string, 0, len(passes))
		source := passes[0].Source
		for _, p := range passes {
			if !slices.Contains(msgs, p.Message) {
				msgs = append(msgs, p.Message)
			}
			if p.Source != source {
				source = ""
			}
		}
		for _, s := range skips {
			msgs = append(msgs, "not checked: "+s.Message)
		}
		return []Check{{ID: id, Status: StatusPass, Message: strings.Join(msgs, "; "), Source: source}}
	case len(skips) > 0:
		return skips[:1]
	}
	return []Check{{ID: id, Status: StatusSkip, Message: "not run"}}
}
