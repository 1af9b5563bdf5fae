//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// The helpers every integration test shares: building yarn-er's binaries, running a command and
// reading its exit status and JSON output, and watching an application on the mini-YARN.

// build is one `go build` of a main package, done once per run.
type build struct {
	once sync.Once
	bin  string
	err  error
}

// builds holds the builds of this run by package and cgo setting; binDirs the directory of each
// cgo setting's builds (one per setting, so that yarn-er-am stands beside yarn-er).
var builds, binDirs sync.Map

// binDir returns the directory the builds with cgo setting static go into.
func binDir(static bool) (string, error) {
	v, _ := binDirs.LoadOrStore(static, &build{})
	d := v.(*build)
	d.once.Do(func() { d.bin, d.err = os.MkdirTemp(tmpRoot, "bin-") })
	return d.bin, d.err
}

// buildBinary builds the main package pkg (relative to the repository root, e.g. "./cmd/yarn-er")
// once per run and returns the binary's path. static builds with CGO_ENABLED=0, as submit ships
// yarn-er and as the test AM runs in containers; otherwise cgo is left on as for a release build
// (the NVML discovery backend).
func buildBinary(t testing.TB, pkg string, static bool) string {
	t.Helper()
	v, _ := builds.LoadOrStore(fmt.Sprintf("%s static=%t", pkg, static), &build{})
	b := v.(*build)
	b.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			b.err = err
			return
		}
		dir, err := binDir(static)
		if err != nil {
			b.err = err
			return
		}
		bin := filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = root
		cmd.Env = os.Environ()
		if static {
			cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w: %s", pkg, err, out)
			return
		}
		b.bin = bin
	})
	require.NoError(t, b.err)
	return b.bin
}

// yarnErBinary is cmd/yarn-er built static, as submit ships it to the containers, with the small
// ApplicationMaster binary cmd/yarn-er-am beside it, as make build and the release leave them (so
// that submit stages it for the AM container).
func yarnErBinary(t testing.TB) string {
	bin := buildBinary(t, "./cmd/yarn-er", true)
	buildBinary(t, "./cmd/yarn-er-am", true)
	return bin
}

// cliRun is one run of a command.
type cliRun struct {
	code           int
	stdout, stderr string
}

// runCommand runs cmd to its end and returns its exit status and output; a command that cannot
// run at all fails the test.
func runCommand(t testing.TB, cmd *exec.Cmd) cliRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliRun{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		r.code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

// jsonObject decodes the run's stdout as one JSON object.
func (r cliRun) jsonObject(t testing.TB) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	return out
}

// yarnClient is a REST client of ep's ResourceManager as ep's user.
func yarnClient(t testing.TB, ep *Endpoints) *yarn.Client {
	t.Helper()
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{ep.RMWebAddress}, User: ep.User})
	require.NoError(t, err)
	return c
}

// runApp submits sub and watches its application until it ends, handing each state seen to each
// (see watchApp); when the test fails, it logs the files logs and kills the application if it has
// not ended. It returns the largest sum of used yarn.io/gpu seen and the time from the submission
// to the end.
func runApp(t testing.TB, ctx context.Context, yc *yarn.Client, sub yarn.ApplicationSubmissionContext, logs []string, each func(*yarn.App)) (int64, time.Duration) {
	t.Helper()
	submitted := time.Now()
	require.NoError(t, yc.SubmitApplication(ctx, sub))
	var last *yarn.App
	t.Cleanup(func() {
		if t.Failed() {
			logFiles(t, logs...)
			if last == nil || !last.State.Terminal() {
				_, _, _ = yc.KillApplication(context.Background(), sub.ApplicationID)
			}
		}
	})
	maxGPUs := watchApp(t, ctx, yc, sub.ApplicationID, func(app *yarn.App) {
		last = app
		each(app)
	})
	return maxGPUs, time.Since(submitted)
}

// watchApp polls application id until it is in a terminal state, handing each state seen to
// each, and returns the largest sum of used yarn.io/gpu over the nodes seen meanwhile.
func watchApp(t testing.TB, ctx context.Context, yc *yarn.Client, id string, each func(*yarn.App)) int64 {
	t.Helper()
	var maxGPUs int64
	for {
		app, err := yc.App(ctx, id)
		require.NoError(t, err, "application %s", id)
		each(app)
		if app.State.Terminal() {
			return maxGPUs
		}
		if nodes, err := yc.Nodes(ctx, yarn.NodesQuery{}); err == nil {
			var used int64
			for _, n := range nodes {
				used += n.Used.Value("yarn.io/gpu")
			}
			maxGPUs = max(maxGPUs, used)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("application %s did not finish: %v (last state %s)", id, ctx.Err(), app.State)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logFiles logs the files that exist among paths, for a failed test.
func logFiles(t testing.TB, paths ...string) {
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			t.Logf("%s:\n%s", p, b)
		}
	}
}

// localFileResource stats the local file p and returns it as a FILE resource the application's
// containers share, by a file:// URL (the mini-YARN's NodeManagers run on this machine).
func localFileResource(t testing.TB, p string) records.LocalResource {
	t.Helper()
	fi, err := os.Stat(p)
	require.NoError(t, err)
	return records.LocalResource{URL: "file://" + p, Type: records.LocalFile, Visibility: records.VisibilityApplication,
		Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli()}
}
