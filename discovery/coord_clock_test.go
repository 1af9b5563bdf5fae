//go:build unix

package discovery_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
)

// TestForeignTTLUnderClockJumps: --foreign-ttl is the one rule that reads the wall clock. A clock
// stepped back (the entry then looks made in the future) keeps the entry held; only a clock past the
// TTL reclaims it. Checks of owners in this namespace never read the clock: a clock stepped years
// forward reclaims none of them.
func TestForeignTTLUnderClockJumps(t *testing.T) {
	made := time.Unix(1764500000, 0)
	for _, tc := range []struct {
		name      string
		now       time.Time
		reclaimed bool
	}{
		{"stepped back a year", made.Add(-365 * 24 * time.Hour), false},
		{"stepped back a second", made.Add(-time.Second), false},
		{"within the TTL", made.Add(time.Hour), false},
		{"past the TTL", made.Add(3 * time.Hour), true},
		{"stepped forward years", made.Add(10 * 365 * 24 * time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCoordFixture(t)
			devs := gpus(t, 2)
			ctx := context.Background()
			foreign := discovery.Owner{PID: 7, StartTime: 1, BootID: testBoot, PIDNS: 4026532999}
			at := f.coordinator(func(o *discovery.CoordinatorOptions) { o.Now = func() time.Time { return made } })
			_, err := at.Acquire(ctx, foreign, devs[:1], 1)
			require.NoError(t, err)
			_, err = at.Acquire(ctx, f.owner(100), devs[1:], 1) // a live owner of this namespace
			require.NoError(t, err)

			later := f.coordinator(func(o *discovery.CoordinatorOptions) {
				o.Now = func() time.Time { return tc.now }
				o.ForeignTTL = 2 * time.Hour
			})
			got, err := later.Acquire(ctx, f.owner(200), devs, 1)
			if !tc.reclaimed {
				require.ErrorIs(t, err, discovery.ErrInsufficientDevices)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, devs[0].Key, got[0].Key, "the foreign entry is reclaimed, never the live local one")
		})
	}
}

// TestLedgerSwappedForASymlinkMeanwhile: another process keeps replacing the ledger with a symbolic
// link to a victim file and back (rename, so the path always exists) while calls go on. Whatever
// instant a call opens the path at, it never reads or writes through the link: each call succeeds or
// refuses the link, and the victim is never touched.
func TestLedgerSwappedForASymlinkMeanwhile(t *testing.T) {
	f, c, devs := newCoordTest(t, 2)
	ctx := context.Background()
	victim := t.TempDir() + "/victim"
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o644))
	ledger := c.LedgerPath(os.Getuid())
	link := f.dir + "/link"
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		swaps := 0
		defer func() { done <- swaps }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Symlink(victim, link)
			if os.Rename(link, ledger) == nil {
				swaps++
			}
			time.Sleep(50 * time.Microsecond)
			_ = os.Remove(ledger)
		}
	}()
	refused := 0
	for i := 0; i < 200; i++ {
		o := f.owner(1000 + i)
		_, err := c.Acquire(ctx, o, devs, 1)
		if err != nil {
			require.ErrorIs(t, err, discovery.ErrUnsafeLedger, "round %d", i)
			refused++
			continue
		}
		_, _ = c.Release(ctx, o)
	}
	close(stop)
	swaps := <-done
	t.Logf("%d swaps, %d calls refused the link", swaps, refused)
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(data), "the victim is never written")
	fi, err := os.Lstat(victim)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	assert.Positive(t, swaps)
}
