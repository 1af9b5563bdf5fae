package profile

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
)

func legacyConf(t *testing.T, text string) *conf.FlinkConfig {
	t.Helper()
	fc, err := conf.ParseFlinkLegacy("conf/flink-conf.yaml", []byte(text))
	require.NoError(t, err)
	return fc
}

func TestHumanSize(t *testing.T) {
	for in, want := range map[int64]string{
		0:                   "0 bytes",
		1024:                "1024 bytes",
		1025:                "1.001kb (1025 bytes)",
		1 << 30:             "1024.000mb (1073741824 bytes)",
		1<<30 + 1:           "1.000gb (1073741825 bytes)",
		665719939:           "634.880mb (665719939 bytes)",
		math.MaxInt64:       "8388608.000tb (9223372036854775807 bytes)",
		64 + 1024:           "1.063kb (1088 bytes)", // 1.0625 rounds half up, as Java does
		1<<20 + 1<<20/16*1:  "1.063mb (1114112 bytes)",
		1664299824:          "1.550gb (1664299824 bytes)",
		1<<40 + 1<<40/2 + 1: "1.500tb (1649267441665 bytes)",
	} {
		assert.Equal(t, want, humanSize(in), "%d", in)
	}
}

func TestJavaMultiply(t *testing.T) {
	// 0.4f widened to double is 0.4000000059604645: Flink's managed memory of 1588 MiB.
	got, ok := javaMultiply(1664299824, float64(float32(0.4)))
	require.True(t, ok)
	assert.Equal(t, int64(665719939), got)
	// inverse fraction of 0.1f, computed in double like Flink
	f := float64(float32(0.1))
	got, ok = javaMultiply(3489660928, f/(1-f))
	require.True(t, ok)
	assert.Equal(t, int64(387740109), got)
	_, ok = javaMultiply(math.MaxInt64, 0.9999999)
	assert.True(t, ok)
	_, ok = javaMultiply(math.MaxInt64, 1.5)
	assert.False(t, ok, "long overflow")
}

func TestJavaNumberStrings(t *testing.T) {
	for in, want := range map[string]float32{"0.1": 0.1, " .3 ": 0.3, "1e-1": 0.1, "0.5f": 0.5, "1": 1} {
		got, err := parseJavaFloat(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := parseJavaFloat("abc")
	assert.Error(t, err)
}

func TestParseFlinkVersion(t *testing.T) {
	for in, want := range map[string]FlinkVersion{"1": Flink1, "1.x": Flink1, "1.20": Flink1, "1.20.0": Flink1, "1.10": Flink1,
		"2": Flink2, "2.X": Flink2, "2.0.0": Flink2, " 2.1.1 ": Flink2} {
		got, err := ParseFlinkVersion(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "3", "1.9", "1.9.3", "x", "1.a", "2.0.x", "v2"} {
		_, err := ParseFlinkVersion(in)
		assert.Error(t, err, in)
	}
	assert.Equal(t, Flink1, DefaultFlinkVersion([]string{"/etc/flink/conf/flink-conf.yaml"}))
	assert.Equal(t, Flink2, DefaultFlinkVersion([]string{"/etc/flink/conf/config.yaml"}))
	assert.Equal(t, Flink2, DefaultFlinkVersion(nil))
	assert.Equal(t, "1.x", Flink1.String())
}

func TestDeriveTaskManagerMemoryPaths(t *testing.T) {
	cases := []struct {
		name, text  string
		v           FlinkVersion
		from        string
		containerMB int64
		legacyHeap  string
		warn        string
	}{
		{name: "process size", text: "taskmanager.memory.process.size: 4g\n", v: Flink2, from: MemoryFromProcessSize, containerMB: 4096},
		{name: "flink size", text: "taskmanager.memory.flink.size: 3g\n", v: Flink2, from: MemoryFromFlinkSize, containerMB: 3697},
		{name: "fine-grained", text: "taskmanager.memory.task.heap.size: 1g\ntaskmanager.memory.managed.size: 1g\n", v: Flink2, from: MemoryFromFineGrained, containerMB: 3128},
		{name: "legacy heap in 1.x", text: "taskmanager.heap.size: 2048m\n", v: Flink1, from: MemoryFromProcessSize, containerMB: 2048,
			legacyHeap: KeyLegacyHeapSize, warn: "Flink 1.x on YARN uses it as taskmanager.memory.process.size"},
		{name: "legacy heap.mb in 1.x", text: "taskmanager.heap.mb: 3072\n", v: Flink1, from: MemoryFromProcessSize, containerMB: 3072, legacyHeap: KeyLegacyHeapMB,
			warn: "deprecated"},
		{name: "legacy heap ignored with process size", text: "taskmanager.heap.size: 1g\ntaskmanager.memory.process.size: 2g\n", v: Flink1, from: MemoryFromProcessSize, containerMB: 2048},
		{name: "legacy heap ignored by 2.x", text: "taskmanager.heap.size: 1g\ntaskmanager.memory.process.size: 2g\n", v: Flink2, from: MemoryFromProcessSize, containerMB: 2048,
			warn: "ignored by Flink 2.x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem, problems, ref := DeriveTaskManagerMemory(legacyConf(t, tc.text), tc.v)
			require.Nil(t, ref)
			require.NotNil(t, mem)
			assert.Equal(t, tc.from, mem.DerivedFrom)
			assert.Equal(t, tc.containerMB, mem.ContainerMB)
			assert.Equal(t, tc.legacyHeap, mem.LegacyHeapKey)
			assert.Equal(t, tc.v, mem.FlinkVersion)
			sum := mem.FrameworkHeap + mem.FrameworkOffHeap + mem.TaskHeap + mem.TaskOffHeap + mem.Network + mem.Managed
			assert.Equal(t, mem.TotalFlink, sum)
			assert.Equal(t, mem.TotalProcess, sum+mem.JVMMetaspace+mem.JVMOverhead)
			if tc.warn == "" {
				assert.Empty(t, problems)
			} else {
				require.Len(t, problems, 1)
				assert.Contains(t, problems[0].Message, tc.warn)
				assert.Equal(t, conf.Source{File: "conf/flink-conf.yaml", Line: 1}, problems[0].Source)
			}
		})
	}
}

func TestDeriveTaskManagerMemoryVersionRules(t *testing.T) {
	// Legacy network buffers count in 1.x only: 4096 x 32 KiB = 128 MiB.
	text := "taskmanager.memory.process.size: 4g\ntaskmanager.network.numberOfBuffers: 4096\n"
	mem, _, ref := DeriveTaskManagerMemory(legacyConf(t, text), Flink1)
	require.Nil(t, ref)
	assert.Equal(t, int64(128<<20), mem.Network)
	assert.True(t, mem.LegacyNetworkBuffers)
	mem, _, ref = DeriveTaskManagerMemory(legacyConf(t, text), Flink2)
	require.Nil(t, ref)
	assert.Equal(t, int64(359703515), mem.Network, "fraction 0.1 of the flink size")

	// A legacy heap alone: 1.x maps it, 2.x refuses.
	_, _, ref = DeriveTaskManagerMemory(legacyConf(t, "taskmanager.heap.size: 2g\n"), Flink2)
	require.NotNil(t, ref)
	assert.Equal(t, CodeMemoryNotConfigured, ref.Code)
	assert.Contains(t, ref.Fix, "Flink 2.x no longer reads taskmanager.heap.size")

	// Unset version: the file decides (flink-conf.yaml: 1.x).
	mem, _, ref = DeriveTaskManagerMemory(legacyConf(t, "taskmanager.heap.size: 2g\n"), FlinkVersionUnset)
	require.Nil(t, ref)
	assert.Equal(t, Flink1, mem.FlinkVersion)
}

func TestDeriveTaskManagerMemoryRefusals(t *testing.T) {
	cases := []struct {
		name, text, code, msg, key string
		line                       int
	}{
		{name: "nothing", text: "taskmanager.numberOfTaskSlots: 2\n", code: CodeMemoryNotConfigured,
			msg: "TaskManager memory configuration failed: Either required fine-grained memory", key: KeyProcessSize},
		{name: "overhead out of range with a flink size", text: "taskmanager.memory.process.size: 8g\ntaskmanager.memory.flink.size: 4g\n",
			code: CodeMemoryInconsistent, msg: "Derived JVM Overhead size (3.750gb (4026531840 bytes)) is not in configured JVM Overhead range", key: KeyProcessSize, line: 1},
		{name: "metaspace and overhead over the process", text: "taskmanager.memory.jvm-metaspace.size: 1g\ntaskmanager.memory.process.size: 1g\n",
			code: CodeMemoryInconsistent, msg: "Sum of configured JVM Metaspace (1024.000mb (1073741824 bytes)) and JVM Overhead (192.000mb (201326592 bytes)) exceed", key: KeyProcessSize, line: 2},
		{name: "components over the flink size", text: "taskmanager.memory.task.heap.size: 2g\ntaskmanager.memory.managed.size: 2g\ntaskmanager.memory.flink.size: 3g\n",
			code: CodeMemoryInconsistent, msg: "exceed configured Total Flink Memory (3.000gb (3221225472 bytes))", key: KeyTaskHeap, line: 1},
		{name: "fraction not below 1", text: "taskmanager.memory.process.size: 4g\ntaskmanager.memory.network.fraction: 1\n",
			code: CodeMemoryInconsistent, msg: "Inconsistently configured Key: 'taskmanager.memory.network.fraction' , default: 0.1 (fallback keys: [{key=taskmanager.network.memory.fraction, isDeprecated=true}]) (1.0)", key: KeyNetworkFraction, line: 2},
		{name: "unparsable size", text: "taskmanager.memory.process.size: 4gigs\n", code: CodeMemoryInvalid,
			msg: "Cannot read memory size from config option 'taskmanager.memory.process.size'.", key: KeyProcessSize, line: 1},
		{name: "unparsable fraction is not wrapped", text: "taskmanager.memory.process.size: 4g\ntaskmanager.memory.managed.fraction: lots\n", code: CodeMemoryInvalid,
			msg: "Could not parse value 'lots' for key 'taskmanager.memory.managed.fraction'.", key: KeyManagedFraction, line: 2},
		{name: "small segment size", text: "taskmanager.memory.process.size: 4g\ntaskmanager.network.numberOfBuffers: 10\ntaskmanager.memory.segment-size: 1kb\n", code: CodeMemoryInvalid,
			msg: "Invalid configuration value for taskmanager.memory.segment-size : 1024 - Minimum memory segment size is 4096", key: KeyMemorySegmentSize, line: 3},
		{name: "sizes whose sum overflows name the configured sizes", text: "taskmanager.memory.process.size: 4g\ntaskmanager.memory.jvm-metaspace.size: 9223372036854775807b\n",
			code: CodeMemoryInvalid, msg: "long overflow", key: KeyProcessSize, line: 1},
		{name: "a fraction of a size that overflows names the configured sizes", text: "taskmanager.memory.flink.size: 9223372036854775807b\ntaskmanager.memory.network.max: 9223372036854775807b\ntaskmanager.memory.network.fraction: 0.9\n",
			code: CodeMemoryInvalid, msg: "long overflow", key: KeyFlinkSize, line: 1},
		{name: "negative heap.mb", text: "taskmanager.heap.mb: -1\n", code: CodeMemoryInvalid,
			msg: "TaskManager failed to map legacy JVM heap option to the new one: Configured total process memory size (-1MB) must not be less than 0.", key: KeyLegacyHeapMB, line: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := legacyConf(t, tc.text)
			_, _, ref := DeriveTaskManagerMemory(fc, Flink1)
			require.NotNil(t, ref)
			assert.Equal(t, tc.code, ref.Code)
			assert.Contains(t, ref.FlinkMessage, tc.msg)
			assert.NotEmpty(t, ref.Fix)

			// Translate names the key, its file:line, Flink's reason and the fix.
			tr, err := Translate(fc, TranslateOptions{FlinkVersion: Flink1})
			require.Error(t, err)
			assert.Nil(t, tr.Memory)
			_, has := tr.Resource.Get(records.MemoryMB)
			assert.False(t, has)
			errs := Errors(tr.Problems)
			require.Len(t, errs, 1)
			assert.Equal(t, tc.code, errs[0].Code)
			assert.Equal(t, tc.key, errs[0].Key)
			if tc.line > 0 {
				assert.Equal(t, conf.Source{File: "conf/flink-conf.yaml", Line: tc.line}, errs[0].Source)
				assert.Contains(t, errs[0].Message, "Configured: ")
			}
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "(fix: ")
		})
	}
}

func FuzzParseFlinkVersion(f *testing.F) {
	for _, s := range []string{"1", "1.x", "1.20.0", "2.0.0", "2.x", "1.9", "", "3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseFlinkVersion(s)
		if err != nil {
			if v != FlinkVersionUnset {
				t.Fatalf("%q: error %v with version %v", s, err, v)
			}
			return
		}
		if v != Flink1 && v != Flink2 {
			t.Fatalf("%q: version %d", s, v)
		}
	})
}

func FuzzDeriveTaskManagerMemory(f *testing.F) {
	f.Add([]byte("taskmanager.memory.process.size: 4g\n"), false)
	f.Add([]byte("taskmanager.memory.flink.size: 3g\ntaskmanager.memory.network.fraction: 0.3\n"), true)
	f.Add([]byte("taskmanager.memory.task.heap.size: 1g\ntaskmanager.memory.managed.size: 1g\ntaskmanager.memory.flink.size: 2304m\n"), false)
	f.Add([]byte("taskmanager.heap.mb: 3072\ntaskmanager.network.numberOfBuffers: 9\n"), true)
	f.Add([]byte("taskmanager.memory.process.size: 9223372036854775807\ntaskmanager.memory.jvm-overhead.fraction: 0.99\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, v1 bool) {
		fc, err := conf.ParseFlinkLegacy("flink-conf.yaml", data)
		if err != nil {
			return
		}
		v := Flink2
		if v1 {
			v = Flink1
		}
		if jm, jmProblems, jmRef := DeriveJobManagerMemory(fc, v); jmRef == nil {
			if jm.TotalProcess != jm.JVMHeap+jm.OffHeap+jm.JVMMetaspace+jm.JVMOverhead || jm.JVMHeap < 0 || jm.OffHeap < 0 {
				t.Fatalf("JobManager components do not add up: %+v", jm)
			}
		} else if jmRef.FlinkMessage == "" || jmRef.Fix == "" || len(jmProblems) > 2 {
			t.Fatalf("incomplete JobManager refusal %+v", jmRef)
		}
		mem, problems, ref := DeriveTaskManagerMemory(fc, v)
		for _, p := range problems {
			if p.Code == "" || p.Message == "" || p.Fix == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
		if ref != nil {
			if mem != nil || ref.Code == "" || ref.FlinkMessage == "" || ref.Fix == "" {
				t.Fatalf("incomplete refusal %+v (memory %+v)", ref, mem)
			}
			return
		}
		parts := []int64{mem.FrameworkHeap, mem.FrameworkOffHeap, mem.TaskHeap, mem.TaskOffHeap, mem.Network, mem.Managed, mem.JVMMetaspace, mem.JVMOverhead}
		var total int64
		for _, p := range parts {
			if p < 0 {
				t.Fatalf("negative component in %+v", mem)
			}
			total += p
		}
		if total != mem.TotalProcess || mem.TotalProcess-mem.JVMMetaspace-mem.JVMOverhead != mem.TotalFlink || mem.ContainerMB != mem.TotalProcess>>20 {
			t.Fatalf("components do not add up: %+v", mem)
		}
	})
}

func TestDeriveJobManagerMemory(t *testing.T) {
	// Flink's default configuration: 1600m → 1 GiB heap, 128m off-heap, 256m metaspace, 192m overhead.
	jm, problems, ref := DeriveJobManagerMemory(legacyConf(t, "jobmanager.memory.process.size: 1600m\nyarn.appmaster.vcores: 2\n"), Flink1)
	require.Nil(t, ref)
	assert.Empty(t, problems)
	assert.Equal(t, &JobManagerMemory{FlinkVersion: Flink1, DerivedFrom: MemoryFromProcessSize, JVMHeap: 1 << 30, OffHeap: 128 << 20,
		JVMMetaspace: 256 << 20, JVMOverhead: 192 << 20, TotalFlink: 1<<30 + 128<<20, TotalProcess: 1600 << 20, ContainerMB: 1600, VCores: 2}, jm)
	assert.Equal(t, `{"memory-mb":1600,"vcores":2}`, vectorJSON(t, jm.Request()))

	// The legacy heap: mapped in 1.x (with a warning), refused by 2.x without the 1.x prefix.
	fc := legacyConf(t, "jobmanager.heap.size: 1024m\n")
	jm, problems, ref = DeriveJobManagerMemory(fc, Flink1)
	require.Nil(t, ref)
	assert.Equal(t, int64(1024), jm.ContainerMB)
	assert.Equal(t, KeyJMLegacyHeapSize, jm.LegacyHeapKey)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Message, "Flink 1.x on YARN uses it as jobmanager.memory.process.size")
	_, _, ref = DeriveJobManagerMemory(fc, Flink2)
	require.NotNil(t, ref)
	assert.Equal(t, CodeMemoryNotConfigured, ref.Code)
	assert.True(t, strings.HasPrefix(ref.FlinkMessage, "Either required fine-grained memory (jobmanager.memory.heap.size)"), ref.FlinkMessage)
	_, _, ref = DeriveJobManagerMemory(legacyConf(t, ""), Flink1)
	require.NotNil(t, ref)
	assert.True(t, strings.HasPrefix(ref.FlinkMessage, "JobManager memory configuration failed: Either required"), ref.FlinkMessage)

	// A tiny heap is only a warning, as in Flink; bad vcores are an error.
	_, problems, ref = DeriveJobManagerMemory(legacyConf(t, "jobmanager.memory.flink.size: 200m\n"), Flink2)
	require.Nil(t, ref)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Message, "less than its recommended minimum value")
	_, _, ref = DeriveJobManagerMemory(legacyConf(t, "jobmanager.memory.process.size: 1600m\nyarn.appmaster.vcores: x\n"), Flink2)
	require.NotNil(t, ref)
	assert.Equal(t, CodeCPUInvalid, ref.Code)

	// An overflow names the sizes configured, so that the caller can point at them.
	_, _, ref = DeriveJobManagerMemory(legacyConf(t, "jobmanager.memory.process.size: 1600m\njobmanager.memory.jvm-metaspace.size: 9223372036854775807b\n"), Flink2)
	require.NotNil(t, ref)
	assert.Equal(t, "long overflow", ref.FlinkMessage)
	assert.Equal(t, []string{KeyJMProcessSize, KeyJMMetaspace}, ref.Keys)
}

// Flink 2.x reads only config.yaml (recorded: testdata/flink-golden/2.0.0/*.json of the
// flink-conf.yaml-only configurations).
func TestTranslateFlink2RefusesFlinkConfYAML(t *testing.T) {
	fc := legacyConf(t, "taskmanager.memory.process.size: 2g\n")
	tr, err := Translate(fc, TranslateOptions{FlinkVersion: Flink2})
	require.Error(t, err)
	require.Equal(t, []string{"error " + CodeConfigFileUnread}, codes(tr.Problems))
	assert.Contains(t, tr.Problems[0].Message, "Flink 2.x reads only config.yaml")
	assert.Equal(t, "conf/flink-conf.yaml", tr.Problems[0].Source.File)
	assert.Contains(t, tr.Problems[0].Fix, "migrate-config-file.sh")

	for _, v := range []FlinkVersion{Flink1, FlinkVersionUnset} {
		_, err := Translate(fc, TranslateOptions{FlinkVersion: v})
		require.NoError(t, err, "1.x reads flink-conf.yaml (and it implies 1.x)")
	}
	yc, err := conf.ParseFlinkYAML("conf/config.yaml", []byte("taskmanager.memory.process.size: 2g\n"))
	require.NoError(t, err)
	_, err = Translate(yc, TranslateOptions{FlinkVersion: Flink2})
	require.NoError(t, err)
}
