package profile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLegacyHeapEnv: Flink 1.x reads FLINK_TM_HEAP (in the ApplicationMaster's environment, set
// with containerized.master.env.FLINK_TM_HEAP) and FLINK_JM_HEAP (the client's) before the legacy
// heap keys, unless the process size is set; a value MemorySize cannot parse fails; Flink 2.x
// reads neither.
func TestLegacyHeapEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		version FlinkVersion
		wantMB  int64
		refusal string
		warning string
	}{
		{name: "AM env maps to the process size", text: "containerized.master.env.FLINK_TM_HEAP: 2048m\n", version: Flink1, wantMB: 2048,
			warning: "containerized.master.env.FLINK_TM_HEAP is deprecated: Flink 1.x on YARN uses it as taskmanager.memory.process.size (2.000gb"},
		{name: "AM env before taskmanager.heap.size", text: "containerized.master.env.FLINK_TM_HEAP: 3g\ntaskmanager.heap.size: 1024m\n", version: Flink1, wantMB: 3072},
		{name: "process size wins", text: "containerized.master.env.FLINK_TM_HEAP: 3g\ntaskmanager.memory.process.size: 4096m\n", version: Flink1, wantMB: 4096},
		{name: "not a size", text: "containerized.master.env.FLINK_TM_HEAP: lots\n", version: Flink1,
			refusal: "Cannot read total process memory size from environment variable value lots."},
		{name: "2.x ignores it", text: "containerized.master.env.FLINK_TM_HEAP: 2048m\ntaskmanager.memory.process.size: 1024m\n", version: Flink2, wantMB: 1024,
			warning: "is ignored by Flink 2.x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, problems, ref := DeriveTaskManagerMemory(legacy(t, tc.text), tc.version)
			if tc.refusal != "" {
				require.NotNil(t, ref)
				assert.Contains(t, ref.FlinkMessage, tc.refusal)
				assert.Contains(t, ref.Fix, "FLINK_TM_HEAP")
				assert.Contains(t, ref.Keys[0], "flink-conf.yaml:1")
				return
			}
			require.Nil(t, ref)
			assertContainer(t, mem.ContainerMB, problems, tc.wantMB, tc.warning)
		})
	}

	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvJMHeap {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name, text, env string
		version         FlinkVersion
		wantMB          int64
		refusal         string
		warning         string
	}{
		{name: "client env maps to the process size", env: "1g", version: Flink1, wantMB: 1024,
			warning: "FLINK_JM_HEAP is set in the environment: Flink 1.x's client uses it as jobmanager.memory.process.size"},
		{name: "client env before jobmanager.heap.size", text: "jobmanager.heap.size: 2g\n", env: "1200m", version: Flink1, wantMB: 1200},
		{name: "process size wins", text: "jobmanager.memory.process.size: 1600m\n", env: "1g", version: Flink1, wantMB: 1600},
		{name: "not a size", env: "12 parsecs", version: Flink1, refusal: "Cannot read total process memory size from environment variable value 12 parsecs."},
		{name: "unset: no JobManager memory", version: Flink1, refusal: "need to be configured explicitly"},
		{name: "2.x ignores it", text: "jobmanager.memory.process.size: 1600m\n", env: "1g", version: Flink2, wantMB: 1600, warning: "Flink 2.x ignores it"},
	} {
		t.Run("jm/"+tc.name, func(t *testing.T) {
			mem, problems, ref := DeriveJobManagerMemoryEnv(legacy(t, tc.text+"taskmanager.memory.process.size: 4096m\n"), tc.version, env(tc.env))
			if tc.refusal != "" {
				require.NotNil(t, ref)
				assert.Contains(t, ref.FlinkMessage, tc.refusal)
				return
			}
			require.Nil(t, ref)
			assertContainer(t, mem.ContainerMB, problems, tc.wantMB, tc.warning)
		})
	}
}

// assertContainer asserts a derivation's container size and, when warning is not "", that its
// first problem says it.
func assertContainer(t *testing.T, gotMB int64, problems []Problem, wantMB int64, warning string) {
	t.Helper()
	assert.Equal(t, wantMB, gotMB)
	if warning != "" {
		require.NotEmpty(t, problems)
		assert.Contains(t, problems[0].Message, warning)
	}
}
