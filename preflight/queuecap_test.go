package preflight

import "testing"

func TestQueueCapacity(t *testing.T) {
	node := map[string]int64{"memory-mb": 65536, "vcores": 64, "yarn.io/gpu": 8, "yarn.io/fpga": 8}
	capacity := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	cases := []struct {
		name       string
		queue      synthQueue
		containers int
		status     Status
		parts      []string
		fix        string
	}{
		{name: "holds what is wanted", queue: synthQueue{name: "default", maxAlloc: bigMax, maxCap: capacity}, containers: 2, status: StatusPass,
			parts: []string{"queue root.default (from the default queue) holds 2 TaskManager containers", "besides the JobManager container <memory-mb:1600, vcores:1>", "yarn.io/gpu 4", "2 fit now"}},
		{name: "too small for the job", queue: synthQueue{name: "default", maxAlloc: bigMax, maxCap: capacity}, containers: 4, status: StatusFail,
			parts: []string{"holds at most 2 TaskManager containers", "4 wanted", "waits forever"}, fix: "yarn.scheduler.capacity.root.default.maximum-capacity"},
		{name: "busy now", queue: synthQueue{name: "default", maxAlloc: bigMax, maxCap: capacity, used: map[string]int64{"memory-mb": 4096, "vcores": 4, "yarn.io/gpu": 2}},
			containers: 2, status: StatusWarn, parts: []string{"1 of the 2 TaskManager containers", "2 when it is empty"}, fix: "wait for the queue's applications"},
		{name: "no room for the JobManager", queue: synthQueue{name: "default", maxAlloc: bigMax, maxCap: map[string]int64{"memory-mb": 1024, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}},
			status: StatusFail, parts: []string{"cannot hold the JobManager container <memory-mb:1600, vcores:1>"}, fix: "jobmanager.memory.process.size"},
		{name: "AM limit below the JobManager", queue: synthQueue{name: "default", maxAlloc: bigMax, maxCap: capacity,
			amLimit: map[string]int64{"memory-mb": 1024, "vcores": 32}}, status: StatusFail,
			parts: []string{"lets ApplicationMasters use at most memory-mb 1024Mi", "AMResourceLimit", "stays ACCEPTED"}, fix: "maximum-am-resource-percent"},
		{name: "AM limit used up by others", queue: synthQueue{name: "default", maxAlloc: bigMax, maxCap: capacity,
			amLimit: map[string]int64{"memory-mb": 4096, "vcores": 32}, amUsed: map[string]int64{"memory-mb": 3072, "vcores": 3}}, status: StatusWarn,
			parts: []string{"already use memory-mb 3072Mi", "waits in ACCEPTED"}, fix: "wait for other applications"},
		{name: "AM limit fits", queue: synthQueue{name: "default", maxAlloc: bigMax, maxCap: capacity,
			amLimit: map[string]int64{"memory-mb": 8192, "vcores": 32}, amUsed: map[string]int64{"memory-mb": 0, "vcores": 0}}, containers: 2, status: StatusPass,
			parts: []string{"holds 2 TaskManager containers"}},
		{name: "no capacity reported", queue: synthQueue{name: "default", maxAlloc: bigMax}, status: StatusSkip, parts: []string{"reports no maximum capacity"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bodies := synthCluster(stdTypes, uniformNodes(2, node), bigMax)
			bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, []synthQueue{tc.queue})
			rm := newFakeRM(t, bodies)
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL()), Containers: tc.containers})
			if tc.status == StatusSkip {
				requireOne(t, rep, IDQueueCapacity, tc.status, tc.parts...)
				return
			}
			requireOneFix(t, rep, IDQueueCapacity, tc.status, tc.fix, tc.parts...)
		})
	}
}

// TestJobManagerHeapEnv: Flink 1.x's client sizes the JobManager container from FLINK_JM_HEAP in
// its environment when jobmanager.memory.process.size is not set.
func TestJobManagerHeapEnv(t *testing.T) {
	rm := newFakeRM(t, goodCaptures(t))
	text := withoutLines(goodFlink, "jobmanager.memory.process.size")
	env := func(k string) string {
		if k == "FLINK_JM_HEAP" {
			return "1g"
		}
		return ""
	}
	rep := run(t, Input{Flink: flinkConf(t, text), Client: rmClient(t, rm.URL()), Getenv: env})
	requireOne(t, rep, IDCapacity, StatusPass, "besides the JobManager container <memory-mb:1024, vcores:1>")
	// Without it Flink's client refuses the JobManager's memory: the capacity check says so.
	rep = run(t, Input{Flink: flinkConf(t, text), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDCapacity, StatusWarn, "the JobManager container is not counted")
}
