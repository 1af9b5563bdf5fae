//go:build unix

package discovery

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockSurvivesRemovalOfTheLockFile: a tmp cleaner removes the lock file while a process is inside
// the critical section; the next process makes a new lock file and locks it, but must still wait.
func TestLockSurvivesRemovalOfTheLockFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	newC := func() *Coordinator {
		c, err := NewCoordinator(CoordinatorOptions{Path: dir + "/gpus", LockTimeout: 300 * time.Millisecond})
		require.NoError(t, err)
		return c
	}
	a, b := newC(), newC()
	ctx := context.Background()
	s, err := a.lock(ctx)
	require.NoError(t, err)
	require.NoError(t, os.Remove(a.LockPath()))

	_, err = b.lock(ctx)
	require.ErrorIs(t, err, ErrLockTimeout, "the directory lock keeps the second process out")
	assert.FileExists(t, b.LockPath(), "the second process made a new lock file")

	s.close()
	s2, err := b.lock(ctx)
	require.NoError(t, err, "free again once the first process leaves")
	s2.close()
}
