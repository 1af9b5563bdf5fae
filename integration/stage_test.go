//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/yarn-er/yarn-er/records"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/stage"
)

func stageClient(t *testing.T, ep *Endpoints, user string) *stage.Client {
	t.Helper()
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: ep.HadoopConfDir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	c, err := stage.Dial(context.Background(), stage.Options{HadoopConf: hc, User: user})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestStageRoundTripHDFS stages files on the mini-YARN's real HDFS: the staging directory is
// private, every LocalFile has the exact size and millisecond mtime the NameNode reports, the
// content reads back unchanged, and Remove leaves nothing.
func TestStageRoundTripHDFS(t *testing.T) {
	ep := cluster(t)
	c := stageClient(t, ep, ep.User)
	assert.Equal(t, ep.HDFSURI, c.DefaultFS())
	tmp := t.TempDir()
	big := testPayload(5<<20 + 4321)
	bigPath := filepath.Join(tmp, "model.bin")
	require.NoError(t, os.WriteFile(bigPath, big, 0o644))
	small := filepath.Join(tmp, "input.txt")
	require.NoError(t, os.WriteFile(small, []byte("hello\n"), 0o644))
	appID := fmt.Sprintf("application_%d_0001", time.Now().UnixNano())

	var last stage.Progress
	reports := 0
	d, files, err := c.Stage(context.Background(), appID, []stage.Item{
		{Local: bigPath, Name: "weights"}, {Local: small},
	}, func(p stage.Progress) { last = p; reports++ })
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Remove(context.Background()) })
	assert.Equal(t, int64(len(big)+6), last.Bytes)
	assert.Equal(t, 2, last.Files)
	assert.Greater(t, reports, 2, "progress while the big file uploads")

	raw := hdfsClient(t, ep)
	fi, err := raw.Stat(d.Path)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the staging directory is private")
	assert.Equal(t, path.Join("/user", ep.User, ".yarn-er", appID), d.Path)

	require.Len(t, files, 2)
	for i, want := range [][]byte{big, []byte("hello\n")} {
		f := files[i]
		p := d.Path + "/" + f.Name
		st, err := raw.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, st.Size(), f.Size, f.Name)
		assert.Equal(t, st.ModTime().UnixMilli(), f.MtimeMillis, "%s: mtime exactly as HDFS has it", f.Name)
		assert.Equal(t, ep.HDFSURI+p, f.URL)
		assert.Equal(t, records.LocalFile, f.Type)
		got, err := raw.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, want, got, f.Name)
	}

	spec, err := d.Put(context.Background(), jobspec.FileName, []byte(`{"version":1}`))
	require.NoError(t, err)
	st, err := raw.Stat(d.Path + "/" + jobspec.FileName)
	require.NoError(t, err)
	assert.Equal(t, st.ModTime().UnixMilli(), spec.MtimeMillis)

	require.NoError(t, d.Remove(context.Background()))
	_, err = raw.Stat(d.Path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing left")
}

// TestStageCleanupOnFailureHDFS: a staging that fails part way (the second file's name is
// taken by a directory, so HDFS refuses to create it) removes what it made.
func TestStageCleanupOnFailureHDFS(t *testing.T) {
	ep := cluster(t)
	c := stageClient(t, ep, ep.User)
	tmp := t.TempDir()
	a := filepath.Join(tmp, "a")
	require.NoError(t, os.WriteFile(a, testPayload(2<<20), 0o644))
	appID := fmt.Sprintf("application_%d_0002", time.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	_, _, err := c.Stage(ctx, appID, []stage.Item{{Local: a}, {Local: a, Name: "b"}}, func(p stage.Progress) {
		if p.Files == 1 {
			cancel() // fail during the second file
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	raw := hdfsClient(t, ep)
	_, err = raw.Stat(path.Join(c.BaseDir(), appID))
	assert.ErrorIs(t, err, os.ErrNotExist, "the failed staging left nothing")
}

// TestStagePermissionDeniedHDFS: a user whose HDFS home is another user's private directory
// gets a permission error that says what to do, and nothing is created.
func TestStagePermissionDeniedHDFS(t *testing.T) {
	ep := cluster(t)
	raw := hdfsClient(t, ep)
	other := fmt.Sprintf("nobody%d", time.Now().UnixNano()%1_000_000)
	home := "/user/" + other
	require.NoError(t, raw.MkdirAll(home, 0o700))
	t.Cleanup(func() { _ = raw.RemoveAll(home) })
	// The directory belongs to the cluster's user (the HDFS superuser), not to other.
	c := stageClient(t, ep, other)
	_, err := c.Create(context.Background(), "application_1_0003")
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.Contains(t, err.Error(), "hdfs dfs -chown "+other)
	entries, err := raw.ReadDir(home)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestStageUnreachableHDFS: a NameNode address nothing listens on is a clear error.
func TestStageUnreachableHDFS(t *testing.T) {
	_, err := stage.Dial(context.Background(), stage.Options{DefaultFS: "hdfs://127.0.0.1:1", User: "alice", DialTimeout: 2 * time.Second})
	require.ErrorIs(t, err, stage.ErrUnreachable)
	assert.Contains(t, err.Error(), "check that HDFS runs")
}
