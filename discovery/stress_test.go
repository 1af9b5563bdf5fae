//go:build unix

package discovery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

// stressConfig is handed to the helper processes of TestStress.
type stressConfig struct {
	Root    string `json:"root"`    // fake host with the GPUs
	Coord   string `json:"coord"`   // coordination file
	Markers string `json:"markers"` // one marker file per device while a holder uses it
	Rounds  int    `json:"rounds"`
	// HoldMicros bounds how long a holder uses a GPU.
	HoldMicros int `json:"holdMicros"`
	// Private gives each helper a coordination file of its own: no coordination at all (the control
	// experiment that shows the marker check catches double holding).
	Private bool `json:"private"`
	// Barrier, when set, is a directory where each helper announces itself (ready.<pid>) and waits
	// for a "go" file before its first round, so that all helpers run at the same time.
	Barrier string `json:"barrier"`
}

// sharedStressConfig is the configuration of helpers that share one coordination file over a fake
// host with nGPUs GPUs: rounds rounds each, holding a GPU up to holdMicros.
func sharedStressConfig(t *testing.T, nGPUs, rounds, holdMicros int) stressConfig {
	tree := discoverytest.New(t)
	tree.NVIDIAHost(nGPUs)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	cfg := stressConfig{Root: tree.Root, Coord: filepath.Join(dir, "gpus"), Markers: filepath.Join(dir, "markers"), Rounds: rounds, HoldMicros: holdMicros}
	require.NoError(t, os.Mkdir(cfg.Markers, 0o755))
	return cfg
}

const stressEnv = "YARN_ER_DISCOVERY_STRESS_HELPER"

// TestStress runs 64 processes against 8 fake GPUs, 200 rounds each: in a round a process asks for one
// GPU for itself (its own pid, start time and boot id are the owner); if it gets one it creates the
// GPU's marker file with O_EXCL, uses it for a moment, removes the marker and releases the GPU. A
// marker that already exists means two processes hold one GPU at once: the independent check, which
// does not read the ledger. Meanwhile the test SIGKILLs holders at random; their GPUs must be reclaimed
// (their stale markers are recognised by the dead pid they name).
//
// With -short (make unit-short) it runs 8 processes of 20 rounds with 2 kills: the same checks, a
// fraction of the contention; CI runs it in full.
func TestStress(t *testing.T) {
	procs, nGPUs, rounds, kills := 64, 8, 200, 12
	if testing.Short() {
		procs, rounds, kills = 8, 20, 2
	}
	cfg := sharedStressConfig(t, nGPUs, rounds, 1000)
	start := func() (*exec.Cmd, *bytes.Buffer) { return startStressHelper(t, cfg) }
	type helper struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}
	var helpers []helper
	for i := 0; i < procs; i++ {
		c, o := start()
		helpers = append(helpers, helper{c, o})
	}
	t.Cleanup(func() {
		for _, h := range helpers {
			_ = h.cmd.Process.Kill()
		}
	})
	// Kill holders at random while the others go on; a replacement runs its own rounds.
	killed := map[int]bool{}
	for k := 0; k < kills; k++ {
		time.Sleep(time.Duration(50+mrand.IntN(100)) * time.Millisecond)
		victim := mrand.IntN(procs)
		if killed[victim] {
			continue
		}
		killed[victim] = true
		_ = helpers[victim].cmd.Process.Signal(syscall.SIGKILL)
		_ = helpers[victim].cmd.Wait()
		removeMarkersOf(t, cfg.Markers, helpers[victim].cmd.Process.Pid)
		c, o := start()
		helpers = append(helpers, helper{c, o})
	}
	acquired := 0
	for i, h := range helpers {
		if killed[i] {
			continue
		}
		err := h.cmd.Wait()
		require.NoError(t, err, "helper %d: %s", i, h.out.String())
		assert.Contains(t, h.out.String(), "PASS", "helper %d ran its rounds", i)
		var n int
		_, err = fmt.Sscanf(h.out.String()[strings.Index(h.out.String(), "acquired="):], "acquired=%d", &n)
		require.NoError(t, err, h.out.String())
		acquired += n
	}
	t.Logf("%d processes, %d rounds each, %d GPUs handed out and given back", len(helpers)-len(killed), rounds, acquired)
	assert.GreaterOrEqual(t, acquired, rounds)
	// Every GPU is free again: released by the finished processes, reclaimed from the killed ones.
	proc := discovery.NewProc(discovery.Root{})
	self, err := proc.Owner(os.Getpid())
	require.NoError(t, err)
	c, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: cfg.Coord})
	require.NoError(t, err)
	devs := gpus(t, nGPUs)
	got, err := c.Acquire(context.Background(), self, devs, nGPUs)
	require.NoError(t, err)
	assert.Len(t, got, nGPUs)
	entries, err := os.ReadDir(cfg.Markers)
	require.NoError(t, err)
	assert.Empty(t, entries, "every holder removed its marker")
}

// removeMarkersOf removes the markers a killed holder left.
func removeMarkersOf(t *testing.T, dir string, pid int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if data, _ := os.ReadFile(filepath.Join(dir, e.Name())); string(data) == strconv.Itoa(pid) {
			require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
		}
	}
}

// startStressHelper starts a TestStressHelper process with cfg.
func startStressHelper(t *testing.T, cfg stressConfig) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	return startHelperProcess(t, "TestStressHelper", stressEnv, cfg)
}

// startHelperProcess starts this test binary running only the test helper, with cfg as JSON in the
// environment variable env; its output, stdout and stderr together, goes to the buffer returned.
func startHelperProcess(t *testing.T, helper, env string, cfg stressConfig) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+string(raw))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd, &out
}

// TestStressCheckerCatchesDoubleHolding is the control experiment: without coordination (each process
// its own coordination file) the marker check reports GPUs held twice, so its silence in TestStress
// means something.
func TestStressCheckerCatchesDoubleHolding(t *testing.T) {
	tree := discoverytest.New(t)
	tree.NVIDIAHost(2)
	dir := t.TempDir()
	cfg := stressConfig{Root: tree.Root, Coord: filepath.Join(dir, "gpus"), Markers: filepath.Join(dir, "markers"),
		Rounds: 40, HoldMicros: 20000, Private: true, Barrier: filepath.Join(dir, "barrier")}
	require.NoError(t, os.Mkdir(cfg.Markers, 0o755))
	require.NoError(t, os.Mkdir(cfg.Barrier, 0o755))
	var outs []*bytes.Buffer
	var cmds []*exec.Cmd
	for i := 0; i < 4; i++ {
		c, o := startStressHelper(t, cfg)
		cmds, outs = append(cmds, c), append(outs, o)
	}
	require.Eventually(t, func() bool {
		ready, _ := filepath.Glob(filepath.Join(cfg.Barrier, "ready.*"))
		return len(ready) == len(cmds)
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, os.WriteFile(filepath.Join(cfg.Barrier, "go"), nil, 0o644))
	caught := 0
	for i, c := range cmds {
		if err := c.Wait(); err != nil && strings.Contains(outs[i].String(), "was handed to pid") {
			caught++
		}
	}
	assert.Positive(t, caught, "uncoordinated processes must trip the marker check")
}

// TestStressHelper is one process of TestStress; it does nothing unless TestStress started it.
func TestStressHelper(t *testing.T) {
	cfg, devices, self, c := stressWorker(t, stressEnv, "TestStress")
	ctx := context.Background()
	if cfg.Barrier != "" {
		require.NoError(t, os.WriteFile(filepath.Join(cfg.Barrier, fmt.Sprintf("ready.%d", os.Getpid())), nil, 0o644))
		for _, err := os.Stat(filepath.Join(cfg.Barrier, "go")); err != nil; _, err = os.Stat(filepath.Join(cfg.Barrier, "go")) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	acquired := 0
	defer func() { fmt.Printf("acquired=%d\n", acquired) }()
	for round := 0; round < cfg.Rounds; round++ {
		got, err := c.Acquire(ctx, self, devices, 1)
		if errors.Is(err, discovery.ErrInsufficientDevices) {
			time.Sleep(time.Duration(1+mrand.IntN(4)) * time.Millisecond)
			continue
		}
		require.NoError(t, err, "round %d", round)
		acquired++
		marker := claimMarker(t, cfg.Markers, got[0].Key, cfg.Private)
		time.Sleep(time.Duration(mrand.IntN(cfg.HoldMicros+1)) * time.Microsecond) // use the GPU
		require.NoError(t, os.Remove(marker))
		released, err := c.Release(ctx, self)
		require.NoError(t, err)
		require.Equal(t, []string{got[0].Key}, released)
	}
}

// stressWorker sets up one helper process of a stress test: the configuration its parent passed in
// the environment variable env, the fake host's GPUs, this process as their owner and the coordinator
// it shares with the other helpers (one of its own where cfg.Private). Outside a helper process, that
// is without env, the calling test is skipped as a helper of parent.
func stressWorker(t *testing.T, env, parent string) (stressConfig, []discovery.Device, discovery.Owner, *discovery.Coordinator) {
	t.Helper()
	raw := os.Getenv(env)
	if raw == "" {
		t.Skip("a helper process of " + parent)
	}
	var cfg stressConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{Root: discovery.NewRoot(cfg.Root)})
	require.NoError(t, err)
	self, err := discovery.NewProc(discovery.Root{}).Owner(os.Getpid())
	require.NoError(t, err)
	coord := cfg.Coord
	if cfg.Private {
		coord += "." + strconv.Itoa(os.Getpid())
	}
	c, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: coord, LockTimeout: time.Minute})
	require.NoError(t, err)
	return cfg, res.Devices, self, c
}

// claimMarker creates the device's marker file (named by the device key, holding the pid) with O_EXCL.
// An existing marker of a live process means two processes hold the device at once. A marker of a dead
// process was left by a holder the test killed: the test removes it once it has reaped the process, so
// the claim waits for that.
func claimMarker(t *testing.T, dir, key string, impatient bool) string {
	t.Helper()
	p := filepath.Join(dir, key)
	deadline := time.Now().Add(30 * time.Second)
	if impatient {
		deadline = time.Now().Add(time.Second) // the control experiment: nobody cleans up after its failures
	}
	for {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "%d", os.Getpid())
			require.NoError(t, err)
			require.NoError(t, f.Close())
			return p
		}
		require.ErrorIs(t, err, os.ErrExist)
		data, _ := os.ReadFile(p)
		pid, _ := strconv.Atoi(string(data))
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			t.Fatalf("%s is held by pid %d and was handed to pid %d too", key, pid, os.Getpid())
		}
		require.True(t, time.Now().Before(deadline), "stale marker of %s never removed", key)
		time.Sleep(time.Millisecond)
	}
}

// TestStressWithLockFilesRemoved is TestStress (without kills) while a tmp cleaner removes the lock file
// and the device lock files as fast as it can: mutual exclusion rests on the directory lock, so no GPU is
// ever held by two processes (the marker check in every helper).
func TestStressWithLockFilesRemoved(t *testing.T) {
	const procs, nGPUs, rounds = 16, 4, 60
	cfg := sharedStressConfig(t, nGPUs, rounds, 2000)
	stop := make(chan struct{})
	removed := make(chan int)
	go func() {
		n := 0
		defer func() { removed <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			locks, _ := filepath.Glob(cfg.Coord + "*.lock")
			for _, l := range locks {
				if os.Remove(l) == nil {
					n++
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < procs; i++ {
		c, o := startStressHelper(t, cfg)
		cmds, outs = append(cmds, c), append(outs, o)
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
		}
	})
	for i, c := range cmds {
		require.NoError(t, c.Wait(), "helper %d: %s", i, outs[i].String())
		assert.Contains(t, outs[i].String(), "PASS")
	}
	close(stop)
	n := <-removed
	t.Logf("%d processes, %d rounds each, lock files removed %d times", procs, rounds, n)
	assert.Positive(t, n, "the cleaner removed lock files while the helpers ran")
}
