package profile

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
)

// hadoopConf builds a configuration from name=value pairs, each on its own line of resource-types.xml
// (in the order given).
func hadoopConf(kv ...string) *conf.HadoopConfig {
	hc := &conf.HadoopConfig{}
	for i := 0; i+1 < len(kv); i += 2 {
		hc.Set(kv[i], kv[i+1], conf.Source{File: "resource-types.xml", Line: i/2 + 1})
	}
	return hc
}

// codes returns "severity code" of each problem.
func codes(problems []Problem) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = string(p.Severity) + " " + p.Code
	}
	return out
}

// assertCodes asserts that the problems' codes are want, or that there are none when want is nil.
func assertCodes(t *testing.T, problems []Problem, want []string) {
	t.Helper()
	if want == nil {
		assert.Empty(t, problems)
		return
	}
	assert.Equal(t, want, codes(problems))
}

func messages(problems []Problem) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = p.Message
	}
	return out
}

func TestDefaultResourceTypes(t *testing.T) {
	for _, types := range []*ResourceTypes{DefaultResourceTypes(), func() *ResourceTypes { rt, _ := LoadResourceTypes(nil); return rt }()} {
		assert.Equal(t, []string{"memory-mb", "vcores"}, types.Names())
		mem, ok := types.Lookup(records.MemoryMB)
		require.True(t, ok)
		assert.Equal(t, ResourceType{Name: "memory-mb", Units: "Mi", Type: "COUNTABLE", Minimum: 1024, Maximum: 8192}, mem)
		cpu, ok := types.Lookup(records.VCores)
		require.True(t, ok)
		assert.Equal(t, ResourceType{Name: "vcores", Units: "", Type: "COUNTABLE", Minimum: 1, Maximum: 4}, cpu)
		assert.False(t, types.FromConfig())
		_, ok = types.Lookup(records.GPU)
		assert.False(t, ok)
	}
	_, problems := LoadResourceTypes(nil)
	assert.Empty(t, problems)
}

func TestLoadResourceTypes(t *testing.T) {
	const twice = "Error in config, key 'yarn.io/gpu' specified twice"
	cases := []struct {
		name      string
		kv        []string
		wantNames []string
		wantCodes []string
		wantMsgs  []string // exact messages, when given
	}{
		{name: "no resource types", kv: []string{"yarn.nodemanager.aux-services", "x"},
			wantNames: []string{"memory-mb", "vcores"}},
		{name: "gpu and fpga", kv: []string{"yarn.resource-types", "yarn.io/gpu,yarn.io/fpga"},
			wantNames: []string{"memory-mb", "vcores", "yarn.io/gpu", "yarn.io/fpga"}},
		{name: "blank list", kv: []string{"yarn.resource-types", " "}, wantNames: []string{"memory-mb", "vcores"}},
		{name: "only a comma", kv: []string{"yarn.resource-types", ","}, wantNames: []string{"memory-mb", "vcores"}},
		{name: "trailing comma dropped", kv: []string{"yarn.resource-types", "a,b,"}, wantNames: []string{"memory-mb", "vcores", "a", "b"}},
		{name: "blanks trimmed with a warning", kv: []string{"yarn.resource-types", "a, b,c"},
			wantNames: []string{"memory-mb", "vcores", "a", "b", "c"},
			wantCodes: []string{"warning yarn.resource-types-invalid"}},
		{name: "newline separates", kv: []string{"yarn.resource-types", "a\nb"},
			wantNames: []string{"memory-mb", "vcores", "a", "b"}, wantCodes: []string{"warning yarn.resource-types-invalid"}},
		{name: "empty item in the middle", kv: []string{"yarn.resource-types", "a,,b"},
			wantNames: []string{"memory-mb", "vcores", "a", "b"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"Incomplete configuration for resource type ''. One of name, units or type is configured incorrectly."}},
		{name: "leading comma", kv: []string{"yarn.resource-types", ",a"},
			wantNames: []string{"memory-mb", "vcores", "a"}, wantCodes: []string{"error yarn.resource-types-invalid"}},
		{name: "duplicate", kv: []string{"yarn.resource-types", "yarn.io/gpu,yarn.io/gpu"},
			wantNames: []string{"memory-mb", "vcores", "yarn.io/gpu"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{twice}},
		{name: "duplicate with a bad limit: the limit is reported once", kv: []string{"yarn.resource-types", "yarn.io/gpu,yarn.io/gpu",
			"yarn.resource-types.yarn.io/gpu.maximum-allocation", "9223372036854775808"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid", "error yarn.resource-types-invalid"},
			wantMsgs: []string{`java.lang.NumberFormatException: "9223372036854775808" is out of range`, twice}},
		{name: "reserved memory", kv: []string{"yarn.resource-types", "memory"}, wantNames: []string{"memory-mb", "vcores"},
			wantCodes: []string{"error yarn.resource-types-invalid"}, wantMsgs: []string{"Attempt to re-define mandatory resource 'memory'."}},
		{name: "reserved memory-mb", kv: []string{"yarn.resource-types", "memory-mb"}, wantNames: []string{"memory-mb", "vcores"},
			wantCodes: []string{"error yarn.resource-types-invalid"}, wantMsgs: []string{"Attempt to re-define mandatory resource 'memory-mb'."}},
		{name: "reserved vcores", kv: []string{"yarn.resource-types", "yarn.io/gpu,vcores"}, wantNames: []string{"memory-mb", "vcores", "yarn.io/gpu"},
			wantCodes: []string{"error yarn.resource-types-invalid"}, wantMsgs: []string{"Attempt to re-define mandatory resource 'vcores'."}},
		{name: "MEMORY is allowed", kv: []string{"yarn.resource-types", "MEMORY"}, wantNames: []string{"memory-mb", "vcores", "MEMORY"}},
		{name: "invalid name", kv: []string{"yarn.resource-types", "10myresource,com/acme/myresource"},
			wantNames: []string{"memory-mb", "vcores"},
			wantCodes: []string{"error yarn.resource-types-invalid", "error yarn.resource-types-invalid"}},
		{name: "unknown unit", kv: []string{"yarn.resource-types", "foo", "yarn.resource-types.foo.units", "X"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"Unknown unit 'X'. Known units are [, Gi, G, k, m, M, n, p, P, T, u, Ti, Pi, Mi, Ki]"}},
		{name: "unit is not trimmed", kv: []string{"yarn.resource-types", "foo", "yarn.resource-types.foo.units", " Gi"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"Unknown unit ' Gi'. Known units are [, Gi, G, k, m, M, n, p, P, T, u, Ti, Pi, Mi, Ki]"}},
		{name: "binary unit", kv: []string{"yarn.resource-types", "foo", "yarn.resource-types.foo.units", "Gi"},
			wantNames: []string{"memory-mb", "vcores", "foo"}},
		{name: "gpu with a unit", kv: []string{"yarn.resource-types", "yarn.io/gpu", "yarn.resource-types.yarn.io/gpu.units", "X"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"Defined mandatory resource type=yarn.io/gpu inside resource-types.xml, however its type or unit is conflict to mandatory resource types, expected type=COUNTABLE, unit=; actual type=COUNTABLE actual unit=X"}},
		{name: "fpga with a unit", kv: []string{"yarn.resource-types", "yarn.io/fpga", "yarn.resource-types.yarn.io/fpga.units", "k"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"Defined mandatory resource type=yarn.io/fpga inside resource-types.xml, however its type or unit is conflict to mandatory resource types, expected type=COUNTABLE, unit=; actual type=COUNTABLE actual unit=k"}},
		{name: "type is case-sensitive", kv: []string{"yarn.resource-types", "yarn.io/gpu", "yarn.resource-types.yarn.io/gpu.type", "countable"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"java.lang.IllegalArgumentException: No enum constant org.apache.hadoop.yarn.api.protocolrecords.ResourceTypes.countable"}},
		{name: "explicit COUNTABLE", kv: []string{"yarn.resource-types", "yarn.io/gpu", "yarn.resource-types.yarn.io/gpu.type", "COUNTABLE"},
			wantNames: []string{"memory-mb", "vcores", "yarn.io/gpu"}},
		{name: "minimum above maximum", kv: []string{"yarn.resource-types", "yarn.io/gpu",
			"yarn.resource-types.yarn.io/gpu.minimum-allocation", "5", "yarn.resource-types.yarn.io/gpu.maximum-allocation", "2"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"}},
		{name: "non-numeric minimum", kv: []string{"yarn.resource-types", "yarn.io/gpu", "yarn.resource-types.yarn.io/gpu.minimum-allocation", "abc"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{`java.lang.NumberFormatException: For input string: "abc"`}},
		{name: "negative minimum", kv: []string{"yarn.resource-types", "yarn.io/gpu", "yarn.resource-types.yarn.io/gpu.minimum-allocation", "-5"},
			wantNames: []string{"memory-mb", "vcores", "yarn.io/gpu"}, wantCodes: []string{"warning yarn.resource-types-invalid"}},
		{name: "stray per-type keys", kv: []string{"yarn.resource-types", "yarn.io/gpu", "yarn.resource-types.yarn.io/fpga.units", "",
			"yarn.resource-types.memory-mb.units", "Gi", "yarn.resource-types.memory-mb.maximum-allocation", "16384"},
			wantNames: []string{"memory-mb", "vcores", "yarn.io/gpu"},
			wantCodes: []string{"warning yarn.resource-types-invalid", "warning yarn.resource-types-invalid"}},
		{name: "memory limits invalid", kv: []string{"yarn.scheduler.minimum-allocation-mb", "0"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"Invalid resource scheduler memory allocation configuration, yarn.scheduler.minimum-allocation-mb=0, yarn.scheduler.maximum-allocation-mb=8192, min and max should be greater than 0, max should be no smaller than min."}},
		{name: "vcores min above max", kv: []string{"yarn.scheduler.minimum-allocation-vcores", "8"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"},
			wantMsgs: []string{"Invalid resource scheduler vcores allocation configuration, yarn.scheduler.minimum-allocation-vcores=8, yarn.scheduler.maximum-allocation-vcores=4, min and max should be greater than 0, max should be no smaller than min."}},
		{name: "bad scheduler number", kv: []string{"yarn.scheduler.maximum-allocation-mb", "8g"},
			wantNames: []string{"memory-mb", "vcores"}, wantCodes: []string{"error yarn.resource-types-invalid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			types, problems := LoadResourceTypes(hadoopConf(tc.kv...))
			assert.Equal(t, tc.wantNames, types.Names())
			assert.True(t, types.FromConfig())
			assertCodes(t, problems, tc.wantCodes)
			if tc.wantMsgs != nil {
				assert.Equal(t, tc.wantMsgs, messages(problems))
			}
			for _, p := range problems {
				assert.False(t, p.Source.IsZero(), "problem %q names its source", p.Message)
				assert.NotEmpty(t, p.Fix, "problem %q says how to fix it", p.Message)
			}
		})
	}
}

func TestResourceTypeLimits(t *testing.T) {
	types, problems := LoadResourceTypes(hadoopConf(
		"yarn.resource-types", "yarn.io/gpu,foo",
		"yarn.resource-types.yarn.io/gpu.maximum-allocation", " 0x10 ",
		"yarn.resource-types.yarn.io/gpu.tags", " a , b ",
		"yarn.resource-types.foo.units", "Gi",
		"yarn.resource-types.foo.minimum-allocation", "1",
		"yarn.scheduler.minimum-allocation-mb", "2048",
		"yarn.scheduler.maximum-allocation-mb", "9999",
		"yarn.resource-types.memory-mb.maximum-allocation", "4096",
		"yarn.scheduler.maximum-allocation-vcores", "7",
		"yarn.resource-types.vcores.maximum-allocation", "-1",
	))
	assert.Empty(t, problems)
	gpu, ok := types.Lookup(records.GPU)
	require.True(t, ok)
	assert.Equal(t, int64(0), gpu.Minimum)
	assert.Equal(t, int64(16), gpu.Maximum, "Hadoop reads 0x hexadecimal and trims")
	assert.Equal(t, []string{"a", "b"}, gpu.Tags)
	assert.Equal(t, conf.Source{File: "resource-types.xml", Line: 2}, gpu.MaximumSource)
	assert.Equal(t, conf.Source{File: "resource-types.xml", Line: 1}, gpu.Source)
	foo, ok := types.Lookup("foo")
	require.True(t, ok)
	assert.Equal(t, ResourceType{Name: "foo", Units: "Gi", Type: "COUNTABLE", Minimum: 1, Maximum: math.MaxInt64,
		Source: conf.Source{File: "resource-types.xml", Line: 1}, MinimumSource: conf.Source{File: "resource-types.xml", Line: 5}}, foo)
	mem, _ := types.Lookup(records.MemoryMB)
	assert.Equal(t, int64(2048), mem.Minimum, "scheduler key")
	assert.Equal(t, int64(4096), mem.Maximum, "resource-types key wins over the scheduler key")
	assert.Equal(t, conf.Source{File: "resource-types.xml", Line: 8}, mem.MaximumSource)
	cpu, _ := types.Lookup(records.VCores)
	assert.Equal(t, int64(1), cpu.Minimum)
	assert.Equal(t, int64(7), cpu.Maximum, "-1 in resource-types means not set")

	all := types.All()
	require.Len(t, all, 4)
	all[2].Tags[0] = "changed"
	again, _ := types.Lookup(records.GPU)
	assert.Equal(t, "a", again.Tags[0], "All returns copies")
}

func TestHadoopListSplitting(t *testing.T) {
	assert.Equal(t, []string{"a", " b"}, hadoopGetStrings("a,, b,"))
}

func TestLoadNodeResources(t *testing.T) {
	types := func(kv ...string) *ResourceTypes {
		rt, problems := LoadResourceTypes(hadoopConf(kv...))
		require.Empty(t, problems)
		return rt
	}
	gpuFoo := types("yarn.resource-types", "yarn.io/gpu,foo", "yarn.resource-types.foo.units", "Gi")
	fooK := types("yarn.resource-types", "foo", "yarn.resource-types.foo.units", "k")
	cases := []struct {
		name      string
		types     *ResourceTypes
		kv        []string
		want      map[string]int64
		wantCodes []string
		wantMsgs  []string
	}{
		{name: "defaults", types: gpuFoo, want: map[string]int64{"memory-mb": 8192, "vcores": 8}},
		{name: "configured", types: gpuFoo, kv: []string{"yarn.nodemanager.resource.memory-mb", " 4096 ", "yarn.nodemanager.resource.cpu-vcores", "3",
			"yarn.nodemanager.resource-type.yarn.io/gpu", "4"},
			want: map[string]int64{"memory-mb": 4096, "vcores": 3, "yarn.io/gpu": 4}},
		{name: "minus one is the default", types: gpuFoo, kv: []string{"yarn.nodemanager.resource.memory-mb", "-1"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}},
		{name: "converted to the type's unit", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.foo", "16Gi"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8, "foo": 16}},
		{name: "conversion truncates", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.foo", "5G"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8, "foo": 4}, wantCodes: []string{"warning yarn.node-resources-invalid"}},
		{name: "no unit is the base unit", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.foo", "5"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8, "foo": 0}, wantCodes: []string{"warning yarn.node-resources-invalid"}},
		{name: "unknown unit", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.foo", "5Xi"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.node-resources-invalid"},
			wantMsgs: []string{"Unknown unit 'Xi'. Known units are [, Gi, G, k, m, M, n, p, P, T, u, Ti, Pi, Mi, Ki]"}},
		{name: "non-letters in the unit", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.foo", "5G1"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.node-resources-invalid"},
			wantMsgs: []string{"Units 'G1' contains non alphabet characters, which is not allowed."}},
		{name: "blank before the number", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.yarn.io/gpu", " 5"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.node-resources-invalid"},
			wantMsgs: []string{`java.lang.NumberFormatException: For input string: " 5"`}},
		{name: "empty value", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.yarn.io/gpu", ""},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.node-resources-invalid"}},
		{name: "overflow", types: fooK, kv: []string{"yarn.nodemanager.resource-type.foo", "9223372036854775807M"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.node-resources-invalid"},
			wantMsgs: []string{"Converting 9223372036854775807 from 'M' to 'k' will result in an overflow of Long"}},
		{name: "undeclared type", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.bar", "3"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.resource-type-undeclared"}},
		{name: "reserved name", types: gpuFoo, kv: []string{"yarn.nodemanager.resource-type.memory-mb", "5"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.node-resources-invalid"},
			wantMsgs: []string{"Attempt to re-define mandatory resource 'memory-mb'."}},
		{name: "bad memory", types: gpuFoo, kv: []string{"yarn.nodemanager.resource.memory-mb", "4g"},
			want: map[string]int64{"memory-mb": 8192, "vcores": 8}, wantCodes: []string{"error yarn.node-resources-invalid"}},
		{name: "negative memory", types: gpuFoo, kv: []string{"yarn.nodemanager.resource.memory-mb", "-5"},
			want: map[string]int64{"memory-mb": -5, "vcores": 8}, wantCodes: []string{"warning yarn.node-resources-invalid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := LoadNodeResources(hadoopConf(tc.kv...), tc.types)
			values := map[string]int64{}
			for _, r := range got {
				values[r.Name] = r.Value
			}
			assert.Equal(t, tc.want, values)
			require.GreaterOrEqual(t, len(got), 2)
			assert.Equal(t, records.MemoryMB, got[0].Name)
			assert.Equal(t, records.VCores, got[1].Name)
			assertCodes(t, problems, tc.wantCodes)
			if tc.wantMsgs != nil {
				assert.Equal(t, tc.wantMsgs, messages(problems))
			}
		})
	}
}

func TestNodeResourcesDetectAndOrder(t *testing.T) {
	hc := hadoopConf(
		"yarn.resource-types", "b,a",
		"yarn.nodemanager.resource.detect-hardware-capabilities", "true",
		"yarn.nodemanager.resource-type.b", "2",
		"yarn.nodemanager.resource-type.a", "1",
	)
	got, problems := LoadNodeResources(hc, nil)
	assert.Empty(t, problems)
	require.Len(t, got, 4)
	assert.True(t, got[0].Detected)
	assert.True(t, got[1].Detected)
	names := []string{got[2].Name, got[3].Name}
	assert.True(t, sort.StringsAreSorted(names), "%v", names)
	assert.Equal(t, conf.Source{File: "resource-types.xml", Line: 4}, got[2].Source)
}
