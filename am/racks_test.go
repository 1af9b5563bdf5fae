package am

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/internal/testsupport/syncbuf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// placement racks: the ranks go on the named racks' nodes only. The scheduler keeps them there
// (the fake, as the CapacityScheduler, places an ask with relaxLocality false on "*" on a node
// of a rack asked for); with spread or pack the AM places the ranks among the racks' nodes.
func TestPlacementRacks(t *testing.T) {
	// Nodes 0 and 2 are on /rack-b, node 1 and 3 on /rack-a.
	racks := []string{"/rack-b", "/rack-a", "/rack-b", "/rack-a"}
	tests := []struct {
		name      string
		placement jobspec.Placement
		ranks     int
		// on are the nodes (indexes) the ranks may land on.
		on        []int
		placedBy  string
		distinct  bool // spread: one rank per node
		samePlace bool // pack: every rank on one node
	}{
		{name: "one rack", placement: jobspec.Placement{Racks: []string{"/rack-a"}}, ranks: 3, on: []int{1, 3},
			placedBy: "ResourceManager (rack requests, relaxLocality false)"},
		{name: "two racks", placement: jobspec.Placement{Racks: []string{"/rack-a", "/rack-b"}}, ranks: 4, on: []int{0, 1, 2, 3},
			placedBy: "ResourceManager (rack requests, relaxLocality false)"},
		{name: "spread among the rack's nodes", placement: jobspec.Placement{Spread: "node", Racks: []string{"/rack-b"}}, ranks: 2, on: []int{0, 2},
			placedBy: "ApplicationMaster", distinct: true},
		{name: "pack on one of the rack's nodes", placement: jobspec.Placement{Pack: "node", Racks: []string{"/rack-a"}}, ranks: 3, on: []int{1, 3},
			placedBy: "ApplicationMaster", samePlace: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 0, amrmfake.Options{Nodes: 4, Racks: racks, RoundRobin: true, PlacementHandler: amrmfake.HandlerScheduler,
				Exit: func(amrmfake.Launch) amrmfake.Outcome { return amrmfake.Outcome{Heartbeats: 3} }})
			pl := tc.placement
			f.withRoles(jobspec.Role{Name: "worker", Containers: tc.ranks, Resource: oneGPU, Command: []string{"train"}, Placement: &pl})
			res, log, err := f.logged(t)
			require.NoError(t, err)
			assert.Equal(t, records.FinalSucceeded, res.Status)
			var allowed []string
			for _, i := range tc.on {
				allowed = append(allowed, f.cluster.NodeAddr(i))
			}
			ls := f.cluster.Launches()
			require.Len(t, ls, tc.ranks)
			nodes := map[string]bool{}
			for _, l := range ls {
				assert.Contains(t, allowed, l.Node, "rank %s", l.Environment[jobspec.EnvRank])
				nodes[l.Node] = true
			}
			if tc.distinct {
				assert.Len(t, nodes, tc.ranks, "one rank per node")
			}
			if tc.samePlace {
				assert.Len(t, nodes, 1, "all ranks on one node")
			}
			if !tc.distinct && !tc.samePlace {
				assert.Empty(t, f.cluster.Releases(), "the scheduler placed them on the racks: nothing to give back")
			}
			assert.Contains(t, log, "placedBy="+quoteIfSpaced(tc.placedBy))
			assert.Equal(t, 0, res.PlacementFallbacks)
		})
	}
}

// quoteIfSpaced is v as slog's text handler writes a value: quoted when it has spaces.
func quoteIfSpaced(v string) string {
	if strings.Contains(v, " ") {
		return strconv.Quote(v)
	}
	return v
}

// A scheduler that ignores relaxLocality (the FifoScheduler) places a rack-bound ask anywhere:
// the AM gives back a container on a node whose rack the ResourceManager reported off the role's
// racks, and asks again.
func TestPlacementRacksGivesBackOffRack(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{Nodes: 2, Racks: []string{"/rack-b", "/rack-a"}, FifoScheduler: true, RoundRobin: true,
		Exit: func(amrmfake.Launch) amrmfake.Outcome { return amrmfake.Outcome{Heartbeats: 3} }})
	// The first heartbeat reports both nodes (with their racks) before any container.
	f.cluster.ReportNode(f.cluster.NodeAddr(0), "RUNNING")
	f.cluster.ReportNode(f.cluster.NodeAddr(1), "RUNNING")
	f.withRoles(jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Command: []string{"train"},
		Placement: &jobspec.Placement{Racks: []string{"/rack-a"}}})
	res, log, err := f.logged(t)
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	ls := f.cluster.Launches()
	require.Len(t, ls, 2)
	for _, l := range ls {
		assert.Equal(t, f.cluster.NodeAddr(1), l.Node)
	}
	assert.NotEmpty(t, f.cluster.Releases(), "round robin put a container on /rack-b's node: given back")
	assert.Contains(t, log, "giving back a container on a node off the role's racks")
	assert.Contains(t, log, "rack=/rack-b")
}

// A rack nobody is on: the ask stays pending at the ResourceManager and nothing starts (the AM
// runs until killed).
func TestPlacementRacksNowhereWaits(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{Nodes: 2})
	f.withRoles(jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Command: []string{"train"},
		Placement: &jobspec.Placement{Racks: []string{"/nowhere"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, f.spec, f.options(t))
	// Stopped by the deadline (ErrKilled, or the heartbeat under way cut short).
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrKilled) || errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Empty(t, f.cluster.Launches())
	assert.Equal(t, 2, f.cluster.MaxAsked(1), "both ranks asked for")
}

// Spread among the racks' nodes with more ranks than the racks have nodes: every further
// container lands beside a rank and is given back; after missLimit in a row the role pauses its
// asks (racksPause), then asks again, and the last rank runs once a rank's node frees.
func TestPlacementRacksSpreadPauses(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{Nodes: 2, Racks: []string{"/rack-a", "/rack-b"},
		Exit: func(amrmfake.Launch) amrmfake.Outcome { return amrmfake.Outcome{Heartbeats: 40} }})
	f.withRoles(jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Command: []string{"train"},
		Placement: &jobspec.Placement{Spread: "node", Racks: []string{"/rack-a"}}})
	opts := f.options(t)
	// A clock that moves 100ms at every reading: the 30s pause passes within a few hundred
	// heartbeats.
	base := time.Now()
	var ticks atomic.Int64
	opts.Now = func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * 100 * time.Millisecond) }
	var buf syncbuf.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := f.run(t, opts)
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	ls := f.cluster.Launches()
	require.Len(t, ls, 2)
	for _, l := range ls {
		assert.Equal(t, f.cluster.NodeAddr(0), l.Node, "/rack-a's only node")
	}
	assert.GreaterOrEqual(t, res.PlacementPauses, 1)
	assert.Contains(t, buf.String(), "ranks wait: the containers of the role keep landing against its placement on its racks")
	// Between pauses at most missLimit (2 × 2 nodes) containers go back in a row.
	assert.LessOrEqual(t, len(f.cluster.Releases()), 4*(res.PlacementPauses+1))
}
