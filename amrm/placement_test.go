package amrm

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/amrm/internal/fakeyarn"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

var spreadWorker = Placement{Tags: []string{"worker"}, Constraint: &Constraint{Scope: ScopeNode, TargetTags: []string{"worker"}}}

// TestSchedulingRequestOnTheWire: a placed ask goes out as a SchedulingRequest with Hadoop's
// encoding of targetNotIn / targetIn (cardinality 0..0 and 1..MaxInt32 over allocation tags), its
// key, tags, size and GUARANTEED; a count change resends the same request with the new total.
func TestSchedulingRequestOnTheWire(t *testing.T) {
	rm := newRM(t, nil)
	c := registered(t, rm, nil)
	require.NoError(t, c.AskPlaced(3, 7, gpu1, 2, spreadWorker))
	pack := Placement{Tags: []string{"ps"}, Constraint: &Constraint{Scope: ScopeRack, In: true, TargetTags: []string{"ps", "chief"}}}
	require.NoError(t, c.AskPlaced(4, 0, gpu1, 1, pack))
	assert.Equal(t, 2, c.Outstanding(3))
	_, err := c.Allocate(context.Background())
	require.NoError(t, err)
	require.NoError(t, c.AskPlaced(3, 7, gpu1, 1, spreadWorker))
	_, err = c.Allocate(context.Background())
	require.NoError(t, err)

	// Nothing changes: nothing is sent (Hadoop 3.2.2 refuses even an unchanged update).
	require.NoError(t, c.AskPlaced(3, 7, gpu1, 1, spreadWorker))
	require.NoError(t, c.AskPlaced(5, 0, gpu1, 0, spreadWorker))
	_, err = c.Allocate(context.Background())
	require.NoError(t, err)

	reqs := rm.AllocateRequests()
	require.Len(t, reqs, 3)
	assert.Empty(t, reqs[2].GetSchedulingRequests(), "an unchanged count and a zero for a key never asked send nothing")
	assert.Empty(t, reqs[0].GetAsk(), "no ResourceRequest beside the SchedulingRequests")
	srs := reqs[0].GetSchedulingRequests()
	require.Len(t, srs, 2)
	sr := srs[0]
	assert.Equal(t, int32(3), sr.GetPriority().GetPriority())
	assert.Equal(t, int64(7), sr.GetAllocationRequestId())
	assert.Equal(t, []string{"worker"}, sr.GetAllocationTags())
	assert.Equal(t, int32(2), sr.GetResourceSizing().GetNumAllocations())
	assert.Equal(t, int64(1024), sr.GetResourceSizing().GetResources().GetMemory())
	assert.Equal(t, yarnpb.ExecutionTypeProto_GUARANTEED, sr.GetExecutionType().GetExecutionType())
	sc := sr.GetPlacementConstraint().GetSimpleConstraint()
	require.NotNil(t, sc)
	assert.Equal(t, "node", sc.GetScope())
	assert.Equal(t, int32(0), sc.GetMinCardinality())
	assert.Equal(t, int32(0), sc.GetMaxCardinality())
	require.Len(t, sc.GetTargetExpressions(), 1)
	assert.Equal(t, yarnpb.PlacementConstraintTargetProto_ALLOCATION_TAG, sc.GetTargetExpressions()[0].GetTargetType())
	assert.Equal(t, []string{"worker"}, sc.GetTargetExpressions()[0].GetTargetValues())

	in := srs[1].GetPlacementConstraint().GetSimpleConstraint()
	assert.Equal(t, "rack", in.GetScope())
	assert.Equal(t, int32(1), in.GetMinCardinality())
	assert.Equal(t, int32(math.MaxInt32), in.GetMaxCardinality())
	assert.Equal(t, []string{"ps", "chief"}, in.GetTargetExpressions()[0].GetTargetValues())

	require.Len(t, reqs[1].GetSchedulingRequests(), 1, "only the changed request is resent")
	assert.Equal(t, int32(1), reqs[1].GetSchedulingRequests()[0].GetResourceSizing().GetNumAllocations())
	assert.True(t, fakeyarn.SameButSize(sr, reqs[1].GetSchedulingRequests()[0]), "nothing but the count changed")
}

func TestAskPlacedChecks(t *testing.T) {
	rm := newRM(t, nil)
	c := registered(t, rm, nil)
	for _, tc := range []struct {
		name string
		pl   Placement
		id   int64
		want string
	}{
		{"scope", Placement{Tags: []string{"w"}, Constraint: &Constraint{Scope: "zone", TargetTags: []string{"w"}}}, 0, `placement scope "zone"`},
		{"no target", Placement{Tags: []string{"w"}, Constraint: &Constraint{Scope: ScopeNode}}, 0, "without target tags"},
		{"empty tag", Placement{Tags: []string{""}}, 0, "empty allocation tag"},
		{"no constraint", Placement{Tags: []string{"w"}}, 0, "without a placement constraint"},
		{"negative id", spreadWorker, -1, "allocation request id -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.AskPlaced(1, tc.id, gpu1, 1, tc.pl)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, c.AskPlaced(1, 0, gpu1, 2, spreadWorker))
	err := c.AskPlaced(1, 0, gpu1, 2, Placement{Tags: []string{"worker"}, Constraint: &Constraint{Scope: ScopeRack, TargetTags: []string{"worker"}}})
	require.Error(t, err, "another constraint on the same key while containers are outstanding")
	assert.Contains(t, err.Error(), "ask 0 first, or use another id")
}

// TestPlacementRefused: a ResourceManager whose handler is disabled (or "scheduler" under the
// FairScheduler) refuses the allocate: ErrPlacementRefused, the RM's words kept, and DropPlaced
// hands back the counts, after which plain asks go through.
func TestPlacementRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    amrmfake.Options
		message string
	}{
		{"disabled", amrmfake.Options{}, "placement-constraints.handler=disabled cannot handle placement constraints"},
		{"fair scheduler", amrmfake.Options{PlacementHandler: fakeyarn.HandlerScheduler, FairScheduler: true}, "FairScheduler cannot handle placement constraints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := amrmfake.New(t, tc.opts)
			c := fakeClient(t, cl)
			require.NoError(t, c.AskPlaced(1, 0, gpu1, 3, spreadWorker))
			_, err := c.Allocate(context.Background())
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrPlacementRefused), "%v", err)
			assert.Contains(t, err.Error(), tc.message)
			assert.Equal(t, map[int32]int{1: 3}, c.DropPlaced())
			assert.Equal(t, 0, c.Outstanding(1))
			require.NoError(t, c.Ask(1, gpu1, 3))
			a, err := c.Allocate(context.Background())
			require.NoError(t, err)
			assert.Len(t, a.Allocated, 3)
		})
	}
}

// TestAntiAffinityOnFakeScheduler: 3 containers with anti-affinity on node on 2 nodes: 2 land on
// different nodes with the tag, the third stays pending at the RM (handler scheduler) and lands
// once a node is free of the tag.
func TestAntiAffinityOnFakeScheduler(t *testing.T) {
	cl := amrmfake.New(t, amrmfake.Options{PlacementHandler: fakeyarn.HandlerScheduler})
	c := fakeClient(t, cl)
	require.NoError(t, c.AskPlaced(1, 0, gpu1, 3, spreadWorker))
	a, err := c.Allocate(context.Background())
	require.NoError(t, err)
	require.Len(t, a.Allocated, 2)
	assert.NotEqual(t, a.Allocated[0].Node, a.Allocated[1].Node)
	assert.Equal(t, []string{"worker"}, cl.Tags(a.Allocated[0].ID))
	assert.Equal(t, 1, c.Outstanding(1))
	assert.Equal(t, 1, cl.Pending(1))
	a2, err := c.Allocate(context.Background())
	require.NoError(t, err)
	assert.Empty(t, a2.Allocated, "the third waits: both nodes hold a worker")

	require.NoError(t, c.Release(a.Allocated[0].ID))
	a3, err := c.Allocate(context.Background())
	require.NoError(t, err)
	require.Len(t, a3.Allocated, 1)
	assert.Equal(t, a.Allocated[0].Node, a3.Allocated[0].Node, "it lands on the node freed of the tag")
	assert.Equal(t, 0, c.Outstanding(1))
}

// TestAffinityAndRejection: affinity to a tag nobody carries cannot be placed; under the
// placement-processor handler the RM rejects it, and the client reports it and counts it off.
func TestAffinityAndRejection(t *testing.T) {
	cl := amrmfake.New(t, amrmfake.Options{PlacementHandler: fakeyarn.HandlerProcessor})
	c := fakeClient(t, cl)
	require.NoError(t, c.AskPlaced(1, 0, gpu1, 1, Placement{Tags: []string{"w"}, Constraint: &Constraint{Scope: ScopeNode, TargetTags: []string{"w"}}}))
	a, err := c.Allocate(context.Background())
	require.NoError(t, err)
	require.Len(t, a.Allocated, 1)
	first := a.Allocated[0]

	pack := Placement{Tags: []string{"w"}, Constraint: &Constraint{Scope: ScopeNode, In: true, TargetTags: []string{"w"}}}
	require.NoError(t, c.AskPlaced(1, 1, gpu1, 2, pack))
	away := Placement{Tags: []string{"x"}, Constraint: &Constraint{Scope: ScopeNode, In: true, TargetTags: []string{"nobody"}}}
	require.NoError(t, c.AskPlaced(2, 0, gpu1, 2, away))
	a, err = c.Allocate(context.Background())
	require.NoError(t, err)
	require.Len(t, a.Allocated, 2)
	for _, ct := range a.Allocated {
		assert.Equal(t, first.Node, ct.Node, "affinity: beside the first")
		assert.Equal(t, int64(1), ct.AllocationRequestID)
	}
	require.Len(t, a.Rejected, 1)
	assert.Equal(t, Rejected{Priority: 2, Count: 2, Reason: "RRP_COULD_NOT_PLACE_ON_NODE", Constraint: "in,node,nobody"}, a.Rejected[0])
	assert.Equal(t, 0, c.Outstanding(2))
	assert.Equal(t, 2, cl.RejectedCount())
}

// fakeClient is a registered client of the fake cluster.
func fakeClient(t *testing.T, cl *amrmfake.Cluster) *Client {
	t.Helper()
	c, err := New(Config{SchedulerAddrs: []string{cl.SchedulerAddr}, Credentials: cl.Credentials()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Register(context.Background(), RegisterRequest{RPCPort: -1})
	require.NoError(t, err)
	return c
}
