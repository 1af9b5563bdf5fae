package yarnfake_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func TestNodeManagerLogs(t *testing.T) {
	nm := yarnfake.NewNodeManager(t)
	nm.SetLog("container_1_0001_01_000002", "stdout", "hi\n")
	nm.SetWrappedLog("container_1_0001_01_000003", "stdout", "tick 1 of rank 0\n", "localhost:39099")
	assert.Equal(t, nm.URL(), "http://"+nm.Addr())

	st, _, body := mustGet(t, "GET", nm.URL()+"/ws/v1/node/containers/container_1_0001_01_000002/logs/stdout?user.name=alice")
	assert.Equal(t, http.StatusOK, st)
	assert.Equal(t, "hi\n", body)

	// The wrapping is the one a Hadoop 3.5.0 NodeManager sent (the fuzz seed captured from it).
	_, _, body = mustGet(t, "GET", nm.URL()+"/ws/v1/node/containers/container_1_0001_01_000003/logs/stdout")
	seed, err := os.ReadFile("../testdata/fuzz/FuzzCopyLogContents/hadoop-3.5.0-wrapped")
	require.NoError(t, err)
	assert.Contains(t, strings.ReplaceAll(string(seed), `\n`, "\n"), body)

	st, h, body := mustGet(t, "GET", nm.URL()+"/ws/v1/node/containers/container_1_0001_01_000002/logs/stderr")
	assert.Equal(t, http.StatusNotFound, st)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Contains(t, body, "Cannot find this log on the local disk.")

	reqs := nm.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "alice", reqs[0].Query.Get("user.name"))
	assert.Equal(t, "/ws/v1/node/containers/container_1_0001_01_000002/logs/stderr", reqs[2].Path)
}
