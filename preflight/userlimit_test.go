package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQueueUserLimit: one user holds at most user-limit-factor × the queue's guaranteed capacity
// (minEffectiveCapacity), one container past it (the scheduler's check is "above the limit"), and
// with other active users minimum-user-limit-percent shares the queue.
func TestQueueUserLimit(t *testing.T) {
	maxCap := map[string]int64{"memory-mb": 131072, "vcores": 128, "yarn.io/gpu": 16, "yarn.io/fpga": 16}
	minCap := map[string]int64{"memory-mb": 32768, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 4}
	node := map[string]int64{"memory-mb": 65536, "vcores": 64, "yarn.io/gpu": 8, "yarn.io/fpga": 8}
	limits := func(f, pct float64) *[2]float64 { return &[2]float64{f, pct} }
	cases := []struct {
		name       string
		queue      synthQueue
		version    string
		hadoop     hadoopFiles
		direct     bool
		containers int
		status     Status
		parts      []string
		fix        string
	}{
		{name: "factor 1: three TaskManagers for one user, four wanted", containers: 4, status: StatusFail,
			queue: synthQueue{minCap: minCap, userLimits: limits(1, 100)},
			parts: []string{"one user may hold at most", "yarn.io/gpu 4", "user-limit-factor 1", "(userLimitFactor)", "3 TaskManager containers <memory-mb:4096, vcores:4, yarn.io/gpu:2, yarn.io/fpga:1>", "4 wanted", "would hold 8", "waits forever"},
			fix:   "raise yarn.scheduler.capacity.root.default.user-limit-factor to 1.5 or more"},
		{name: "factor 1: the third goes past the limit", containers: 3, status: StatusPass,
			queue: synthQueue{minCap: minCap, userLimits: limits(1, 100)}, parts: []string{"holds 8 TaskManager containers"}},
		{name: "factor 2 holds four", containers: 4, status: StatusPass,
			queue: synthQueue{minCap: minCap, userLimits: limits(2, 100)}, parts: []string{"holds 8 TaskManager containers"}},
		{name: "factor -1 lifts the limit on 3.4+", containers: 8, status: StatusPass, version: "3.4.2",
			queue: synthQueue{minCap: minCap, userLimits: limits(-1, 100)}, parts: []string{"holds 8 TaskManager containers"}},
		{name: "factor -1 before 3.4", containers: 4, status: StatusWarn, version: "3.3.6",
			queue: synthQueue{minCap: minCap, userLimits: limits(-1, 100)}, parts: []string{"user-limit-factor -1 of queue root.default is understood from Hadoop 3.4 on"}},
		{name: "containers given directly: a warning", containers: 4, status: StatusWarn, direct: true,
			queue: synthQueue{minCap: minCap, userLimits: limits(1, 100)},
			parts: []string{"one user may hold at most", "3 containers <memory-mb:4096, vcores:4, yarn.io/gpu:2> at once", "4 wanted", "the others start as earlier ones finish"},
			fix:   "user-limit-factor to 1.5 or more"},
		{name: "from capacity-scheduler.xml when the RM does not say", containers: 3, status: StatusFail,
			queue:  synthQueue{minCap: minCap},
			hadoop: goodHadoop().with("capacity-scheduler.xml", "yarn.scheduler.capacity.root.default.user-limit-factor", "0.5"),
			parts:  []string{"user-limit-factor 0.5, from ", "capacity-scheduler.xml:", "2 TaskManager containers", "3 wanted"},
			fix:    "user-limit-factor to 1 or more"},
		{name: "a factor that is no number", containers: 3, status: StatusWarn,
			queue:  synthQueue{minCap: minCap},
			hadoop: goodHadoop().with("capacity-scheduler.xml", "yarn.scheduler.capacity.root.default.user-limit-factor", "lots"),
			parts:  []string{"capacity-scheduler.xml:", `yarn.scheduler.capacity.root.default.user-limit-factor = "lots" is not a number`}},
		{name: "other users share the queue now", containers: 2, status: StatusWarn,
			queue: synthQueue{minCap: minCap, userLimits: limits(1, 25), users: []string{"bob", "carol"}},
			parts: []string{"2 other users have applications in it", "minimum-user-limit-percent 25", "1 of the 2 TaskManager containers"},
			fix:   "wait for the queue's other users' applications"},
		{name: "other users, percent 100: no sharing", containers: 2, status: StatusPass,
			queue: synthQueue{minCap: minCap, userLimits: limits(1, 100), users: []string{"bob"}}, parts: []string{"holds 8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.queue
			q.name, q.maxAlloc, q.maxCap = "default", bigMax, maxCap
			bodies := synthCluster(stdTypes, uniformNodes(2, node), bigMax)
			bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, []synthQueue{q})
			if tc.version != "" {
				bodies["/ws/v1/cluster/info"] = infoBody(tc.version)
			}
			in := Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, newFakeRM(t, bodies).URL()), Containers: tc.containers}
			if tc.direct {
				in.Flink, in.Container = nil, vector("memory-mb", 4096, "vcores", 4, "yarn.io/gpu", 2)
			}
			if tc.hadoop != nil {
				in.Hadoop = tc.hadoop.load(t)
			}
			rep := run(t, in)
			e := requireOneFix(t, rep, IDQueueCapacity, tc.status, tc.fix, tc.parts...)
			assert.NotEmpty(t, e.Source)
		})
	}
}
