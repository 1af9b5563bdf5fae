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
		{name: "no capacity reported", queue: synthQueue{name: "default", maxAlloc: bigMax}, status: StatusSkip, parts: []string{"reports no maximum capacity"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bodies := synthCluster(stdTypes, uniformNodes(2, node), bigMax)
			bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, []synthQueue{tc.queue})
			rm := newFakeRM(t, bodies)
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rm.client(t), Containers: tc.containers})
			if tc.status == StatusSkip {
				requireOne(t, rep, IDQueueCapacity, tc.status, tc.parts...)
				return
			}
			requireOneFix(t, rep, IDQueueCapacity, tc.status, tc.fix, tc.parts...)
		})
	}
}
