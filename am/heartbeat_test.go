package am

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/records"
)

func TestNextInterval(t *testing.T) {
	const fast, idle = 100 * time.Millisecond, time.Second
	cases := []struct {
		name          string
		prev          time.Duration
		busy, changed bool
		want          time.Duration
	}{
		{"first heartbeat", 0, false, false, fast},
		{"asks outstanding", 800 * time.Millisecond, true, false, fast},
		{"asks outstanding and news", fast, true, true, fast},
		{"a completion or a start resets the backoff", idle, false, true, fast},
		{"uneventful: doubles", fast, false, false, 200 * time.Millisecond},
		{"uneventful: doubles again", 400 * time.Millisecond, false, false, 800 * time.Millisecond},
		{"uneventful: capped at idle", 800 * time.Millisecond, false, false, idle},
		{"idle stays idle", idle, false, false, idle},
		{"a previous interval below fast is raised", time.Millisecond, false, false, fast},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, nextInterval(tc.prev, fast, idle, tc.busy, tc.changed))
		})
	}
	// An idle interval below the fast one never slows the fast one down.
	assert.Equal(t, fast, nextInterval(fast, fast, time.Millisecond, false, false))
}

type intervalTrace struct {
	mu      sync.Mutex
	entries []traced
}

type traced struct {
	d             time.Duration
	busy, changed bool
}

func (tr *intervalTrace) add(d time.Duration, busy, changed bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.entries = append(tr.entries, traced{d, busy, changed})
}

// runTraced runs ranks ranks on the fake cluster, each ending heartbeats heartbeats after its start,
// with the fast and idle heartbeat intervals. It requires the run to succeed, checks every interval
// chosen against the policy (checkPolicy) and returns the fixture, the result and the intervals.
func runTraced(t *testing.T, ranks, heartbeats int, fast, idle time.Duration) (*fixture, *Result, []traced) {
	t.Helper()
	f := newFixture(t, ranks, amrmfake.Options{Exit: func(amrmfake.Launch) amrmfake.Outcome { return amrmfake.Outcome{Heartbeats: heartbeats} }})
	opts := f.options(t)
	opts.Heartbeat, opts.IdleHeartbeat = fast, idle
	tr := &intervalTrace{}
	opts.traceInterval = tr.add
	res, err := f.run(t, opts)
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	tr.mu.Lock()
	entries := append([]traced(nil), tr.entries...)
	tr.mu.Unlock()
	checkPolicy(t, entries, fast, idle)
	return f, res, entries
}

// checkPolicy asserts that every interval followed the policy given the one before.
func checkPolicy(t *testing.T, entries []traced, fast, idle time.Duration) {
	t.Helper()
	var prev time.Duration
	for i, e := range entries {
		switch {
		case e.busy || e.changed:
			assert.Equal(t, fast, e.d, "heartbeat %d (busy %v, changed %v)", i, e.busy, e.changed)
		default:
			assert.Equal(t, min(max(2*prev, fast), idle), e.d, "heartbeat %d: doubles after %s", i, prev)
		}
		assert.LessOrEqual(t, e.d, idle, "heartbeat %d", i)
		prev = e.d
	}
}

// TestHeartbeatBacksOffWhileRanksRun: with every rank running, the AM heartbeats fast right after
// the starts (the ranks may end soon) and doubles the interval on every uneventful heartbeat up to
// the idle one; asks outstanding keep it fast.
func TestHeartbeatBacksOffWhileRanksRun(t *testing.T) {
	const fast, idle = time.Millisecond, 8 * time.Millisecond
	// Each rank completes 12 heartbeats after its start: long enough to reach the idle interval.
	_, res, entries := runTraced(t, 2, 12, fast, idle)

	require.NotEmpty(t, entries)
	// The first heartbeat carries the ask. The fake may allocate both containers in its answer and
	// the starts may be done before the next interval is chosen: then nothing is outstanding or
	// starting any more (not busy), but the allocation is news (changed). Either way it is fast.
	assert.True(t, entries[0].busy || entries[0].changed, "the first heartbeat: %+v", entries[0])
	assert.Equal(t, fast, entries[0].d, "the interval after the first heartbeat")
	var reachedIdle bool
	for _, e := range entries {
		reachedIdle = reachedIdle || e.d == idle
	}
	assert.True(t, reachedIdle, "the interval backed off to the idle one while both ranks ran: %v", entries)
	assert.Equal(t, len(entries), res.Heartbeats-1, "one interval chosen after every heartbeat but the last")
}

// TestHeartbeatFastThroughWaves: 12 ranks on 8 GPUs run in two waves; while the last four wait
// for a GPU their asks are outstanding and every heartbeat is fast.
func TestHeartbeatFastThroughWaves(t *testing.T) {
	const fast, idle = time.Millisecond, 64 * time.Millisecond
	f, _, entries := runTraced(t, 12, 3, fast, idle)
	assert.Len(t, f.cluster.Launches(), 12)

	busy := 0
	for _, e := range entries {
		if e.busy {
			busy++
		}
	}
	assert.GreaterOrEqual(t, busy, 3, "the first wave's 3 heartbeats had the second wave's asks outstanding: %v", entries)
}
