//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/yarn-er/yarn-er/internal/testsupport/syncbuf"
	"github.com/yarn-er/yarn-er/records"
)

// aggregatedDir finds the directory of appID's aggregated logs on the cluster's HDFS
// (/tmp/logs/<user>/..., the mini-YARN's yarn.nodemanager.remote-app-log-dir), "" when there is
// none.
func aggregatedDir(t *testing.T, ep *Endpoints, appID string) string {
	t.Helper()
	fs := hdfsClient(t, ep)
	found := ""
	_ = fs.Walk(path.Join("/tmp/logs", ep.User), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() && fi.Name() == appID {
			found = p
		}
		return nil
	})
	return found
}

// TestAppLogsAggregated: once a submitted application has ended, `app logs` reads its
// containers' logs from the aggregated files on HDFS (on every Hadoop line: the mini-YARN
// aggregates logs, docker/conf/yarn-site.xml), and --rank 2 shows rank 2's output only.
func TestAppLogsAggregated(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--containers", "3", "--memory", "128m", "--progress", "none", "--",
		"sh", "-c", `echo "hello from rank $YARN_ER_RANK"; echo "err of rank $YARN_ER_RANK" >&2`)
	require.Equal(t, 0, r.code, r.stderr)
	appID := strings.TrimSpace(r.stdout)

	lg := runCLI(t, ctx, ep, "app", "logs", appID)
	require.Equal(t, 0, lg.code, lg.stderr)
	for rank := range 3 {
		assert.Contains(t, lg.stdout, fmt.Sprintf("hello from rank %d\n", rank))
		assert.Contains(t, lg.stdout, fmt.Sprintf("err of rank %d\n", rank))
		assert.Regexp(t, fmt.Sprintf(`==> container_\S+ \(rank %d\) on \S+: stdout <==`, rank), lg.stdout)
	}
	assert.Equal(t, 8, strings.Count(lg.stdout, "==> container_"), "stdout and stderr of the AM and 3 ranks: %s", lg.stdout)
	// They came from HDFS: the NodeManagers aggregated them, and (on 3.2-3.4) serve no REST.
	assert.NotEmpty(t, aggregatedDir(t, ep, appID), "aggregated logs of %s on HDFS", appID)

	two := runCLI(t, ctx, ep, "app", "logs", appID, "--rank", "2")
	require.Equal(t, 0, two.code, two.stderr)
	assert.Contains(t, two.stdout, "hello from rank 2\n")
	assert.Contains(t, two.stdout, "err of rank 2\n")
	assert.NotContains(t, two.stdout, "rank 0")
	assert.NotContains(t, two.stdout, "rank 1")
	assert.Equal(t, 2, strings.Count(two.stdout, "==> container_"), two.stdout)

	none := runCLI(t, ctx, ep, "app", "logs", appID, "--rank", "7")
	assert.Equal(t, 1, none.code, none.stderr)
	assert.Contains(t, none.stderr, "no container of rank 7")
}

// TestAppLogsFollow: `app logs -f` follows a running application's output until it ends, then
// exits 0 with everything each rank wrote, once.
func TestAppLogsFollow(t *testing.T) {
	ep := cluster(t)
	share := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	appID, _, stderr, done := startSubmit(t, ctx, ep, 3, "--containers", "2", "--memory", "128m", "--env", "SHARE="+share, "--",
		"sh", "-c", `echo "tick 1 of rank $YARN_ER_RANK"; i=0; while [ ! -e "$SHARE/go" ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done; echo "tick 2 of rank $YARN_ER_RANK"`)

	cmd := exec.CommandContext(ctx, yarnErBinary(t), "app", "logs", appID, "-f", "--file", "stdout")
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_USER_NAME="+ep.User)
	out := &syncbuf.Buffer{}
	var ferr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &ferr
	require.NoError(t, cmd.Start())
	followed := make(chan error, 1)
	go func() { followed <- cmd.Wait() }()

	if ep.HadoopAtLeast(3, 5) {
		// The NodeManagers serve their containers' logs (REST): -f shows each rank's first line
		// while the application still runs.
		require.Eventually(t, func() bool {
			s := out.String()
			return strings.Contains(s, "tick 1 of rank 0") && strings.Contains(s, "tick 1 of rank 1")
		}, 2*time.Minute, 200*time.Millisecond, "live output; stderr: %s", &ferr)
		a, err := yarnClient(t, ep).App(ctx, appID)
		require.NoError(t, err)
		assert.Equal(t, records.AppRunning, a.State, "shown while running")
	}
	// Per-version branch: on Hadoop 3.2-3.4 the mini-YARN's NodeManagers serve no REST
	// (docs/hadoop-versions.md), so -f prints nothing while the application runs and everything
	// from the aggregated logs once it has ended.
	require.NoError(t, os.WriteFile(filepath.Join(share, "go"), nil, 0o644))
	assert.Equal(t, 0, awaitExit(t, ctx, done, "submit did not end"), stderr.String())
	assert.Equal(t, 0, awaitExit(t, ctx, followed, "app logs -f did not end with the application"), ferr.String())
	s := out.String()
	for rank := range 2 {
		for tick := 1; tick <= 2; tick++ {
			line := fmt.Sprintf("tick %d of rank %d\n", tick, rank)
			assert.Equal(t, 1, strings.Count(s, line), "%q once in: %s", line, s)
		}
	}
}

// openPTY opens a pseudo-terminal pair (posix_openpt, unlockpt, ptsname through /dev/ptmx).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0), "unlockpt")
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err, "ptsname")
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(); _ = m.Close() })
	return m, s
}

// TestSubmitInterruptPrompt: on a terminal, Ctrl-C (SIGINT) makes submit ask "kill or detach?".
// Answering k kills the application and exits 7 once it is KILLED, even when the answer comes
// after the 3 s the signal watch grants a command to end (the prompt holds the signals); answering
// d detaches: exit 130 (interrupted, the documented code), the application keeps running, and
// the message says how to kill it.
func TestSubmitInterruptPrompt(t *testing.T) {
	ep := cluster(t)
	for _, tc := range []struct {
		answer string
		delay  time.Duration
		code   int
	}{{"k", 4 * time.Second, 7}, {"d", 0, 130}} {
		t.Run(tc.answer, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			master, slave := openPTY(t)
			cmd := exec.CommandContext(ctx, yarnErBinary(t), "submit", "--containers", "1", "--memory", "128m", "--", "sleep", "300")
			cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_USER_NAME="+ep.User, "NO_COLOR=1")
			var stdout syncbuf.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, slave
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			term := &syncbuf.Buffer{}
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := master.Read(buf)
					_, _ = term.Write(buf[:n])
					if err != nil {
						return
					}
				}
			}()
			appID := awaitSubmitted(t, ctx, ep, &stdout, 2, "terminal", term)
			yc := yarnClient(t, ep)

			require.NoError(t, cmd.Process.Signal(os.Interrupt))
			require.Eventually(t, func() bool { return strings.Contains(term.String(), "kill "+appID+" or detach? [k/D]") },
				time.Minute, 100*time.Millisecond, "the prompt; terminal: %s", term)
			time.Sleep(tc.delay) // a user who takes longer than the signal watch's grace
			_, err := master.WriteString(tc.answer + "\n")
			require.NoError(t, err)
			select {
			case err := <-done:
				var exitErr *exec.ExitError
				code := 0
				if errors.As(err, &exitErr) {
					code = exitErr.ExitCode()
				}
				assert.Equal(t, tc.code, code, "terminal: %s", term)
			case <-ctx.Done():
				t.Fatalf("submit did not end after the answer; terminal: %s", term)
			}
			a, err := yc.App(ctx, appID)
			require.NoError(t, err)
			if tc.answer == "k" {
				assert.Equal(t, records.AppKilled, a.State)
				assert.Contains(t, term.String(), "killing "+appID)
				return
			}
			assert.Equal(t, records.AppRunning, a.State, "detached, not killed")
			assert.Contains(t, term.String(), "yarn-er app kill "+appID)
			k := runCLI(t, ctx, ep, "app", "kill", appID)
			assert.Equal(t, 0, k.code, k.stderr)
		})
	}
}
