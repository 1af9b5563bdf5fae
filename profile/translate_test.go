package profile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/testsupport/flinktest"
	"github.com/yarn-er/yarn-er/records"
)

// legacy parses a legacy flink-conf.yaml; dashes in the text are not special.
func legacy(t testing.TB, text string, dynamic ...string) *conf.FlinkConfig {
	t.Helper()
	return flinktest.ParseLegacy(t, text, dynamic...)
}

// requireErrorContains asserts that err says want, or that there is no error when want is "".
func requireErrorContains(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
}

func vectorJSON(t testing.TB, v records.Resources) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// issueExample is the request's own example: unlike flinktest.TwoGPUsOneFPGA it names a custom FPGA
// driver factory (com.example) and no JobManager size, and TestTranslateIssueExample, the fuzz seed
// and the benchmark keep it word for word (TestIssueExampleText).
const issueExample = flinktest.GPUsAndFPGA + "external-resource.fpga.driver-factory.class: com.example.FPGADriverFactory\n"

const issueVector = `{"memory-mb":4096,"vcores":4,"yarn.io/gpu":2,"yarn.io/fpga":1}`

// gpuOnly is a complete, warning-free configuration with one GPU resource; cases append to it.
const gpuOnly = `taskmanager.memory.process.size: 4096m
external-resource.gpu.amount: 2
external-resource.gpu.yarn.config-key: yarn.io/gpu
external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory
`

func TestTranslateIssueExample(t *testing.T) {
	legacyConf := legacy(t, issueExample)
	yamlConf, err := conf.ParseFlinkYAML("config.yaml", []byte(`taskmanager:
  memory:
    process:
      size: 4096m
  numberOfTaskSlots: 4
external-resources:
  - gpu
  - fpga
external-resource:
  gpu:
    amount: 2
    yarn:
      config-key: yarn.io/gpu
    driver-factory:
      class: org.apache.flink.externalresource.gpu.GPUDriverFactory
    param:
      discovery-script:
        args: --enable-coordination-mode
  fpga:
    amount: 1
    yarn.config-key: yarn.io/fpga
    driver-factory.class: com.example.FPGADriverFactory
`))
	require.NoError(t, err)
	for name, fc := range map[string]*conf.FlinkConfig{"legacy": legacyConf, "nested": yamlConf} {
		t.Run(name, func(t *testing.T) {
			tr, err := Translate(fc, TranslateOptions{})
			require.NoError(t, err)
			assert.Equal(t, issueVector, vectorJSON(t, tr.Resource))
			assert.Empty(t, tr.Problems)
			require.Len(t, tr.ExternalResources, 2)
			gpu := tr.ExternalResources[0]
			assert.Equal(t, ExternalResource{Name: "gpu", Amount: 2, YarnConfigKey: "yarn.io/gpu",
				DriverFactoryClass: "org.apache.flink.externalresource.gpu.GPUDriverFactory",
				Params:             map[string]string{"discovery-script.args": "--enable-coordination-mode"},
				Source:             gpu.Source}, gpu)
			assert.NotZero(t, gpu.Source.Line)
			assert.Equal(t, "fpga", tr.ExternalResources[1].Name)
			assert.Equal(t, map[string]string{}, tr.ExternalResources[1].Params)
			assert.Equal(t, KeyProcessSize, tr.Origins[records.MemoryMB].Key)
			assert.Equal(t, KeyTaskSlots, tr.Origins[records.VCores].Key)
			assert.Equal(t, "external-resource.gpu.amount", tr.Origins[records.GPU].Key)
		})
	}
}

func TestTranslateExternalResources(t *testing.T) {
	cases := []struct {
		name       string
		conf       string
		dynamic    []string
		wantVector string
		wantNames  []string
		wantCodes  []string
		wantErr    []string // substrings of the error; nil: no error
	}{
		{name: "blanks around names", conf: strings.Replace(issueExample, "gpu;fpga", "gpu ; fpga", 1),
			wantVector: issueVector, wantNames: []string{"gpu", "fpga"}},
		{name: "quoted names", conf: strings.Replace(issueExample, "gpu;fpga", `'gpu';"fpga"`, 1),
			wantVector: issueVector, wantNames: []string{"gpu", "fpga"}},
		{name: "order follows the list", conf: strings.Replace(issueExample, "gpu;fpga", "fpga;gpu", 1),
			wantVector: `{"memory-mb":4096,"vcores":4,"yarn.io/fpga":1,"yarn.io/gpu":2}`, wantNames: []string{"fpga", "gpu"}},
		{name: "empty item ignored", conf: strings.Replace(issueExample, "gpu;fpga", "gpu;;fpga;", 1),
			wantVector: issueVector, wantNames: []string{"gpu", "fpga"}},
		{name: "duplicates merged", conf: strings.Replace(issueExample, "gpu;fpga", "gpu;fpga;gpu", 1),
			wantVector: issueVector, wantNames: []string{"gpu", "fpga"}},
		{name: "quoted name with a semicolon", conf: gpuOnly + "external-resources: 'my;gpu'\n" +
			"external-resource.my;gpu.amount: 1\nexternal-resource.my;gpu.yarn.config-key: example.com/gpu\n" +
			"external-resource.my;gpu.driver-factory.class: x.Y\n",
			wantVector: `{"memory-mb":4096,"vcores":1,"example.com/gpu":1}`, wantNames: []string{"my;gpu"},
			wantCodes: []string{"warning flink.resource-not-listed"}},
		{name: "none", conf: gpuOnly + "external-resources: none\n",
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{},
			wantCodes: []string{"warning flink.resource-not-listed"}},
		{name: "None is a name, not none", conf: gpuOnly + "external-resources: None\n",
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{},
			wantCodes: []string{"warning flink.resource-not-listed", "warning flink.amount-invalid"}},
		{name: "list absent", conf: gpuOnly,
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{},
			wantCodes: []string{"warning flink.resource-not-listed"}},
		{name: "unlisted resource next to a listed one", conf: gpuOnly + "external-resources: gpu\nexternal-resource.tpu.amount: 1\nexternal-resource.tpu.param.x: y\n",
			wantVector: `{"memory-mb":4096,"vcores":1,"yarn.io/gpu":2}`, wantNames: []string{"gpu"},
			wantCodes: []string{"warning flink.resource-not-listed"}},
		{name: "bad quoting", conf: gpuOnly + "external-resources: 'gpu\n",
			wantVector: `{"memory-mb":4096,"vcores":1}`,
			wantCodes:  []string{"error flink.external-resources-invalid", "warning flink.resource-not-listed"},
			wantErr:    []string{"flink-conf.yaml:5", "Quoting was not closed properly", "fix:"}},
		{name: "amount 0", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.amount=0"},
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{},
			wantCodes: []string{"warning flink.amount-invalid"}},
		{name: "amount -1", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.amount=-1"},
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{},
			wantCodes: []string{"warning flink.amount-invalid"}},
		{name: "amount missing", conf: strings.Replace(gpuOnly, "external-resource.gpu.amount: 2\n", "", 1) + "external-resources: gpu\n",
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{},
			wantCodes: []string{"warning flink.amount-invalid"}},
		{name: "amount with plus sign", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.amount=+3"},
			wantVector: `{"memory-mb":4096,"vcores":1,"yarn.io/gpu":3}`, wantNames: []string{"gpu"}},
		{name: "amount 2.5", conf: strings.Replace(gpuOnly, "amount: 2", "amount: 2.5", 1) + "external-resources: gpu\n",
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{},
			wantCodes: []string{"error flink.amount-invalid"},
			wantErr:   []string{"flink-conf.yaml:2", "Could not parse value '2.5' for key 'external-resource.gpu.amount'.", "fix: set external-resource.gpu.amount to a positive whole number"}},
		{name: "amount abc", conf: strings.Replace(gpuOnly, "amount: 2", "amount: abc", 1) + "external-resources: gpu\n",
			wantCodes: []string{"error flink.amount-invalid"}, wantNames: []string{},
			wantErr: []string{"flink-conf.yaml:2", "Could not parse value 'abc'"}},
		{name: "amount over 2^63-1", conf: strings.Replace(gpuOnly, "amount: 2", "amount: 9223372036854775808", 1) + "external-resources: gpu\n",
			wantCodes: []string{"error flink.amount-invalid"}, wantNames: []string{},
			wantErr: []string{"flink-conf.yaml:2", "Could not parse value '9223372036854775808'"}},
		{name: "amount with a blank from -D", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.amount= 2"},
			wantCodes: []string{"error flink.amount-invalid"}, wantNames: []string{},
			wantErr: []string{"-D external-resource.gpu.amount: Could not parse value ' 2'"}},
		{name: "blank yarn.config-key", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.yarn.config-key= \t"},
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{"gpu"},
			wantCodes: []string{"warning flink.no-yarn-config-key"}},
		{name: "missing yarn.config-key", conf: strings.Replace(gpuOnly, "external-resource.gpu.yarn.config-key: yarn.io/gpu\n", "", 1) + "external-resources: gpu\n",
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{"gpu"},
			wantCodes: []string{"warning flink.no-yarn-config-key"}},
		{name: "duplicate yarn.config-key", conf: gpuOnly + "external-resources: gpu;gpu2\nexternal-resource.gpu2.amount: 1\n" +
			"external-resource.gpu2.yarn.config-key: yarn.io/gpu\nexternal-resource.gpu2.driver-factory.class: x.Y\n",
			// Flink's HashSet walks gpu2 (bucket 6) before gpu (bucket 13): gpu overwrites gpu2.
			wantVector: `{"memory-mb":4096,"vcores":1,"yarn.io/gpu":2}`,
			wantCodes:  []string{"warning flink.duplicate-config-key"}, wantNames: []string{"gpu", "gpu2"}},
		{name: "duplicate yarn.config-key on an ignored resource", conf: gpuOnly + "external-resources: gpu;gpu2\nexternal-resource.gpu2.amount: 0\n" +
			"external-resource.gpu2.yarn.config-key: yarn.io/gpu\n",
			wantVector: `{"memory-mb":4096,"vcores":1,"yarn.io/gpu":2}`,
			wantCodes:  []string{"warning flink.amount-invalid", "warning flink.duplicate-config-key"}, wantNames: []string{"gpu"}},
		{name: "no driver factory", conf: strings.Replace(gpuOnly, "external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory\n", "", 1) + "external-resources: gpu\n",
			wantVector: `{"memory-mb":4096,"vcores":1,"yarn.io/gpu":2}`, wantNames: []string{"gpu"},
			wantCodes: []string{"warning flink.no-driver-factory"}},
		{name: "yarn.config-key memory-mb", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.yarn.config-key=memory-mb"},
			wantCodes: []string{"error flink.yarn-config-key-invalid"}, wantNames: []string{"gpu"},
			wantErr: []string{"-D external-resource.gpu.yarn.config-key", "mandatory YARN resource"}},
		{name: "yarn.config-key vcores", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.yarn.config-key=vcores"},
			wantCodes: []string{"error flink.yarn-config-key-invalid"}, wantNames: []string{"gpu"}, wantErr: []string{"vcores"}},
		{name: "yarn.config-key not a resource name", conf: gpuOnly + "external-resources: gpu\n", dynamic: []string{"external-resource.gpu.yarn.config-key=10gpu"},
			wantVector: `{"memory-mb":4096,"vcores":1}`, wantNames: []string{"gpu"},
			wantCodes: []string{"error flink.yarn-config-key-invalid"}, wantErr: []string{"External resource 10gpu is not supported by the Yarn cluster."}},
		{name: "params and kubernetes key", conf: gpuOnly + "external-resources: gpu\nexternal-resource.gpu.kubernetes.config-key: nvidia.com/gpu\n" +
			"external-resource.gpu.param.discovery-script.path: /opt/d.sh\nexternal-resource.gpu.param.x.y: 'quoted'\n",
			wantVector: `{"memory-mb":4096,"vcores":1,"yarn.io/gpu":2}`, wantNames: []string{"gpu"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Translate(legacy(t, tc.conf, tc.dynamic...), TranslateOptions{})
			require.NotNil(t, tr)
			if tc.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				for _, s := range tc.wantErr {
					assert.Contains(t, err.Error(), s)
				}
				var ce *conf.Error
				assert.ErrorAs(t, err, &ce, "errors are *conf.Error")
				assert.NotEmpty(t, ProblemCode(err))
			}
			if tc.wantVector != "" {
				assert.Equal(t, tc.wantVector, vectorJSON(t, tr.Resource))
			}
			if tc.wantNames != nil {
				names := []string{}
				for _, er := range tr.ExternalResources {
					names = append(names, er.Name)
				}
				assert.Equal(t, tc.wantNames, names)
			}
			assertCodes(t, tr.Problems, tc.wantCodes)
			for _, p := range tr.Problems {
				assert.NotEmpty(t, p.Fix, "%s: a fix", p.Message)
				assert.NotEmpty(t, p.Key, "%s: a key", p.Message)
				assert.False(t, p.Source.IsZero(), "%s: a source", p.Message)
			}
		})
	}
}

func TestTranslateParamsAndKeys(t *testing.T) {
	tr, err := Translate(legacy(t, gpuOnly+"external-resources: gpu\nexternal-resource.gpu.kubernetes.config-key: nvidia.com/gpu\n"+
		"external-resource.gpu.param.discovery-script.path: /opt/d.sh\nexternal-resource.gpu.param.x.y: 'quoted'\n"), TranslateOptions{})
	require.NoError(t, err)
	require.Len(t, tr.ExternalResources, 1)
	er := tr.ExternalResources[0]
	assert.Equal(t, "nvidia.com/gpu", er.KubernetesConfigKey)
	assert.Equal(t, map[string]string{"discovery-script.path": "/opt/d.sh", "x.y": "'quoted'"}, er.Params)
	assert.Equal(t, conf.Source{File: "flink-conf.yaml", Line: 2}, er.Source)
}

func TestTranslateMemory(t *testing.T) {
	cases := []struct {
		name, value string
		extra       string
		want        int64 // 0: memory-mb absent
		wantCodes   []string
		wantErr     string
	}{
		{name: "4g", value: "4g", want: 4096},
		{name: "4096m", value: "4096m", want: 4096},
		{name: "bytes", value: "4294967296", want: 4096},
		{name: "spaced unit", value: "4096 MB", want: 4096},
		{name: "rounded down", value: "1073741825", want: 1024, wantCodes: []string{"warning flink.memory-invalid"}},
		{name: "under metaspace and overhead", value: "100k", wantCodes: []string{"error flink.memory-inconsistent"},
			wantErr: "Sum of configured JVM Metaspace (256.000mb (268435456 bytes)) and JVM Overhead (192.000mb (201326592 bytes)) exceed configured Total Process Memory (100.000kb (102400 bytes))."},
		{name: "no unit is bytes", value: "4096", wantCodes: []string{"error flink.memory-inconsistent"}, wantErr: "Total Process Memory (4.000kb (4096 bytes))."},
		{name: "fraction", value: "1.5g", wantCodes: []string{"error flink.memory-invalid"},
			wantErr: "flink-conf.yaml:1: taskmanager.memory.process.size: TaskManager memory configuration failed: Cannot read memory size from config option 'taskmanager.memory.process.size'. (Could not parse value '1.5g' for key 'taskmanager.memory.process.size'. Memory size unit '.5g' does not match"},
		{name: "garbage", value: "lots", wantCodes: []string{"error flink.memory-invalid"}, wantErr: "text does not start with a number"},
		{name: "overflow", value: "8388608t", wantCodes: []string{"error flink.memory-invalid"}, wantErr: "numeric overflow"},
		{name: "too big for an int", value: "2048t", wantCodes: []string{"error flink.memory-invalid"},
			wantErr: "Value '2147483648' for resource memory is more than the maximum for an integer."},
		{name: "unset", wantCodes: []string{"error flink.memory-not-configured"}, wantErr: "Either required fine-grained memory"},
		{name: "flink.size only", extra: "taskmanager.memory.flink.size: 3g\n", want: 3697, wantCodes: []string{"warning flink.memory-invalid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.extra
			if tc.value != "" {
				text = "taskmanager.memory.process.size: " + tc.value + "\n" + text
			}
			tr, err := Translate(legacy(t, text), TranslateOptions{})
			requireErrorContains(t, err, tc.wantErr)
			got, ok := tr.Resource.Get(records.MemoryMB)
			assert.Equal(t, tc.want != 0, ok)
			assert.Equal(t, tc.want, got)
			assertCodes(t, tr.Problems, tc.wantCodes)
			if tc.extra != "" {
				require.NotNil(t, tr.Memory)
				assert.Equal(t, MemoryFromFlinkSize, tr.Memory.DerivedFrom)
				assert.Equal(t, KeyFlinkSize, tr.Origins[records.MemoryMB].Key)
			}
		})
	}
}

func TestTranslateVCores(t *testing.T) {
	cases := []struct {
		name      string
		conf      string
		want      int64
		from      string
		wantCodes []string
		wantErr   string
	}{
		{name: "default one slot", conf: "", want: 1, from: ""}, // the memory line is line 1, tc.conf starts at line 2
		{name: "slots", conf: "taskmanager.numberOfTaskSlots: 4\n", want: 4, from: KeyTaskSlots},
		{name: "yarn.containers.vcores beats slots", conf: "taskmanager.numberOfTaskSlots: 4\nyarn.containers.vcores: 6\n", want: 6, from: KeyYarnVCores},
		{name: "yarn.containers.vcores -1 falls back", conf: "taskmanager.numberOfTaskSlots: 4\nyarn.containers.vcores: -1\n", want: 4, from: KeyTaskSlots},
		{name: "yarn.containers.vcores 0 falls back", conf: "yarn.containers.vcores: 0\n", want: 1, from: ""},
		{name: "cpu.cores beats both", conf: "taskmanager.numberOfTaskSlots: 4\nyarn.containers.vcores: 6\ntaskmanager.cpu.cores: 2\n", want: 2, from: KeyCPUCores},
		{name: "fractional cores round up", conf: "taskmanager.cpu.cores: 2.5\n", want: 3, from: KeyCPUCores, wantCodes: []string{"warning flink.cpu-invalid"}},
		{name: "small fraction rounds up to 1", conf: "taskmanager.cpu.cores: 0.1\n", want: 1, from: KeyCPUCores, wantCodes: []string{"warning flink.cpu-invalid"}},
		{name: "Java double syntax", conf: "taskmanager.cpu.cores: 4d\n", want: 4, from: KeyCPUCores},
		{name: "zero cores", conf: "taskmanager.cpu.cores: 0\n", wantCodes: []string{"error flink.cpu-invalid"},
			wantErr: "flink-conf.yaml:2: taskmanager.cpu.cores: TaskExecutors need to be started with a positive number of CPU cores. Please configure taskmanager.cpu.cores accordingly."},
		{name: "negative cores", conf: "taskmanager.cpu.cores: -1\n", wantCodes: []string{"error flink.cpu-invalid"}, wantErr: "positive number of CPU cores"},
		{name: "NaN cores", conf: "taskmanager.cpu.cores: NaN\n", wantCodes: []string{"error flink.cpu-invalid"}, wantErr: "Infinite or NaN"},
		{name: "infinite cores", conf: "taskmanager.cpu.cores: Infinity\n", wantCodes: []string{"error flink.cpu-invalid"}, wantErr: "Infinite or NaN"},
		{name: "too many cores", conf: "taskmanager.cpu.cores: 1e10\n", wantCodes: []string{"error flink.cpu-invalid"},
			wantErr: "The amount of cpu cores 10000000000 cannot exceed Integer.MAX_VALUE: 2147483647"},
		{name: "cores not a number", conf: "taskmanager.cpu.cores: four\n", wantCodes: []string{"error flink.cpu-invalid"},
			wantErr: "Could not parse value 'four' for key 'taskmanager.cpu.cores'."},
		{name: "zero slots", conf: "taskmanager.numberOfTaskSlots: 0\n", wantCodes: []string{"error flink.cpu-invalid"}, wantErr: "flink-conf.yaml:2"},
		{name: "slots not a number", conf: "taskmanager.numberOfTaskSlots: 2.0\n", wantCodes: []string{"error flink.cpu-invalid"}, wantErr: "Could not parse value '2.0'"},
		{name: "vcores not a number even with cpu.cores", conf: "taskmanager.cpu.cores: 2\nyarn.containers.vcores: x\n",
			wantCodes: []string{"error flink.cpu-invalid"}, wantErr: "flink-conf.yaml:3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Translate(legacy(t, "taskmanager.memory.process.size: 1g\n"+tc.conf), TranslateOptions{})
			requireErrorContains(t, err, tc.wantErr)
			if tc.wantErr == "" {
				got, ok := tr.Resource.Get(records.VCores)
				require.True(t, ok)
				assert.Equal(t, tc.want, got)
				assert.Equal(t, tc.from, tr.Origins[records.VCores].Key)
			}
			assertCodes(t, tr.Problems, tc.wantCodes)
		})
	}
}

func TestTranslateResourceTypes(t *testing.T) {
	gpuOnlyCluster, problems := LoadResourceTypes(hadoopConf("yarn.resource-types", "yarn.io/gpu"))
	require.Empty(t, problems)
	tr, err := Translate(legacy(t, issueExample), TranslateOptions{ResourceTypes: gpuOnlyCluster})
	require.NoError(t, err)
	assert.Equal(t, issueVector, vectorJSON(t, tr.Resource), "Flink still asks for the type")
	require.Equal(t, []string{"warning yarn.resource-type-undeclared"}, codes(tr.Problems))
	p := tr.Problems[0]
	assert.Equal(t, conf.Source{File: "flink-conf.yaml", Line: 9}, p.Source)
	assert.Contains(t, p.Message, "resource type 'yarn.io/fpga' is not declared in yarn.resource-types")
	assert.Contains(t, p.Fix, "resource-types.xml")

	// Defaults know nothing of the cluster: no warning.
	tr, err = Translate(legacy(t, issueExample), TranslateOptions{ResourceTypes: DefaultResourceTypes()})
	require.NoError(t, err)
	assert.Empty(t, tr.Problems)
}

func TestTranslateConfigYAMLTypedValues(t *testing.T) {
	// config.yaml values are YAML: an amount written 0x2 is the integer 2 to Flink 2.x.
	fc, err := conf.ParseFlinkYAML("config.yaml", []byte("taskmanager.memory.process.size: 2g\nexternal-resources: [gpu]\n"+
		"external-resource.gpu.amount: 0x2\nexternal-resource.gpu.yarn.config-key: yarn.io/gpu\n"+
		"external-resource.gpu.driver-factory.class: x.Y\ntaskmanager.cpu.cores: 3\n"))
	require.NoError(t, err)
	tr, err := Translate(fc, TranslateOptions{})
	require.NoError(t, err)
	assert.Equal(t, `{"memory-mb":2048,"vcores":3,"yarn.io/gpu":2}`, vectorJSON(t, tr.Resource))
	assert.Empty(t, tr.Problems)
}

func TestTranslateEmptyConfig(t *testing.T) {
	tr, err := Translate(&conf.FlinkConfig{}, TranslateOptions{})
	require.Error(t, err, "Flink refuses a TaskManager without any memory option")
	assert.Equal(t, `{"vcores":1}`, vectorJSON(t, tr.Resource))
	assert.NotNil(t, tr.ExternalResources)
	assert.Empty(t, tr.ExternalResources)
	assert.Equal(t, []string{"error flink.memory-not-configured"}, codes(tr.Problems))
}

func TestTranslateReportsAllErrors(t *testing.T) {
	tr, err := Translate(legacy(t, "taskmanager.memory.process.size: x\ntaskmanager.cpu.cores: y\n"+
		"external-resources: gpu\nexternal-resource.gpu.amount: z\n"), TranslateOptions{})
	require.Error(t, err)
	for _, line := range []string{"flink-conf.yaml:1", "flink-conf.yaml:2", "flink-conf.yaml:4"} {
		assert.Contains(t, err.Error(), line)
	}
	assert.Len(t, Errors(tr.Problems), 3)
}

// TestIssueExampleText: the request's example stays word for word as it was written (built from
// flinktest.GPUsAndFPGA, so a change there would change it).
func TestIssueExampleText(t *testing.T) {
	sum := sha256.Sum256([]byte(issueExample))
	assert.Equal(t, "f3615c8bf745167355bfb346042e40014d783424bcdbce56a1e3f24018ba3dc7", hex.EncodeToString(sum[:]))
}

// TestJavaHashSetOrder checks the iteration order of java.util.HashSet that decides which of two
// resources sharing a yarn.config-key Flink requests (recorded in the flink-golden
// config-key-shared* cases).
func TestJavaHashSetOrder(t *testing.T) {
	for _, tc := range []struct {
		names   []string
		listLen int
		want    []string
	}{
		{[]string{"b", "a"}, 2, []string{"a", "b"}},                   // buckets 2 and 1
		{[]string{"gpu", "gpu2"}, 2, []string{"gpu2", "gpu"}},         // buckets 13 and 6
		{[]string{"q", "a"}, 2, []string{"q", "a"}},                   // both bucket 1: insertion order
		{[]string{"q", "a"}, 13, []string{"a", "q"}},                  // a table of 32: buckets 17 and 1
		{[]string{"gpu", "fpga", ""}, 3, []string{"", "fpga", "gpu"}}, // buckets 13, 4 and 0
	} {
		rank := javaHashSetOrder(tc.names, tc.listLen)
		got := slices.Clone(tc.names)
		slices.SortFunc(got, func(a, b string) int { return rank[a] - rank[b] })
		assert.Equal(t, tc.want, got, "%v of %d items", tc.names, tc.listLen)
	}
}
