package preflight

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

// synthResources builds a resource vector from plain values, memory-mb in memUnits, the other
// types in name order.
func synthResources(values map[string]int64, memUnits string) records.Resources {
	var out records.Resources
	for _, name := range slices.Sorted(maps.Keys(values)) {
		u := ""
		if name == "memory-mb" {
			u = memUnits
		}
		out.Set(name, records.Quantity{Value: values[name], Units: u})
	}
	return out
}

// overviewBody renders /ws/v1/cluster/scheduler-overview (Hadoop 3.5's shape) with the given
// effective maximum allocation.
func overviewBody(types []rtype, maxAlloc map[string]int64) []byte {
	var b bytes.Buffer
	b.WriteString(`{"scheduler":{"schedulerType":"Capacity Scheduler","schedulingResourceType":"memory-mb (unit=Mi),vcores,yarn.io/fpga,yarn.io/gpu","minimumAllocation":`)
	writeResource(&b, types, map[string]int64{"memory-mb": 64, "vcores": 1})
	b.WriteString(`,"maximumAllocation":`)
	writeResource(&b, types, maxAlloc)
	b.WriteString(`,"applicationPriority":0,"schedulerBusy":0,"rmDispatcherEventQueueSize":0,"schedulerDispatcherEventQueueSize":0}}`)
	return b.Bytes()
}

// withOverview returns the good mini-YARN's answers plus its captured scheduler-overview (the
// effective maximum: 16384 MB, 32 vcores, 4 GPUs, 2 FPGAs).
func withOverview(t testing.TB) map[string][]byte {
	bodies := goodCaptures(t)
	bodies["/ws/v1/cluster/scheduler-overview"] = capture(t, "yarn/yarnfake/captures/hadoop-3.5.0/scheduler-overview.json")
	return bodies
}

func TestMaxAllocationFromSchedulerOverview(t *testing.T) {
	// The RM reports its effective maximum: it decides, and says where it comes from.
	rm := newFakeRM(t, withOverview(t))
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t), Client: rmClient(t, rm.URL())})
	e := requireOne(t, rep, IDMaxAllocationExceeded, StatusPass, "memory-mb 4096Mi ≤ 16384Mi (effective)", "yarn.io/gpu 2 ≤ 4 (effective)", "yarn.io/fpga 1 ≤ 2 (effective)")
	assert.Equal(t, rm.URL()+"/ws/v1/cluster/scheduler-overview", e.Source)
	assert.Equal(t, 1, rm.Count("GET /ws/v1/cluster/scheduler-overview"))
	requireOne(t, rep, IDTypeUnknown, StatusPass, "/ws/v1/cluster/scheduler-overview")

	// 5 GPUs: the configuration allows any number, the largest node has 4, and so does the RM.
	fc := flinkConf(t, goodFlink, "external-resource.gpu.amount=5")
	rep = run(t, Input{Flink: fc, Hadoop: goodHadoop().load(t), Client: rmClient(t, rm.URL())})
	es := rep.entries(IDMaxAllocationExceeded)
	require.Len(t, es, 1, "%+v", es)
	assert.Equal(t, StatusFail, es[0].Status)
	for _, part := range []string{"yarn.io/gpu: the TaskManager asks for 5, above the ResourceManager's effective maximum allocation 4",
		"(" + rm.URL() + "/ws/v1/cluster/scheduler-overview: the configured maximum, unlimited (yarn.resource-types.yarn.io/gpu.maximum-allocation, Hadoop's default), capped by the largest NodeManager)",
		"InvalidResourceRequestException"} {
		assert.Contains(t, es[0].Message, part)
	}
	assert.Equal(t, "-D external-resource.gpu.amount", es[0].Source)
	assert.Contains(t, es[0].Fix, "ask for at most 4 of yarn.io/gpu per TaskManager, or add NodeManagers with more yarn.io/gpu")
	// Offline, the same request passes the files: the live answer is what catches it.
	rep = run(t, Input{Flink: fc, Hadoop: goodHadoop().load(t)})
	requireOne(t, rep, IDMaxAllocationExceeded, StatusPass, "yarn.io/gpu 5 (no maximum)")

	// Memory above the configured maximum (which the RM applies as is): raise the key.
	fc = flinkConf(t, goodFlink, "taskmanager.memory.process.size=20g")
	rep = run(t, Input{Flink: fc, Hadoop: goodHadoop().load(t), Client: rmClient(t, rm.URL())})
	e = requireOne(t, rep, IDMaxAllocationExceeded, StatusFail, "memory-mb: the TaskManager asks for 20480Mi, above the ResourceManager's effective maximum allocation 16384Mi",
		"the configured maximum, yarn.scheduler.maximum-allocation-mb at ")
	assert.Contains(t, e.Fix, "or raise yarn.scheduler.maximum-allocation-mb on the ResourceManager")

	// The local configuration says 1 GPU at most, the RM allows 4: the files are out of date.
	files := goodHadoop().with("resource-types.xml", "yarn.resource-types.yarn.io/gpu.maximum-allocation", "1")
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: files.load(t), Client: rmClient(t, rm.URL())})
	e = requireOne(t, rep, IDMaxAllocationExceeded, StatusWarn, "this configuration's maximum allocation 1", "allows 4", "out of date")
	assert.Contains(t, e.Source, "resource-types.xml:")
	assert.Contains(t, e.Fix, "update the Hadoop configuration")

	// No Hadoop configuration: the RM's maximum stands in for it.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDMaxAllocationExceeded, StatusPass, "yarn.io/gpu 2 ≤ 4 (effective)")
	requireOne(t, rep, IDNMResources, StatusSkip, "no Hadoop configuration")
	rep = run(t, Input{Flink: flinkConf(t, goodFlink, "external-resource.fpga.amount=3"), Client: rmClient(t, rm.URL())})
	e = requireOne(t, rep, IDMaxAllocationExceeded, StatusFail, "yarn.io/fpga: the TaskManager asks for 3, above the ResourceManager's effective maximum allocation 2")
	assert.Contains(t, e.Fix, "or raise yarn.resource-types.yarn.io/fpga.maximum-allocation on the ResourceManager, or give the NodeManagers more yarn.io/fpga")

	// The RM's maximum does not list a requested type (it does not know it): the files decide.
	bodies := goodCaptures(t)
	bodies["/ws/v1/cluster/scheduler-overview"] = overviewBody(stdTypes[:2], map[string]int64{"memory-mb": 16384, "vcores": 32})
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t), Client: rmClient(t, newFakeRM(t, bodies).URL())})
	requireOne(t, rep, IDMaxAllocationExceeded, StatusPass, "memory-mb 4096Mi ≤ 16384Mi (effective)", "yarn.io/gpu 2 (no maximum)")
}

func TestMaxAllocationWithoutSchedulerOverview(t *testing.T) {
	// An RM before 3.4 answers 404: the configuration decides, as offline.
	rm := newFakeRM(t, goodCaptures(t))
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t), Client: rmClient(t, rm.URL())})
	e := requireOne(t, rep, IDMaxAllocationExceeded, StatusPass, "within the configured maximum allocations", "memory-mb 4096Mi ≤ 16384Mi", "yarn.io/gpu 2 (no maximum)")
	assert.Empty(t, e.Source)
	assert.Equal(t, 1, rm.Count("GET /ws/v1/cluster/scheduler-overview"))
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDMaxAllocationExceeded, StatusSkip, "no Hadoop configuration")

	// A failing overview counts as absent.
	bodies := goodCaptures(t)
	bodies["/ws/v1/cluster/scheduler-overview"] = []byte(`{"scheduler":{}}`)
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t), Client: rmClient(t, newFakeRM(t, bodies).URL())})
	requireOne(t, rep, IDMaxAllocationExceeded, StatusPass, "within the configured maximum allocations")
}

func TestQueueMaxAllocationWithSchedulerOverview(t *testing.T) {
	total := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	small := map[string]int64{"memory-mb": 2048, "vcores": 32, "yarn.io/gpu": 8, "yarn.io/fpga": 2}
	effective := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	bodies := synthCluster(stdTypes, uniformNodes(2, total), bigMax)
	bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, []synthQueue{
		{name: "default", maxAlloc: bigMax}, {name: "small", maxAlloc: small}, {name: "legacy"},
	})
	bodies["/ws/v1/cluster/scheduler-overview"] = overviewBody(stdTypes, effective)
	runQueueCases(t, newFakeRM(t, bodies), []queueCase{
		{name: "within both", status: StatusPass, parts: []string{"yarn.io/gpu 2 ≤ 4 (effective maximum)", "memory-mb 4096Mi ≤ 16384Mi (effective maximum)"}},
		{
			name: "above the effective maximum, within the queue's", flink: []string{"external-resource.gpu.amount=5"}, status: StatusFail,
			parts: []string{"queue root.default (from the default queue): the ResourceManager allows at most 4 of yarn.io/gpu per container (its effective maximum allocation", "asks for 5"},
			fix:   "add NodeManagers with more yarn.io/gpu",
		},
		{
			name: "the queue's own limit is lower", queue: "small", status: StatusFail,
			parts: []string{"queue root.small (from --queue) allows at most 2048Mi of memory-mb per container, the TaskManager asks for 4096Mi"},
			fix:   "yarn.scheduler.capacity.root.small.maximum-allocation",
		},
		{name: "queue without its own maximum: the effective one", queue: "legacy", status: StatusPass, parts: []string{"queue root.legacy", "yarn.io/gpu 2 ≤ 4 (effective maximum)"}},
	})
}

func TestQueueLimits(t *testing.T) {
	q := map[string]int64{"memory-mb": 2048, "yarn.io/gpu": 1 << 62}
	e := map[string]int64{"memory-mb": 16384, "yarn.io/gpu": 4, "vcores": 8}
	qr := synthResources(q, "Mi")
	er := synthResources(e, "Mi")
	got := queueLimits(qr, er)
	quantity := func(r records.Resources, name string) records.Quantity {
		q, ok := r.Quantity(name)
		require.True(t, ok, name)
		return q
	}
	assert.Equal(t, queueLimit{Quantity: quantity(qr, "memory-mb")}, got["memory-mb"])
	assert.Equal(t, queueLimit{Quantity: quantity(er, "yarn.io/gpu"), effective: true}, got["yarn.io/gpu"])
	assert.Equal(t, queueLimit{Quantity: quantity(er, "vcores"), effective: true}, got["vcores"])
	assert.Len(t, queueLimits(records.Resources{}, records.Resources{}), 0)
	assert.Equal(t, quantity(qr, "memory-mb"), queueLimits(qr, records.Resources{})["memory-mb"].Quantity)
}

// fairScheduler is /ws/v1/cluster/scheduler of a FairScheduler whose root and root.gpu.train use
// DRF and root.default the fair policy (yarn/testdata/variants/scheduler-fair.json).
func fairScheduler(t testing.TB) []byte {
	return capture(t, "yarn/testdata/variants/scheduler-fair.json")
}

func TestCalculatorLiveFairScheduler(t *testing.T) {
	nodes := uniformNodes(2, map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2})
	bodies := synthCluster(stdTypes, nodes, bigMax)
	bodies["/ws/v1/cluster/scheduler"] = fairScheduler(t)
	rm := newFakeRM(t, bodies)

	// The default queue uses "fair": GPUs are requested, so it fails, from the live RM alone.
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	e := requireOne(t, rep, IDCalculatorNotDominant, StatusFail, "queue root.default (from the default queue) of the FairScheduler at "+rm.URL()+" uses policy fair, which looks at memory only")
	assert.Equal(t, rm.URL(), e.Source)
	assert.Contains(t, e.Fix, "<schedulingPolicy>drf</schedulingPolicy> for queue root.default")
	assert.Contains(t, e.Fix, "submit to a drf queue: root.gpu.train")

	// The queue the job goes to uses DRF: pass.
	for _, queue := range []string{"train", "root.gpu.train", "gpu.train"} {
		rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL()), Queue: queue})
		requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "queue root.gpu.train (from --queue) of the FairScheduler", "schedules with DRF")
		// The queue check sees the right path too, and the FairScheduler's maxContainerAllocation.
		requireOne(t, rep, IDQueueMaxAllocation, StatusPass, "queue root.gpu.train (from --queue)", "yarn.io/gpu 2 ≤ 2")
	}
	rep = run(t, Input{Flink: flinkConf(t, goodFlink, "yarn.application.queue=root.gpu.train"), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "(from -D yarn.application.queue)")

	// Nothing but memory and vcores: a warning only.
	rep = run(t, Input{Flink: flinkConf(t, "taskmanager.memory.process.size: 2g\n"), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCalculatorNotDominant, StatusWarn, "uses policy fair", "nothing but memory and vcores")

	// A queue that does not exist: the root queue (DRF) is judged, and the message says so.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL()), Queue: "nope"})
	requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "the root queue of the FairScheduler", `queue "nope" (from --queue) is not in the FairScheduler's tree`)
	requireOne(t, rep, IDQueueMaxAllocation, StatusFail, `queue "nope" (from --queue) does not exist`)

	// The live policies win over the allocation file, which the RM has not loaded.
	dir := goodHadoop().write(t)
	data, err := os.ReadFile(filepath.Join("testdata", "fair", "fair.xml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, defaultFairAllocFile), data, 0o644))
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: loadDir(t, dir), Client: rmClient(t, rm.URL()), Queue: "train"})
	requireOne(t, rep, IDCalculatorNotDominant, StatusPass, "schedules with DRF", "says defaultQueueSchedulingPolicy fair (the default), but the ResourceManager's root queue uses DRF", "runs the FairScheduler")

	// The queue's own maximum (maxContainerAllocation) is below the request: fix in the allocation file.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink, "external-resource.gpu.amount=3"), Client: rmClient(t, rm.URL()), Queue: "train"})
	e = requireOne(t, rep, IDQueueMaxAllocation, StatusFail, "queue root.gpu.train (from --queue) allows at most 2 of yarn.io/gpu per container")
	assert.Contains(t, e.Fix, "raise <maxContainerAllocation> of queue root.gpu.train in the FairScheduler's allocation file")
}
