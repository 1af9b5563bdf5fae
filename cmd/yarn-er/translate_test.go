package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

const (
	exampleLegacy = "../../examples/flink-conf.yaml"
	exampleNested = "../../examples/config.yaml"
	gpuOnlyHadoop = "testdata/translate/hadoop-gpu-only"
	// issueResource is the resource vector the issue asks for, byte for byte.
	issueResource = `{"memory-mb":4096,"vcores":4,"yarn.io/gpu":2,"yarn.io/fpga":1}`
)

// translateJSON is the public JSON shape of `yarn-er translate -o json`.
type translateJSON struct {
	Resource          map[string]json.Number `json:"resource"`
	ExternalResources []struct {
		Name                string            `json:"name"`
		Amount              json.Number       `json:"amount"`
		YarnConfigKey       string            `json:"yarnConfigKey"`
		KubernetesConfigKey string            `json:"kubernetesConfigKey"`
		DriverFactoryClass  string            `json:"driverFactoryClass"`
		Params              map[string]string `json:"params"`
	} `json:"externalResources"`
	Warnings  []string          `json:"warnings"`
	Memory    map[string]any    `json:"memory"`
	RMRequest []json.RawMessage `json:"rmRequest"`
	Sources   []struct {
		Resource string `json:"resource"`
		Key      string `json:"key"`
		Source   string `json:"source"`
		Default  bool   `json:"default"`
	} `json:"sources"`
}

// decodeTranslate parses the JSON output, checks that it has exactly the public keys, in order, and
// returns it with the raw resource object (compacted).
func decodeTranslate(t *testing.T, stdout string) (translateJSON, string) {
	t.Helper()
	var out translateJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&out), stdout)

	var raw struct {
		Resource json.RawMessage `json:"resource"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, raw.Resource))
	keys := objectKeys(t, stdout)
	require.GreaterOrEqual(t, len(keys), 3)
	assert.Equal(t, []string{"resource", "externalResources", "warnings"}, keys[:3], "the public keys first")
	for _, extra := range keys[3:] {
		assert.Contains(t, []string{"memory", "rmRequest", "sources"}, extra, "only additive keys")
	}
	return out, compact.String()
}

// objectKeys returns the keys of the top-level JSON object in document order.
func objectKeys(t *testing.T, doc string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestTranslateIssueExampleBothFormats(t *testing.T) {
	for _, path := range []string{exampleLegacy, exampleNested} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			res := runCLI(t, nil, "translate", "--flink-conf", path, "-o", "json")
			require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
			out, rawResource := decodeTranslate(t, res.stdout)
			assert.Equal(t, issueResource, rawResource, "exact keys, values and order")
			assert.Equal(t, map[string]json.Number{"memory-mb": "4096", "vcores": "4", "yarn.io/gpu": "2", "yarn.io/fpga": "1"}, out.Resource)
			assert.Equal(t, []string{}, out.Warnings)
			require.Len(t, out.ExternalResources, 2)
			gpu := out.ExternalResources[0]
			assert.Equal(t, "gpu", gpu.Name)
			assert.Equal(t, json.Number("2"), gpu.Amount)
			assert.Equal(t, "yarn.io/gpu", gpu.YarnConfigKey)
			assert.Equal(t, "", gpu.KubernetesConfigKey)
			assert.Equal(t, "org.apache.flink.externalresource.gpu.GPUDriverFactory", gpu.DriverFactoryClass)
			assert.Equal(t, "--enable-coordination-mode", gpu.Params["discovery-script.args"])
			assert.Equal(t, "fpga", out.ExternalResources[1].Name)
			assert.NotNil(t, out.ExternalResources[1].Params)

			// The external resources have exactly the public keys, in order.
			var arr struct {
				ExternalResources []json.RawMessage `json:"externalResources"`
			}
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &arr))
			assert.Equal(t, []string{"name", "amount", "yarnConfigKey", "kubernetesConfigKey", "driverFactoryClass", "params"},
				objectKeys(t, string(arr.ExternalResources[0])))
		})
	}
}

func TestTranslateHadoopConfUndeclaredType(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"flag":                {args: []string{"--hadoop-conf", gpuOnlyHadoop}},
		"HADOOP_CONF_DIR":     {env: map[string]string{"HADOOP_CONF_DIR": gpuOnlyHadoop}},
		"YARN_ER_HADOOP_CONF": {env: map[string]string{"YARN_ER_HADOOP_CONF": gpuOnlyHadoop}},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"translate", "--flink-conf", exampleNested, "-o", "json"}, tc.args...)
			res := runCLI(t, tc.env, args...)
			require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
			out, rawResource := decodeTranslate(t, res.stdout)
			assert.Equal(t, issueResource, rawResource, "Flink still asks for yarn.io/fpga")
			require.Len(t, out.Warnings, 1, "%v", out.Warnings)
			w := out.Warnings[0]
			assert.Contains(t, w, "config.yaml:28: external-resource.fpga.yarn.config-key:")
			assert.Contains(t, w, "resource type 'yarn.io/fpga' is not declared in yarn.resource-types")
			assert.Contains(t, w, "(fix: add yarn.io/fpga to yarn.resource-types")
			assert.True(t, strings.HasSuffix(w, "[yarn.resource-type-undeclared]"), w)
		})
	}
	// Without any Hadoop configuration there is nothing to check against.
	res := runCLI(t, nil, "translate", "--flink-conf", exampleNested, "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, _ := decodeTranslate(t, res.stdout)
	assert.Empty(t, out.Warnings)
}

func TestTranslateDynamicOverrides(t *testing.T) {
	res := runCLI(t, nil, "translate", "--flink-conf", exampleLegacy, "-o", "json",
		"-D", "external-resource.gpu.amount=4", "--dynamic", "taskmanager.numberOfTaskSlots=8",
		"-D", "taskmanager.memory.process.size=8g")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	_, rawResource := decodeTranslate(t, res.stdout)
	assert.Equal(t, `{"memory-mb":8192,"vcores":8,"yarn.io/gpu":4,"yarn.io/fpga":1}`, rawResource)

	// -D alone, without any file: the configuration is what the flags say.
	res = runCLI(t, nil, "translate", "-o", "json", "-D", "external-resources=gpu",
		"-D", "external-resource.gpu.amount=1", "-D", "external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"-D", "taskmanager.memory.process.size=1g")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, rawResource := decodeTranslate(t, res.stdout)
	assert.Equal(t, `{"memory-mb":1024,"vcores":1,"yarn.io/gpu":1}`, rawResource)
	require.Len(t, out.Warnings, 1)
	assert.Contains(t, out.Warnings[0], "-D external-resource.gpu.amount: external-resource.gpu.driver-factory.class: Could not find driver class name for gpu")
	assert.Contains(t, out.Warnings[0], "[flink.no-driver-factory]")
}

func TestTranslateFlinkConfDirFromEnv(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(exampleNested)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), data, 0o600))
	res := runCLI(t, map[string]string{"FLINK_CONF_DIR": dir}, "translate", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, rawResource := decodeTranslate(t, res.stdout)
	assert.Equal(t, issueResource, rawResource)
	assert.Empty(t, out.Warnings)

	// The examples directory holds both files: Flink 1.x reads flink-conf.yaml and ignores config.yaml,
	// and that load-time warning reaches the output.
	res = runCLI(t, map[string]string{"FLINK_CONF_DIR": "../../examples"}, "translate", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, rawResource = decodeTranslate(t, res.stdout)
	assert.Equal(t, issueResource, rawResource)
	require.Len(t, out.Warnings, 1)
	assert.Contains(t, out.Warnings[0], "config.yaml")
	assert.Contains(t, out.Warnings[0], "ignored")

	// --flink-conf beats FLINK_CONF_DIR.
	res = runCLI(t, map[string]string{"FLINK_CONF_DIR": t.TempDir()}, "translate", "--flink-conf", exampleLegacy, "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	_, rawResource = decodeTranslate(t, res.stdout)
	assert.Equal(t, issueResource, rawResource)
}

// Two resources on one yarn.config-key: Flink warns and requests the one last in its HashSet's
// order (b before a here), and so does translate.
func TestTranslateDuplicateConfigKey(t *testing.T) {
	dup := filepath.Join(t.TempDir(), "flink-conf.yaml")
	require.NoError(t, os.WriteFile(dup, []byte("taskmanager.memory.process.size: 4g\nexternal-resources: a;b\nexternal-resource.a.amount: 1\n"+
		"external-resource.a.yarn.config-key: yarn.io/gpu\nexternal-resource.b.amount: 3\nexternal-resource.b.yarn.config-key: yarn.io/gpu\n"), 0o600))
	res := runCLI(t, nil, "translate", "-o", "json", "--flink-conf", dup)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "Duplicate config key yarn.io/gpu occurred for external resources, the one named b will overwrite the value")
	assert.Contains(t, res.stdout, `"yarn.io/gpu": 3`)
}

func TestTranslateConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "flink-conf.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("taskmanager.memory.process.size: 4g\nexternal-resources: gpu\n"+
		"external-resource.gpu.amount: 2.5\nexternal-resource.gpu.yarn.config-key: yarn.io/gpu\n"), 0o600))

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"amount not a number in a file", []string{"--flink-conf", bad},
			[]string{bad + ":3: external-resource.gpu.amount: Could not parse value '2.5' for key 'external-resource.gpu.amount'.", "(fix: set external-resource.gpu.amount to a positive whole number"}},
		{"amount not a number from -D", []string{"--flink-conf", exampleLegacy, "-D", "external-resource.gpu.amount=abc"},
			[]string{"yarn-er: -D external-resource.gpu.amount: Could not parse value 'abc'", "(fix: "}},
		{"missing Flink configuration", []string{"--flink-conf", filepath.Join(dir, "nope.yaml")},
			[]string{"nope.yaml", "does not exist"}},
		{"missing Hadoop configuration", []string{"--flink-conf", exampleLegacy, "--hadoop-conf", filepath.Join(dir, "nope")},
			[]string{"nope", "does not exist"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{"json", "table"} {
				res := runCLI(t, nil, append([]string{"translate", "-o", format}, tc.args...)...)
				assert.Equal(t, cmdutil.ExitError, res.code, res.stderr)
				assert.Empty(t, res.stdout)
				for _, s := range tc.want {
					assert.Contains(t, res.stderr, s)
				}
				assert.NotContains(t, res.stderr, "--help", "not a usage error")
			}
		})
	}
}

func TestTranslateUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"translate", "-D", "no-equals-sign"},
		{"translate", "-D", "=value"},
		{"translate", "extra-argument"},
		{"translate", "--bogus"},
		{"translate", "-o", "xml"},
		{"translate", "--flink-conf"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := runCLI(t, nil, args...)
			assert.Equal(t, cmdutil.ExitUsage, res.code, res.stderr)
			assert.Empty(t, res.stdout)
			assert.Contains(t, res.stderr, "yarn-er translate --help")
		})
	}
	res := runCLI(t, nil, "translate", "-D", "oops")
	assert.Contains(t, res.stderr, "-D oops: want key=value")
}

func TestTranslateTable(t *testing.T) {
	res := runCLI(t, nil, "translate", "--flink-conf", exampleLegacy)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	for _, want := range []string{
		"Configuration: " + exampleLegacy,
		"TaskManager container on YARN: <memory-mb:4096, vcores:4, yarn.io/gpu:2, yarn.io/fpga:1>",
		"memory-mb     4096  taskmanager.memory.process.size  " + exampleLegacy + ":6",
		"vcores        4     taskmanager.numberOfTaskSlots    " + exampleLegacy + ":7",
		"yarn.io/gpu   2     external-resource.gpu.amount",
		"NAME  AMOUNT  YARN TYPE",
		"discovery-script.args=--enable-coordination-mode, discovery-script.path=plugins/external-resource-gpu/nvidia-gpu-discovery.sh",
		"No warnings.",
	} {
		assert.Contains(t, res.stdout, want)
	}

	res = runCLI(t, nil, "translate", "--flink-conf", exampleLegacy, "--hadoop-conf", gpuOnlyHadoop)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "Warnings (1):\n  - ")
	assert.Contains(t, res.stdout, "yarn.io/fpga")
	assert.Contains(t, res.stdout, "resource-types.xml")

	// No configuration at all is a usage error: translating nothing would look like a result.
	res = runCLI(t, nil, "translate")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Empty(t, res.stdout)
	assert.Contains(t, res.stderr, "no Flink configuration found")
	assert.Contains(t, res.stderr, "--flink-conf")

	// -D alone is a configuration.
	res = runCLI(t, nil, "translate", "-D", "taskmanager.numberOfTaskSlots=1", "-D", "taskmanager.memory.flink.size=1g")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "TaskManager container on YARN: <memory-mb:1472, vcores:1>")
	assert.Contains(t, res.stdout, "External resources: none")

	// No memory option at all: Flink refuses to start TaskManagers, so translate fails.
	res = runCLI(t, nil, "translate", "-D", "taskmanager.numberOfTaskSlots=1")
	assert.Equal(t, cmdutil.ExitError, res.code)
	assert.Contains(t, res.stderr, "Either required fine-grained memory")
}

func TestTranslateYAML(t *testing.T) {
	res := runCLI(t, nil, "translate", "--flink-conf", exampleNested, "-o", "yaml")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &doc))
	top := doc.Content[0]
	require.Equal(t, "resource", top.Content[0].Value)
	resource := top.Content[1]
	var pairs []string
	for i := 0; i+1 < len(resource.Content); i += 2 {
		pairs = append(pairs, resource.Content[i].Value+"="+resource.Content[i+1].Value)
		assert.Equal(t, "!!int", resource.Content[i+1].Tag)
	}
	assert.Equal(t, []string{"memory-mb=4096", "vcores=4", "yarn.io/gpu=2", "yarn.io/fpga=1"}, pairs)
	assert.Contains(t, res.stdout, "warnings: []")
}

func TestTranslateFlinkVersionAndMemory(t *testing.T) {
	dir := t.TempDir()
	legacyHeap := filepath.Join(dir, "flink-conf.yaml")
	require.NoError(t, os.WriteFile(legacyHeap, []byte("taskmanager.heap.size: 2048m\n"), 0o600))

	// flink-conf.yaml implies Flink 1.x, which maps the legacy heap to the process size.
	res := runCLI(t, nil, "translate", "--flink-conf", legacyHeap, "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, raw := decodeTranslate(t, res.stdout)
	assert.Equal(t, `{"memory-mb":2048,"vcores":1}`, raw)
	assert.Equal(t, "1.x", out.Memory["flinkVersion"])
	assert.Equal(t, "taskmanager.heap.size", out.Memory["legacyHeapKey"])
	assert.Equal(t, "process-size", out.Memory["derivedFrom"])

	// Flink 2.x ignores it and refuses the configuration.
	res = runCLI(t, nil, "translate", "--flink-conf", legacyHeap, "--flink-version", "2.0.0")
	assert.Equal(t, cmdutil.ExitError, res.code)
	assert.Contains(t, res.stderr, "Either required fine-grained memory")
	assert.Contains(t, res.stderr, "Flink 2.x no longer reads taskmanager.heap.size")

	res = runCLI(t, nil, "translate", "--flink-conf", legacyHeap, "--flink-version", "0.9")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "--flink-version")

	// The table shows the derivation.
	res = runCLI(t, nil, "translate", "-D", "taskmanager.memory.flink.size=1g")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "TaskManager memory (Flink 2.x, from flink-size): process 1472m = flink 1024m + JVM metaspace 256m + JVM overhead 192m")
}

// TestTranslateSources: -o json and -o yaml say where each value of the container comes from, as
// the table does: the key and its file:line or -D flag, or Flink's default.
func TestTranslateSources(t *testing.T) {
	res := runCLI(t, nil, "translate", "--flink-conf", exampleLegacy, "-D", "taskmanager.cpu.cores=3", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, _ := decodeTranslate(t, res.stdout)
	type src struct{ resource, key, source string }
	var got []src
	for _, s := range out.Sources {
		got = append(got, src{s.Resource, s.Key, s.Source})
		assert.False(t, s.Default, s.Resource)
	}
	assert.Equal(t, []src{
		{"memory-mb", "taskmanager.memory.process.size", exampleLegacy + ":6"},
		{"vcores", "taskmanager.cpu.cores", "-D taskmanager.cpu.cores"},
		{"yarn.io/gpu", "external-resource.gpu.amount", exampleLegacy + ":13"},
		{"yarn.io/fpga", "external-resource.fpga.amount", exampleLegacy + ":21"},
	}, got)

	// A default has no key and says so.
	res = runCLI(t, nil, "translate", "-D", "taskmanager.memory.process.size=2g", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, _ = decodeTranslate(t, res.stdout)
	require.Len(t, out.Sources, 2)
	assert.Equal(t, "vcores", out.Sources[1].Resource)
	assert.True(t, out.Sources[1].Default)
	assert.Empty(t, out.Sources[1].Key)

	res = runCLI(t, nil, "translate", "--flink-conf", exampleNested, "-o", "yaml")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var doc struct {
		Sources []map[string]any `yaml:"sources"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &doc))
	require.Len(t, doc.Sources, 4)
	assert.Equal(t, "memory-mb", doc.Sources[0]["resource"])
	assert.Equal(t, "taskmanager.memory.process.size", doc.Sources[0]["key"])
	assert.Contains(t, doc.Sources[0]["source"], "config.yaml:")
}

// TestTranslateWarningsOnce: a load warning (a key set twice in flink-conf.yaml) is printed once, in
// the output (table or JSON), not again as a log line on stderr.
func TestTranslateWarningsOnce(t *testing.T) {
	dir := t.TempDir()
	cf := filepath.Join(dir, "flink-conf.yaml")
	require.NoError(t, os.WriteFile(cf, []byte("taskmanager.memory.process.size: 2g\ntaskmanager.numberOfTaskSlots: 1\ntaskmanager.numberOfTaskSlots: 2\n"), 0o600))
	hadoop := filepath.Join(dir, "hadoop")
	require.NoError(t, os.Mkdir(hadoop, 0o755))
	// A Hadoop load warning too: a property without a name.
	require.NoError(t, os.WriteFile(filepath.Join(hadoop, "yarn-site.xml"), []byte("<configuration>\n<property><value>x</value></property>\n</configuration>\n"), 0o600))

	res := runCLI(t, nil, "translate", "--flink-conf", cf, "--hadoop-conf", hadoop)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, 1, strings.Count(res.stdout, "taskmanager.numberOfTaskSlots is set again"), res.stdout)
	assert.Empty(t, res.stderr)

	res = runCLI(t, nil, "translate", "--flink-conf", cf, "--hadoop-conf", hadoop, "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	out, _ := decodeTranslate(t, res.stdout)
	n := 0
	for _, w := range out.Warnings {
		n += strings.Count(w, "taskmanager.numberOfTaskSlots is set again")
	}
	assert.Equal(t, 1, n, out.Warnings)
	assert.Empty(t, res.stderr)
}
