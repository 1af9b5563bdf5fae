package preflight

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	fairClass = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
	fifoClass = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler"
)

// withFairFile copies testdata/fair/<name> into the configuration directory as fair-scheduler.xml.
func withFairFile(t *testing.T, files hadoopFiles, name string) string {
	t.Helper()
	dir := files.with("yarn-site.xml", keySchedulerClass, fairClass).write(t)
	data, err := os.ReadFile(filepath.Join("testdata", "fair", name))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, defaultFairAllocFile), data, 0o644))
	return dir
}

func TestCalculatorOffline(t *testing.T) {
	cases := []struct {
		name   string
		files  hadoopFiles
		flink  string
		status Status
		parts  []string
		source string
	}{
		{
			name: "DominantResourceCalculator", files: goodHadoop(), status: StatusPass,
			parts: []string{DominantCalculator}, source: "capacity-scheduler.xml:",
		},
		{
			name:   "DefaultResourceCalculator",
			files:  goodHadoop().with("capacity-scheduler.xml", keyCalculator, DefaultCalculator),
			status: StatusFail, parts: []string{DefaultCalculator, "memory only", "without their GPUs"}, source: "capacity-scheduler.xml:",
		},
		{
			name:   "capacity-scheduler.xml without the key: Hadoop's default",
			files:  goodHadoop().with("capacity-scheduler.xml", keyCalculator, ""),
			status: StatusFail, parts: []string{DefaultCalculator, "Hadoop's default"}, source: "capacity-scheduler.xml",
		},
		{
			name:   "no capacity-scheduler.xml: cannot tell",
			files:  goodHadoop().with("capacity-scheduler.xml", "", ""),
			status: StatusWarn, parts: []string{"cannot tell", "capacity-scheduler.xml is not in"},
		},
		{
			name:   "DefaultResourceCalculator, nothing but memory and vcores requested",
			files:  goodHadoop().with("capacity-scheduler.xml", keyCalculator, DefaultCalculator),
			flink:  "taskmanager.memory.process.size: 2g\n",
			status: StatusWarn, parts: []string{"nothing but memory and vcores"},
		},
		{
			name:   "FifoScheduler",
			files:  goodHadoop().with("yarn-site.xml", keySchedulerClass, fifoClass),
			status: StatusFail, parts: []string{"FifoScheduler", "memory only"}, source: "yarn-site.xml:",
		},
		{
			name:   "unknown scheduler class",
			files:  goodHadoop().with("yarn-site.xml", keySchedulerClass, "com.example.MyScheduler"),
			status: StatusSkip, parts: []string{"com.example.MyScheduler"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			flink := goodFlink
			if tc.flink != "" {
				flink = tc.flink
			}
			rep := run(t, Input{Flink: flinkConf(t, flink), Hadoop: tc.files.load(t)})
			e := requireOne(t, rep, IDCalculatorNotDominant, tc.status, tc.parts...)
			if tc.source != "" {
				assert.Contains(t, e.Source, tc.source)
			}
			if tc.status == StatusFail {
				assert.NotEmpty(t, e.Fix)
			}
		})
	}
}

func TestCalculatorFairScheduler(t *testing.T) {
	load := func(t *testing.T, dir string) *Report {
		hc := loadDir(t, dir)
		return run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: hc})
	}
	rep := load(t, withFairFile(t, goodHadoop(), "drf.xml"))
	e := requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "drf")
	assert.Contains(t, e.Source, "fair-scheduler.xml:9")

	rep = load(t, withFairFile(t, goodHadoop(), "fair.xml"))
	e = requireOne(t, rep, IDCalculatorNotDominant, StatusFail, "fair (the default)")
	assert.Contains(t, e.Fix, "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>")

	rep = load(t, withFairFile(t, goodHadoop(), "mixed.xml"))
	e = requireOne(t, rep, IDCalculatorNotDominant, StatusWarn, "queue root.batch.etl", "policy fair")
	assert.Contains(t, e.Source, "fair-scheduler.xml:6")

	// No allocation file: cannot tell.
	dir := goodHadoop().with("yarn-site.xml", keySchedulerClass, fairClass).write(t)
	rep = load(t, dir)
	requireOne(t, rep, IDCalculatorNotDominant, StatusSkip, "allocation file cannot be read")
}

func TestParseFairAllocations(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "fair", "mixed.xml"))
	require.NoError(t, err)
	a, err := ParseFairAllocations("mixed.xml", data)
	require.NoError(t, err)
	assert.Equal(t, "DRF", a.DefaultPolicy)
	assert.Equal(t, 3, a.DefaultLine)
	assert.Equal(t, []FairQueue{
		{Path: "root.batch.etl", Policy: "fair", Line: 6},
		{Path: "root.legacy", Policy: "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies.DominantResourceFairnessPolicy", Line: 10},
	}, a.Queues)

	for _, bad := range []string{"", "<configuration/>", "<allocations>", "<allocations></queue>", "not xml"} {
		_, err := ParseFairAllocations("x.xml", []byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestCalculatorLive(t *testing.T) {
	// The RM's /conf shows the calculator: it overrides the files and the message says so.
	bodies := goodCaptures(t)
	bodies["/conf"] = []byte(`{"properties":[{"key":"yarn.scheduler.capacity.resource-calculator","value":"` + DominantCalculator + `","isFinal":false,"resource":"capacity-scheduler.xml"}]}`)
	rm := newFakeRM(t, bodies)
	hc := goodHadoop().with("capacity-scheduler.xml", keyCalculator, DefaultCalculator).load(t)
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: hc, Client: rmClient(t, rm.URL())})
	e := requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "/conf says "+DominantCalculator, "overriding "+DefaultCalculator)
	assert.Equal(t, rm.URL()+"/conf", e.Source)

	// The real /conf does not show it: the files decide.
	rm = newFakeRM(t, goodCaptures(t))
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: hc, Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCalculatorNotDominant, StatusFail, DefaultCalculator)

	// Live only, no files: cannot tell.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCalculatorNotDominant, StatusWarn, "cannot tell", "/conf does not show")

	// The files say FairScheduler, the RM runs the CapacityScheduler: the RM wins, the message says so.
	dir := withFairFile(t, goodHadoop(), "drf.xml")
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: loadDir(t, dir), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "says "+fairClass, "runs the CapacityScheduler")

	// Neither files nor RM.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink)})
	requireOne(t, rep, IDCalculatorNotDominant, StatusSkip)
}

func TestCalculatorLiveSchedulerType(t *testing.T) {
	nodes := uniformNodes(2, map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2})
	fair := []byte(`{"scheduler":{"schedulerInfo":{"type":"fairScheduler","rootQueue":{"queueName":"root","childQueues":{"queue":[
		{"type":"fairSchedulerLeafQueueInfo","queueName":"root.default","maxResources":{"memory":16384,"vCores":32}}]}}}}}`)
	fifo := []byte(`{"scheduler":{"schedulerInfo":{"type":"fifoScheduler","capacity":1.0,"usedCapacity":0.0,"qstate":"RUNNING"}}}`)

	// The RM runs the FairScheduler; the files say CapacityScheduler (the default): the allocation
	// file of the configuration directory decides, and the message says which scheduler runs.
	bodies := synthCluster(stdTypes, nodes, bigMax)
	bodies["/ws/v1/cluster/scheduler"] = fair
	rm := newFakeRM(t, bodies)
	dir := goodHadoop().write(t)
	data, err := os.ReadFile(filepath.Join("testdata", "fair", "drf.xml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, defaultFairAllocFile), data, 0o644))
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: loadDir(t, dir), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "the FairScheduler schedules with drf", "runs the FairScheduler")
	// Its queues report no maximum allocation.
	requireOne(t, rep, IDQueueMaxAllocation, StatusSkip, "reports no maximum allocation (fairScheduler)")

	// FairScheduler without files: cannot read its policy.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCalculatorNotDominant, StatusSkip, "no Hadoop configuration to find it")

	// FIFO.
	bodies = synthCluster(stdTypes, nodes, bigMax)
	bodies["/ws/v1/cluster/scheduler"] = fifo
	rm = newFakeRM(t, bodies)
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	e := requireOne(t, rep, IDCalculatorNotDominant, StatusFail, "FifoScheduler")
	assert.Equal(t, rm.URL(), e.Source)
}
