package jobfile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/yarn-er/yarn-er/jobspec"
)

const good = `# the issue's example
name: train
queue: gpu
node_label: gpu
priority: 3
tags: [nightly]
env: {MODE: fast, N: 3}
gang_timeout: 90s
roles:
  coordinator:
    memory: 512m
    command: "python coord.py --port $YARN_ER_PORT"
  worker:
    count: 2
    gpus: 1
    resources: {nvidia.com/mem: 4Gi}
    vcores: 2
    command: [python, train.py, --epochs, "3"]
    restarts: 2
    env: {MODE: slow}
    placement: {spread: node, fallback: fail}
    depends_on: coordinator
    gang: true
    framework: pytorch
`

func TestParse(t *testing.T) {
	j, err := Parse("job.yaml", []byte(good))
	require.NoError(t, err)
	prio := int32(3)
	assert.Equal(t, &Job{File: "job.yaml", Name: "train", Queue: "gpu", NodeLabel: "gpu", Priority: &prio, Tags: []string{"nightly"},
		Env: map[string]string{"MODE": "fast", "N": "3"}, GangTimeout: 90 * time.Second,
		Roles: []Role{
			{Name: "coordinator", Line: 10, Count: 1, Memory: "512m", Command: []string{"/bin/sh", "-c", "python coord.py --port $YARN_ER_PORT"}},
			{Name: "worker", Line: 13, Count: 2, GPUs: 1, Resources: []string{"nvidia.com/mem=4Gi"}, VCores: 2,
				Command: []string{"python", "train.py", "--epochs", "3"}, Restarts: 2, Env: map[string]string{"MODE": "slow"},
				Placement: &jobspec.Placement{Spread: "node", Fallback: "fail"}, DependsOn: []string{"coordinator"}, Gang: true, Framework: "pytorch"},
		}}, j)

	// placement racks, alone or with spread.
	j3, err := Parse("job.yaml", []byte("roles:\n  w:\n    count: 2\n    command: x\n    placement: {spread: node, racks: [/default-rack, /dc1/rack7]}\n"))
	require.NoError(t, err)
	assert.Equal(t, &jobspec.Placement{Spread: "node", Racks: []string{"/default-rack", "/dc1/rack7"}}, j3.Roles[0].Placement)

	// JSON is YAML too.
	j2, err := Parse("job.json", []byte(`{"roles": {"w": {"count": 4, "command": ["true"]}}, "gang": true, "gang_timeout": 60}`))
	require.NoError(t, err)
	assert.True(t, j2.Gang)
	assert.Equal(t, time.Minute, j2.GangTimeout)
	assert.Equal(t, 4, j2.Roles[0].Count)
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
		field     string
		msg, fix  string
	}{
		{"unknown field", "roles:\n  w:\n    command: [x]\n    gpu: 1\n", 4, "roles.w.gpu", "unknown field", "did you mean gpus?"},
		{"unknown top field", "rolez: {}\n", 1, "rolez", "unknown field", "did you mean roles?"},
		{"wrong type", "roles:\n  w:\n    count: two\n    command: [x]\n", 3, "roles.w.count", `"two": want a whole number`, "count: a number of ranks"},
		{"count zero", "roles:\n  w:\n    count: 0\n    command: [x]\n", 3, "roles.w.count", "from 1 to 100000", "count:"},
		{"count beyond the bound", "roles:\n  w:\n    count: 1000000000\n    command: [x]\n", 3, "roles.w.count", "from 1 to 100000", "hard bound"},
		{"ranks beyond the bound", "roles:\n  a: {count: 60000, command: x}\n  b: {count: 60000, command: y}\n", 2, "roles", "120000 ranks in all", "split the job"},
		{"no command", "roles:\n  w:\n    count: 2\n", 3, "roles.w.command", "missing", "add command:"},
		{"empty command", "roles:\n  w:\n    command: []\n", 3, "roles.w.command", "empty", "command:"},
		{"command a number", "roles:\n  w:\n    command: 3\n", 3, "roles.w.command", "want a list of words or a string", "/bin/sh -c"},
		{"cycle", "roles:\n  a:\n    command: x\n    depends_on: b\n  b:\n    command: y\n    depends_on: [a]\n", 2, "roles.a.depends_on", "a -> b -> a", "remove one"},
		{"unknown dependency", "roles:\n  a:\n    command: x\n    depends_on: [ps]\n", 2, "roles.a.depends_on[0]", `"ps" is not another role`, "name one of"},
		{"no roles", "name: x\n", 1, "roles", "missing", "add roles:"},
		{"empty roles", "roles: {}\n", 1, "roles", "empty", "add a role"},
		{"bad role name", "roles:\n  1w:\n    command: x\n", 2, "roles.1w", "not a role name", "letters"},
		{"field twice", "roles:\n  w:\n    command: x\n    command: y\n", 4, "roles.w.command", "given twice", "give it once"},
		{"alias", "roles:\n  a: &r\n    command: x\n  b: *r\n", 4, "", "aliases (*r)", "write the value out"},
		{"syntax", "roles: [\n", 1, "", "not YAML or JSON", "correct the syntax"},
		{"empty", "", 0, "", "empty", "describe the job"},
		{"two documents", "roles: {w: {command: x}}\n---\nname: y\n", 2, "", "a second YAML document", "one document"},
		{"spread rack", "roles:\n  w:\n    command: x\n    placement: {spread: rack}\n", 4, "roles.w.placement.spread", `"rack": want node`, "spread: node"},
		{"spread and pack", "roles:\n  w:\n    command: x\n    placement: {spread: node, pack: node}\n", 4, "roles.w.placement", "together", "not both"},
		{"bad fallback", "roles:\n  w:\n    command: x\n    placement: {spread: node, fallback: retry}\n", 4, "roles.w.placement.fallback", `"retry": want am, relax or fail`, "fallback: am, relax or fail"},
		{"rack not absolute", "roles:\n  w:\n    command: x\n    placement:\n      racks:\n        - /rack-a\n        - rack-b\n", 7, "roles.w.placement.racks[1]", `"rack-b" does not start with /`, "racks: [/default-rack]"},
		{"rack with a space", "roles:\n  w:\n    command: x\n    placement: {racks: [\"/r 1\"]}\n", 4, "roles.w.placement.racks[0]", "a space", "yarn-er cluster nodes"},
		{"rack empty part", "roles:\n  w:\n    command: x\n    placement: {racks: [/dc//r]}\n", 4, "roles.w.placement.racks[0]", "an empty part", "/DC/NAME"},
		{"racks empty", "roles:\n  w:\n    command: x\n    placement: {racks: []}\n", 4, "roles.w.placement.racks", "an empty list", "leave racks out"},
		{"racks a string", "roles:\n  w:\n    command: x\n    placement: {racks: /r}\n", 4, "roles.w.placement.racks", "want a list", "racks: [/default-rack]"},
		{"racks and nodes", "roles:\n  w:\n    command: x\n    placement:\n      nodes: [h1]\n      racks: [/r]\n", 5, "roles.w.placement.racks", "racks and nodes together", "not both"},
		{"framework", "roles:\n  w:\n    command: x\n    framework: jax\n", 4, "roles.w.framework", `"jax": unknown framework`, "pytorch or"},
		{"profile with memory", "roles:\n  w:\n    command: x\n    profile: big\n    memory: 1g\n", 3, "roles.w.profile", "with memory", "profile: alone"},
		{"gang not bool", "gang: yes please\nroles: {w: {command: x}}\n", 1, "gang", "want true or false", "true or false"},
		{"bad duration", "gang_timeout: soon\nroles: {w: {command: x}}\n", 1, "gang_timeout", `"soon": not a positive duration`, "90s"},
		{"env list", "env: [A=1]\nroles: {w: {command: x}}\n", 1, "env", "want a mapping", "KEY: VALUE"},
		{"env null", "env: {A: }\nroles: {w: {command: x}}\n", 1, "env.A", "want a value", "A: VALUE"},
		{"not a mapping", "- a\n- b\n", 1, "", "want a mapping", "KEY: VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("job.yaml", []byte(tc.doc))
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalid))
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "job.yaml", e.File)
			assert.Equal(t, tc.line, e.Line, "line")
			assert.Equal(t, tc.field, e.Field)
			assert.Contains(t, e.Msg, tc.msg)
			assert.Contains(t, e.Fix, tc.fix)
			want := "job.yaml"
			if tc.line > 0 {
				want += fmt.Sprintf(":%d", tc.line)
			}
			assert.True(t, strings.HasPrefix(err.Error(), want+": "), err.Error())
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	_, err := Parse("big.yaml", make([]byte, MaxSize+1))
	assert.ErrorContains(t, err, "larger than the 1048576-byte limit")
	p := filepath.Join(t.TempDir(), "big.yaml")
	require.NoError(t, os.WriteFile(p, []byte("# "+strings.Repeat("x", MaxSize)+"\n"), 0o600))
	_, err = ReadFile(p)
	assert.ErrorContains(t, err, "limit")
	_, err = ReadFile(filepath.Join(t.TempDir(), "none.yaml"))
	assert.ErrorContains(t, err, "no such file")
}

func TestRequest(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "train.py"), []byte("print(1)"), 0o600))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("tar"))
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "venv.tgz"), gz.Bytes(), 0o600))
	path := filepath.Join(dir, "job.yaml")
	require.NoError(t, os.WriteFile(path, []byte(good+"files: [train.py]\narchives: [venv.tgz#venv]\nam_memory: 512m\n"), 0o600))
	j, err := ReadFile(path)
	require.NoError(t, err)
	req, err := j.Request()
	require.NoError(t, err)
	assert.Equal(t, "train", req.Name)
	assert.Equal(t, int64(512), req.AMMemoryMB)
	require.Len(t, req.Files, 1)
	assert.Equal(t, filepath.Join(dir, "train.py"), req.Files[0].Local, "relative to the job file")
	assert.Equal(t, "train.py", req.Files[0].Name)
	assert.Equal(t, "venv", req.Archives[0].Name)
	require.Len(t, req.Roles, 2)
	assert.Equal(t, "worker", req.Roles[1].Name)
	assert.Equal(t, 2, req.Roles[1].Containers)
	assert.Equal(t, path+":13: roles.worker", req.Roles[1].Field)

	plan, err := req.Plan(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, plan.Total)
	assert.Equal(t, "worker", plan.Roles[1].GangName)
	assert.Equal(t, "<memory-mb:1024, vcores:2, yarn.io/gpu:1, nvidia.com/mem:4294967296>", plan.Roles[1].Resource.String(), "a plain count without the cluster's types")

	j.Files = []string{"missing.bin"}
	_, err = j.Request()
	assert.ErrorContains(t, err, "files[0]")
}

// The schema lists exactly the fields the parser knows, at every level, and the examples and
// the test's job file are valid under it.
func TestSchema(t *testing.T) {
	var schema map[string]any
	require.NoError(t, json.Unmarshal(Schema(), &schema))
	keys := func(m any) []string {
		var out []string
		for k := range m.(map[string]any)["properties"].(map[string]any) {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	defs := schema["$defs"].(map[string]any)
	role := defs["role"].(map[string]any)
	placement := role["properties"].(map[string]any)["placement"]
	f := Fields()
	for level, m := range map[string]any{"job": schema, "role": role, "placement": placement} {
		want := slices.Clone(f[level])
		sort.Strings(want)
		assert.Equal(t, want, keys(m), "level %s", level)
	}

	docs := map[string][]byte{"good": []byte(good)}
	examples, err := filepath.Glob("../examples/jobs/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	for _, e := range examples {
		b, err := os.ReadFile(e)
		require.NoError(t, err)
		docs[e] = b
	}
	for name, b := range docs {
		_, err := Parse(name, b)
		require.NoError(t, err, name)
		var v any
		require.NoError(t, yaml.Unmarshal(b, &v), name)
		assert.NoError(t, validate(schema, schema, v, ""), name)
	}
	// And what the parser refuses, the schema refuses too.
	for _, bad := range []string{"roles: {w: {count: 2}}", "roles: {w: {command: x, gpu: 1}}", "rolez: {}", "roles: {w: {command: x, placement: {spread: rack}}}",
		"roles: {w: {command: x, count: 0}}", "roles: {w: {command: 3}}", "roles: {w: {command: x, placement: {racks: [rack1]}}}",
		"roles: {w: {command: x, placement: {racks: []}}}", "roles: {w: {command: x, placement: {racks: [/dc//r]}}}"} {
		var v any
		require.NoError(t, yaml.Unmarshal([]byte(bad), &v))
		assert.Error(t, validate(schema, schema, v, ""), bad)
		_, err := Parse("bad.yaml", []byte(bad))
		assert.Error(t, err, bad)
	}
}

// validate checks v against the subset of JSON Schema schema.json uses.
func validate(root, s map[string]any, v any, at string) error {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		return validate(root, root["$defs"].(map[string]any)[name].(map[string]any), v, at)
	}
	if one, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, alt := range one {
			if validate(root, alt.(map[string]any), v, at) == nil {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: matches %d of oneOf", at, n)
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v not in %v", at, v, enum)
	}
	if t, ok := s["type"]; ok {
		types := []any{t}
		if l, ok := t.([]any); ok {
			types = l
		}
		okType := false
		for _, ty := range types {
			switch ty {
			case "object":
				_, okType = v.(map[string]any)
			case "array":
				_, okType = v.([]any)
			case "string":
				_, okType = v.(string)
			case "integer":
				_, okType = v.(int)
			case "number":
				switch v.(type) {
				case int, float64:
					okType = true
				}
			case "boolean":
				_, okType = v.(bool)
			}
			if okType {
				break
			}
		}
		if !okType {
			return fmt.Errorf("%s: %v (%T) is not %v", at, v, v, t)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s: %s required", at, r)
			}
		}
		if n, ok := s["minProperties"].(float64); ok && len(x) < int(n) {
			return fmt.Errorf("%s: fewer than %v properties", at, n)
		}
		for k, val := range x {
			if pn, ok := s["propertyNames"].(map[string]any); ok {
				if !regexp.MustCompile(pn["pattern"].(string)).MatchString(k) {
					return fmt.Errorf("%s: name %q", at, k)
				}
			}
			if ps, ok := props[k]; ok {
				if err := validate(root, ps.(map[string]any), val, at+"."+k); err != nil {
					return err
				}
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: unknown property %q", at, k)
				}
			case map[string]any:
				if err := validate(root, ap, val, at+"."+k); err != nil {
					return err
				}
			}
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && len(x) < int(n) {
			return fmt.Errorf("%s: fewer than %v items", at, n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				if err := validate(root, items, it, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case int:
		if m, ok := s["minimum"].(float64); ok && float64(x) < m {
			return fmt.Errorf("%s: %d below %v", at, x, m)
		}
		if m, ok := s["maximum"].(float64); ok && float64(x) > m {
			return fmt.Errorf("%s: %d above %v", at, x, m)
		}
	case string:
		if m, ok := s["minLength"].(float64); ok && len(x) < int(m) {
			return fmt.Errorf("%s: shorter than %v", at, m)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			return fmt.Errorf("%s: %q does not match %s", at, x, p)
		}
	}
	return nil
}

// TestImage: image: at job and role level becomes the request's Docker image and the role's
// own; the schema and the parser agree on it.
func TestImage(t *testing.T) {
	j, err := ReadFile("../examples/jobs/docker-mig.yaml")
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com:5000/ml/torch:2.4", j.Image)
	req, err := j.Request()
	require.NoError(t, err)
	require.NotNil(t, req.Docker)
	assert.Equal(t, "registry.example.com:5000/ml/torch:2.4", req.Docker.Image)
	require.Len(t, req.Roles, 2)
	assert.Empty(t, req.Roles[0].Image)
	assert.Equal(t, "registry.example.com:5000/ml/torch-infer:2.4", req.Roles[1].Image)
	plan, err := req.Plan(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com:5000/ml/torch:2.4", plan.Roles[0].Docker.Image)
	assert.Equal(t, "registry.example.com:5000/ml/torch-infer:2.4", plan.Roles[1].Docker.Image)
	assert.Equal(t, "nvidia.com/mig-1g.10gb", plan.Roles[1].Devices.Kind)

	_, err = Parse("bad.yaml", []byte("roles: {w: {command: x, image: [a]}}\n"))
	assert.Error(t, err)
}
