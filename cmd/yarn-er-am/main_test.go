package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/amrun"
	"github.com/yarn-er/yarn-er/cmd/internal/amrun/amruntest"
)

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"version"}, amrun.ExitOK, "yarn-er-am ", ""},
		{[]string{"--help"}, amrun.ExitOK, "usage: yarn-er-am am", ""},
		{nil, 2, "", "usage: yarn-er-am am"},
		{[]string{"am", "extra"}, 2, "", "usage:"},
		{[]string{"submit"}, 2, "", "usage:"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, func(string) string { return "" }, &stdout, &stderr)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stdout.String(), tc.stdout)
			assert.Contains(t, stderr.String(), tc.errs)
		})
	}
}

// TestAMFailsFastOnBadInput: as `yarn-er am`, a bad spec or token ends the attempt at once with
// a line on stderr (the attempt's diagnostics) and the documented exit code.
func TestAMFailsFastOnBadInput(t *testing.T) {
	for _, tc := range amruntest.BadInputs(t) {
		t.Run(tc.Name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"am"}, func(k string) string { return tc.Env[k] }, &stdout, &stderr)
			assert.Equal(t, tc.Code, code, stderr.String())
			assert.Contains(t, stderr.String(), "yarn-er: ")
			assert.Contains(t, stderr.String(), tc.Want)
			assert.Empty(t, stdout.String())
		})
	}
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// binary builds yarn-er-am static, as submit stages it.
func binary(t testing.TB) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yarn-er-am-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "yarn-er-am")
		cmd := exec.Command("go", "build", "-mod=mod", "-o", built, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return built
}

// TestAMProcess runs the binary as the AM of 4 ranks against the fake cluster: the application
// succeeds and the done line carries the memory figures.
func TestAMProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	f := amruntest.RunProcess(t, binary(t), 4)
	assert.Greater(t, f["peakRSSKiB"], 0.0)
	assert.Greater(t, f["heartbeats"], 0.0)
}

// BenchmarkAMProcess is cmd/yarn-er's BenchmarkAMProcess for this binary: the AM's peak RSS and
// its parts at exit, for 4 and 64 ranks.
//
//	go test ./cmd/yarn-er-am/ -run '^$' -bench BenchmarkAMProcess -benchtime 5x
func BenchmarkAMProcess(b *testing.B) {
	bin := binary(b)
	for _, n := range []int{4, 64} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			amruntest.Report(b, bin, n)
		})
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		_ = os.RemoveAll(filepath.Dir(built))
	}
	os.Exit(code)
}

// TestWatchSignals: SIGTERM ends the context with the exit code 143 as its cause.
func TestWatchSignals(t *testing.T) {
	ctx, stop := watchSignals()
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	<-ctx.Done()
	var sig signalled
	require.ErrorAs(t, context.Cause(ctx), &sig)
	assert.Equal(t, 143, sig.code)
}
