package preflight

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func TestLiveChecksPassOnGoodCluster(t *testing.T) {
	rm := newFakeRM(t, goodCaptures(t))
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL()), Containers: 4})
	e := requireOne(t, rep, IDClusterReachable, StatusPass, "state STARTED, HA state ACTIVE")
	assert.Equal(t, rm.URL(), e.Source)
	requireOne(t, rep, IDClusterVersion, StatusPass, "Hadoop 3.5.0")
	requireOne(t, rep, IDTypeUnknown, StatusPass, "knows yarn.io/gpu, yarn.io/fpga (from /ws/v1/cluster/nodes and /ws/v1/cluster/scheduler)")
	requireOne(t, rep, IDNoNodeFits, StatusPass, "2 of 2 RUNNING nodes")
	requireOne(t, rep, IDCapacity, StatusPass, "4 TaskManager containers <memory-mb:4096, vcores:4, yarn.io/gpu:2, yarn.io/fpga:1> fit now besides the JobManager container <memory-mb:1600, vcores:1>, 4 on an empty cluster", "4 wanted")
	requireOne(t, rep, IDQueueMaxAllocation, StatusPass, "queue root.default (from the default queue)", "memory-mb 4096Mi ≤ 16384Mi")
	// Types come from the nodes: no application id is used up.
	assert.Zero(t, rm.Count("POST /ws/v1/cluster/apps/new-application"))
}

func TestMisconfiguredClusterFromCaptures(t *testing.T) {
	rm := newFakeRM(t, misconfiguredCaptures(t))
	files := goodHadoop().with("capacity-scheduler.xml", keyCalculator, DefaultCalculator).
		with("resource-types.xml", "", "").with("node-resources.xml", "", "")
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: files.load(t), Client: rmClient(t, rm.URL())})
	assert.Equal(t, []string{IDResourceTypeUndeclared, IDCalculatorNotDominant, IDTypeUnknown}, rep.failing())
	es := rep.entries(IDTypeUnknown)
	require.Len(t, es, 2)
	assert.Contains(t, es[0].Message, "does not know resource type 'yarn.io/gpu' (it knows memory-mb, vcores")
	assert.Contains(t, es[1].Message, "'yarn.io/fpga'")
	// Flink refuses to ask for a type the RM does not report (it does not drop it).
	assert.Contains(t, es[0].Message, "\"External resource yarn.io/gpu is not supported by the Yarn cluster.\"")
	assert.Contains(t, es[1].Message, "External resource yarn.io/fpga is not supported")
	assert.Contains(t, es[1].Message, "no TaskManager starts")
	assert.NotContains(t, es[1].Message, "drops the type")
	// The fit checks look at what the RM keeps of the request and say what it drops.
	requireOne(t, rep, IDNoNodeFits, StatusPass, "without yarn.io/gpu, yarn.io/fpga, which the ResourceManager does not know")
	assert.False(t, rep.OK)
	assert.Contains(t, rep.Verdict(), "TaskManagers will NOT get their gpu and fpga")
}

func TestReachable(t *testing.T) {
	// Nothing listens.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, url)})
	e := requireOne(t, rep, IDClusterReachable, StatusFail, "did not answer")
	assert.Equal(t, url, e.Source)
	assert.Contains(t, e.Fix, "--rm")
	for _, id := range []string{IDClusterVersion, IDTypeUnknown, IDNoNodeFits, IDCapacity, IDQueueMaxAllocation} {
		requireOne(t, rep, id, StatusSkip, "not reachable")
	}
	assert.Nil(t, rep.AuthError())

	// 401.
	rm := newFakeRM(t, goodCaptures(t))
	rm.Fault("GET /ws/v1/cluster/info", yarnfake.Fault{Status: http.StatusUnauthorized,
		Body: `{"RemoteException":{"exception":"AuthorizationException","message":"refused by the fake RM","javaClassName":"org.apache.hadoop.security.authorize.AuthorizationException"}}`})
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	e = requireOne(t, rep, IDClusterReachable, StatusFail, "401")
	assert.Contains(t, e.Fix, "--user")
	require.Error(t, rep.AuthError())
	assert.ErrorIs(t, rep.AuthError(), yarn.ErrUnauthorized)

	// No client.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), NoClientReason: "no ResourceManager known: test"})
	for _, id := range []string{IDClusterReachable, IDClusterVersion, IDTypeUnknown, IDNoNodeFits, IDCapacity, IDQueueMaxAllocation} {
		requireOne(t, rep, id, StatusSkip, "no ResourceManager known: test")
	}
	assert.Contains(t, rep.Verdict(), "live checks skipped")
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	block := make(chan struct{})
	// Fault injection: an RM that never answers (a plain handler: it must block the request itself).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	t.Cleanup(func() { close(block); srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, srv.URL)})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestClusterVersion(t *testing.T) {
	cases := []struct {
		version string
		status  Status
		part    string
	}{
		{"3.5.0", StatusPass, "Hadoop 3.5.0"},
		{"3.1.1.3.1.0.0-78", StatusPass, "Hadoop 3.1.1.3.1.0.0-78"},
		{"3.0.0-cdh6.3.2", StatusFail, "3.0.0-cdh6.3.2"},
		{"2.10.1", StatusFail, "GPU/FPGA support 3.1"},
		{"unknown", StatusWarn, "cannot tell the Hadoop version"},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			bodies := synthCluster(stdTypes, uniformNodes(1, map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}), bigMax)
			bodies["/ws/v1/cluster/info"] = infoBody(tc.version)
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, newFakeRM(t, bodies).URL())})
			e := requireOne(t, rep, IDClusterVersion, tc.status, tc.part)
			assert.NotEmpty(t, e.Source)
		})
	}
}

func TestParseHadoopVersion(t *testing.T) {
	for in, want := range map[string]HadoopVersion{
		"3.5.0": {3, 5, 0}, "3.1.1.3.1.0.0-78": {3, 1, 1}, "3.0.0-cdh6.3.2": {3, 0, 0},
		"3.3.6-amzn-1": {3, 3, 6}, "3.4.0-SNAPSHOT": {3, 4, 0}, "2.7": {2, 7, 0}, " v3.2.4": {3, 2, 4},
	} {
		got, err := ParseHadoopVersion(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "three", "3", ".3.1", "99999999999.1"} {
		_, err := ParseHadoopVersion(bad)
		assert.Error(t, err, bad)
	}
	assert.True(t, HadoopVersion{3, 0, 9}.Less(HadoopVersion{3, 1, 0}))
	assert.False(t, HadoopVersion{3, 1, 0}.Less(HadoopVersion{3, 1, 0}))
	assert.Equal(t, "3.1.0", HadoopVersion{3, 1, 0}.String())
}

func TestTypeUnknownFallsBackToNewApplication(t *testing.T) {
	// No node lists resources and the scheduler reports no maximum allocation.
	bodies := goodCaptures(t)
	bodies["/ws/v1/cluster/nodes"] = []byte(`{"nodes":{}}`)
	bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, nil, []synthQueue{{name: "default"}})
	rm := newFakeRM(t, bodies)
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDTypeUnknown, StatusSkip, "cannot tell")
	assert.Zero(t, rm.Count("POST /ws/v1/cluster/apps/new-application"))

	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL()), AllowNewApplication: true})
	requireOne(t, rep, IDTypeUnknown, StatusPass, "knows yarn.io/gpu")
	assert.Equal(t, 1, rm.Count("POST /ws/v1/cluster/apps/new-application"))
	requireOne(t, rep, IDNoNodeFits, StatusFail, "no RUNNING NodeManager")
}

func TestNoNodeFits(t *testing.T) {
	node := func(mem, vcores, gpu int64) map[string]int64 {
		return map[string]int64{"memory-mb": mem, "vcores": vcores, "yarn.io/gpu": gpu, "yarn.io/fpga": 2}
	}
	cases := []struct {
		name   string
		nodes  []synthNode
		status Status
		parts  []string
		fix    string
	}{
		{
			name: "fits", nodes: uniformNodes(3, node(16384, 32, 4)), status: StatusPass,
			parts: []string{"3 of 3 RUNNING nodes"},
		},
		{
			name: "not enough GPUs anywhere", nodes: uniformNodes(3, node(16384, 32, 1)), status: StatusFail,
			parts: []string{"no RUNNING node can hold one TaskManager container", "yarn.io/gpu 1 < 2 asked"}, fix: "ask for less yarn.io/gpu",
		},
		{
			name: "GPUs and memory on different nodes",
			nodes: []synthNode{
				{id: "a:1", state: "RUNNING", total: node(1024, 32, 8)},
				{id: "b:1", state: "RUNNING", total: node(65536, 32, 0)},
			},
			status: StatusFail, parts: []string{"all resources at once"}, fix: "no node has all resources at once",
		},
		{
			name: "only lost and unhealthy nodes",
			nodes: []synthNode{
				{id: "a:1", state: "LOST", total: node(16384, 32, 4)},
				{id: "b:1", state: "UNHEALTHY", total: node(16384, 32, 4)},
			},
			status: StatusFail, parts: []string{"no RUNNING NodeManager (2 nodes in other states)"}, fix: "yarn node -list -all",
		},
		{
			name: "a RUNNING node among others",
			nodes: []synthNode{
				{id: "a:1", state: "LOST", total: node(16384, 32, 4)},
				{id: "b:1", state: "RUNNING", total: node(16384, 32, 4), used: map[string]int64{}},
			},
			status: StatusPass, parts: []string{"1 of 1 RUNNING nodes"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t, synthCluster(stdTypes, tc.nodes, bigMax))
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
			requireOneFix(t, rep, IDNoNodeFits, tc.status, tc.fix, tc.parts...)
		})
	}
}

func TestCapacity(t *testing.T) {
	full := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 3, "yarn.io/fpga": 2}
	busy := func(used map[string]int64) []synthNode {
		ns := uniformNodes(2, full)
		for i := range ns {
			ns[i].used = used
		}
		return ns
	}
	cases := []struct {
		name       string
		nodes      []synthNode
		containers int
		require    bool
		status     Status
		parts      []string
		fix        string
	}{
		{
			// yarn-er submit: ranks beyond what an empty cluster holds would wait forever.
			name: "beyond an empty cluster, required", nodes: uniformNodes(2, full), containers: 1000000000, require: true, status: StatusFail,
			parts: []string{"1000000000 containers", "even an empty cluster holds only 2", "2 fit now"}, fix: "ask for at most 2 containers",
		},
		{
			name: "fewer than wanted now, required", nodes: append(busy(map[string]int64{"memory-mb": 14000})[:1], uniformNodes(1, full)...),
			containers: 2, require: true, status: StatusWarn, parts: []string{"1 of the 2", "2 on an empty cluster"}, fix: "2 fit on an empty cluster",
		},
		{
			// 3 GPUs per node and 2 per container: 1 per node, 2 in all, not 6/2 = 3.
			name: "packed per node, not summed", nodes: uniformNodes(2, full), status: StatusPass,
			parts: []string{"2 TaskManager containers", "fit now besides the JobManager container <memory-mb:1600, vcores:1>, 2 on an empty cluster"},
		},
		{
			name: "fewer than wanted", nodes: uniformNodes(2, full), containers: 3, status: StatusWarn,
			parts: []string{"2 of the 3 TaskManager containers", "2 on an empty cluster"}, fix: "even an empty cluster holds only 2",
		},
		{
			name: "busy cluster: none fit now", nodes: busy(map[string]int64{"yarn.io/gpu": 2}), containers: 1, status: StatusFail,
			parts: []string{"no TaskManager container", "fits now", "(2 fit on an empty cluster)"}, fix: "wait for running applications",
		},
		{
			name: "half busy: fewer now than on an empty cluster", nodes: append(busy(map[string]int64{"memory-mb": 14000})[:1], uniformNodes(1, full)...),
			containers: 2, status: StatusWarn, parts: []string{"1 of the 2", "2 on an empty cluster"}, fix: "2 fit on an empty cluster",
		},
		{
			name: "none even on an empty cluster", nodes: uniformNodes(2, map[string]int64{"memory-mb": 2048, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}),
			status: StatusFail, parts: []string{"nor on an empty cluster"}, fix: "memory-mb",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t, synthCluster(stdTypes, tc.nodes, bigMax))
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL()), Containers: tc.containers, RequireCapacity: tc.require})
			requireOneFix(t, rep, IDCapacity, tc.status, tc.fix, tc.parts...)
		})
	}
}

func TestCapacityNormalizesAndConvertsUnits(t *testing.T) {
	// A type in "k": nodes have 5k, each container asks 2000 (plain units): 2 per node.
	types := append(append([]rtype{}, stdTypes...), rtype{"acme.com/bw", "k"})
	total := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 8, "yarn.io/fpga": 8, "acme.com/bw": 5}
	rm := newFakeRM(t, synthCluster(types, uniformNodes(3, total), bigMax))
	fc := flinkConf(t, goodFlink, "external-resources=gpu;fpga;bw", "external-resource.bw.amount=2000",
		"external-resource.bw.yarn.config-key=acme.com/bw", "external-resource.bw.driver-factory.class=x.Y",
		"taskmanager.memory.process.size=4000m")
	// The CapacityScheduler rounds 4000 MB up to 4096 (minimum allocation 1024): 4 per node by
	// memory, so bandwidth (2 per node) decides.
	hc := goodHadoop().with("yarn-site.xml", "yarn.scheduler.minimum-allocation-mb", "1024").
		with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu,yarn.io/fpga,acme.com/bw").
		with("resource-types.xml", "yarn.resource-types.acme.com/bw.units", "k").load(t)
	rep := run(t, Input{Flink: fc, Hadoop: hc, Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCapacity, StatusPass, "6 TaskManager containers", "memory-mb 4000 → 4096")
}

func TestQueueMaxAllocation(t *testing.T) {
	total := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	small := map[string]int64{"memory-mb": 2048, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	tree := []synthQueue{
		{name: "default", maxAlloc: bigMax},
		{name: "a", maxAlloc: bigMax, children: []synthQueue{
			{name: "b", maxAlloc: small},
			{name: "gpu", maxAlloc: bigMax},
		}},
		{name: "legacy"},
	}
	bodies := synthCluster(stdTypes, uniformNodes(2, total), bigMax)
	bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, tree)
	rm := newFakeRM(t, bodies)
	runQueueCases(t, rm, []queueCase{
		{name: "default queue", status: StatusPass, parts: []string{"queue root.default (from the default queue)"}},
		{name: "leaf name", queue: "gpu", status: StatusPass, parts: []string{"queue root.a.gpu (from --queue)"}},
		{name: "path without root", queue: "a.gpu", status: StatusPass, parts: []string{"root.a.gpu"}},
		{name: "full path", queue: "root.a.gpu", status: StatusPass, parts: []string{"root.a.gpu"}},
		{name: "from Flink's configuration", flink: []string{"yarn.application.queue=a.gpu"}, status: StatusPass, parts: []string{"root.a.gpu (from -D yarn.application.queue)"}},
		{
			name: "below the request", queue: "root.a.b", status: StatusFail,
			parts: []string{"queue root.a.b (from --queue) allows at most 2048Mi of memory-mb per container, the TaskManager asks for 4096Mi"},
			fix:   "yarn.scheduler.capacity.root.a.b.maximum-allocation",
		},
		{name: "no such queue", queue: "nope", status: StatusFail, parts: []string{`queue "nope" (from --queue) does not exist`}, fix: "root.default, root.a.b, root.a.gpu"},
		{name: "parent queue", queue: "a", status: StatusFail, parts: []string{"is a parent queue"}, fix: "leaf queue below root.a"},
		{name: "no maximum reported", queue: "legacy", status: StatusSkip, parts: []string{"reports no maximum allocation"}},
	})
}

func TestQuotient(t *testing.T) {
	assert.Equal(t, int64(2), quotient(records.Quantity{Value: 5, Units: "k"}, 2000, ""))
	assert.Equal(t, int64(2), quotient(records.Quantity{Value: 5000, Units: ""}, 2, "k"))     // 5000 = 5k: 5/2
	assert.Equal(t, int64(0), quotient(records.Quantity{Value: 1999, Units: ""}, 2, "k"))     // below 2k
	assert.Equal(t, int64(4), quotient(records.Quantity{Value: 16, Units: "Gi"}, 4096, "Mi")) // 16Gi / 4096Mi
	assert.Equal(t, int64(9223372036854775807), quotient(records.Quantity{Value: 1 << 62, Units: "P"}, 1, "p"))
	assert.Equal(t, int64(0), quotient(records.Quantity{Value: 4, Units: "bogus"}, 1, ""))
	assert.Equal(t, int64(0), quotient(records.Quantity{Value: 0}, 1, ""))
	assert.Equal(t, int64(9223372036854775807), satAdd(9223372036854775807, 1))
}

// cluster.capacity counts the JobManager (Flink's ApplicationMaster) container too.
func TestCapacityCountsJobManager(t *testing.T) {
	// 9000 MB per node: 2 TaskManagers of 4096 MB each, or 1 beside the JobManager's 1600 MB.
	node := map[string]int64{"memory-mb": 9000, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	rm := newFakeRM(t, synthCluster(stdTypes, uniformNodes(2, node), bigMax))
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL()), Containers: 4})
	requireOneFix(t, rep, IDCapacity, StatusWarn, "even an empty cluster holds only 3",
		"3 of the 4 TaskManager containers", "besides the JobManager container <memory-mb:1600, vcores:1>")

	// A JobManager no node can hold: the application never starts.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink, "jobmanager.memory.process.size=10000m"), Client: rmClient(t, rm.URL())})
	requireOneFix(t, rep, IDCapacity, StatusFail, "jobmanager.memory.process.size",
		"the JobManager container <memory-mb:10000, vcores:1> fits on no RUNNING node")

	// No JobManager memory: Flink's client refuses to submit; the TaskManagers are counted alone.
	rep = run(t, Input{Flink: flinkConf(t, withoutLines(goodFlink, "jobmanager.")), Client: rmClient(t, rm.URL())})
	e := requireOneFix(t, rep, IDCapacity, StatusWarn, "jobmanager.memory.process.size",
		"4 TaskManager containers", "the JobManager container is not counted", "Either required fine-grained memory (jobmanager.memory.heap.size)")
	assert.Empty(t, e.Source, "no JobManager key is set")
}
