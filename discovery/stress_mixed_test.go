//go:build unix

package discovery_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
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

const mixedEnv = "YARN_ER_DISCOVERY_MIXED_HELPER"

// TestStressMixedStopAndKill: discover-style processes (Acquire for themselves, then Release) and
// exec-style processes (Hold, then Close) share one ledger over 6 GPUs and ask for 1 to 7 GPUs at a
// time, so that many requests cannot be met. Meanwhile the test stops a random process (SIGSTOP: it may
// be anywhere, holding the lock, between writing its temporary ledger and renaming it, or after), checks
// that the others are kept out only for as long as the lock timeout and are told which lock, kills it
// (SIGKILL), and checks that the ledger it leaves is whole: every line a v1 line of yarn-er, readable
// by the next call. Every GPU is held by at most one process at a time (the marker files), and all are
// free once the processes are gone.
func TestStressMixedStopAndKill(t *testing.T) {
	procs, rounds, kills := 16, 60, 30
	if testing.Short() {
		procs, rounds, kills = 6, 15, 5
	}
	const nGPUs = 6
	cfg := sharedStressConfig(t, nGPUs, rounds, 2000)
	type helper struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}
	start := func() helper {
		cmd, out := startHelperProcess(t, "TestStressMixedHelper", mixedEnv, cfg)
		return helper{cmd, out}
	}
	var helpers []helper
	for i := 0; i < procs; i++ {
		helpers = append(helpers, start())
	}
	t.Cleanup(func() {
		for _, h := range helpers {
			_ = h.cmd.Process.Kill()
		}
	})
	checker, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: cfg.Coord, LockTimeout: 150 * time.Millisecond})
	require.NoError(t, err)
	patient, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: cfg.Coord, LockTimeout: time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	killed := map[int]bool{}
	stoppedInside := 0
	for k := 0; k < kills; k++ {
		time.Sleep(time.Duration(mrand.IntN(40)) * time.Millisecond)
		victim := mrand.IntN(len(helpers))
		if killed[victim] {
			continue
		}
		v := helpers[victim].cmd
		require.NoError(t, v.Process.Signal(syscall.SIGSTOP))
		_, err := checker.Entries(ctx)
		if err != nil {
			var timeout *discovery.LockTimeoutError
			require.ErrorAs(t, err, &timeout, "a stopped process keeps the others out by the lock alone")
			assert.Contains(t, err.Error(), cfg.Coord, "the error names the lock")
			stoppedInside++
		}
		killed[victim] = true
		require.NoError(t, v.Process.Signal(syscall.SIGKILL))
		_ = v.Wait()
		removeMarkersOf(t, cfg.Markers, v.Process.Pid)
		assertLedgersWhole(t, cfg.Coord)
		_, err = patient.Entries(ctx)
		require.NoError(t, err, "the lock of a killed process is free")
		helpers = append(helpers, start())
	}
	for i, h := range helpers {
		if killed[i] {
			continue
		}
		require.NoError(t, h.cmd.Wait(), "helper %d: %s", i, h.out.String())
		assert.Contains(t, h.out.String(), "PASS", "helper %d ran its rounds", i)
	}
	t.Logf("%d processes, %d stopped and killed (the lock timed out %d times while one was stopped)", len(helpers), len(killed), stoppedInside)
	assertLedgersWhole(t, cfg.Coord)
	proc := discovery.NewProc(discovery.Root{})
	self, err := proc.Owner(os.Getpid())
	require.NoError(t, err)
	got, err := patient.Acquire(ctx, self, gpus(t, nGPUs), nGPUs)
	require.NoError(t, err, "nothing leaked: every GPU is free once its holders are gone")
	assert.Len(t, got, nGPUs)
}

// assertLedgersWhole reads every ledger the way a crash would leave it: only yarn-er's v1 lines.
func assertLedgersWhole(t *testing.T, coord string) {
	t.Helper()
	ledger := fmt.Sprintf("%s.ledger.%d", coord, os.Getuid())
	data, err := os.ReadFile(ledger)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "# yarn-er device ledger v1"), "the ledger starts with its header: %q", data)
	require.True(t, strings.HasSuffix(string(data), "\n"), "the ledger ends with a whole line")
	_, problems := discovery.ParseLedger(data)
	require.Empty(t, problems, "no torn or damaged line")
}

// TestStressMixedHelper is one process of TestStressMixedStopAndKill; it does nothing unless started by
// it. Odd pids act as discover (Acquire and Release for themselves), even pids as exec (Hold, Close).
func TestStressMixedHelper(t *testing.T) {
	cfg, devices, self, c := stressWorker(t, mixedEnv, "TestStressMixedStopAndKill")
	ctx := context.Background()
	execMode := os.Getpid()%2 == 0
	for round := 0; round < cfg.Rounds; round++ {
		n := 1 + mrand.IntN(len(devices)+1) // sometimes more than there are
		var got []discovery.Device
		var h *discovery.Holding
		var err error
		if execMode {
			h, err = c.Hold(ctx, devices, n)
			if err == nil {
				got = h.Devices
			}
		} else {
			got, err = c.Acquire(ctx, self, devices, n)
		}
		if errors.Is(err, discovery.ErrInsufficientDevices) {
			time.Sleep(time.Duration(1+mrand.IntN(3)) * time.Millisecond)
			continue
		}
		require.NoError(t, err, "round %d", round)
		require.Len(t, got, n)
		var markers []string
		for _, d := range got {
			markers = append(markers, claimMarker(t, cfg.Markers, d.Key, false))
		}
		time.Sleep(time.Duration(mrand.IntN(cfg.HoldMicros+1)) * time.Microsecond)
		for _, m := range markers {
			require.NoError(t, os.Remove(m))
		}
		if execMode {
			require.NoError(t, h.Close())
		} else {
			released, err := c.Release(ctx, self)
			require.NoError(t, err)
			require.ElementsMatch(t, keys(got), released)
		}
	}
}
