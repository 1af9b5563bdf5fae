package submit

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yarn-er/yarn-er/records"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/stage"
)

// Defaults of a Request.
const (
	DefaultMemoryMB   = 1024
	DefaultVCores     = 1
	DefaultAMMemoryMB = 256
	DefaultAMVCores   = 1
	// DefaultMaxAttempts is two AM attempts: the application keeps its containers across
	// attempts, and a second attempt adopts the ranks still running (docs/am.md), so the AM's
	// node is no single point of failure. The RM silently caps any value at
	// yarn.resourcemanager.am.global.max-attempts, else yarn.resourcemanager.am.max-attempts
	// (default 2; the preflight's cluster.max-attempts warns).
	DefaultMaxAttempts = 2
	// DefaultAttemptFailuresValidity is the window in which AM failures count against
	// MaxAttempts: a long-running job survives AM failures minutes apart (each one's ranks adopted
	// by the next attempt), while an AM that crashes again right after it starts (seconds apart)
	// still ends the application. YARN's own default counts every failure of the application's
	// life, so a job of days ended at its second AM failure; a 10-minute window still ended a job
	// that lost its AM twice in a few minutes (bench/soak.sh).
	DefaultAttemptFailuresValidity = time.Minute
	// ApplicationType is the YARN application type of every yarn-er application.
	ApplicationType = "YARN-ER"
	// containerPriority is the priority of the AM's container requests.
	containerPriority = 1
)

// ErrRequest matches every *RequestError.
var ErrRequest = errors.New("invalid submission")

// RequestError is a request that cannot be submitted; Flag names the flag (or setting) at fault
// and the message says how to fix it.
type RequestError struct {
	Flag string
	Msg  string
}

func (e *RequestError) Error() string {
	if e.Flag == "" {
		return e.Msg
	}
	return e.Flag + ": " + e.Msg
}

// Is makes errors.Is(err, ErrRequest) true for every *RequestError.
func (e *RequestError) Is(target error) bool { return target == ErrRequest }

func badRequest(flag, format string, args ...any) error {
	return &RequestError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}

// Request is one application to submit.
type Request struct {
	// Command is the program and its arguments, run in every container. Required.
	Command []string
	// Containers is the number of containers (ranks); 0 means 1.
	Containers int

	// GPUs and FPGAs are yarn.io/gpu and yarn.io/fpga per container (--gpus, --fpgas).
	GPUs, FPGAs int64
	// Resources are further TYPE=AMOUNT[UNIT] amounts per container (--resource), any type.
	Resources []string
	// Memory is the container memory (--memory: 4g, 512m, 4096 = MiB); "" means DefaultMemoryMB.
	Memory string
	// VCores is the container's vcores; 0 means DefaultVCores.
	VCores int64
	// Profile, when set, gives the container instead: the ResourceManager's resource profile of
	// that name (its resource-profiles.json, read from the Hadoop configuration; the AM asks by the
	// profile the ResourceManager hands it at registration). It excludes the flags above and Flink.
	Profile string
	// Flink, when set, gives the container instead: exactly the TaskManager container that
	// `yarn-er translate` computes from it. It excludes GPUs, FPGAs, Resources, Memory and VCores.
	Flink *conf.FlinkConfig

	// Queue, Name and Tags are the application's queue (default: the RM's), name (default
	// "yarn-er: <command>") and tags.
	Queue string
	Name  string
	Tags  []string
	// Priority is the application priority; nil leaves the queue's default. The
	// CapacityScheduler silently lowers it to yarn.cluster.max-application-priority (default 0),
	// the other schedulers to 0 (the preflight's cluster.priority warns).
	Priority *int32
	// NodeLabel is the node label of the containers (their node-label expression, which YARN
	// takes as one label).
	NodeLabel string
	// AMMemoryMB and AMVCores size the ApplicationMaster's container; 0 means the defaults.
	AMMemoryMB int64
	AMVCores   int32
	// MaxAttempts is the AM's maximum attempts; 0 means DefaultMaxAttempts. See
	// DefaultMaxAttempts for the RM's cap.
	MaxAttempts int32
	// AttemptFailuresValidity is the window in which AM failures count against MaxAttempts
	// (attempt-failures-validity-interval); 0 means DefaultAttemptFailuresValidity, a negative one
	// counts every failure of the application's life.
	AttemptFailuresValidity time.Duration
	// Restarts is how often one rank may be restarted after it failed.
	Restarts int
	// Env is added to every container's environment.
	Env map[string]string
	// Files and Archives are localized into every container's working directory.
	Files, Archives []stage.Item
	// Binary is the yarn-er executable to ship (another OS/arch); "" is this executable.
	Binary string
	// AMBinary is the small ApplicationMaster binary (yarn-er-am) to run the AM container with,
	// built from the same source as Binary; "" is the yarn-er-am beside Binary when it is one of
	// the same build, else Binary itself runs the AM (`yarn-er am`).
	AMBinary string
	// KeepStaging keeps the staging directory after the application ended.
	KeepStaging bool
	// ShipKeytab ships the Kerberos login's keytab (Options.Login: a keytab and a principal) to
	// the ApplicationMaster's container alone, so that it can fetch fresh HDFS delegation tokens
	// for a job that runs longer than their maximum lifetime and hand them to the ranks
	// (docs/kerberos.md). The full yarn-er binary then runs the AM.
	ShipKeytab bool
	// Force submits even when the preflight finds problems (it is then not run).
	Force bool
	// HeartbeatMillis is the AM's heartbeat while container asks are outstanding (0: its default).
	HeartbeatMillis int

	// Roles, when set, are the job's roles (yarn-er submit --spec): each with its count,
	// container and command, which Command, Containers, Restarts and the container flags then
	// must not give.
	Roles []RoleRequest
	// Gang puts every role into one gang; GangTimeout bounds a gang's wait for its containers
	// (0: jobspec.DefaultGangTimeoutMillis).
	Gang        bool
	GangTimeout time.Duration
	// GangTimeoutAction is jobspec.GangFail (default "") or jobspec.GangWait.
	GangTimeoutAction string
	// Docker runs the ranks in Docker containers (nil: plain containers, unless a role names an
	// image).
	Docker *DockerRequest
}

// Container returns the container vector of the request: memory-mb and vcores, then yarn.io/gpu,
// yarn.io/fpga and every --resource, each converted to its type's unit (from types, which may be
// nil: plain counts then), or the Flink TaskManager's vector.
func (r *Request) Container(types *profile.ResourceTypes) (records.Resources, error) {
	if r.Flink != nil {
		if r.GPUs != 0 || r.FPGAs != 0 || len(r.Resources) > 0 || r.Memory != "" || r.VCores != 0 {
			return records.Resources{}, badRequest("--flink-conf", "gives the whole container: drop --gpus, --fpgas, --resource, --memory and --vcores, or drop --flink-conf")
		}
		tr, err := profile.Translate(r.Flink, profile.TranslateOptions{ResourceTypes: types})
		if err != nil {
			return records.Resources{}, fmt.Errorf("the Flink configuration gives no TaskManager container: %w", err)
		}
		if _, ok := tr.Resource.Get(records.MemoryMB); !ok {
			return records.Resources{}, badRequest("--flink-conf", "sets no taskmanager.memory.process.size: set it (or -D taskmanager.memory.process.size=4g)")
		}
		return tr.Resource, nil
	}
	unitOf := func(name string) string {
		if name == records.MemoryMB {
			return records.MemoryUnits
		}
		if types != nil {
			if rt, ok := types.Lookup(name); ok {
				return rt.Units
			}
		}
		return ""
	}
	var v records.Resources
	mem := int64(DefaultMemoryMB)
	if r.Memory != "" {
		var err error
		if mem, err = ParseMemoryMB(r.Memory); err != nil {
			return records.Resources{}, badRequest("--memory", "%v", err)
		}
	}
	if mem <= 0 {
		return records.Resources{}, badRequest("--memory", "%s: must be more than 0", r.Memory)
	}
	v.Set(records.MemoryMB, records.Quantity{Value: mem, Units: records.MemoryUnits})
	vc := int64(DefaultVCores)
	switch {
	case r.VCores < 0:
		return records.Resources{}, badRequest("--vcores", "%d: must be 1 or more", r.VCores)
	case r.VCores > 0:
		vc = r.VCores
	}
	v.Set(records.VCores, records.Quantity{Value: vc})
	from := map[string]string{records.MemoryMB: "--memory", records.VCores: "--vcores"}
	add := func(flag, name string, value int64) error {
		if prev, dup := from[name]; dup {
			return badRequest(flag, "%s is given by %s already", name, prev)
		}
		from[name] = flag
		v.Set(name, records.Quantity{Value: value, Units: unitOf(name)})
		return nil
	}
	switch {
	case r.GPUs < 0:
		return records.Resources{}, badRequest("--gpus", "%d: must not be negative", r.GPUs)
	case r.GPUs > 0:
		_ = add("--gpus", records.GPU, r.GPUs)
	}
	switch {
	case r.FPGAs < 0:
		return records.Resources{}, badRequest("--fpgas", "%d: must not be negative", r.FPGAs)
	case r.FPGAs > 0:
		_ = add("--fpgas", records.FPGA, r.FPGAs)
	}
	for _, arg := range r.Resources {
		name, q, err := ParseResource(arg)
		if err != nil {
			return records.Resources{}, badRequest("--resource", "%v", err)
		}
		unit := unitOf(name)
		// An amount without a unit is in the type's unit, as in Hadoop's resource strings
		// (memory-mb=2048 is 2048 MiB), not a count of its base unit.
		val := q.Value
		if q.Units != "" {
			if val, err = records.Convert(q.Units, unit, q.Value); err != nil {
				return records.Resources{}, badRequest("--resource", "%s: %v", arg, err)
			}
		}
		if val == 0 && q.Value != 0 {
			return records.Resources{}, badRequest("--resource", "%s is less than 1 %s, the unit of %s", arg, orCount(unit), name)
		}
		if name == records.MemoryMB || name == records.VCores {
			if val <= 0 {
				return records.Resources{}, badRequest("--resource", "%s: must be more than 0", arg)
			}
			if r.Memory != "" && name == records.MemoryMB || r.VCores != 0 && name == records.VCores ||
				strings.HasPrefix(from[name], "--resource") {
				return records.Resources{}, badRequest("--resource "+arg, "%s is given by %s already", name, from[name])
			}
			v.Set(name, records.Quantity{Value: val, Units: unit})
			from[name] = "--resource " + arg
			continue
		}
		if err := add("--resource "+arg, name, val); err != nil {
			return records.Resources{}, err
		}
	}
	return v, nil
}

func orCount(unit string) string {
	if unit == "" {
		return "(a plain count)"
	}
	return unit
}

// resourceAliases are the short names Hadoop's ResourceUtils accepts in resource strings.
var resourceAliases = map[string]string{"memory": records.MemoryMB, "gpu": records.GPU, "fpga": records.FPGA, "vcore": records.VCores}

// ParseResource reads a --resource argument, TYPE=AMOUNT[UNIT] ("yarn.io/gpu=2",
// "nvidia.com/gpu=1", "memory-mb=4Gi", "example.com/bw=10k"). TYPE is a Hadoop resource name (the
// aliases memory, gpu and fpga stand for memory-mb, yarn.io/gpu and yarn.io/fpga); AMOUNT a
// non-negative whole number, optionally with one of Hadoop's units (without one, Container takes
// it in the type's unit).
func ParseResource(arg string) (string, records.Quantity, error) {
	name, amount, ok := strings.Cut(arg, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", records.Quantity{}, fmt.Errorf("%q: want TYPE=AMOUNT[UNIT], e.g. yarn.io/gpu=2 or memory-mb=4Gi", arg)
	}
	if alias, ok := resourceAliases[name]; ok {
		name = alias
	}
	if err := records.ValidateResourceName(name); err != nil {
		return "", records.Quantity{}, fmt.Errorf("%q: %w", arg, err)
	}
	q, err := records.ParseQuantity(strings.TrimSpace(amount))
	if err != nil {
		return "", records.Quantity{}, fmt.Errorf("%q: %w", arg, err)
	}
	return name, q, nil
}

// ParseMemoryMB reads a --memory value in MiB: a plain number is MiB ("4096"); units k, m, g, t
// (binary, case-insensitive, with an optional "i" and "b": 4g, 4G, 4Gi, 4GiB, 512mb) scale it.
// The result must be a whole number of MiB.
func ParseMemoryMB(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q: want a size such as 4g, 512m or 4096 (MiB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: too large", s)
	}
	raw := strings.TrimSpace(t[i:])
	var shift uint
	switch strings.ToLower(raw) {
	case "b", "bytes":
		shift = 0
	case "k", "kb", "ki", "kib":
		shift = 10
	case "", "m", "mb", "mi", "mib":
		shift = 20
	case "g", "gb", "gi", "gib":
		shift = 30
	case "t", "tb", "ti", "tib":
		shift = 40
	default:
		return 0, fmt.Errorf("%q: unknown unit %q (use k, m, g or t)", s, raw)
	}
	// bytes = n << shift; MiB = bytes >> 20.
	if shift >= 20 {
		if n > math.MaxInt64>>(shift-20) {
			return 0, fmt.Errorf("%q: too large", s)
		}
		return n << (shift - 20), nil
	}
	div := int64(1) << (20 - shift)
	if n%div != 0 {
		return 0, fmt.Errorf("%q is not a whole number of MiB", s)
	}
	return n / div, nil
}

// devices returns what `yarn-er exec` locks in each container: the GPUs when the container has
// yarn.io/gpu, else its FPGAs; nil when it has neither.
func devices(v records.Resources) *jobspec.Devices {
	if n, ok := v.Get(records.GPU); ok && n > 0 {
		return &jobspec.Devices{Kind: "gpu", Amount: n}
	}
	// MIG slices as a resource type per profile (nvidia.com/mig-1g.10gb): exec locks that many
	// MIG devices of the profile. One MIG type per container: exec locks one kind.
	for _, res := range v.All() {
		if jobspec.IsMIGKind(res.Name) && res.Value > 0 {
			return &jobspec.Devices{Kind: res.Name, Amount: res.Value}
		}
	}
	if n, ok := v.Get(records.FPGA); ok && n > 0 {
		return &jobspec.Devices{Kind: "fpga", Amount: n}
	}
	return nil
}

// quantities converts a vector to the spec's resource list.
func quantities(v records.Resources) []jobspec.Quantity {
	out := make([]jobspec.Quantity, 0, v.Len())
	for _, res := range v.All() {
		out = append(out, jobspec.Quantity{Name: res.Name, Value: res.Value, Units: res.Units})
	}
	return out
}

// MaxCommandBytes bounds the command as the NodeManager's launch script runs it, exec /bin/bash
// -c "WORDS 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr": one argument of bash, which Linux limits to
// 128 KiB (MAX_ARG_STRLEN); 8 KiB are left for the yarn-er exec prefix and the log directory.
const MaxCommandBytes = 120 << 10

// commandBytes is the length of the command's words joined by spaces, each quoted as the AM
// quotes it for the launch script (am.Command): a word of only [A-Za-z0-9-_./:,+@%] as it is,
// another in single quotes (each ' closed, escaped and opened again), then \ " $ ` escaped for
// the script's double quotes.
func commandBytes(command []string) int {
	n := len(command) - 1
	for _, a := range command {
		plain := a != ""
		specials := 0
		for _, c := range a {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:,+@%", c)) {
				plain = false
			}
		}
		if plain {
			n += len(a)
			continue
		}
		quotes := strings.Count(a, "'")
		for _, c := range []string{`\`, `"`, "$", "`"} {
			specials += strings.Count(a, c)
		}
		// Quoted: 2 quotes; each ' becomes 4 bytes (3 more), and the \ among them is escaped (1 more).
		n += len(a) + 2 + 4*quotes + specials
	}
	return max(n, 0)
}

// deviceInfoFile is am.DeviceInfoFile, the file `yarn-er exec` writes into each container's
// working directory before the program starts (this package does not import the AM side).
const deviceInfoFile = "yarn-er-devices.json"

// validate checks what needs no cluster.
func (r *Request) validate() error {
	if len(r.Roles) > 0 {
		if err := r.validateRoles(); err != nil {
			return err
		}
	} else {
		if len(r.Command) == 0 || r.Command[0] == "" {
			return badRequest("", "no command: give it after --, e.g. yarn-er submit --gpus 1 -- nvidia-smi")
		}
		if n := commandBytes(r.Command); n > MaxCommandBytes {
			return badRequest("", "the command is %d bytes as the NodeManager's launch script runs it, more than the %d that fit in one argument of bash -c (Linux takes 128 KiB): put it in a script and ship it with --file", n, MaxCommandBytes)
		}
	}
	if r.Containers < 0 {
		return badRequest("--containers", "%d: must be 1 or more", r.Containers)
	}
	if err := r.validateDocker(); err != nil {
		return err
	}
	if r.Containers > jobspec.MaxContainers {
		return badRequest("--containers", "%d is above yarn-er's hard bound of %d ranks per job (docs/jobs.md): ask for at most %d, or split the job", r.Containers, jobspec.MaxContainers, jobspec.MaxContainers)
	}
	if r.Restarts < 0 {
		return badRequest("--restarts", "%d: must not be negative", r.Restarts)
	}
	if r.MaxAttempts < 0 {
		return badRequest("--max-attempts", "%d: must not be negative", r.MaxAttempts)
	}
	if r.AMMemoryMB < 0 {
		return badRequest("--am-memory", "%d: must be more than 0", r.AMMemoryMB)
	}
	if r.AMVCores < 0 {
		return badRequest("--am-vcores", "%d: must be 1 or more", r.AMVCores)
	}
	if err := r.checkText(); err != nil {
		return err
	}
	if err := checkTags(r.Tags); err != nil {
		return err
	}
	if r.NodeLabel != "" && !labelName(r.NodeLabel) {
		return badRequest("--node-label", "%q: a node label is letters, digits, - and _, starting with a letter or digit, at most 255 (YARN takes one label, not an expression with && or ||)", r.NodeLabel)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		if err := checkEnv(k, r.Env[k]); err != nil {
			return err
		}
	}
	names := map[string]string{jobspec.BinaryName: "the yarn-er binary", jobspec.FileName: "the job spec", AMBinaryName: "the ApplicationMaster binary",
		deviceInfoFile: "the devices file yarn-er exec writes"}
	items := slices.Concat(r.Files, r.Archives)
	for _, it := range items {
		if prev, dup := names[it.Name]; dup {
			return badRequest("--file/--archive", "link name %q of %s is used by %s too: rename it with LOCAL#NAME", it.Name, it.Local, prev)
		}
		names[it.Name] = it.Local
	}
	// Before an application id is used up: what the staging would refuse (an archive stored
	// as another item's name, a name HDFS or the NodeManager cannot take).
	if err := stage.CheckItems(items); err != nil {
		return badRequest("--file/--archive", "%v", err)
	}
	return nil
}

// checkText refuses, before anything is staged, the text the job spec (jobspec.Spec.Validate) or
// the REST submission cannot carry as given: bytes that are not UTF-8 (JSON would carry U+FFFD in
// their place) and, in the command and the environment, NUL (which no argument or environment
// variable can hold).
func (r *Request) checkText() error {
	check := func(flag, what, s string, noNUL bool) error {
		if what != "" {
			what += " "
		}
		switch {
		case !utf8.ValidString(s):
			return badRequest(flag, "%s%q is not valid UTF-8, which the submission cannot carry as given: give it in UTF-8", what, s)
		case noNUL && strings.IndexByte(s, 0) >= 0:
			return badRequest(flag, "%s%q holds a NUL byte, which no program argument or environment variable can", what, s)
		}
		return nil
	}
	for i, a := range r.Command {
		if err := check("", fmt.Sprintf("argument %d of the command", i), a, true); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		if err := check("--env", "variable", k, true); err != nil {
			return err
		}
		if err := check("--env", "the value of "+k, r.Env[k], true); err != nil {
			return err
		}
	}
	for _, t := range []struct{ flag, s string }{{"--name", r.Name}, {"--node-label", r.NodeLabel}, {"--queue", r.Queue}} {
		if err := check(t.flag, "", t.s, false); err != nil {
			return err
		}
	}
	return nil
}

// YARN's limits on application tags (YarnConfiguration.APPLICATION_MAX_TAGS and
// APPLICATION_MAX_TAG_LENGTH), which the ResourceManager checks only when the application is
// submitted, after staging.
const (
	MaxTags      = 10
	MaxTagLength = 100
)

// checkTags checks --tags as the ResourceManager does (ApplicationSubmissionContext.setApplicationTags:
// at most MaxTags, each at most MaxTagLength printable ASCII characters), and refuses what it would
// change silently: it keeps tags in lower case, and a tag given twice once.
func checkTags(tags []string) error {
	if len(tags) > MaxTags {
		return badRequest("--tags", "%d tags: YARN takes at most %d", len(tags), MaxTags)
	}
	seen := map[string]bool{}
	for _, tag := range tags {
		switch {
		case tag == "":
			return badRequest("--tags", "an empty tag: drop the extra comma")
		case strings.ContainsFunc(tag, func(c rune) bool { return c < ' ' || c > '~' }):
			return badRequest("--tags", "%q: YARN takes printable ASCII only", tag)
		case len(tag) > MaxTagLength: // (ASCII: a byte is a character)
			return badRequest("--tags", "%q has %d characters: YARN takes at most %d", tag, len(tag), MaxTagLength)
		case strings.ToLower(tag) != tag:
			return badRequest("--tags", "%q: YARN keeps tags in lower case: give %q", tag, strings.ToLower(tag))
		case seen[tag]:
			return badRequest("--tags", "%q is given twice: give it once", tag)
		}
		seen[tag] = true
	}
	return nil
}

// setEnv are the variables every container gets whatever the job asks: yarn-er's AM sets its own
// (am.Environment), the NodeManager the ones its ContainerLaunch.sanitizeEnv puts in after the
// container's environment.
var setEnv = map[string]string{
	jobspec.EnvAppID: "yarn-er's ApplicationMaster", jobspec.EnvContainerID: "yarn-er's ApplicationMaster",
	jobspec.EnvRank: "yarn-er's ApplicationMaster", jobspec.EnvWorldSize: "yarn-er's ApplicationMaster",
	"CONTAINER_ID": "the NodeManager", "NM_HOST": "the NodeManager", "NM_PORT": "the NodeManager",
	"NM_HTTP_PORT": "the NodeManager", "LOCAL_DIRS": "the NodeManager", "LOCAL_USER_DIRS": "the NodeManager",
	"LOG_DIRS": "the NodeManager", "USER": "the NodeManager", "LOGNAME": "the NodeManager",
	"HOME": "the NodeManager", "PWD": "the NodeManager", "LOCALIZATION_COUNTERS": "the NodeManager",
	"JVM_PID": "the NodeManager", records.EnvTokenFile: "the NodeManager",
}

// checkEnv checks one --env variable. The NodeManager writes each into the container's launch
// script as export NAME="VALUE": NAME must be a shell variable name, and VALUE must hold none of
// " ` \, which would end the quoted value, run a command or escape the next character (the program
// would get another value, or the script would not run). $ is left to the shell as YARN means it:
// $PATH or $PWD is the container's (and YARN's {{VAR}} becomes $VAR).
func checkEnv(name, value string) error {
	if !shellName(name) {
		return badRequest("--env", "%q: a variable name is letters, digits and _, not starting with a digit (the NodeManager exports it from a shell script)", name)
	}
	if by, set := setEnv[name]; set {
		return badRequest("--env", "%s is set in every container by %s, which would override it: use another name", name, by)
	}
	if slices.Contains(jobspec.AMSetEnv(), name) {
		return badRequest("--env", "%s is set in every container by yarn-er's ApplicationMaster (the rendezvous, docs/jobs.md), which would override it: use another name", name)
	}
	if strings.ContainsAny(value, "`\"\\") {
		return badRequest("--env", "%s=%q: the NodeManager's launch script would interpret ` \" \\ in the value (export %s=\"...\"): leave them out", name, value, name)
	}
	return nil
}

// labelName reports whether s is a YARN node label (NodeLabelUtil.checkAndThrowLabelName:
// [0-9a-zA-Z][0-9a-zA-Z-_]*, at most 255 characters).
func labelName(s string) bool {
	for i, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && (i == 0 || c != '-' && c != '_') {
			return false
		}
	}
	return s != "" && len(s) <= 255
}

// shellName reports whether s is a POSIX shell variable name: [A-Za-z_][A-Za-z0-9_]*.
func shellName(s string) bool {
	for i, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// appName returns the application's name.
func (r *Request) appName() string {
	if r.Name != "" {
		return r.Name
	}
	name := "yarn-er: " + strings.Join(r.Command, " ")
	if len(r.Roles) > 0 {
		var parts []string
		for _, rr := range r.Roles {
			parts = append(parts, fmt.Sprintf("%s×%d", rr.Name, max(rr.Containers, 1)))
		}
		name = "yarn-er: " + strings.Join(parts, ", ")
	}
	if len(name) > 200 {
		// Cut before a rune, not inside one: half a rune is not UTF-8, which the spec refuses.
		cut := 200
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	return name
}
