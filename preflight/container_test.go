package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func vector(kv ...any) *records.Resources {
	var v records.Resources
	for i := 0; i < len(kv); i += 2 {
		q := records.Quantity{Value: int64(kv[i+1].(int))}
		if kv[i] == records.MemoryMB {
			q.Units = records.MemoryUnits
		}
		v.Set(kv[i].(string), q)
	}
	return &v
}

// A container given directly (yarn-er submit --gpus N) is checked without any Flink
// configuration: the flink.* checks skip, the others look at the vector.
func TestDirectContainerGoodCluster(t *testing.T) {
	rm := newFakeRM(t, goodCaptures(t))
	rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1, "yarn.io/gpu", 1),
		ContainerName: "yarn-er container", Hadoop: goodHadoop().load(t), Client: rmClient(t, rm.URL()), Containers: 8})
	for _, id := range IDs() {
		if AreaOf(id) == AreaFlink {
			requireOne(t, rep, id, StatusSkip, "given directly")
		}
	}
	requireOne(t, rep, IDCapacity, StatusPass, "8 yarn-er containers <memory-mb:1024, vcores:1, yarn.io/gpu:1> fit now")
	requireOne(t, rep, IDResourceTypeUndeclared, StatusPass, "yarn.io/gpu")
	assert.True(t, rep.OK, "failing: %v", rep.failing())
	assert.Contains(t, rep.Verdict(), "yarn-er containers will get their yarn.io/gpu")
}

func TestDirectContainerMisconfiguredCluster(t *testing.T) {
	rm := newFakeRM(t, misconfiguredCaptures(t))
	files := goodHadoop().with("capacity-scheduler.xml", keyCalculator, DefaultCalculator).
		with("resource-types.xml", "", "").with("node-resources.xml", "", "")
	rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1, "yarn.io/gpu", 1),
		Hadoop: files.load(t), Client: rmClient(t, rm.URL())})
	assert.Equal(t, []string{IDResourceTypeUndeclared, IDCalculatorNotDominant, IDTypeUnknown}, rep.failing())
	e := requireOne(t, rep, IDTypeUnknown, StatusFail, "does not know resource type 'yarn.io/gpu'")
	assert.NotContains(t, e.Message, "TaskManager")
	assert.Contains(t, e.Message, "containers get no yarn.io/gpu")
	// yarn-er's ApplicationMaster sends the request as is: the RM drops the type (no Flink refusal).
	assert.Contains(t, e.Message, "it drops the type from requests")
	assert.NotContains(t, e.Message, "not supported by the Yarn cluster")
	assert.False(t, rep.OK)
	assert.Contains(t, rep.Verdict(), "containers will NOT get their yarn.io/gpu")
}

func TestDirectContainerAboveMaximum(t *testing.T) {
	rm := newFakeRM(t, goodCaptures(t))
	rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1, "yarn.io/gpu", 5),
		Hadoop: goodHadoop().load(t), Client: rmClient(t, rm.URL())})
	require.False(t, rep.OK)
	assert.Contains(t, rep.failing(), IDNoNodeFits)
	for _, c := range rep.Checks {
		assert.NotContains(t, c.Message+c.Fix, "TaskManager", c.ID)
	}
}

// TestDirectContainersBeyondTheQueue: containers given directly (yarn-er submit) are ranks of a
// batch job; more than the queue holds at once start as earlier ones finish, so the check warns
// instead of failing (for Flink's TaskManagers it fails: see TestQueueCapacity).
func TestDirectContainersBeyondTheQueue(t *testing.T) {
	rm := newFakeRM(t, goodCaptures(t))
	rep := run(t, Input{Container: vector("memory-mb", 128, "vcores", 1, "yarn.io/gpu", 1),
		ContainerName: "yarn-er container", Hadoop: goodHadoop().load(t), Client: rmClient(t, rm.URL()), Containers: 9})
	requireOne(t, rep, IDQueueCapacity, StatusWarn, "holds at most 8 yarn-er containers", "9 wanted", "start as earlier ones finish")
	assert.True(t, rep.OK, "failing: %v", rep.failing())
}
