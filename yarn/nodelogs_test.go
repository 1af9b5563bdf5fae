package yarn

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func TestContainerLog(t *testing.T) {
	nm := yarnfake.NewNodeManager(t)
	nm.SetLog("container_1_0001_01_000002", "stdout", "hello from rank 1\n")
	// Hadoop 3's wrapping, as a 3.5.0 NodeManager sends it.
	nm.SetWrappedLog("container_1_0001_01_000003", "stdout", "tick 1 of rank 0\n", "localhost:39099")
	c, err := NewClient(Options{Addresses: []string{"http://rm.invalid:8088"}, User: "alice", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	var buf bytes.Buffer
	n, err := c.ContainerLog(context.Background(), nm.Addr(), "container_1_0001_01_000002", "stdout", &buf)
	require.NoError(t, err)
	assert.Equal(t, int64(18), n)
	assert.Equal(t, "hello from rank 1\n", buf.String())
	assert.Equal(t, "alice", nm.Requests()[0].Query.Get("user.name"))
	assert.Len(t, nm.Requests()[0].Query, 1)

	buf.Reset()
	n, err = c.ContainerLog(context.Background(), nm.URL(), "container_1_0001_01_000003", "stdout", &buf)
	require.NoError(t, err)
	assert.Equal(t, "tick 1 of rank 0\n", buf.String(), "the file's bytes, not the NodeManager's wrapping")
	assert.Equal(t, int64(17), n)

	_, err = c.ContainerLog(context.Background(), nm.URL(), "container_1_0001_01_000009", "stderr", &buf)
	require.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "Cannot find this log")

	_, err = c.ContainerLog(context.Background(), nm.URL(), "c", "../etc/passwd", &buf)
	require.Error(t, err)
}

// FuzzCopyLogContents: any NodeManager answer copies without a panic, never more than it holds.
func FuzzCopyLogContents(f *testing.F) {
	f.Add([]byte("Container: container_1_0001_01_000003 on localhost:39099\nLogAggregationType: LOCAL\n" +
		"====================================================================\nLogType:stdout\n" +
		"LogLastModifiedTime:Tue Dec 01 12:15:10 +0000 2026\nLogLength:17\nLogContents:\ntick 1 of rank 0\n" +
		"End of LogType:stdout.\n"))
	f.Add([]byte("plain log\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var out bytes.Buffer
		n, _ := copyLogContents(&out, bytes.NewReader(body), "container_1_0001_01_000003", "stdout")
		if n != int64(out.Len()) || out.Len() > len(body) {
			t.Fatalf("copied %d (reported %d) of a %d-byte answer", out.Len(), n, len(body))
		}
	})
}
