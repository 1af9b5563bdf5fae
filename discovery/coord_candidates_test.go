//go:build unix

package discovery_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
)

// TestCandidatesOfOneKeyAreHandedOutOnce: two candidates with one coordination key are one device (a
// backend that lists a GPU twice); one call never hands it out twice, nor records it twice.
func TestCandidatesOfOneKeyAreHandedOutOnce(t *testing.T) {
	for _, mode := range []string{"acquire", "hold"} {
		t.Run(mode, func(t *testing.T) {
			f, c, devs := newCoordTest(t, 2)
			f.owner(os.Getpid())
			twice := []discovery.Device{devs[0], devs[0], devs[1]}
			ctx := context.Background()
			var got []discovery.Device
			if mode == "acquire" {
				var err error
				got, err = c.Acquire(ctx, f.owner(100), twice, 2)
				require.NoError(t, err)
			} else {
				h, err := c.Hold(ctx, twice, 2)
				require.NoError(t, err)
				defer h.Close()
				got = h.Devices
			}
			assert.Equal(t, keys(devs), keys(got), "the second copy is skipped, the next device taken")
			entries, err := c.Entries(ctx)
			require.NoError(t, err)
			assert.Len(t, entries, 2)

			_, err = c.Acquire(ctx, f.owner(200), twice, 2)
			require.ErrorIs(t, err, discovery.ErrInsufficientDevices)
		})
	}
}

// TestKeysALedgerCannotRecordAreRefused: a device key is written into a ledger line of space-separated
// fields; a key that the reader would not take back (empty, with a space or a newline, characters a
// file name cannot have) would make the line unreadable, skipped as another tool's and dropped, and the
// device handed out again. Such a candidate is refused before anything is handed out.
func TestKeysALedgerCannotRecordAreRefused(t *testing.T) {
	for _, tc := range []struct{ name, key string }{
		{"empty", ""},
		{"a space", "GPU-1 GPU-2"},
		{"a newline", "GPU-1\nv1"},
		{"a slash", "MIG-GPU-1/1/0"},
		{"too long", strings.Repeat("k", 257)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c, devs := newCoordTest(t, 2)
			f.owner(os.Getpid())
			bad := devs[1]
			bad.Key = tc.key
			cands := []discovery.Device{devs[0], bad}
			ctx := context.Background()
			_, err := c.Acquire(ctx, f.owner(100), cands, 2)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "cannot be recorded")
			_, err = c.Acquire(ctx, f.owner(101), cands, 1)
			require.Error(t, err, "refused even when the bad candidate would not be reached")
			h, err := c.Hold(ctx, cands, 2)
			require.Error(t, err)
			assert.Nil(t, h)
			entries, err := c.Entries(ctx)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing was handed out")
		})
	}
}
