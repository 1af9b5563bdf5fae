package serve

import (
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	servelib "github.com/yarn-er/yarn-er/serve"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func newCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	return NewCmdServe(f, runF, nil)
}

func TestServeFlags(t *testing.T) {
	got := cmdtest.Capture(t, newCmd, "--listen", ":9000", "--interval", "10s", "--max-backoff", "2m", "--token-file", "/t",
		"--listen-tls-cert", "/c", "--listen-tls-key", "/k", "--max-body", "100", "--drain-timeout", "1s", "--rm", "http://rm:8088",
		"--tls-cert", "/rmc", "--tls-key", "/rmk")
	assert.Equal(t, ":9000", got.Listen)
	assert.Equal(t, 10*time.Second, got.Interval)
	assert.Equal(t, 2*time.Minute, got.MaxBackoff)
	assert.Equal(t, "/t", got.TokenFile)
	assert.Equal(t, "/c", got.TLSCert)
	assert.Equal(t, "/k", got.TLSKey)
	assert.Equal(t, int64(100), got.MaxBody)
	assert.Equal(t, time.Second, got.Drain)
	assert.Equal(t, []string{"http://rm:8088"}, got.Conn.RM.Addrs)
	assert.Equal(t, "/rmc", got.Conn.RM.TLS.CertFile, "--tls-cert stays the RM client's")
	assert.True(t, got.Conn.LongRunning, "no overall deadline on the RM client")
	assert.Equal(t, []string{"--tls-cert=/rmc", "--tls-key=/rmk"}, got.connArgs())

	def := cmdtest.Capture(t, newCmd)
	assert.Equal(t, "127.0.0.1:8089", def.Listen)
	assert.Equal(t, 5*time.Second, def.Interval)
	assert.Equal(t, "40MiB", def.MemoryLimit)
}

func TestLimitFor(t *testing.T) {
	for _, tc := range []struct {
		configured, live, want int64
	}{
		{48 << 20, 15 << 20, 48 << 20},
		{48 << 20, 0, 48 << 20},
		{48 << 20, 30 << 20, 76 << 20},
		{math.MaxInt64, 1 << 30, math.MaxInt64},
		{48 << 20, 1 << 40, 2<<40 + 16<<20},
		{48 << 20, math.MaxInt64, 48 << 20}, // 2*live overflows: the configured limit
	} {
		assert.Equal(t, tc.want, limitFor(tc.configured, tc.live), "%d live under %d", tc.live, tc.configured)
	}
	runtime.GC()
	assert.Greater(t, liveHeap(), int64(0), "the runtime reports the live heap of its last collection")
}

func TestParseMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"48MiB", 48 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"16777216", 16 << 20, ""},
		{"20000KiB", 20000 << 10, ""},
		{" 64MiB ", 64 << 20, ""},
		{"off", math.MaxInt64, ""},
		{"0", math.MaxInt64, ""},
		{"48MB", 0, `unit "MB"`},
		{"1.5GiB", 0, "want a number"},
		{"-5MiB", 0, "want a number"},
		{"MiB", 0, "want a number"},
		{"9999999999TiB", 0, "larger than"},
		{"4MiB", 0, "less than the 8MiB"},
	} {
		got, err := parseMemoryLimit(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	require.NoError(t, os.WriteFile(open, []byte("tok\n"), 0o644))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "0s"}, "--interval 0s"},
		{[]string{"--max-body", "0"}, "--max-body 0"},
		{[]string{"--listen-tls-cert", "/c"}, "go together"},
		{[]string{"--token-file", open}, "readable by others"},
		{[]string{"--token-file", empty}, "empty"},
		{[]string{"--token-file", filepath.Join(dir, "missing")}, "--token-file"},
		{[]string{"--listen-tls-cert", "/nope.pem", "--listen-tls-key", "/nope.key"}, "--listen-tls-cert /nope.pem"},
		{[]string{"--memory-limit", "48MB"}, `--memory-limit "48MB": unit "MB"`},
		{[]string{"--memory-limit", "1MiB"}, "less than the 8MiB"},
	} {
		f, _, _ := cmdtest.Buffers(cmdutil.Env{})
		err := cmdtest.Execute(NewCmdServe(f, nil, nil), append(tc.args, "--rm", "http://127.0.0.1:1")...)
		require.Error(t, err, tc.args)
		assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err), tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// serve on a fake RM: ready once the first poll is in, the API answers, the token is asked for,
// and cancelling the run's context (SIGTERM's effect) drains and returns nil (exit 0).
func TestServeRunAndDrain(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithVersion("3.4.2"))
	tok := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tok, []byte("s3cret\n"), 0o600))
	f, _, errOut := cmdtest.Buffers(cmdutil.Env{})
	cmd := NewCmdServe(f, func(o *Options) error {
		addrs := make(chan string, 1)
		o.ready = func(a string) { addrs <- a }
		ctx, cancel := context.WithCancel(o.Ctx)
		o.Ctx = ctx
		done := make(chan error, 1)
		go func() { done <- serveRun(o) }()
		var addr string
		select {
		case addr = <-addrs:
		case err := <-done:
			t.Fatalf("serve ended early: %v", err)
		}
		base := "http://" + addr
		require.Eventually(t, func() bool {
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		}, 10*time.Second, 20*time.Millisecond)
		get := func(path, token string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, base+path, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		code, _ := get("/api/v1/cluster/nodes", "")
		assert.Equal(t, 401, code)
		code, body := get("/api/v1/cluster/nodes", "s3cret")
		assert.Equal(t, 200, code)
		assert.Contains(t, body, `"yarn.io/gpu": 4`)
		code, body = get("/metrics", "s3cret")
		assert.Equal(t, 200, code)
		assert.Contains(t, body, "yarner_node_total_resource")
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
		}
		return nil
	}, func(context.Context, []string) servelib.CommandResult { return servelib.CommandResult{} })
	require.NoError(t, cmdtest.Execute(cmd, "--rm", rm.URL(), "--user", "yarner", "--listen", "127.0.0.1:0", "--token-file", tok, "--interval", "50ms"))
	assert.Contains(t, errOut.String(), "yarn-er serve: stopped")
	assert.NotContains(t, errOut.String(), "s3cret", "the token is never logged")
}

func TestWithServeFlags(t *testing.T) {
	extra := []string{"--user=bob", "--hadoop-conf=/etc/hadoop", "--config=/c.yaml"}
	assert.Equal(t, []string{"translate", "--flink-conf=x", "--hadoop-conf=/etc/hadoop", "--config=/c.yaml"},
		withServeFlags([]string{"translate", "--flink-conf=x"}, extra))
	assert.Equal(t, []string{"translate", "--hadoop-conf=/tmp/h", "--config=/c.yaml"},
		withServeFlags([]string{"translate", "--hadoop-conf=/tmp/h"}, extra), "posted Hadoop files win")
	assert.Equal(t, []string{"preflight", "--rm=http://rm", "--user=bob", "--hadoop-conf=/etc/hadoop", "--config=/c.yaml"},
		withServeFlags([]string{"preflight", "--rm=http://rm"}, extra), "preflight gets the RM connection flags")
}
