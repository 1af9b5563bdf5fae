// Package jobspec is the contract between `yarn-er submit` and `yarn-er am`: the JSON document
// the client stages next to the ApplicationMaster and the AM reads at start. It is the only thing
// the two sides share, so it is versioned, validated on both ends and kept free of any client
// library's types (plain strings and int64s).
//
// A spec describes N identical containers ("ranks" 0..N-1), each with one resource vector, a
// command that runs under `yarn-er exec` so the program sees only its own devices, the files
// localized into every container's working directory, and what to do when a rank fails.
package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/yarn-er/yarn-er/records"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Version is the spec format this package writes. Parse accepts it and every older format it
// still reads (MinVersion: format 1 has no roles); a newer format fails at start with a clear
// message instead of being misread.
const Version = 2

// MinVersion is the oldest spec format Parse reads.
const MinVersion = 1

// FileName is the name the spec is localized under in the AM's working directory.
const FileName = "yarn-er-job.json"

// BinaryName is the name the yarn-er executable is localized under in every container.
const BinaryName = "yarn-er"

// MaxContainers is yarn-er's hard bound on the ranks of one job (all roles together). The AM
// keeps a small record per rank (its state, container and restarts) and asks the
// ResourceManager by counts, so its memory grows with this bound only: at 100,000 ranks a few
// tens of MiB. A count above it is refused before anything is staged (docs/jobs.md).
const MaxContainers = 100_000

// MaxRoles bounds the roles of one job.
const MaxRoles = 64

// MaxSize bounds a spec document (a spec is small; this only stops garbage early).
const MaxSize = 4 << 20

// Spec is the job an ApplicationMaster runs.
type Spec struct {
	// Version is the format version; always Version when written by this package.
	Version int `json:"version"`
	// Name is the application's name (for diagnostics only).
	Name string `json:"name"`
	// User is the user the application was submitted as.
	User string `json:"user"`
	// SchedulerAddresses are the ResourceManagers' scheduler addresses (host:port), one per RM of
	// an HA setup, in the order to try them.
	SchedulerAddresses []string `json:"schedulerAddresses"`

	// Containers is the number of ranks (0..Containers-1).
	Containers int `json:"containers"`
	// Restarts is how many times one rank may be restarted (in a fresh container) after it
	// failed, before the application fails.
	Restarts int `json:"restarts"`
	// Priority is the container request priority.
	Priority int32 `json:"priority"`
	// NodeLabel is the node-label expression of the container requests ("" for none).
	NodeLabel string `json:"nodeLabel,omitempty"`
	// Resource is each container's resource vector: memory-mb and vcores first, then any
	// extended types, each in its Hadoop unit.
	Resource []Quantity `json:"resource"`
	// Devices is what `yarn-er exec` locks in each container (nil: the program runs without
	// device coordination).
	Devices *Devices `json:"devices,omitempty"`

	// Command is the program and its arguments, run in each container's working directory.
	Command []string `json:"command"`
	// Env is added to every container's environment.
	Env map[string]string `json:"env,omitempty"`
	// Binary is the yarn-er executable localized into every container (as BinaryName).
	Binary LocalFile `json:"binary"`
	// Files are the user's files and archives localized into every container.
	Files []LocalFile `json:"files,omitempty"`

	// StagingDir is the application's staging directory (a full URL, hdfs://nn:8020/user/u/
	// .yarn-er/<appId>), removed when the application ends unless KeepStaging.
	StagingDir string `json:"stagingDir"`
	// StagingNameNodes are the RPC addresses (host:port) of the NameNodes of the HA nameservice
	// that StagingDir names (hdfs://<nameservice>/...), from the submitter's Hadoop configuration,
	// for the AM and the ranks, which have none; empty when StagingDir names its NameNode.
	StagingNameNodes []string `json:"stagingNameNodes,omitempty"`
	// KeepStaging keeps the staging directory after the application ended.
	KeepStaging bool `json:"keepStaging,omitempty"`

	// HeartbeatMillis is the AM's heartbeat interval while container asks are outstanding
	// (0: the AM's default).
	HeartbeatMillis int `json:"heartbeatMillis,omitempty"`
	// MaxAttempts is the application's maximum number of AM attempts as submitted (0: unknown,
	// each attempt counts as the last). The ResourceManager does not tell the AM; the AM needs
	// it to keep the staging directory for the next attempt when it is stopped with attempts left.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// AttemptFailuresValidityMillis is the application's attempt-failures-validity-interval as
	// submitted (0 or less: none, every AM failure counts). With one, an attempt whose number
	// reaches MaxAttempts may still be followed by another (the older failures no longer count),
	// so no attempt knows it is the last.
	AttemptFailuresValidityMillis int64 `json:"attemptFailuresValidityMillis,omitempty"`

	// Roles are the job's roles (format 2), in the order their ranks are numbered in the AM's
	// record. Empty: one role, DefaultRole, from Containers, Restarts, Resource, Devices and
	// Command. With roles, Containers is the sum of the roles' counts, and Resource, Devices,
	// Command and Restarts are empty (each role has its own); Env applies to every role (a
	// role's own Env wins).
	Roles []Role `json:"roles,omitempty"`
	// Profile is the YARN resource profile of the containers of a spec without roles ("": none;
	// see Role.Profile).
	Profile string `json:"profile,omitempty"`
	// GangTimeoutMillis is how long a gang waits for all its containers before the AM gives
	// back what it holds and fails the application (0: DefaultGangTimeout).
	GangTimeoutMillis int64 `json:"gangTimeoutMillis,omitempty"`
	// Docker runs the ranks (of every role without its own) in Docker containers (nil: plain
	// containers).
	Docker *Docker `json:"docker,omitempty"`
	// GangTimeoutAction is what the AM does when a gang is not complete after the gang timeout:
	// GangFail (the default, ""), or GangWait: give back what it holds, ask again and wait
	// another timeout.
	GangTimeoutAction string `json:"gangTimeoutAction,omitempty"`

	// Tokens, when set, has the ApplicationMaster keep the application's HDFS delegation tokens
	// fresh past their maximum lifetime (submit --ship-keytab): it logs in with the keytab that
	// was shipped to its container alone, and hands new tokens to the ranks (docs/kerberos.md).
	Tokens *TokenRefresh `json:"tokens,omitempty"`
}

// TokenRefresh is how the ApplicationMaster obtains fresh HDFS delegation tokens.
type TokenRefresh struct {
	// Principal is the Kerberos principal the AM logs in as (the submitter's).
	Principal string `json:"principal"`
	// KeytabFile is the keytab's name in the AM container's working directory.
	KeytabFile string `json:"keytabFile"`
	// Krb5ConfFile is the krb5.conf shipped beside it ("": the node's, $KRB5_CONFIG or
	// /etc/krb5.conf).
	Krb5ConfFile string `json:"krb5ConfFile,omitempty"`
	// NameNodePrincipal is dfs.namenode.kerberos.principal (may hold _HOST).
	NameNodePrincipal string `json:"nameNodePrincipal"`
	// RenewIntervalMillis is the NameNode's dfs.namenode.delegation.token.renew-interval as the
	// submitter's configuration gives it (0: Hadoop's default, a day): how often new tokens are
	// fetched when the NameNode does not say when the current one expires.
	RenewIntervalMillis int64 `json:"renewIntervalMillis,omitempty"`
}

// Gang timeout actions.
const (
	GangFail = "fail"
	GangWait = "wait"
)

// MaxStagingNameNodes bounds Spec.StagingNameNodes (Hadoop 3 allows more than two NameNodes in
// a nameservice; a handful in practice).
const MaxStagingNameNodes = 16

// DefaultRole is the name of the one role of a spec without roles (yarn-er submit's flags).
const DefaultRole = "main"

// DefaultGangTimeoutMillis is the gang timeout when the spec gives none: 10 minutes.
const DefaultGangTimeoutMillis = 10 * 60 * 1000

// Frameworks a role may name: what the AM adds to the rendezvous variables.
const (
	FrameworkNone       = ""
	FrameworkPyTorch    = "pytorch"
	FrameworkTensorFlow = "tensorflow"
)

// Role is one kind of rank of a job: Containers identical containers, ranks 0..Containers-1
// within the role.
type Role struct {
	// Name is the role's name (YARN_ER_ROLE): letters, digits, - and _.
	Name string `json:"name"`
	// Containers is the number of ranks of the role.
	Containers int `json:"containers"`
	// Restarts is how many times one rank of the role may be restarted after it failed.
	Restarts int `json:"restarts,omitempty"`
	// Priority is the container request priority of the role: one per role, which the AM
	// matches allocations with.
	Priority int32 `json:"priority"`
	// Resource is each container's resource vector (memory-mb and vcores first).
	Resource []Quantity `json:"resource"`
	// Devices is what `yarn-er exec` locks in each container (nil: none).
	Devices *Devices `json:"devices,omitempty"`
	// Command is the program and its arguments.
	Command []string `json:"command"`
	// Env is added to the role's containers' environment (over the spec's Env).
	Env map[string]string `json:"env,omitempty"`
	// Gang names the gang the role belongs to ("": none): the AM starts no rank of a gang until
	// every container of every role of the gang is allocated.
	Gang string `json:"gang,omitempty"`
	// DependsOn are roles that must have every rank running before this role's containers are
	// asked for.
	DependsOn []string `json:"dependsOn,omitempty"`
	// Framework is FrameworkNone, FrameworkPyTorch or FrameworkTensorFlow (TF_CONFIG).
	Framework string `json:"framework,omitempty"`
	// Placement says where the role's ranks may land (nil: anywhere).
	Placement *Placement `json:"placement,omitempty"`
	// Profile is the YARN resource profile the role asks by ("": none): the AM asks for the
	// vector the ResourceManager hands it at registration under that name (Resource is the
	// client's copy, from the profiles file it read), and fails when the ResourceManager has no
	// such profile.
	Profile string `json:"profile,omitempty"`
	// Docker runs the role's ranks in Docker containers (nil: the spec's Docker).
	Docker *Docker `json:"docker,omitempty"`
}

// Placement is where a role's ranks may land. At most one of Spread and Pack; Nodes and Racks
// restrict the hosts.
type Placement struct {
	// Spread "node": at most one rank of the role per node.
	Spread string `json:"spread,omitempty"`
	// Pack "node": all ranks of the role on one node.
	Pack string `json:"pack,omitempty"`
	// Nodes are the only hosts the role's ranks may land on.
	Nodes []string `json:"nodes,omitempty"`
	// Racks are the only racks the role's ranks may land on.
	Racks []string `json:"racks,omitempty"`
	// Fallback is what the ApplicationMaster does when the ResourceManager cannot place Spread or
	// Pack by placement constraints (its placement-constraints handler refuses SchedulingRequests,
	// or rejects them): FallbackAM ("" too) places the ranks itself with plain asks, FallbackRelax
	// drops the placement, FallbackFail fails the application with the ResourceManager's reason.
	Fallback string `json:"fallback,omitempty"`
}

// MaxRackLen bounds a rack's name (Placement.Racks).
const MaxRackLen = 255

// CheckRack says why name is not a rack as Hadoop writes one (nil when it is): an absolute
// network location, "/" followed by one or more non-empty parts separated by "/", e.g.
// /default-rack (every node of a cluster without a topology) or /dc1/rack7; no spaces, control
// characters, commas or "*"; at most MaxRackLen bytes.
func CheckRack(name string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case len(name) > MaxRackLen:
		return fmt.Errorf("%d bytes, more than %d", len(name), MaxRackLen)
	case !strings.HasPrefix(name, "/"):
		return fmt.Errorf("%q does not start with /: a rack is an absolute network location, e.g. /%s", name, name)
	case name == "/" || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return fmt.Errorf("%q has an empty part: want /PART[/PART...], e.g. /default-rack", name)
	case strings.ContainsFunc(name, func(c rune) bool { return c <= ' ' || c == 0x7f || c == ',' || c == '*' || c == utf8.RuneError }):
		return fmt.Errorf("%q has a space, a control character, a comma or *", name)
	}
	return nil
}

// Placement fallbacks (Placement.Fallback).
const (
	FallbackAM    = "am"
	FallbackRelax = "relax"
	FallbackFail  = "fail"
)

// RoleList returns the spec's roles: Roles, or the one DefaultRole of a spec without roles.
func (s *Spec) RoleList() []Role {
	if len(s.Roles) > 0 {
		return s.Roles
	}
	return []Role{{Name: DefaultRole, Containers: s.Containers, Restarts: s.Restarts, Priority: s.Priority,
		Resource: s.Resource, Devices: s.Devices, Command: s.Command, Profile: s.Profile}}
}

// GangTimeout returns the gang timeout in milliseconds (the default when unset).
func (s *Spec) GangTimeout() int64 {
	if s.GangTimeoutMillis > 0 {
		return s.GangTimeoutMillis
	}
	return DefaultGangTimeoutMillis
}

// Quantity is one resource of the container vector.
type Quantity struct {
	// Name is the resource type name (memory-mb, vcores, yarn.io/gpu, ...).
	Name string `json:"name"`
	// Value is the amount, in Units.
	Value int64 `json:"value"`
	// Units is the Hadoop unit ("" for a plain count, "Mi" for memory-mb).
	Units string `json:"units,omitempty"`
}

// Devices says which devices `yarn-er exec` locks in each container.
type Devices struct {
	// Kind is the device kind exec discovers ("gpu" or "fpga").
	Kind string `json:"kind"`
	// Amount is how many devices each container locks.
	Amount int64 `json:"amount"`
}

// LocalFile is a YARN local resource as the client staged it: the AM hands it to the NodeManager
// unchanged, and the NodeManager refuses it unless size and mtime match the file on HDFS.
type LocalFile struct {
	// Name is the link name in the container's working directory.
	Name string `json:"name"`
	// URL is the file's full URL (hdfs://host:port/path).
	URL string `json:"url"`
	// Size is the file's length in bytes as HDFS reports it.
	Size int64 `json:"size"`
	// MtimeMillis is the file's modification time in milliseconds as HDFS reports it.
	MtimeMillis int64 `json:"mtimeMillis"`
	// Type is records.LocalFile or records.LocalArchive.
	Type records.LocalResourceType `json:"type"`
	// Visibility is one of the records.Visibility constants (default application).
	Visibility records.LocalResourceVisibility `json:"visibility,omitempty"`
}

// Resource returns the file as the local resource the NodeManager localizes.
func (f LocalFile) Resource() records.LocalResource {
	return records.LocalResource{URL: f.URL, Size: f.Size, Timestamp: f.MtimeMillis, Type: f.Type, Visibility: f.Visibility}
}

// Error is a spec that cannot be used; Field names the JSON field at fault.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return "job spec: " + e.Msg
	}
	return fmt.Sprintf("job spec: %s: %s", e.Field, e.Msg)
}

// ErrInvalid matches every *Error with errors.Is.
var ErrInvalid = errors.New("invalid job spec")

// Is makes errors.Is(err, ErrInvalid) true for every *Error.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// plainFileName reports whether name is a file name of a working directory: no path, no dot
// names.
func plainFileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

func invalid(field, format string, args ...any) error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Parse decodes and validates a spec. Unknown fields are refused (a newer client's spec read by
// an older AM must fail loudly, not lose settings), and so is a field given twice in one object,
// also in another case ("containers" and "Containers", which the decoder matches alike): the decoder
// would keep the last one without a word.
func Parse(b []byte) (*Spec, error) {
	if len(b) > MaxSize {
		return nil, invalid("", "%d bytes is larger than the %d-byte limit", len(b), MaxSize)
	}
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, invalid("", "not JSON: %v", err)
	}
	if probe.Version == nil {
		return nil, invalid("version", "missing")
	}
	if *probe.Version < MinVersion || *probe.Version > Version {
		return nil, invalid("version", "format %d, this yarn-er reads formats %d to %d: submit with the same yarn-er version as the AM binary", *probe.Version, MinVersion, Version)
	}
	// (json.Unmarshal above bounds the nesting, so the walk's recursion is bounded too)
	if err := checkDuplicateKeys(json.NewDecoder(bytes.NewReader(b)), "", false); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, invalid("", "%v", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	// "env": {} and no "env" (and "files": [] and no "files") mean the same: one form, so that a
	// spec survives a round trip.
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Files) == 0 {
		s.Files = nil
	}
	for i := range s.Roles {
		if len(s.Roles[i].Env) == 0 {
			s.Roles[i].Env = nil
		}
	}
	return &s, nil
}

// checkDuplicateKeys reads one JSON value from dec and refuses a key given twice in one of its
// objects. Keys are compared as the decoder matches struct fields (case folded), or exactly when
// exact is set (the variable names of env, a map). path names the value in errors.
func checkDuplicateKeys(dec *json.Decoder, path string, exact bool) error {
	tok, err := dec.Token()
	if err != nil {
		return invalid("", "not JSON: %v", err)
	}
	switch tok {
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := checkDuplicateKeys(dec, fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
		}
	case json.Delim('{'):
		seen := map[string]string{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return invalid("", "not JSON: %v", err)
			}
			k, _ := kt.(string)
			field := k
			switch {
			case exact:
				field = fmt.Sprintf("%s[%q]", path, k)
			case path != "":
				field = path + "." + k
			}
			f := k
			if !exact {
				f = foldKey(k)
			}
			if prev, dup := seen[f]; dup {
				if prev == k {
					return invalid(field, "given twice: give it once")
				}
				return invalid(field, "given twice, as %q and %q (names are matched without regard to case): give it once", prev, k)
			}
			seen[f] = k
			isEnv := f == foldKey("env") && (path == "" || strings.HasPrefix(path, "roles[") && !strings.Contains(path, "."))
			if err := checkDuplicateKeys(dec, field, isEnv); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	if _, err := dec.Token(); err != nil { // the closing ']' or '}'
		return invalid("", "not JSON: %v", err)
	}
	return nil
}

// foldKey folds s as encoding/json folds a field name (bytes.EqualFold): each rune becomes the
// smallest of its case-folding orbit.
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				return r2
			}
			r = r2
		}
	}, s)
}

// Marshal validates s and encodes it (indented, stable field order). A spec larger than MaxSize
// is refused, as Parse would refuse it.
func (s *Spec) Marshal() ([]byte, error) {
	if s.Version == 0 {
		s.Version = Version
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSize {
		return nil, invalid("", "%d bytes is larger than the %d-byte limit the ApplicationMaster reads: give a shorter name, command or environment, or fewer files", len(b), MaxSize)
	}
	return b, nil
}

// ValidEnvName reports whether name can name an environment variable of the program: not
// empty, without '=' or NUL (which no process environment can hold).
func ValidEnvName(name string) bool { return name != "" && !strings.ContainsAny(name, "=\x00") }

// Validate checks everything the AM relies on. Every string must be valid UTF-8 (JSON would carry
// anything else as U+FFFD, so the AM would run another command than the one submitted), and the
// command's arguments and the environment's values must hold no NUL byte (no program argument or
// environment value can).
func (s *Spec) Validate() error {
	if s.Version < MinVersion || s.Version > Version {
		return invalid("version", "format %d, want %d to %d", s.Version, MinVersion, Version)
	}
	if s.Version < 2 && (len(s.Roles) > 0 || s.GangTimeoutMillis != 0 || s.Profile != "" || s.GangTimeoutAction != "") {
		return invalid("roles", "format %d has no roles: write format %d", s.Version, Version)
	}
	if err := s.validateText(); err != nil {
		return err
	}
	if s.GangTimeoutMillis < 0 {
		return invalid("gangTimeoutMillis", "%d: must not be negative", s.GangTimeoutMillis)
	}
	if t := s.Tokens; t != nil {
		switch {
		case strings.TrimSpace(t.Principal) == "":
			return invalid("tokens.principal", "empty: the AM has no principal to log in as")
		case !plainFileName(t.KeytabFile):
			return invalid("tokens.keytabFile", "%q: want a file name in the AM's working directory", t.KeytabFile)
		case t.Krb5ConfFile != "" && !plainFileName(t.Krb5ConfFile):
			return invalid("tokens.krb5ConfFile", "%q: want a file name in the AM's working directory", t.Krb5ConfFile)
		case strings.TrimSpace(t.NameNodePrincipal) == "":
			return invalid("tokens.nameNodePrincipal", "empty: set dfs.namenode.kerberos.principal")
		case t.RenewIntervalMillis < 0:
			return invalid("tokens.renewIntervalMillis", "%d: must not be negative", t.RenewIntervalMillis)
		}
	}
	switch s.GangTimeoutAction {
	case "", GangFail, GangWait:
	default:
		return invalid("gangTimeoutAction", "%q: %s or %s", s.GangTimeoutAction, GangFail, GangWait)
	}
	if len(s.Roles) > 0 {
		if err := s.validateRoles(); err != nil {
			return err
		}
	}
	if len(s.SchedulerAddresses) == 0 {
		return invalid("schedulerAddresses", "empty: the AM cannot reach the ResourceManager")
	}
	for i, a := range s.SchedulerAddresses {
		if !validHostPort(a) {
			return invalid(fmt.Sprintf("schedulerAddresses[%d]", i), "%q is not host:port", a)
		}
	}
	if s.Containers < 1 {
		return invalid("containers", "%d: at least 1", s.Containers)
	}
	if s.Containers > MaxContainers {
		return invalid("containers", "%d: above yarn-er's hard bound of %d ranks per job", s.Containers, MaxContainers)
	}
	if s.Restarts < 0 {
		return invalid("restarts", "%d: must not be negative", s.Restarts)
	}
	if s.Priority < 0 {
		return invalid("priority", "%d: must not be negative", s.Priority)
	}
	if len(s.Roles) == 0 {
		if err := validateResource("", s.Resource); err != nil {
			return err
		}
		if err := validateDevices("", s.Devices); err != nil {
			return err
		}
		if len(s.Command) == 0 || s.Command[0] == "" {
			return invalid("command", "empty: nothing to run")
		}
	}
	for k := range s.Env {
		if !ValidEnvName(k) {
			return invalid("env", "bad variable name %q", k)
		}
	}
	if err := s.Docker.Validate("docker"); err != nil {
		return err
	}
	if err := s.Binary.validate("binary"); err != nil {
		return err
	}
	names := map[string]bool{BinaryName: true, FileName: true}
	for i, f := range s.Files {
		field := fmt.Sprintf("files[%d]", i)
		if err := f.validate(field); err != nil {
			return err
		}
		if names[f.Name] {
			return invalid(field+".name", "%q is used twice (or clashes with %s/%s)", f.Name, BinaryName, FileName)
		}
		names[f.Name] = true
	}
	if s.StagingDir == "" {
		return invalid("stagingDir", "empty")
	}
	if len(s.StagingNameNodes) > MaxStagingNameNodes {
		return invalid("stagingNameNodes", "%d NameNodes: at most %d", len(s.StagingNameNodes), MaxStagingNameNodes)
	}
	for i, a := range s.StagingNameNodes {
		if !validHostPort(a) {
			return invalid(fmt.Sprintf("stagingNameNodes[%d]", i), "%q is not host:port", a)
		}
	}
	if s.HeartbeatMillis < 0 {
		return invalid("heartbeatMillis", "%d: must not be negative", s.HeartbeatMillis)
	}
	if s.MaxAttempts < 0 {
		return invalid("maxAttempts", "%d: must not be negative", s.MaxAttempts)
	}
	return nil
}

// validateText checks that every string is valid UTF-8, and the command and environment values
// free of NUL bytes.
func (s *Spec) validateText() error {
	type text struct {
		field, s string
		noNUL    bool
	}
	texts := []text{{"name", s.Name, false}, {"user", s.User, false}, {"nodeLabel", s.NodeLabel, false}, {"stagingDir", s.StagingDir, false}, {"profile", s.Profile, false},
		{"gangTimeoutAction", s.GangTimeoutAction, false}}
	for i, a := range s.SchedulerAddresses {
		texts = append(texts, text{fmt.Sprintf("schedulerAddresses[%d]", i), a, false})
	}
	for i, q := range s.Resource {
		texts = append(texts, text{fmt.Sprintf("resource[%d].name", i), q.Name, false}, text{fmt.Sprintf("resource[%d].units", i), q.Units, false})
	}
	if s.Devices != nil {
		texts = append(texts, text{"devices.kind", s.Devices.Kind, false})
	}
	for i, a := range s.Command {
		texts = append(texts, text{fmt.Sprintf("command[%d]", i), a, true})
	}
	for _, k := range s.EnvNames() {
		texts = append(texts, text{"env", k, true}, text{fmt.Sprintf("env[%q]", k), s.Env[k], true})
	}
	for i, r := range s.Roles {
		p := fmt.Sprintf("roles[%d].", i)
		texts = append(texts, text{p + "name", r.Name, false}, text{p + "gang", r.Gang, false}, text{p + "framework", r.Framework, false}, text{p + "profile", r.Profile, false})
		for j, q := range r.Resource {
			texts = append(texts, text{fmt.Sprintf("%sresource[%d].name", p, j), q.Name, false}, text{fmt.Sprintf("%sresource[%d].units", p, j), q.Units, false})
		}
		if r.Devices != nil {
			texts = append(texts, text{p + "devices.kind", r.Devices.Kind, false})
		}
		for j, a := range r.Command {
			texts = append(texts, text{fmt.Sprintf("%scommand[%d]", p, j), a, true})
		}
		for _, k := range sortedKeys(r.Env) {
			texts = append(texts, text{p + "env", k, true}, text{fmt.Sprintf("%senv[%q]", p, k), r.Env[k], true})
		}
		for j, d := range r.DependsOn {
			texts = append(texts, text{fmt.Sprintf("%sdependsOn[%d]", p, j), d, false})
		}
		if pl := r.Placement; pl != nil {
			for j, n := range pl.Nodes {
				texts = append(texts, text{fmt.Sprintf("%splacement.nodes[%d]", p, j), n, false})
			}
			for j, n := range pl.Racks {
				texts = append(texts, text{fmt.Sprintf("%splacement.racks[%d]", p, j), n, false})
			}
			texts = append(texts, text{p + "placement.spread", pl.Spread, false}, text{p + "placement.pack", pl.Pack, false})
		}
	}
	files := append([]LocalFile{s.Binary}, s.Files...)
	for i, f := range files {
		field := "binary"
		if i > 0 {
			field = fmt.Sprintf("files[%d]", i-1)
		}
		texts = append(texts, text{field + ".name", f.Name, false}, text{field + ".url", f.URL, false},
			text{field + ".type", string(f.Type), false}, text{field + ".visibility", string(f.Visibility), false})
	}
	for _, t := range texts {
		switch {
		case !utf8.ValidString(t.s):
			return invalid(t.field, "%q is not valid UTF-8, which the JSON spec cannot carry (it would arrive with U+FFFD in place of the bytes)", t.s)
		case t.noNUL && strings.IndexByte(t.s, 0) >= 0:
			return invalid(t.field, "%q holds a NUL byte, which no program argument or environment variable can", t.s)
		}
	}
	return nil
}

func validateDevices(prefix string, d *Devices) error {
	if d == nil {
		return nil
	}
	if d.Kind != "gpu" && d.Kind != "fpga" && !IsMIGKind(d.Kind) {
		return invalid(prefix+"devices.kind", "%q: gpu, fpga or a MIG resource type (nvidia.com/mig-<profile>)", d.Kind)
	}
	if d.Amount < 0 {
		return invalid(prefix+"devices.amount", "%d: must not be negative", d.Amount)
	}
	return nil
}

// validRoleName reports whether s can name a role: letters, digits, - and _, starting with a
// letter, at most 63 (it goes into environment values, log records and file names).
func validRoleName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || (c < '0' || c > '9') && c != '-' && c != '_') {
			return false
		}
	}
	return true
}

// ValidRoleName reports whether s can name a role (letters, digits, - and _, starting with a
// letter, at most 63 characters).
func ValidRoleName(s string) bool { return validRoleName(s) }

// validateRoles checks the roles of a format-2 spec.
func (s *Spec) validateRoles() error {
	switch {
	case len(s.Resource) > 0:
		return invalid("resource", "set with roles: each role has its own")
	case s.Devices != nil:
		return invalid("devices", "set with roles: each role has its own")
	case len(s.Command) > 0:
		return invalid("command", "set with roles: each role has its own")
	case s.Restarts != 0:
		return invalid("restarts", "set with roles: each role has its own")
	}
	if len(s.Roles) > MaxRoles {
		return invalid("roles", "%d roles: at most %d", len(s.Roles), MaxRoles)
	}
	names := map[string]int{}
	prios := map[int32]string{}
	total := 0
	for i, r := range s.Roles {
		p := fmt.Sprintf("roles[%d].", i)
		if !validRoleName(r.Name) {
			return invalid(p+"name", "%q: a role name is letters, digits, - and _, starting with a letter, at most 63", r.Name)
		}
		if _, dup := names[r.Name]; dup {
			return invalid(p+"name", "%q is used twice", r.Name)
		}
		names[r.Name] = i
		if r.Containers < 1 {
			return invalid(p+"containers", "%d: at least 1", r.Containers)
		}
		total += r.Containers
		if total > MaxContainers {
			return invalid(p+"containers", "the roles have more than yarn-er's hard bound of %d ranks per job", MaxContainers)
		}
		if r.Restarts < 0 {
			return invalid(p+"restarts", "%d: must not be negative", r.Restarts)
		}
		if r.Priority < 0 {
			return invalid(p+"priority", "%d: must not be negative", r.Priority)
		}
		if prev, dup := prios[r.Priority]; dup {
			return invalid(p+"priority", "%d is role %s's too: one priority per role", r.Priority, prev)
		}
		prios[r.Priority] = r.Name
		if err := validateResource(p, r.Resource); err != nil {
			return err
		}
		if err := validateDevices(p, r.Devices); err != nil {
			return err
		}
		if err := r.Docker.Validate(p + "docker"); err != nil {
			return err
		}
		if len(r.Command) == 0 || r.Command[0] == "" {
			return invalid(p+"command", "empty: nothing to run")
		}
		for k := range r.Env {
			if !ValidEnvName(k) {
				return invalid(p+"env", "bad variable name %q", k)
			}
		}
		if r.Gang != "" && !validRoleName(r.Gang) {
			return invalid(p+"gang", "%q: a gang name is letters, digits, - and _, starting with a letter", r.Gang)
		}
		switch r.Framework {
		case FrameworkNone, FrameworkPyTorch, FrameworkTensorFlow:
		default:
			return invalid(p+"framework", "%q: %s or %s", r.Framework, FrameworkPyTorch, FrameworkTensorFlow)
		}
		if pl := r.Placement; pl != nil {
			for _, v := range []struct{ f, v string }{{"spread", pl.Spread}, {"pack", pl.Pack}} {
				if v.v != "" && v.v != "node" {
					return invalid(p+"placement."+v.f, "%q: node", v.v)
				}
			}
			if pl.Spread != "" && pl.Pack != "" {
				return invalid(p+"placement", "spread and pack together: give one")
			}
			if len(pl.Racks) > 0 && len(pl.Nodes) > 0 {
				return invalid(p+"placement.racks", "with nodes: give nodes or racks")
			}
			for j, rack := range pl.Racks {
				if err := CheckRack(rack); err != nil {
					return invalid(fmt.Sprintf("%splacement.racks[%d]", p, j), "%v", err)
				}
			}
			switch pl.Fallback {
			case "", FallbackAM, FallbackRelax, FallbackFail:
			default:
				return invalid(p+"placement.fallback", "%q: %s, %s or %s", pl.Fallback, FallbackAM, FallbackRelax, FallbackFail)
			}
		}
	}
	if s.Containers != total {
		return invalid("containers", "%d, but the roles have %d ranks in all", s.Containers, total)
	}
	for i, r := range s.Roles {
		for j, d := range r.DependsOn {
			if _, ok := names[d]; !ok || d == r.Name {
				return invalid(fmt.Sprintf("roles[%d].dependsOn[%d]", i, j), "%q is not another role of the job", d)
			}
		}
	}
	if cyc := DependencyCycle(s.Roles); cyc != nil {
		return invalid("roles", "dependsOn goes round in a cycle: %s", strings.Join(cyc, " -> "))
	}
	return nil
}

// DependencyCycle returns a cycle of the roles' dependsOn (first role repeated at the end), or
// nil when there is none. Dependencies on unknown roles are ignored.
func DependencyCycle(roles []Role) []string {
	deps := map[string][]string{}
	for _, r := range roles {
		deps[r.Name] = r.DependsOn
	}
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = active
		stack = append(stack, n)
		for _, d := range deps[n] {
			if _, known := deps[d]; !known {
				continue
			}
			switch state[d] {
			case active:
				i := slices.Index(stack, d)
				return append(slices.Clone(stack[i:]), d)
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, r := range roles {
		if state[r.Name] == unseen {
			if c := visit(r.Name); c != nil {
				return c
			}
		}
	}
	return nil
}

func validateResource(prefix string, rs []Quantity) error {
	seen := map[string]bool{}
	for i, q := range rs {
		field := fmt.Sprintf("%sresource[%d]", prefix, i)
		if q.Name == "" {
			return invalid(field+".name", "empty")
		}
		if seen[q.Name] {
			return invalid(field+".name", "%q listed twice", q.Name)
		}
		seen[q.Name] = true
		if q.Value < 0 {
			return invalid(field+".value", "%s=%d: must not be negative", q.Name, q.Value)
		}
	}
	for _, must := range []string{records.MemoryMB, records.VCores} {
		if !seen[must] {
			return invalid(prefix+"resource", "%s missing", must)
		}
	}
	return nil
}

func (f LocalFile) validate(field string) error {
	switch {
	case f.Name == "" || f.Name == "." || f.Name == ".." || strings.ContainsAny(f.Name, "/\x00"):
		return invalid(field+".name", "%q is not a plain file name", f.Name)
	case f.URL == "":
		return invalid(field+".url", "empty")
	case f.Size < 0:
		return invalid(field+".size", "%d: must not be negative", f.Size)
	case f.MtimeMillis <= 0:
		return invalid(field+".mtimeMillis", "%d: must be the file's HDFS modification time", f.MtimeMillis)
	case f.Type != records.LocalFile && f.Type != records.LocalArchive:
		return invalid(field+".type", "%q: %s or %s", f.Type, records.LocalFile, records.LocalArchive)
	}
	switch f.Visibility {
	case "", records.VisibilityApplication, records.VisibilityPrivate, records.VisibilityPublic:
	default:
		return invalid(field+".visibility", "%q: APPLICATION, PRIVATE or PUBLIC", f.Visibility)
	}
	return nil
}

func validHostPort(a string) bool {
	i := strings.LastIndexByte(a, ':')
	if i <= 0 || i == len(a)-1 {
		return false
	}
	for _, c := range a[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Quantity returns the named resource's quantity and whether the spec has it.
func (s *Spec) Quantity(name string) (Quantity, bool) {
	for _, q := range s.Resource {
		if q.Name == name {
			return q, true
		}
	}
	return Quantity{}, false
}

// EnvNames returns the Env keys sorted (for deterministic launch contexts).
func (s *Spec) EnvNames() []string { return sortedKeys(s.Env) }

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Environment variables every container of a yarn-er application gets.
const (
	EnvAppID       = "YARN_ER_APP_ID"
	EnvContainerID = "YARN_ER_CONTAINER_ID"
	EnvRank        = "YARN_ER_RANK"
	EnvWorldSize   = "YARN_ER_WORLD_SIZE"
	// EnvRole names the rank's role.
	EnvRole = "YARN_ER_ROLE"
	// EnvPeers names the file, in the container's working directory, listing every rank of the
	// job that has a container: one line "ROLE RANK HOST PORT" each.
	EnvPeers = "YARN_ER_PEERS"
	// EnvPort is the port the AM chose for this rank (the one its peers list).
	EnvPort = "YARN_ER_PORT"
	// EnvSpecFile names the spec file in the AM container (default FileName).
	EnvSpecFile = "YARN_ER_SPEC"
)

// The rendezvous variables every rank gets (docs/jobs.md), counted within its role, as
// torch.distributed's env:// and torchrun name them; TF_CONFIG only in roles of framework
// tensorflow.
const (
	EnvTorchRank      = "RANK"
	EnvTorchWorld     = "WORLD_SIZE"
	EnvLocalRank      = "LOCAL_RANK"
	EnvLocalWorldSize = "LOCAL_WORLD_SIZE"
	EnvNodeRank       = "NODE_RANK"
	EnvMasterAddr     = "MASTER_ADDR"
	EnvMasterPort     = "MASTER_PORT"
	EnvTFConfig       = "TF_CONFIG"
)

// AMSetEnv returns the variables yarn-er's ApplicationMaster sets in every rank's container,
// over any the job gives.
func AMSetEnv() []string {
	return []string{EnvAppID, EnvContainerID, EnvRank, EnvWorldSize, EnvRole, EnvPeers, EnvPort,
		EnvTorchRank, EnvTorchWorld, EnvLocalRank, EnvLocalWorldSize, EnvNodeRank, EnvMasterAddr, EnvMasterPort, EnvTFConfig}
}
