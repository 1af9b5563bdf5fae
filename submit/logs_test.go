package submit

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func TestLogs(t *testing.T) {
	nm := yarnfake.NewNodeManager(t)
	nm.SetLog("container_1_0001_01_000002", "stdout", "rank 0 says hi\n")
	nm.SetLog("container_1_0001_01_000001", "stdout", "am log\n")
	nmAddr := nm.Addr()
	state := "RUNNING"
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.Handle("GET /ws/v1/cluster/apps/application_1_0001", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintf(w, `{"app":{"id":"application_1_0001","state":"%s","finalStatus":"UNDEFINED"}}`, state)
	})
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts", http.StatusOK,
		fmt.Sprintf(`{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1_0001_000001","containerId":"container_1_0001_01_000001","nodeId":"nm:1","nodeHttpAddress":"%s"}]}}`, nmAddr))
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts/appattempt_1_0001_000001/containers", http.StatusOK,
		fmt.Sprintf(`{"container":[{"containerId":"container_1_0001_01_000001","nodeId":"nm:1","nodeHttpAddress":"http://%s"},
			 {"containerId":"container_1_0001_01_000002","nodeId":"nm:1","nodeHttpAddress":"http://%s"}]}`, nmAddr, nmAddr))
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	c, err := New(Options{YARN: yc})
	require.NoError(t, err)

	var out bytes.Buffer
	require.NoError(t, c.Logs(context.Background(), "application_1_0001", LogsOptions{Files: []string{"stdout"}}, &out))
	assert.Equal(t, "==> container_1_0001_01_000001 on nm:1: stdout <==\nam log\n"+
		"==> container_1_0001_01_000002 on nm:1: stdout <==\nrank 0 says hi\n", out.String())

	out.Reset()
	require.NoError(t, c.Logs(context.Background(), "application_1_0001", LogsOptions{Container: "container_1_0001_01_000002"}, &out))
	assert.Contains(t, out.String(), "rank 0 says hi")
	assert.Contains(t, out.String(), "stderr <==\n(not available:")

	err = c.Logs(context.Background(), "application_1_0001", LogsOptions{Container: "container_1_0001_01_000009"}, &out)
	assert.ErrorIs(t, err, ErrNoLogs)

	// Ended: only the AM's container is known.
	state = "FINISHED"
	out.Reset()
	require.NoError(t, c.Logs(context.Background(), "application_1_0001", LogsOptions{Files: []string{"stdout"}}, &out))
	assert.Equal(t, "==> container_1_0001_01_000001 on nm:1: stdout <==\nam log\n", out.String())
}
