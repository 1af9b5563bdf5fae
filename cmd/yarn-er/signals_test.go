//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
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

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/internal/testsupport/syncbuf"
)

// These tests signal a real yarn-er process while it is blocked: on a hung ResourceManager (its
// context reaches the request) and in the open of a FIFO (nothing a context can interrupt).

// watchdog bounds how long a test waits for a child that should end: far above the grace period,
// so that it only catches a process that does not end at all.
const watchdog = 30 * time.Second

// startBlocked starts the binary with args and calls blocked until it returns true (the child is
// where the test wants it), or fails when the child ends first; skip, when set, skips the test
// instead with that reason.
func startBlocked(t *testing.T, args []string, blocked func(pid int) bool, skip string) (*exec.Cmd, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(buildYarnEr(t), args...)
	cmd.Env = []string{"HADOOP_USER_NAME=flink", "PATH=" + os.Getenv("PATH")}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(watchdog)
	for !blocked(cmd.Process.Pid) {
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid == cmd.Process.Pid {
			if skip != "" {
				t.Skipf("%s (exit %d: %s)", skip, ws.ExitStatus(), stderr.String())
			}
			t.Fatalf("yarn-er ended before it blocked: exit %d: %s", ws.ExitStatus(), stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("yarn-er never blocked: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, &stderr
}

// waitCode waits for the child to end (failing after the watchdog) and returns its exit code,
// once its stderr has been copied in full.
func waitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			done <- 1000 + int(ws.Signal()) // killed by the signal itself, not an exit
			return
		}
		done <- ws.ExitStatus()
	}()
	select {
	case code := <-done:
		return code
	case <-time.After(watchdog):
		status, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status"))
		_ = cmd.Process.Kill()
		t.Fatalf("yarn-er did not end after the signal:\n%s", status)
		return -1
	}
}

// inFIFOOpen reports whether a thread of pid waits in the kernel's open of a FIFO (for a writer).
func inFIFOOpen(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil && (string(b) == "wait_for_partner" || strings.Contains(string(b), "fifo")) {
			return true
		}
	}
	return false
}

// hungRM is a ResourceManager that accepts requests and never answers; requests tells when the
// first one arrived. Fault injection with a plain handler: the arrival signal is not yarnfake's.
func hungRM(t *testing.T) (string, <-chan struct{}) {
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL, arrived
}

func TestSignalsEndACommandOnAHungRM(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		say  string
	}{
		{syscall.SIGTERM, cmdutil.ExitTerminated, "yarn-er: terminated"},
		{syscall.SIGINT, cmdutil.ExitInterrupted, "yarn-er: interrupted"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			rm, arrived := hungRM(t)
			cmd, stderr := startBlocked(t, []string{"cluster", "nodes", "--rm", rm, "--rm-timeout", "10m"}, func(int) bool {
				select {
				case <-arrived:
					return true
				default:
					return false
				}
			}, "")
			require.NoError(t, cmd.Process.Signal(tc.sig))
			assert.Equal(t, tc.code, waitCode(t, cmd), stderr.String())
			assert.Contains(t, stderr.String(), tc.say)
		})
	}
}

func TestSignalsEndACommandBlockedOnAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	const skip = "the Flink configuration loader no longer opens a FIFO, nothing to block on"
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		repeat bool // keep signalling: the kernel merges a signal sent while the same one is pending
		code   int
		reads  string
	}{
		{"SIGTERM after the grace period", syscall.SIGTERM, false, cmdutil.ExitTerminated, "still busy"},
		{"SIGINT after the grace period", syscall.SIGINT, false, cmdutil.ExitInterrupted, "still busy"},
		{"a second SIGTERM at once", syscall.SIGTERM, true, cmdutil.ExitTerminated, "terminated again"},
		{"a second SIGINT at once", syscall.SIGINT, true, cmdutil.ExitInterrupted, "interrupted again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stderr := startBlocked(t, []string{"translate", "--flink-conf", fifo}, inFIFOOpen, skip)
			require.NoError(t, cmd.Process.Signal(tc.sig))
			stopRepeat := make(chan struct{})
			if tc.repeat {
				go func() {
					for {
						select {
						case <-stopRepeat:
							return
						case <-time.After(20 * time.Millisecond):
							_ = cmd.Process.Signal(tc.sig)
						}
					}
				}()
			}
			code := waitCode(t, cmd)
			close(stopRepeat)
			assert.Equal(t, tc.code, code, stderr.String())
			assert.Contains(t, stderr.String(), tc.reads)
		})
	}
}
