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

// gpuLabelNodes returns two RUNNING nodes of plain and a third, gpuhost:45454, of gpu that carries
// the node label gpu.
func gpuLabelNodes(plain, gpu map[string]int64) []synthNode {
	nodes := append(uniformNodes(2, plain), uniformNodes(1, gpu)...)
	nodes[2].id, nodes[2].labels = "gpuhost:45454", []string{"gpu"}
	return nodes
}

// TestNodeLabelExclusivity: GPUs only on nodes of an exclusive label never reach TaskManagers
// that ask for no label; a non-exclusive label lends them; the queue's default label counts as
// asked for; a partition where the queue has no capacity fails.
func TestNodeLabelExclusivity(t *testing.T) {
	plain := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 0, "yarn.io/fpga": 2}
	gpu := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	nodes := gpuLabelNodes(plain, gpu)
	capMax := map[string]int64{"memory-mb": 49152, "vcores": 96, "yarn.io/gpu": 4, "yarn.io/fpga": 6}
	zero := map[string]int64{"memory-mb": 0, "vcores": 0, "yarn.io/gpu": 0, "yarn.io/fpga": 0}
	gpuPart := gpu // the label's partition holds the GPU node
	cases := []struct {
		name   string
		labels string // get-node-labels body; "": not served (404)
		queue  synthQueue
		flink  []string
		status Status
		parts  []string
		fix    string
	}{
		{name: "exclusive label the queue may not use", labels: `{"nodeLabelInfo":[{"name":"gpu","exclusivity":true}]}`,
			queue:  synthQueue{labels: []string{}},
			status: StatusFail,
			parts:  []string{"no node label is asked for", "every RUNNING node offering yarn.io/gpu carries an exclusive node label: gpu (1 node)", "queue root.default may not use it either", "never get gpu"},
			fix:    "set yarn.taskmanager.node-label=gpu and add gpu to yarn.scheduler.capacity.root.default.accessible-node-labels"},
		{name: "exclusive label, not listed: Hadoop's default", queue: synthQueue{labels: []string{"*"}}, status: StatusFail,
			parts: []string{"carries an exclusive node label: gpu (1 node)"}, fix: "set yarn.taskmanager.node-label=gpu, or make the label non-exclusive"},
		{name: "non-exclusive label lends its GPUs", labels: `{"nodeLabelInfo":{"name":"gpu","exclusivity":"false"}}`,
			queue: synthQueue{labels: []string{}}, status: StatusPass, parts: []string{"no node label is asked for (yarn.taskmanager.node-label, yarn.application.node-label)"}},
		{name: "the queue's default label", labels: `{"nodeLabelInfo":[{"name":"gpu","exclusivity":true}]}`,
			queue:  synthQueue{labels: []string{"gpu"}, defaultLabel: "gpu"},
			status: StatusPass, parts: []string{"yarn.scheduler.capacity.root.default.default-node-label-expression = gpu: 1 of the 1 RUNNING nodes with the label"}},
		{name: "no capacity in the label", labels: `{"nodeLabelInfo":[{"name":"gpu","exclusivity":true}]}`,
			queue:  synthQueue{labels: []string{"gpu"}, partitions: map[string][2]map[string]int64{"gpu": {zero, zero}}},
			flink:  []string{"yarn.taskmanager.node-label=gpu"},
			status: StatusFail, parts: []string{"queue root.default has no capacity in the label's partition"}, fix: "accessible-node-labels.gpu.capacity"},
		{name: "capacity in the label", labels: `{"nodeLabelInfo":[{"name":"gpu","exclusivity":true}]}`,
			queue:  synthQueue{labels: []string{"gpu"}, partitions: map[string][2]map[string]int64{"gpu": {gpuPart, gpuPart}}},
			flink:  []string{"yarn.taskmanager.node-label=gpu"},
			status: StatusPass, parts: []string{"yarn.taskmanager.node-label = gpu: 1 of the 1 RUNNING nodes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.queue
			q.name, q.maxAlloc, q.maxCap = "default", bigMax, capMax
			bodies := synthCluster(stdTypes, nodes, bigMax)
			bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, []synthQueue{q})
			if tc.labels != "" {
				bodies["/ws/v1/cluster/get-node-labels"] = []byte(tc.labels)
			}
			rep := run(t, Input{Flink: flinkConf(t, goodFlink, tc.flink...), Client: rmClient(t, newFakeRM(t, bodies).URL())})
			requireOneFix(t, rep, IDNodeLabel, tc.status, tc.fix, tc.parts...)
			if tc.status == StatusFail && tc.flink == nil {
				// The fit checks see only the nodes an unlabelled request reaches.
				requireOne(t, rep, IDNoNodeFits, StatusFail, "outside the exclusive node labels gpu")
			}
		})
	}
}

// TestDirectContainerNodeLabel: submit's --node-label (Input.NodeLabel) limits the fit and queue
// checks to the label's nodes and partition.
func TestDirectContainerNodeLabel(t *testing.T) {
	plain := map[string]int64{"memory-mb": 65536, "vcores": 64, "yarn.io/gpu": 0, "yarn.io/fpga": 0}
	gpu := map[string]int64{"memory-mb": 16384, "vcores": 16, "yarn.io/gpu": 2, "yarn.io/fpga": 0}
	nodes := gpuLabelNodes(plain, gpu)
	gpuPart := gpu // the label's partition holds the GPU node
	zeroPart := map[string]int64{"memory-mb": 0, "vcores": 0, "yarn.io/gpu": 0, "yarn.io/fpga": 0}
	half := map[string]int64{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 0, "yarn.io/fpga": 0}
	cases := []struct {
		name, label, version string
		part                 [2]map[string]int64
		containers           int
		status               map[string]Status
		parts                map[string]string
	}{
		{name: "two fit on the labelled node", label: "gpu", part: [2]map[string]int64{gpuPart, gpuPart}, containers: 2,
			status: map[string]Status{IDNoNodeFits: StatusPass, IDCapacity: StatusPass, IDQueueCapacity: StatusPass, IDNodeLabel: StatusPass},
			parts: map[string]string{IDCapacity: "2 containers <memory-mb:1024, vcores:1, yarn.io/gpu:1> on the 1 RUNNING node labelled gpu fit now",
				IDQueueCapacity: "in partition gpu", IDNodeLabel: "--node-label = gpu: 1 of the 1 RUNNING nodes with the label"}},
		{name: "three do not", label: "gpu", part: [2]map[string]int64{gpuPart, gpuPart}, containers: 3,
			status: map[string]Status{IDCapacity: StatusWarn, IDQueueCapacity: StatusWarn},
			parts:  map[string]string{IDCapacity: "2 of the 3 containers", IDQueueCapacity: "holds at most 2 containers"}},
		{name: "user limit in the partition", label: "gpu", part: [2]map[string]int64{half, gpuPart}, containers: 3,
			status: map[string]Status{IDQueueCapacity: StatusWarn},
			parts:  map[string]string{IDQueueCapacity: "one user may hold at most memory-mb 8192Mi, vcores 8, yarn.io/gpu 0 in partition gpu"}},
		{name: "no guaranteed capacity before 3.4: one container", label: "gpu", version: "3.3.6", part: [2]map[string]int64{zeroPart, gpuPart}, containers: 2,
			status: map[string]Status{IDQueueCapacity: StatusWarn},
			parts:  map[string]string{IDQueueCapacity: "1 container <memory-mb:1024, vcores:1, yarn.io/gpu:1> at once, 2 wanted"}},
		{name: "no guaranteed capacity on 3.4+: lifted", label: "gpu", version: "3.4.2", part: [2]map[string]int64{zeroPart, gpuPart}, containers: 2,
			status: map[string]Status{IDQueueCapacity: StatusPass}},
		{name: "no label: the GPU node is exclusive", containers: 1,
			status: map[string]Status{IDNoNodeFits: StatusFail, IDNodeLabel: StatusFail},
			parts:  map[string]string{IDNodeLabel: "no node label is asked for (--node-label)", IDNoNodeFits: "outside the exclusive node labels gpu"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := synthQueue{name: "default", maxAlloc: bigMax, labels: []string{"*"}, userLimits: &[2]float64{1, 100},
				maxCap: map[string]int64{"memory-mb": 147456, "vcores": 144, "yarn.io/gpu": 2, "yarn.io/fpga": 0}}
			if tc.part[0] != nil {
				q.partitions = map[string][2]map[string]int64{"gpu": tc.part}
			}
			bodies := synthCluster(stdTypes, nodes, bigMax)
			bodies["/ws/v1/cluster/scheduler"] = schedulerBody(stdTypes, bigMax, []synthQueue{q})
			bodies["/ws/v1/cluster/get-node-labels"] = []byte(`{"nodeLabelInfo":[{"name":"gpu","exclusivity":true}]}`)
			if tc.version != "" {
				bodies["/ws/v1/cluster/info"] = infoBody(tc.version)
			}
			rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1, "yarn.io/gpu", 1), NodeLabel: tc.label,
				Client: rmClient(t, newFakeRM(t, bodies).URL()), Containers: tc.containers})
			for id, st := range tc.status {
				requireOne(t, rep, id, st, tc.parts[id])
			}
		})
	}
}
