package am

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/internal/testsupport/syncbuf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// logged runs the fixture with a logger into a buffer it returns.
func (f *fixture) logged(t *testing.T) (*Result, string, error) {
	t.Helper()
	var buf syncbuf.Buffer
	opts := f.options(t)
	opts.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := f.run(t, opts)
	return res, buf.String(), err
}

// placementTwoNodes is a fake cluster of two nodes with the handler whose ranks run a few
// heartbeats each.
func placementTwoNodes(handler string) amrmfake.Options {
	return amrmfake.Options{PlacementHandler: handler, Exit: func(amrmfake.Launch) amrmfake.Outcome {
		return amrmfake.Outcome{Heartbeats: 5}
	}}
}

// spread: node placed by the ResourceManager (handler scheduler): the AM asks for all three ranks
// with anti-affinity on the role's tag; two land on different nodes, the third stays pending at
// the RM (nothing is given back) and lands on the first node freed of the role.
func TestSpreadByConstraint(t *testing.T) {
	f := newFixture(t, 0, placementTwoNodes(amrmfake.HandlerScheduler))
	f.withRoles(jobspec.Role{Name: "worker", Containers: 3, Resource: oneGPU, Command: []string{"train"},
		Placement: &jobspec.Placement{Spread: "node"}})
	res, log, err := f.logged(t)
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	assert.NotEqual(t, ls[0].Node, ls[1].Node, "the first two ranks on two nodes")
	assert.Empty(t, f.cluster.Releases(), "the ResourceManager placed them: nothing to give back")
	assert.Equal(t, 3, f.cluster.MaxAsked(1), "all three asked for at once; the RM kept the third pending")
	for _, l := range ls {
		assert.Equal(t, []string{"worker"}, f.cluster.Tags(l.Container))
	}
	assert.Equal(t, 0, res.PlacementFallbacks)
	assert.Contains(t, log, "ranks wait: placement spread: node puts at most one rank of the role on each node")
	assert.Contains(t, log, `placedBy="ResourceManager (placement constraints)"`)
}

// pack: node placed by the ResourceManager: the first container anywhere, the others by affinity
// beside it. The workers are a gang, so that each starts knowing all three (LOCAL_WORLD_SIZE 3):
// a rank outside a gang counts the ranks that hold a container when it starts, and under load
// the first worker could end (5 heartbeats) before the last one's container came.
func TestPackByConstraint(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{PlacementHandler: amrmfake.HandlerScheduler, RoundRobin: true, Exit: func(amrmfake.Launch) amrmfake.Outcome {
		return amrmfake.Outcome{Heartbeats: 5}
	}})
	f.withRoles(jobspec.Role{Name: "ps", Containers: 1, Resource: oneGPU, Command: []string{"serve"}},
		jobspec.Role{Name: "worker", Containers: 3, Resource: oneGPU, Command: []string{"train"}, Placement: &jobspec.Placement{Pack: "node"},
			Gang: "workers"})
	res, err := f.run(t, f.options(t))
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	workers := byRole(t, f.cluster.Launches())["worker"]
	require.Len(t, workers, 3)
	for _, l := range workers {
		assert.Equal(t, workers[0].Node, l.Node, "every worker on the first worker's node")
		assert.Equal(t, "3", l.Environment[jobspec.EnvLocalWorldSize])
	}
	assert.Empty(t, f.cluster.Releases())
}

// The ResourceManager refuses SchedulingRequests (handler disabled, the default): each
// placement.fallback does what it says.
func TestPlacementFallback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fallback string
		check    func(t *testing.T, f *fixture, res *Result, err error, log string)
	}{
		{"am (default): the AM places the ranks itself", "", func(t *testing.T, f *fixture, res *Result, err error, log string) {
			require.NoError(t, err)
			assert.Equal(t, records.FinalSucceeded, res.Status)
			assert.Equal(t, 1, res.PlacementFallbacks)
			ls := f.cluster.Launches()
			require.Len(t, ls, 3)
			assert.NotEqual(t, ls[0].Node, ls[1].Node)
			assert.Contains(t, log, "the ApplicationMaster places the ranks itself with plain asks (placement.fallback: am)")
			assert.Contains(t, log, "placement-constraints.handler=disabled cannot handle placement constraints")
			fin := f.cluster.Finishes()
			require.Len(t, fin, 1)
			assert.Contains(t, fin[0].Diagnostics, "placed without placement constraints (the ResourceManager could not place them): role worker (spread: node, placed by the ApplicationMaster)")
		}},
		{"relax: anywhere", jobspec.FallbackRelax, func(t *testing.T, f *fixture, res *Result, err error, log string) {
			require.NoError(t, err)
			assert.Equal(t, records.FinalSucceeded, res.Status)
			assert.Len(t, f.cluster.Launches(), 3)
			assert.Empty(t, f.cluster.Releases(), "nothing given back: the placement was dropped")
			assert.Contains(t, log, "the ranks go anywhere (placement.fallback: relax)")
		}},
		{"fail: the application fails with the RM's reason", jobspec.FallbackFail, func(t *testing.T, f *fixture, res *Result, err error, log string) {
			var pe *PlacementError
			require.ErrorAs(t, err, &pe)
			assert.ErrorIs(t, err, ErrApplicationFailed)
			assert.Equal(t, records.FinalFailed, res.Status)
			assert.Empty(t, f.cluster.Launches())
			fin := f.cluster.Finishes()
			require.Len(t, fin, 1)
			assert.Contains(t, fin[0].Diagnostics, "role worker: the ResourceManager cannot place spread: node by placement constraints (placement.fallback: fail)")
			assert.Contains(t, fin[0].Diagnostics, "placement-constraints.handler=disabled cannot handle placement constraints")
			assert.Contains(t, fin[0].Diagnostics, "set yarn.resourcemanager.placement-constraints.handler to scheduler")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 0, amrmfake.Options{RoundRobin: true, Exit: func(amrmfake.Launch) amrmfake.Outcome {
				return amrmfake.Outcome{Heartbeats: 5}
			}})
			f.withRoles(jobspec.Role{Name: "worker", Containers: 3, Resource: oneGPU, Command: []string{"train"},
				Placement: &jobspec.Placement{Spread: "node", Fallback: tc.fallback}})
			res, log, err := f.logged(t)
			tc.check(t, f, res, err, log)
		})
	}
}

// Under the placement-processor handler, a request no node can satisfy is rejected: the role
// falls back to the AM's own placement and still runs every rank one per node.
func TestPlacementRejectedFallsBack(t *testing.T) {
	f := newFixture(t, 0, placementTwoNodes(amrmfake.HandlerProcessor))
	f.withRoles(jobspec.Role{Name: "worker", Containers: 3, Resource: oneGPU, Command: []string{"train"},
		Placement: &jobspec.Placement{Spread: "node"}})
	res, log, err := f.logged(t)
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	assert.Equal(t, 1, f.cluster.RejectedCount(), "the third rank's request was rejected")
	assert.Equal(t, 1, res.PlacementFallbacks)
	assert.Contains(t, log, "RRP_COULD_NOT_PLACE_ON_NODE")
	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	assert.NotEqual(t, ls[0].Node, ls[1].Node)
}

// A job with a node label places its spread role itself: a SchedulingRequest has no label.
func TestSpreadWithNodeLabelPlacedByAM(t *testing.T) {
	f := newFixture(t, 0, placementTwoNodes(amrmfake.HandlerScheduler))
	f.spec.NodeLabel = "gpu"
	f.withRoles(jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Command: []string{"train"},
		Placement: &jobspec.Placement{Spread: "node"}})
	res, log, err := f.logged(t)
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	assert.Contains(t, log, "a SchedulingRequest carries no node label expression")
	for _, l := range f.cluster.Launches() {
		assert.Empty(t, f.cluster.Tags(l.Container), "plain asks: no allocation tags")
	}
}
