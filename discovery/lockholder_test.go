//go:build linux

package discovery_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
)

const lockHolderEnv = "YARN_ER_DISCOVERY_LOCK_HOLDER"

// TestLockTimeoutNamesAStoppedHolder: a process stopped (SIGSTOP, a debugger, a frozen cgroup) while it
// holds the coordination lock keeps every other caller out until it runs again or ends. The others
// give up after the lock timeout, and the error says who holds the lock and that it is stopped, so
// that the operator can resume or end it; once it ends, the lock is free.
func TestLockTimeoutNamesAStoppedHolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	coord := dir + "/gpus"
	c, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: coord, LockTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = c.Entries(ctx) // creates the lock file
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+c.LockPath())
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	pid := cmd.Process.Pid

	_, err = c.Entries(ctx)
	var timeout *discovery.LockTimeoutError
	require.ErrorAs(t, err, &timeout)
	assert.Contains(t, err.Error(), fmt.Sprintf("held by pid %d (", pid), "the holder is named")
	assert.NotContains(t, err.Error(), "stopped", "a running holder is not called stopped")

	require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
	require.Eventually(t, func() bool {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return strings.Contains(string(stat), ") T ")
	}, 10*time.Second, 5*time.Millisecond)
	_, err = c.Entries(ctx)
	require.ErrorAs(t, err, &timeout)
	assert.Contains(t, err.Error(), "timed out after 200ms waiting for the coordination lock "+c.LockPath())
	assert.Contains(t, err.Error(), fmt.Sprintf("held by pid %d (", pid))
	assert.Contains(t, err.Error(), fmt.Sprintf("which is stopped (resume it with kill -CONT %d", pid))

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	_, err = c.Entries(ctx)
	require.NoError(t, err, "a killed holder's lock is free")
}

// TestLockHolderHelper takes the lock file named by its environment, says so and waits; it does nothing
// unless TestLockTimeoutNamesAStoppedHolder started it.
func TestLockHolderHelper(t *testing.T) {
	path := os.Getenv(lockHolderEnv)
	if path == "" {
		t.Skip("a helper process of TestLockTimeoutNamesAStoppedHolder")
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	fmt.Println("locked")
	time.Sleep(time.Hour)
}
