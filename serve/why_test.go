package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

func gpus(mem, vcores, g int64) records.Resources {
	return records.NewResources(mem, vcores, records.Resource{Name: records.GPU, Value: g})
}

// whySnapshot: two 4-GPU nodes, queue root.gpu with a maximum of 4 GPUs filled by holder, a second
// application waiting for one GPU container; a third application in another queue holds 2.
func whySnapshot(queueMaxGPU int64, nodeFree int64) *Snapshot {
	gpuQ := &yarn.Queue{Name: "gpu", Path: "root.gpu", State: "RUNNING", Leaf: true,
		Used: gpus(2048, 2, 4), MaxEffectiveCapacity: gpus(16384, 16, queueMaxGPU), MaximumAllocation: gpus(8192, 8, 4),
		Users: []yarn.QueueUser{{Name: "bob", Used: gpus(0, 0, 0), Limit: gpus(16384, 16, 8)}}}
	other := &yarn.Queue{Name: "default", Path: "root.default", State: "RUNNING", Leaf: true, Used: gpus(1024, 1, 2)}
	root := &yarn.Queue{Name: "root", Path: "root", Children: []*yarn.Queue{gpuQ, other}}
	return &Snapshot{
		Scheduler: &yarn.Scheduler{Type: "capacityScheduler", Root: root},
		Nodes: yarn.NodeTableOf([]yarn.Node{
			{ID: "n1:1", State: "RUNNING", Rack: "/default-rack", Total: gpus(8192, 8, 4), Used: gpus(4096, 4, 4-nodeFree), Available: gpus(4096, 4, nodeFree)},
			{ID: "n2:1", State: "RUNNING", Rack: "/rack-b", Total: gpus(8192, 8, 4), Used: gpus(4096, 4, 2), Available: gpus(4096, 4, 0)},
		}),
		Apps: []yarn.App{
			{ID: "application_1_0003", Name: "waiter", User: "bob", Queue: "root.gpu", State: records.AppRunning,
				ResourceRequests: []yarn.ResourceRequest{
					{Priority: 1, ResourceName: "*", NumContainers: 1, Capability: gpus(1024, 1, 1), RelaxLocality: true},
					{Priority: 1, ResourceName: "/default-rack", NumContainers: 1, Capability: gpus(1024, 1, 1), RelaxLocality: true}}},
			{ID: "application_1_0002", Name: "other", User: "carol", Queue: "root.default", State: records.AppRunning, Allocated: gpus(1024, 1, 2)},
			{ID: "application_1_0001", Name: "holder", User: "alice", Queue: "root.gpu", State: records.AppRunning, Allocated: gpus(2048, 2, 4)},
			{ID: "application_1_0000", Name: "done", User: "alice", Queue: "root.gpu", State: records.AppFinished},
		},
	}
}

func TestWhy(t *testing.T) {
	for _, tc := range []struct {
		name        string
		snap        *Snapshot
		id          string
		waiting     bool
		codes       []string
		firstHolder string
		summary     string
	}{
		{"queue full", whySnapshot(4, 0), "application_1_0003", true, []string{"queue-max", "no-free-node"}, "application_1_0001", "queue root.gpu is full for yarn.io/gpu: its containers use 4 of its maximum 4"},
		{"nodes full, queue has room", whySnapshot(8, 0), "application_1_0003", true, []string{"no-free-node"}, "application_1_0001", "no RUNNING node of the default partition has 1 yarn.io/gpu free now"},
		{"room everywhere", whySnapshot(8, 1), "application_1_0003", true, nil, "application_1_0001", "no queue limit stops it and a node has room"},
		{"ended", whySnapshot(4, 0), "application_1_0000", false, nil, "", "has ended"},
		{"running, no asks", whySnapshot(4, 0), "application_1_0001", false, nil, "", "asks for no more containers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := Why(tc.snap, tc.id)
			require.True(t, ok)
			assert.Equal(t, tc.waiting, w.Waiting)
			var codes []string
			for _, r := range w.Reasons {
				codes = append(codes, r.Code)
				assert.NotEmpty(t, r.Fix, r.Code)
			}
			assert.Equal(t, tc.codes, codes)
			assert.Contains(t, w.Summary, tc.summary)
			if tc.firstHolder != "" {
				require.NotEmpty(t, w.Holders)
				assert.Equal(t, tc.firstHolder, w.Holders[0].ID, "the same queue's holder first")
				assert.True(t, w.Holders[0].SameQueue)
				assert.Len(t, w.Holders, 2, "both running GPU holders, the ended one not")
			}
		})
	}
	_, ok := Why(whySnapshot(4, 0), "application_9_0009")
	assert.False(t, ok)
}

func TestWhyLimits(t *testing.T) {
	s := whySnapshot(8, 1)
	q := s.Scheduler.Queue("root.gpu")
	q.MaximumAllocation = gpus(8192, 8, 0)
	q.Users[0].Used = gpus(0, 0, 8)
	s.Apps[0].ResourceRequests[0].NodeLabelExpression = "fast"
	w, ok := Why(s, "application_1_0003")
	require.True(t, ok)
	var codes []string
	for _, r := range w.Reasons {
		codes = append(codes, r.Code)
	}
	assert.Equal(t, []string{"queue-max-allocation", "user-limit", "no-node-in-partition"}, codes)
	assert.Equal(t, "fast", w.Asks[0].Partition)

	q.NodeLabels = []string{"slow"}
	w, _ = Why(s, "application_1_0003")
	require.NotEmpty(t, w.Reasons)
	assert.Equal(t, "queue-partition", w.Reasons[0].Code)
	assert.Contains(t, w.Reasons[0].Message, "cannot use partition fast")
}

// The GPU map: a cell per device, the holder's containers attributed to their nodes, the rest of
// the used devices "?", the waiting application with its why.
func TestGPUMapOf(t *testing.T) {
	s := whySnapshot(4, 0)
	s.Containers = map[string][]yarn.AppContainer{
		"application_1_0001": {{ID: "c1", NodeID: "n1:1", Resource: gpus(1024, 1, 3)}, {ID: "c2", NodeID: "n2:1", Resource: gpus(1024, 1, 1)}},
	}
	m := GPUMapOf(s, records.GPU)
	require.Len(t, m.Nodes, 2)
	assert.Equal(t, []string{"application_1_0001", "application_1_0001", "application_1_0001", "?"}, m.Nodes[0].Devices)
	assert.Equal(t, []string{"application_1_0001", "?", "", ""}, m.Nodes[1].Devices)
	require.Len(t, m.Queues, 2)
	assert.Equal(t, int64(4), m.Queues[0].Used)
	assert.Equal(t, int64(4), m.Queues[0].Max)
	assert.Equal(t, int64(1), m.Queues[0].Pending)
	var waiter *view.GPUMapApp
	for i := range m.Apps {
		if m.Apps[i].ID == "application_1_0003" {
			waiter = &m.Apps[i]
		}
	}
	require.NotNil(t, waiter)
	assert.Equal(t, int64(1), waiter.Pending)
	assert.Contains(t, waiter.Why, "queue root.gpu is full")
}

// A SchedulingRequest (listed by the RM without a resource name) that waits on its placement
// constraint: an ask of its own, explained by the constraint.
func TestWhyPlacementConstraint(t *testing.T) {
	for _, tc := range []struct {
		constraint string
		want       []string
	}{
		{"notin,node,worker", []string{"1 container(s) of <memory-mb:1024, vcores:1, yarn.io/gpu:1> wait for a node without a container tagged worker",
			"anti-affinity, as yarn-er's placement spread: node"}},
		{"in,node,ps", []string{"wait for a node with a container tagged ps", "affinity, as yarn-er's placement pack: node"}},
		{"cardinality,node,w,0,2", []string{"wait for a node that satisfies the placement constraint cardinality,node,w,0,2"}},
	} {
		t.Run(tc.constraint, func(t *testing.T) {
			s := whySnapshot(8, 1)
			s.Apps[0].ResourceRequests = []yarn.ResourceRequest{{Priority: 1, NumContainers: 1, Capability: gpus(1024, 1, 1),
				PlacementConstraint: tc.constraint, AllocationTags: []string{"worker"}}}
			out, ok := Why(s, "application_1_0003")
			require.True(t, ok)
			assert.True(t, out.Waiting)
			require.Len(t, out.Asks, 1)
			assert.Equal(t, tc.constraint, out.Asks[0].PlacementConstraint)
			require.NotEmpty(t, out.Reasons)
			assert.Equal(t, "placement-constraint", out.Reasons[0].Code)
			for _, w := range tc.want {
				assert.Contains(t, out.Summary, w)
			}
		})
	}
}

// A rack-bound ask (placement racks: rack requests, relaxLocality false on *): a rack nobody is on
// is named; a rack with nodes narrows the node checks to them.
func TestWhyRacks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		racks     []string
		nodeFree  int64
		locations []string
		codes     []string
		summary   []string
	}{
		{name: "a rack nobody is on", racks: []string{"/nowhere"}, nodeFree: 1, locations: []string{"/nowhere"}, codes: []string{"no-node-on-rack"},
			summary: []string{"1 container(s) of <memory-mb:1024, vcores:1, yarn.io/gpu:1> may run only on /nowhere (the request for * has relaxLocality false",
				"no RUNNING node of the default partition is there; the RUNNING nodes are on /default-rack, /rack-b"}},
		{name: "the rack's node is full", racks: []string{"/rack-b"}, nodeFree: 1, locations: []string{"/rack-b"}, codes: []string{"no-free-node"},
			summary: []string{"no RUNNING node of the default partition on /rack-b has 1 yarn.io/gpu free now"}},
		{name: "the rack's node has room", racks: []string{"/default-rack"}, nodeFree: 1, locations: []string{"/default-rack"},
			summary: []string{"the scheduler should allocate it"}},
		{name: "no rack left", racks: nil, nodeFree: 1, locations: []string{}, codes: []string{"no-node-on-rack"},
			summary: []string{"ask for no rack or host: the scheduler places them nowhere"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := whySnapshot(8, tc.nodeFree)
			reqs := []yarn.ResourceRequest{{Priority: 1, ResourceName: "*", NumContainers: 1, Capability: gpus(1024, 1, 1)}}
			for _, r := range tc.racks {
				reqs = append(reqs, yarn.ResourceRequest{Priority: 1, ResourceName: r, NumContainers: 1, Capability: gpus(1024, 1, 1), RelaxLocality: true})
			}
			// A rack asked for before, none left: not a location.
			reqs = append(reqs, yarn.ResourceRequest{Priority: 1, ResourceName: "/old", NumContainers: 0, Capability: gpus(1024, 1, 1), RelaxLocality: true})
			s.Apps[0].ResourceRequests = reqs
			out, ok := Why(s, "application_1_0003")
			require.True(t, ok)
			require.Len(t, out.Asks, 1)
			assert.Equal(t, tc.locations, out.Asks[0].Locations)
			var codes []string
			for _, r := range out.Reasons {
				codes = append(codes, r.Code)
				assert.NotEmpty(t, r.Fix)
			}
			assert.Equal(t, tc.codes, codes)
			for _, w := range tc.summary {
				assert.Contains(t, out.Summary, w)
			}
		})
	}
}
