package preflight

import "testing"

func TestNodeLabel(t *testing.T) {
	total := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	small := map[string]int64{"memory-mb": 2048, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	nodes := uniformNodes(3, total)
	nodes[0].labels = []string{"gpu"}
	nodes[1].labels = []string{"gpu"}
	smallLabelled := uniformNodes(2, small)
	smallLabelled[0].labels = []string{"tiny"}
	cases := []struct {
		name   string
		nodes  []synthNode
		flink  []string
		status Status
		parts  []string
		fix    string
	}{
		{name: "no label asked", nodes: nodes, status: StatusPass, parts: []string{"no node label is asked for"}},
		{name: "TaskManager label on nodes that fit", nodes: nodes, flink: []string{"yarn.taskmanager.node-label=gpu"}, status: StatusPass,
			parts: []string{"yarn.taskmanager.node-label = gpu: 2 of the 2 RUNNING nodes with the label can hold the TaskManager container"}},
		{name: "label no node carries", nodes: nodes, flink: []string{"yarn.taskmanager.node-label=gpus"}, status: StatusFail,
			parts: []string{"no RUNNING node carries the label", "labels on RUNNING nodes: gpu", "stays pending forever"}, fix: "yarn rmadmin -replaceLabelsOnNode"},
		{name: "application label covers the TaskManagers and the JobManager", nodes: nodes, flink: []string{"yarn.application.node-label=gpu"}, status: StatusPass,
			parts: []string{"yarn.application.node-label = gpu"}},
		{name: "labelled nodes too small", nodes: smallLabelled, flink: []string{"yarn.taskmanager.node-label=tiny"}, status: StatusFail,
			parts: []string{"none of the 1 RUNNING nodes with the label can hold the TaskManager container"}, fix: "smaller TaskManager container"},
		{name: "application label missing", nodes: nodes, flink: []string{"yarn.taskmanager.node-label=gpu", "yarn.application.node-label=am"}, status: StatusFail,
			parts: []string{"yarn.application.node-label = am: no RUNNING node carries the label"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t, synthCluster(stdTypes, tc.nodes, bigMax))
			rep := run(t, Input{Flink: flinkConf(t, goodFlink, tc.flink...), Client: rmClient(t, rm.URL())})
			requireOneFix(t, rep, IDNodeLabel, tc.status, tc.fix, tc.parts...)
		})
	}
	rep := run(t, Input{Flink: flinkConf(t, goodFlink, "yarn.taskmanager.node-label=gpu")})
	requireOne(t, rep, IDNodeLabel, StatusSkip)

	// The queue's accessible node labels.
	for _, q := range []struct {
		labels []string
		status Status
		parts  []string
	}{
		{[]string{"*"}, StatusPass, []string{"2 of the 2 RUNNING nodes"}},
		{[]string{"gpu"}, StatusPass, []string{"2 of the 2 RUNNING nodes"}},
		{[]string{}, StatusFail, []string{"queue root.default may not use the label", "accessible node labels: none"}},
		{[]string{"fpga"}, StatusFail, []string{"accessible node labels: fpga"}},
	} {
		bodies := synthCluster(stdTypes, nodes, bigMax)
		bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, []synthQueue{{name: "default", maxAlloc: bigMax, labels: q.labels}})
		rm := newFakeRM(t, bodies)
		rep := run(t, Input{Flink: flinkConf(t, goodFlink, "yarn.taskmanager.node-label=gpu"), Client: rmClient(t, rm.URL())})
		fix := ""
		if q.status == StatusFail {
			fix = "accessible-node-labels"
		}
		requireOneFix(t, rep, IDNodeLabel, q.status, fix, q.parts...)
	}
}
