//go:build unix

package discovery_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
)

// TestLedgerWritableByOthersIsRefused: the sticky directory keeps other users from replacing a ledger,
// not from rewriting one whose mode lets them: what such a ledger records (or no longer records) cannot
// be trusted, so it is refused and left as it is. yarn-er writes its ledgers 0644.
func TestLedgerWritableByOthersIsRefused(t *testing.T) {
	devs := gpus(t, 2)
	for _, tc := range []struct {
		mode    os.FileMode
		refused bool
	}{
		{0o644, false}, {0o600, false}, {0o640, false}, {0o444, false},
		{0o666, true}, {0o664, true}, {0o646, true}, {0o620, true},
	} {
		t.Run(fmt.Sprintf("%04o", tc.mode), func(t *testing.T) {
			f := newCoordFixture(t)
			c := f.coordinator()
			path := c.LedgerPath(os.Getuid())
			line := discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: devs[0].Key, Owner: f.owner(100), Acquired: time.Unix(1764500000, 0)})
			require.NoError(t, os.WriteFile(path, []byte(line+"\n"), 0o600))
			require.NoError(t, os.Chmod(path, tc.mode))
			before := fileSum(t, path)
			got, err := c.Acquire(context.Background(), f.owner(200), devs, 1)
			if !tc.refused {
				require.NoError(t, err)
				assert.Equal(t, devs[1].Key, got[0].Key)
				return
			}
			require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), "writable by users other than its owner")
			assert.Contains(t, err.Error(), "chmod go-w")
			assert.Equal(t, before, fileSum(t, path), "left as it is")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, tc.mode, fi.Mode().Perm())
		})
	}
}
