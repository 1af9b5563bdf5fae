//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery/discoverytest"
	"github.com/yarn-er/yarn-er/internal/testsupport/syncbuf"
	"github.com/yarn-er/yarn-er/view"
)

// These tests run the built binary: process parentage (the owner is yarn-er's parent), argv[0], exec(2)
// and real concurrency need real processes.

var (
	builtOnce sync.Once
	builtDir  string // removed by TestMain
	builtBin  string
	builtErr  error
)

// buildYarnEr builds the yarn-er binary once per test process, into a directory of its own that
// TestMain removes: a fixed path would be shared with test runs of other checkouts, which would
// replace the binary under this run's feet.
func buildYarnEr(t testing.TB) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yarn-er-cmd-test-")
		if builtErr = err; err != nil {
			return
		}
		builtDir = dir
		bin := filepath.Join(dir, "yarn-er")
		if builtErr = goBuild(bin, "CGO_CFLAGS=-Wno-deprecated-declarations"); builtErr != nil {
			return
		}
		builtBin = bin
	})
	require.NoError(t, builtErr)
	return builtBin
}

// run runs the binary and returns stdout, stderr and the exit code.
func runBinary(t testing.TB, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

func TestBinaryUnderFlinkScriptName(t *testing.T) {
	bin := buildYarnEr(t)
	h := newGPUHost(t, 4)
	dir := t.TempDir()
	script := filepath.Join(dir, "nvidia-gpu-discovery.sh")
	require.NoError(t, os.Symlink(bin, script))
	alias := filepath.Join(dir, "yarn-er-discover")
	require.NoError(t, os.Symlink(bin, alias))

	// As Flink's GPUDriver runs it: "<path> <amount> <args>", args "null" when unset.
	stdout, stderr, code := runBinary(t, script, nil, "2", "null", "--host-root", h.tree.Root)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "0,1\n", stdout)
	assert.Empty(t, stderr)

	stdout, stderr, code = runBinary(t, alias, nil, "1", "--enable-coordination-mode", "--coordination-file", h.coord, "--host-root", h.tree.Root)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "0\n", stdout)

	// The owner is the process that ran the script: this test.
	data, err := os.ReadFile(h.coord + ".ledger." + strconv.Itoa(os.Getuid()))
	require.NoError(t, err)
	assert.Contains(t, string(data), fmt.Sprintf(" %d ", os.Getpid()))

	_, stderr, code = runBinary(t, script, nil, "1", "--enable-coordination", "--host-root", h.tree.Root)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "did you mean --enable-coordination-mode?")
	_, _, code = runBinary(t, script, nil)
	assert.Equal(t, 2, code, "no AMOUNT")
}

// startDiscoveringOwner starts a long-lived process that discovers devices for itself (sh runs yarn-er, then execs
// sleep, keeping its pid and start time) and returns it once the devices are taken.
func startDiscoveringOwner(t *testing.T, bin string, h gpuHost, amount int) (*exec.Cmd, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf("%q discover %d --enable-coordination-mode --coordination-file %q --host-root %q > %q 2>%q.err; echo done >> %q; exec sleep 600",
		bin, amount, h.coord, h.tree.Root, out, out, out))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 600; i++ {
		if data, _ := os.ReadFile(out); strings.Contains(string(data), "done") {
			// The owner is a shell: yarn-er warns that a wrapper shell would free the devices at once.
			errOut, _ := os.ReadFile(out + ".err")
			assert.Contains(t, string(errOut), "the devices are held for a shell")
			return cmd, strings.TrimSuffix(string(data), "done\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the owner never finished discovering")
	return nil, ""
}

func TestKilledOwnerIsReclaimed(t *testing.T) {
	bin := buildYarnEr(t)
	h := newGPUHost(t, 4)
	owner, out := startDiscoveringOwner(t, bin, h, 3)
	assert.Equal(t, "0,1,2\n", out)
	disc := func(n string) (string, string, int) {
		return runBinary(t, bin, nil, "discover", n, "--enable-coordination-mode", "--coordination-file", h.coord, "--host-root", h.tree.Root)
	}
	_, stderr, code := disc("2")
	assert.Equal(t, 5, code)
	assert.Contains(t, stderr, fmt.Sprintf("pid %d (alive)", owner.Process.Pid))

	require.NoError(t, owner.Process.Signal(syscall.SIGKILL))
	_ = owner.Wait()
	stdout, stderr, code := disc("4")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "0,1,2,3\n", stdout)
}

func TestExecHoldsDevicesForTheWorkload(t *testing.T) {
	bin := buildYarnEr(t)
	h := newGPUHost(t, 3)
	dir := t.TempDir()
	info := filepath.Join(dir, "devices.json")
	ready, quit := filepath.Join(dir, "ready"), filepath.Join(dir, "quit")
	// The workload reports what it got, proves the lock descriptors survived exec, then waits.
	workload := fmt.Sprintf(`echo "$CUDA_VISIBLE_DEVICES|$NVIDIA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER|$ROCR_VISIBLE_DEVICES" > %q; `+
		`ls -l /proc/$$/fd | grep -c 'gpus.dev.' >> %q; while [ ! -e %q ]; do sleep 0.05; done`, ready, ready, quit)
	cmd := exec.Command(bin, "exec", "--amount", "2", "--host-root", h.tree.Root, "--coordination-file", h.coord,
		"--info-file", info, "--", "/bin/sh", "-c", workload)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=0,1,2", "ROCR_VISIBLE_DEVICES=7"}
	var stderr syncbuf.Buffer // written by exec's copying goroutine while the test reads it
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var report []byte
	for i := 0; i < 600 && !bytes.Contains(report, []byte("\n2\n")); i++ {
		time.Sleep(20 * time.Millisecond)
		report, _ = os.ReadFile(ready)
	}
	u := discoverytest.NVIDIAUUID
	want := u(0) + "," + u(1)
	require.Equal(t, fmt.Sprintf("%s|%s|PCI_BUS_ID|7\n2\n", want, want), string(report), stderr.String())

	var got view.Discover
	data, err := os.ReadFile(info)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &got))
	require.Len(t, got.Devices, 2)
	assert.Equal(t, u(0), got.Devices[0].ID)
	assert.Equal(t, u(1), got.Devices[1].ID)
	fi, err := os.Stat(info)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// While the workload runs, its devices are taken for discover and for a second exec.
	stdout, errOut, code := runBinary(t, bin, nil, "discover", "2", "--enable-coordination-mode", "--coordination-file", h.coord, "--host-root", h.tree.Root)
	assert.Equal(t, 5, code, errOut)
	assert.Empty(t, stdout, "a refused discover prints no devices for Flink to take")
	assert.Contains(t, errOut, "a running workload (exec)")
	stdout, errOut, code = runBinary(t, bin, nil, "discover", "1", "--enable-coordination-mode", "--coordination-file", h.coord, "--host-root", h.tree.Root)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "2\n", stdout)
	_, errOut, code = runBinary(t, bin, []string{"PATH=/usr/bin:/bin"}, "exec", "--host-root", h.tree.Root, "--coordination-file", h.coord, "--", "true")
	assert.Equal(t, 5, code, errOut)

	// The workload ends (SIGKILL here): the devices are free at once, nothing is left behind.
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	_, errOut, code = runBinary(t, bin, []string{"PATH=/usr/bin:/bin"}, "exec", "--amount", "2", "--host-root", h.tree.Root, "--coordination-file", h.coord, "--", "true")
	assert.Equal(t, 0, code, errOut)
}

// TestStressNoDeviceHeldTwice is the end-to-end companion of discovery's TestStress (64 processes, 8
// GPUs, 200 rounds each, through the library): here the contenders are 64 concurrent runs of the
// yarn-er binary, each for its own live owner (--owner-pid), asking for one of 8 GPUs. Each round must
// give exactly 8 distinct GPUs to 8 owners (checked from the processes' output, independently of the
// ledger) and send the other 56 away with exit 5 and nothing on stdout. Even rounds end with --release,
// odd rounds by SIGKILLing the 8 owners, whose GPUs the next round reclaims. Each round starts 72
// processes, so the rounds are fewer than in TestStress.
func TestStressNoDeviceHeldTwice(t *testing.T) {
	const procs, gpus, rounds = 64, 8, 20
	bin := buildYarnEr(t)
	h := newGPUHost(t, gpus)

	owners := make([]*exec.Cmd, procs)
	startSleeper := func(i int) {
		c := exec.Command("sleep", "3600")
		require.NoError(t, c.Start())
		owners[i] = c
	}
	for i := range owners {
		startSleeper(i)
	}
	t.Cleanup(func() {
		for _, c := range owners {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	base := []string{"discover", "--enable-coordination-mode", "--coordination-file", h.coord, "--host-root", h.tree.Root, "--lock-timeout", "60s"}
	for round := 0; round < rounds; round++ {
		type result struct {
			stdout, stderr string
			code           int
		}
		results := make([]result, procs)
		var wg sync.WaitGroup
		for i := 0; i < procs; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o, e, c := runBinary(t, bin, nil, append(base, "1", "--owner-pid", strconv.Itoa(owners[i].Process.Pid))...)
				results[i] = result{o, e, c}
			}()
		}
		wg.Wait()
		var winners []int
		held := map[string]int{}
		for i, r := range results {
			switch r.code {
			case 0:
				idx := strings.TrimSpace(r.stdout)
				if prev, dup := held[idx]; dup {
					t.Fatalf("round %d: GPU %s given to owner %d and owner %d", round, idx, prev, i)
				}
				held[idx] = i
				winners = append(winners, i)
			case 5:
				require.Empty(t, r.stdout, "round %d", round)
			default:
				t.Fatalf("round %d: process %d exited %d: %s", round, i, r.code, r.stderr)
			}
		}
		require.Len(t, winners, gpus, "round %d: every GPU is handed out exactly once", round)
		idxs := make([]string, 0, len(held))
		for k := range held {
			idxs = append(idxs, k)
		}
		sort.Strings(idxs)
		require.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7"}, idxs, "round %d", round)

		for _, i := range winners {
			if round%2 == 0 {
				_, e, c := runBinary(t, bin, nil, "discover", "--release", "--coordination-file", h.coord, "--owner-pid", strconv.Itoa(owners[i].Process.Pid))
				require.Equal(t, 0, c, e)
			} else {
				require.NoError(t, owners[i].Process.Signal(syscall.SIGKILL))
				_ = owners[i].Wait()
				startSleeper(i)
			}
		}
	}
}
