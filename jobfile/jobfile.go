// Package jobfile reads the job file of `yarn-er submit --spec job.yaml` (YAML, or JSON, which is
// YAML too): the job's name, queue, node label, priority, files, environment and its roles, each
// with its count, resources, command, restarts, environment, placement, dependencies, gang and
// framework. Every error names the file, the line and the field, and says how to fix it; nothing
// is read beyond MaxSize, and aliases (which could make a small file expand without bound) are
// refused. docs/jobs.md describes the format; schema.json is its JSON Schema.
package jobfile

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"github.com/yarn-er/yarn-er/internal/suggest"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/yarn-er/yarn-er/jobspec"
)

//go:embed schema.json
var schema []byte

// Schema returns the JSON Schema (draft 2020-12) of a job file (a copy).
func Schema() []byte { return bytes.Clone(schema) }

// MaxSize bounds a job file.
const MaxSize = 1 << 20

// MaxRoles bounds the roles of one job (jobspec.MaxRoles).
const MaxRoles = jobspec.MaxRoles

// DefaultGangTimeout is the gang timeout when the job file gives none.
const DefaultGangTimeout = time.Duration(jobspec.DefaultGangTimeoutMillis) * time.Millisecond

// ErrInvalid matches every *Error.
var ErrInvalid = errors.New("invalid job file")

// Error is a job file that cannot be used: File and Line say where, Field names the field
// (roles.worker.count), Fix how to set it right.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
	Fix   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString(" (fix: " + e.Fix + ")")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true for every *Error.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Job is a job file as read.
type Job struct {
	// File is the job file's path as given.
	File string `json:"-"`
	// Name, Queue and NodeLabel are the application's name, queue and node label ("": defaults).
	Name      string `json:"name,omitempty"`
	Queue     string `json:"queue,omitempty"`
	NodeLabel string `json:"node_label,omitempty"`
	// Priority is the application priority (nil: the queue's).
	Priority *int32 `json:"priority,omitempty"`
	// Tags are the application's tags.
	Tags []string `json:"tags,omitempty"`
	// Files and Archives are LOCAL[#NAME] items localized into every container (relative paths
	// are relative to the job file's directory).
	Files    []string `json:"files,omitempty"`
	Archives []string `json:"archives,omitempty"`
	// Env is added to every container's environment.
	Env map[string]string `json:"env,omitempty"`
	// Gang puts every role into one gang.
	Gang bool `json:"gang,omitempty"`
	// GangTimeout is how long a gang waits for all its containers (0: DefaultGangTimeout).
	GangTimeout time.Duration `json:"gang_timeout,omitempty"`
	// GangTimeoutAction is "fail" (default) or "wait" (give back, ask again, wait again).
	GangTimeoutAction string `json:"gang_timeout_action,omitempty"`
	// MaxAttempts, AMMemory and AMVCores size the ApplicationMaster (0/"": defaults).
	MaxAttempts int32  `json:"max_attempts,omitempty"`
	AMMemory    string `json:"am_memory,omitempty"`
	AMVCores    int32  `json:"am_vcores,omitempty"`
	// Image runs every role without an image of its own in this Docker image (yarn-er submit
	// --image).
	Image string `json:"image,omitempty"`
	// Roles are the job's roles, in the file's order.
	Roles []Role `json:"roles"`
}

// Role is one role of a job file.
type Role struct {
	Name string `json:"name"`
	// Line is where the role starts in the file.
	Line int `json:"-"`
	// Count is the number of ranks (default 1).
	Count int `json:"count"`
	// GPUs, FPGAs, Resources (TYPE=AMOUNT[UNIT]), Memory and VCores size each container; Profile
	// names a YARN resource profile instead.
	GPUs      int64    `json:"gpus,omitempty"`
	FPGAs     int64    `json:"fpgas,omitempty"`
	Resources []string `json:"resources,omitempty"`
	Memory    string   `json:"memory,omitempty"`
	VCores    int64    `json:"vcores,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	// Command is the program and its arguments; a command given as one string is run by
	// /bin/sh -c.
	Command []string `json:"command"`
	// Restarts is how often one rank may be restarted after it failed.
	Restarts int `json:"restarts,omitempty"`
	// Env is added to the role's containers (over the job's).
	Env map[string]string `json:"env,omitempty"`
	// Placement says where the ranks may land.
	Placement *jobspec.Placement `json:"placement,omitempty"`
	// DependsOn are roles that must run before this one is asked for.
	DependsOn []string `json:"depends_on,omitempty"`
	// Gang: the role's ranks start together (all or none).
	Gang bool `json:"gang,omitempty"`
	// Framework is "", pytorch or tensorflow (TF_CONFIG; a tensorflow role is always in a gang).
	Framework string `json:"framework,omitempty"`
	// Image runs the role's ranks in this Docker image (over the job's image).
	Image string `json:"image,omitempty"`
}

// The fields of each level, as the parser knows them (and the schema must list).
var (
	topFields       = []string{"name", "queue", "node_label", "priority", "tags", "files", "archives", "env", "gang", "gang_timeout", "gang_timeout_action", "max_attempts", "am_memory", "am_vcores", "image", "roles"}
	roleFields      = []string{"count", "gpus", "fpgas", "resources", "memory", "vcores", "profile", "command", "restarts", "env", "placement", "depends_on", "gang", "framework", "image"}
	placementFields = []string{"spread", "pack", "nodes", "racks", "fallback"}
)

// Fields returns the fields the parser knows at each level: "job", "role" and "placement".
func Fields() map[string][]string {
	return map[string][]string{"job": slices.Clone(topFields), "role": slices.Clone(roleFields), "placement": slices.Clone(placementFields)}
}

// ReadFile reads and parses the job file at path.
func ReadFile(path string) (*Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error(), Fix: "give the path of a job file (YAML or JSON)"}
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxSize+1)); err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return Parse(path, buf.Bytes())
}

// Parse parses a job file; name names it in errors.
func Parse(name string, data []byte) (*Job, error) {
	p := &parser{file: name}
	if len(data) > MaxSize {
		return nil, p.errf(nil, "", "keep the job file under 1 MiB: ship data with files:", "%d bytes or more is larger than the %d-byte limit", len(data), MaxSize)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.errf(nil, "", "describe the job: name, roles: {ROLE: {count, command, ...}} (docs/jobs.md)", "empty")
		}
		return nil, &Error{File: name, Line: yamlErrLine(err), Msg: "not YAML or JSON: " + strings.TrimPrefix(err.Error(), "yaml: "), Fix: "correct the syntax at that line"}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, p.errf(&extra, "", "keep one document in the file (drop the second ---)", "a second YAML document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if err := noAliases(p, root, 0); err != nil {
		return nil, err
	}
	j := &Job{File: name}
	if err := p.job(root, j); err != nil {
		return nil, err
	}
	return j, nil
}

// yamlErrLine finds "line N" in a yaml.v3 error message.
func yamlErrLine(err error) int {
	msg := err.Error()
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	j := i + 5
	for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(msg[i+5 : j])
	return n
}

type parser struct {
	file string
}

func (p *parser) errf(n *yaml.Node, field, fix, format string, args ...any) error {
	e := &Error{File: p.file, Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
	if n != nil {
		e.Line = n.Line
	}
	return e
}

// noAliases refuses anchors' aliases and merge keys, and bounds the nesting.
func noAliases(p *parser, n *yaml.Node, depth int) error {
	if depth > 32 {
		return p.errf(n, "", "a job file nests a few levels only", "nested more than 32 levels deep")
	}
	if n.Kind == yaml.AliasNode {
		return p.errf(n, "", "write the value out instead of *"+n.Value, "aliases (*%s) are not supported in job files", n.Value)
	}
	for _, c := range n.Content {
		if err := noAliases(p, c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty (null)"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// mapping walks a mapping's keys in order, refusing keys not in known (with the closest one as
// the fix) and keys given twice.
func (p *parser) mapping(n *yaml.Node, field string, known []string, fn func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		what := "the job"
		if field != "" {
			what = field
		}
		return p.errf(n, field, "write "+what+" as KEY: VALUE lines", "%s: want a mapping", kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, field, "keys are plain names", "a key that is %s", kindName(k))
		}
		kf := join(field, k.Value)
		if seen[k.Value] {
			return p.errf(k, kf, "give it once", "given twice")
		}
		seen[k.Value] = true
		if known != nil && !slices.Contains(known, k.Value) {
			fix := "remove it; known fields: " + strings.Join(known, ", ")
			if near := closest(k.Value, known); near != "" {
				fix = "did you mean " + near + "? (known fields: " + strings.Join(known, ", ") + ")"
			}
			return p.errf(k, kf, fix, "unknown field")
		}
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// closest returns the known name within edit distance 2 of s, if one.
func closest(s string, known []string) string { return suggest.Nearest(s, known, false) }

func (p *parser) str(n *yaml.Node, field, fix string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, field, fix, "%s: want a string", kindName(n))
	}
	return n.Value, nil
}

func (p *parser) integer(n *yaml.Node, field string, lo, hi int64, fix string) (int64, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, p.errf(n, field, fix, "%s: want a whole number", kindName(n))
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || v < lo || v > hi {
		return 0, p.errf(n, field, fix, "%s: want a whole number from %d to %d", n.Value, lo, hi)
	}
	return v, nil
}

func (p *parser) boolean(n *yaml.Node, field string) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, p.errf(n, field, "write true or false", "%s: want true or false", kindName(n))
	}
	return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", nil
}

func (p *parser) strList(n *yaml.Node, field, fix string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, field, fix, "%s: want a list", kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		s, err := p.str(c, fmt.Sprintf("%s[%d]", field, i), fix)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// scalarText is a scalar's text whatever its type (an environment value 1 is "1").
func (p *parser) scalarText(n *yaml.Node, field, fix string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, field, fix, "%s: want a value", kindName(n))
	}
	return n.Value, nil
}

func (p *parser) env(n *yaml.Node, field string) (map[string]string, error) {
	env := map[string]string{}
	err := p.mapping(n, field, nil, func(key string, k, v *yaml.Node) error {
		s, err := p.scalarText(v, join(field, key), "give the variable a value: "+key+": VALUE")
		env[key] = s
		return err
	})
	return env, err
}

func (p *parser) job(n *yaml.Node, j *Job) error {
	var rolesNode *yaml.Node
	err := p.mapping(n, "", topFields, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			j.Name, err = p.str(v, key, "name: my-job")
		case "queue":
			j.Queue, err = p.str(v, key, "queue: default")
		case "node_label":
			j.NodeLabel, err = p.str(v, key, "node_label: gpu")
		case "priority":
			var x int64
			x, err = p.integer(v, key, 0, math.MaxInt32, "priority: 0 (or leave it out for the queue's)")
			pr := int32(x)
			j.Priority = &pr
		case "tags":
			j.Tags, err = p.strList(v, key, "tags: [team-a, nightly]")
		case "files":
			j.Files, err = p.strList(v, key, "files: [data.csv, model.bin#weights]")
		case "archives":
			j.Archives, err = p.strList(v, key, "archives: [venv.tgz#venv]")
		case "env":
			j.Env, err = p.env(v, key)
		case "gang":
			j.Gang, err = p.boolean(v, key)
		case "gang_timeout":
			j.GangTimeout, err = p.duration(v, key)
		case "gang_timeout_action":
			j.GangTimeoutAction, err = p.str(v, key, "gang_timeout_action: fail (or wait)")
			if err == nil && j.GangTimeoutAction != jobspec.GangFail && j.GangTimeoutAction != jobspec.GangWait {
				return p.errf(v, key, "gang_timeout_action: fail, or wait to give the containers back and ask again", "%q: want fail or wait", j.GangTimeoutAction)
			}
		case "max_attempts":
			var x int64
			x, err = p.integer(v, key, 1, math.MaxInt32, "max_attempts: 2")
			j.MaxAttempts = int32(x)
		case "am_memory":
			j.AMMemory, err = p.scalarText(v, key, "am_memory: 512m")
		case "am_vcores":
			var x int64
			x, err = p.integer(v, key, 1, math.MaxInt32, "am_vcores: 1")
			j.AMVCores = int32(x)
		case "image":
			j.Image, err = p.str(v, key, "image: REGISTRY/NAME:TAG, e.g. registry.example.com:5000/ml/torch:2.4")
		case "roles":
			rolesNode = v
		}
		return err
	})
	if err != nil {
		return err
	}
	if rolesNode == nil {
		return p.errf(n, "roles", "add roles: {worker: {count: 2, gpus: 1, command: [python, train.py]}}", "missing: a job has at least one role")
	}
	if err := p.mapping(rolesNode, "roles", nil, func(name string, k, v *yaml.Node) error {
		if !jobspec.ValidRoleName(name) {
			return p.errf(k, "roles."+name, "name roles with letters, digits, - and _, starting with a letter", "%q is not a role name", name)
		}
		if len(j.Roles) == MaxRoles {
			return p.errf(k, "roles."+name, "use fewer roles", "more than %d roles", MaxRoles)
		}
		r := Role{Name: name, Line: k.Line, Count: 1}
		if err := p.role(v, "roles."+name, &r); err != nil {
			return err
		}
		j.Roles = append(j.Roles, r)
		return nil
	}); err != nil {
		return err
	}
	if len(j.Roles) == 0 {
		return p.errf(rolesNode, "roles", "add a role: roles: {worker: {command: [python, train.py]}}", "empty: a job has at least one role")
	}
	return p.check(j, n, rolesNode)
}

func (p *parser) duration(n *yaml.Node, field string) (time.Duration, error) {
	const fix = "give a duration such as 90s, 10m or 1h (or a number of seconds)"
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		s, err := p.integer(n, field, 1, 365*24*3600, fix)
		return time.Duration(s) * time.Second, err
	}
	s, err := p.str(n, field, fix)
	if err != nil {
		return 0, err
	}
	d, perr := time.ParseDuration(s)
	if perr != nil || d <= 0 || d > 365*24*time.Hour {
		return 0, p.errf(n, field, fix, "%q: not a positive duration", s)
	}
	return d, nil
}

func (p *parser) role(n *yaml.Node, field string, r *Role) error {
	hasCommand := false
	err := p.mapping(n, field, roleFields, func(key string, k, v *yaml.Node) error {
		f := join(field, key)
		var err error
		switch key {
		case "count":
			var x int64
			x, err = p.integer(v, f, 1, jobspec.MaxContainers, fmt.Sprintf("count: a number of ranks from 1 to %d (yarn-er's hard bound)", jobspec.MaxContainers))
			r.Count = int(x)
		case "gpus":
			r.GPUs, err = p.integer(v, f, 0, 1<<20, "gpus: 1")
		case "fpgas":
			r.FPGAs, err = p.integer(v, f, 0, 1<<20, "fpgas: 1")
		case "memory":
			r.Memory, err = p.scalarText(v, f, "memory: 4g (or 512m, or 4096 for MiB)")
		case "vcores":
			r.VCores, err = p.integer(v, f, 1, 1<<20, "vcores: 2")
		case "profile":
			r.Profile, err = p.str(v, f, "profile: NAME of a YARN resource profile")
		case "image":
			r.Image, err = p.str(v, f, "image: REGISTRY/NAME:TAG, e.g. registry.example.com:5000/ml/torch:2.4")
		case "resources":
			err = p.mapping(v, f, nil, func(typ string, _, amount *yaml.Node) error {
				s, err := p.scalarText(amount, join(f, typ), typ+": AMOUNT[UNIT], e.g. nvidia.com/gpu: 1")
				r.Resources = append(r.Resources, typ+"="+s)
				return err
			})
		case "command":
			hasCommand = true
			switch {
			case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
				if strings.TrimSpace(v.Value) == "" {
					return p.errf(v, f, "give the program to run: command: [python, train.py] or command: \"python train.py\"", "empty")
				}
				r.Command = []string{"/bin/sh", "-c", v.Value}
			case v.Kind == yaml.SequenceNode:
				r.Command, err = p.strList(v, f, "command: [python, train.py, --epochs, \"3\"] (quote numbers)")
				if err == nil && (len(r.Command) == 0 || r.Command[0] == "") {
					return p.errf(v, f, "give the program to run: command: [python, train.py]", "empty")
				}
			default:
				return p.errf(v, f, "command: [python, train.py] (a list of words) or command: \"python train.py\" (run by /bin/sh -c)", "%s: want a list of words or a string", kindName(v))
			}
		case "restarts":
			var x int64
			x, err = p.integer(v, f, 0, 1<<20, "restarts: 2")
			r.Restarts = int(x)
		case "env":
			r.Env, err = p.env(v, f)
		case "placement":
			r.Placement = &jobspec.Placement{}
			err = p.mapping(v, f, placementFields, func(pk string, _, pv *yaml.Node) error {
				pf := join(f, pk)
				var err error
				switch pk {
				case "spread", "pack":
					var s string
					if s, err = p.str(pv, pf, pk+": node"); err == nil && s != "node" {
						return p.errf(pv, pf, pk+": node (the only scope yarn-er places by)", "%q: want node", s)
					}
					if pk == "spread" {
						r.Placement.Spread = s
					} else {
						r.Placement.Pack = s
					}
				case "nodes":
					r.Placement.Nodes, err = p.strList(pv, pf, "nodes: [host1, host2]")
				case "racks":
					const fix = "racks: [/default-rack] (a rack as `yarn-er cluster nodes` lists it: /NAME, or /DC/NAME)"
					if r.Placement.Racks, err = p.strList(pv, pf, fix); err != nil {
						return err
					}
					if len(r.Placement.Racks) == 0 {
						return p.errf(pv, pf, fix+", or leave racks out", "an empty list")
					}
					for i, rack := range r.Placement.Racks {
						if rerr := jobspec.CheckRack(rack); rerr != nil {
							return p.errf(pv.Content[i], fmt.Sprintf("%s[%d]", pf, i), fix, "%v", rerr)
						}
					}
				case "fallback":
					var s string
					if s, err = p.str(pv, pf, "fallback: fail"); err == nil {
						switch s {
						case jobspec.FallbackAM, jobspec.FallbackRelax, jobspec.FallbackFail:
							r.Placement.Fallback = s
						default:
							return p.errf(pv, pf, "fallback: am, relax or fail", "%q: want am, relax or fail", s)
						}
					}
				}
				return err
			})
			if err == nil && r.Placement.Spread != "" && r.Placement.Pack != "" {
				return p.errf(v, f, "keep spread or pack, not both", "spread and pack together")
			}
			if err == nil && len(r.Placement.Racks) > 0 && len(r.Placement.Nodes) > 0 {
				return p.errf(v, join(f, "racks"), "keep nodes (they name the NodeManagers already) or racks, not both", "racks and nodes together")
			}
		case "depends_on":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
				r.DependsOn = []string{v.Value}
			} else {
				r.DependsOn, err = p.strList(v, f, "depends_on: [coordinator]")
			}
		case "gang":
			r.Gang, err = p.boolean(v, f)
		case "framework":
			r.Framework, err = p.str(v, f, "framework: pytorch or tensorflow")
			if err == nil && r.Framework != jobspec.FrameworkPyTorch && r.Framework != jobspec.FrameworkTensorFlow {
				return p.errf(v, f, "framework: pytorch or framework: tensorflow (or leave it out)", "%q: unknown framework", r.Framework)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if !hasCommand {
		return p.errf(n, join(field, "command"), "add command: [python, train.py] (or command: \"python train.py\", run by /bin/sh -c)", "missing: the role runs nothing")
	}
	if r.Profile != "" && (r.Memory != "" || r.VCores != 0 || r.GPUs != 0 || r.FPGAs != 0 || len(r.Resources) > 0) {
		return p.errf(n, join(field, "profile"), "give profile: alone, or the resources without profile:", "profile %q with memory, vcores, gpus, fpgas or resources", r.Profile)
	}
	return nil
}

// check checks what spans roles: dependencies (known roles, no cycle).
func (p *parser) check(j *Job, root, rolesNode *yaml.Node) error {
	names := map[string]bool{}
	for _, r := range j.Roles {
		names[r.Name] = true
	}
	var specRoles []jobspec.Role
	for _, r := range j.Roles {
		for i, d := range r.DependsOn {
			if !names[d] || d == r.Name {
				known := make([]string, 0, len(j.Roles))
				for _, o := range j.Roles {
					if o.Name != r.Name {
						known = append(known, o.Name)
					}
				}
				return &Error{File: p.file, Line: r.Line, Field: fmt.Sprintf("roles.%s.depends_on[%d]", r.Name, i),
					Msg: fmt.Sprintf("%q is not another role of the job", d), Fix: "name one of: " + strings.Join(known, ", ")}
			}
		}
		specRoles = append(specRoles, jobspec.Role{Name: r.Name, DependsOn: r.DependsOn})
	}
	if cyc := jobspec.DependencyCycle(specRoles); cyc != nil {
		line := 0
		for _, r := range j.Roles {
			if r.Name == cyc[0] {
				line = r.Line
			}
		}
		return &Error{File: p.file, Line: line, Field: "roles." + cyc[0] + ".depends_on",
			Msg: "depends_on goes round in a cycle: " + strings.Join(cyc, " -> "), Fix: "remove one of the dependencies so that some role starts first"}
	}
	total := 0
	for _, r := range j.Roles {
		total += r.Count
	}
	if total > jobspec.MaxContainers {
		return &Error{File: p.file, Line: rolesNode.Line, Field: "roles", Msg: fmt.Sprintf("%d ranks in all, above yarn-er's hard bound of %d per job", total, jobspec.MaxContainers),
			Fix: "ask for fewer ranks, or split the job"}
	}
	return nil
}
