package submit

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// dirFS is a LogFS on a local directory standing for HDFS's root.
type dirFS struct{ root string }

func (d dirFS) ReadDir(dir string) ([]os.FileInfo, error) {
	es, err := os.ReadDir(filepath.Join(d.root, dir))
	if err != nil {
		return nil, err
	}
	var out []os.FileInfo
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

type osLogFile struct{ *os.File }

func (f osLogFile) Stat() os.FileInfo { fi, _ := f.File.Stat(); return fi }

func (d dirFS) Open(name string) (LogFile, error) {
	f, err := os.Open(filepath.Join(d.root, name))
	if err != nil {
		return nil, err
	}
	return osLogFile{f}, nil
}

func (d dirFS) Close() error { return nil }

const capturedApp = "application_1796126265079_0001"

// capturedLogs lays the files that a Hadoop 3.5.0 mini-YARN aggregated for a 3-rank application
// (each rank printing "hello from rank N" to stdout) out as HDFS had them, under dir.
func capturedLogs(t *testing.T, dir string) string {
	t.Helper()
	root := t.TempDir()
	d := filepath.Join(root, dir)
	require.NoError(t, os.MkdirAll(d, 0o755))
	for _, n := range []string{"localhost_39099", "localhost_44201"} {
		b, err := os.ReadFile(filepath.Join("..", "logagg", "testdata", "hadoop-3.5.0-"+n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, n), b, 0o644))
	}
	// An upload in progress is not read.
	require.NoError(t, os.WriteFile(filepath.Join(d, "localhost_1.tmp"), []byte("partial"), 0o644))
	return root
}

// finishedRM answers for the captured application as FINISHED, its log aggregation pending for
// the first pending answers, then SUCCEEDED.
func finishedRM(t *testing.T, pending int32) *yarn.Client {
	t.Helper()
	var asked atomic.Int32
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.Handle("GET /ws/v1/cluster/apps/"+capturedApp, func(w http.ResponseWriter, _ *http.Request) {
		agg := "SUCCEEDED"
		if asked.Add(1) <= pending {
			agg = "RUNNING"
		}
		_, _ = fmt.Fprintf(w, `{"app":{"id":"%s","user":"root","state":"FINISHED","finalStatus":"SUCCEEDED","logAggregationStatus":"%s"}}`, capturedApp, agg)
	})
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+capturedApp+"/appattempts", http.StatusOK,
		`{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1796126265079_0001_000001","containerId":"container_1796126265079_0001_01_000001","nodeId":"localhost:44201"}]}}`)
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "root", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return yc
}

func TestAggregatedLogs(t *testing.T) {
	root := capturedLogs(t, "/tmp/logs/root/bucket-logs-tfile/0001/"+capturedApp)
	c, err := New(Options{YARN: finishedRM(t, 2), PollPeriod: 10 * time.Millisecond,
		LogFS: func(context.Context) (LogFS, error) { return dirFS{root}, nil }})
	require.NoError(t, err)
	ctx := context.Background()

	// Every container (the AM and 3 ranks), after waiting for the aggregation.
	var out bytes.Buffer
	require.NoError(t, c.Logs(ctx, capturedApp, LogsOptions{Files: []string{"stdout"}}, &out))
	s := out.String()
	assert.Equal(t, 4, strings.Count(s, "==> container_"), s)
	for r := range 3 {
		assert.Contains(t, s, fmt.Sprintf("hello from rank %d\n", r))
	}
	assert.Contains(t, s, "==> container_1796126265079_0001_01_000004 (rank 2) on localhost:44201: stdout <==\nhello from rank 2\n")

	// --rank 2: that rank's container only, stdout and stderr (in the order the NodeManager
	// aggregated them).
	out.Reset()
	two := 2
	require.NoError(t, c.Logs(ctx, capturedApp, LogsOptions{Rank: &two}, &out))
	assert.Equal(t, "==> container_1796126265079_0001_01_000004 (rank 2) on localhost:44201: stderr <==\nerr of rank 2\n"+
		"==> container_1796126265079_0001_01_000004 (rank 2) on localhost:44201: stdout <==\nhello from rank 2\n", out.String())

	// --container: the AM's own log.
	out.Reset()
	require.NoError(t, c.Logs(ctx, capturedApp, LogsOptions{Container: "container_1796126265079_0001_01_000001", Files: []string{"stderr"}}, &out))
	assert.Contains(t, out.String(), "am: starting rank")

	// A rank or a container the application did not have.
	nine := 9
	assert.ErrorIs(t, c.Logs(ctx, capturedApp, LogsOptions{Rank: &nine}, &out), ErrNoLogs)
	assert.ErrorIs(t, c.Logs(ctx, capturedApp, LogsOptions{Container: "container_1796126265079_0001_01_000009"}, &out), ErrNoLogs)
}

// TestAggregatedLogsLayouts: the layouts of Hadoop 3.2 (<user>/logs-tfile/<app>) and earlier
// (<user>/logs/<app>) are read; the IndexedFile controller's directory is named, not read; no
// directory at all is ErrNoLogs naming where it looked.
func TestAggregatedLogsLayouts(t *testing.T) {
	ctx := context.Background()
	for dir, want := range map[string]error{
		"/tmp/logs/root/logs/" + capturedApp:                   nil,
		"/tmp/logs/root/logs-tfile/" + capturedApp:             nil, // Hadoop 3.2
		"/tmp/logs/root/bucket-logs-ifile/0001/" + capturedApp: ErrIndexedLogs,
		"/elsewhere/" + capturedApp:                            ErrNoLogs,
	} {
		root := capturedLogs(t, dir)
		c, err := New(Options{YARN: finishedRM(t, 0), LogFS: func(context.Context) (LogFS, error) { return dirFS{root}, nil }})
		require.NoError(t, err)
		var out bytes.Buffer
		err = c.Logs(ctx, capturedApp, LogsOptions{}, &out)
		if want == nil {
			require.NoError(t, err, dir)
			assert.Contains(t, out.String(), "hello from rank 1", dir)
			continue
		}
		require.ErrorIs(t, err, want, dir)
		if want == ErrNoLogs {
			assert.Contains(t, err.Error(), "/tmp/logs/root/bucket-logs-tfile/0001/"+capturedApp)
		}
	}
}

// TestFollowLogs: -f prints what is new in each poll, once, until the application ends, then
// the rest from the aggregated logs (here: none, the cluster does not aggregate, so what the AM's
// NodeManager still has).
func TestFollowLogs(t *testing.T) {
	var polls atomic.Int32
	// The rank's log grows by a line with each poll of the application, to three lines.
	nm := yarnfake.NewNodeManager(t)
	nm.SetLog("container_1_0001_01_000002", "stdout", "")
	addr := nm.Addr()
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.Handle("GET /ws/v1/cluster/apps/application_1_0001", func(w http.ResponseWriter, _ *http.Request) {
		n := polls.Add(1)
		var lines strings.Builder
		for i := int32(1); i <= min(n, 3); i++ {
			fmt.Fprintf(&lines, "line %d\n", i)
		}
		nm.SetLog("container_1_0001_01_000002", "stdout", lines.String())
		state := "RUNNING"
		if n > 4 {
			state = "FINISHED"
		}
		_, _ = fmt.Fprintf(w, `{"app":{"id":"application_1_0001","state":"%s","finalStatus":"UNDEFINED","logAggregationStatus":"DISABLED"}}`, state)
	})
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts", http.StatusOK,
		fmt.Sprintf(`{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1_0001_000001","containerId":"container_1_0001_01_000001","nodeId":"nm:1","nodeHttpAddress":"%s"}]}}`, addr))
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts/appattempt_1_0001_000001/containers", http.StatusOK,
		fmt.Sprintf(`{"container":[{"containerId":"container_1_0001_01_000002","nodeId":"nm:1","nodeHttpAddress":"%s"}]}`, addr))
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	c, err := New(Options{YARN: yc, PollPeriod: 5 * time.Millisecond})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, c.Logs(context.Background(), "application_1_0001", LogsOptions{Follow: true, Files: []string{"stdout"}}, &out))
	assert.Equal(t, "==> container_1_0001_01_000002 on nm:1: stdout <==\nline 1\nline 2\nline 3\n", out.String())

	// Ctrl-C (the context) ends the follow with its error.
	polls.Store(-1000)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = c.Logs(ctx, "application_1_0001", LogsOptions{Follow: true}, &out)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
