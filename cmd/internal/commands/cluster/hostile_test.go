package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// hostileJSON is cmdtest.Hostile as a JSON string, as the RM would send it.
func hostileJSON(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(cmdtest.Hostile)
	require.NoError(t, err)
	return string(b)
}

// runTable runs the command newCmd makes against rm with the table output and returns its
// stdout and stderr.
func runTable(t *testing.T, newCmd func(*cmdutil.Factory) *cobra.Command, rm string, args ...string) (string, string) {
	t.Helper()
	f, out, errOut := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"HADOOP_USER_NAME": "u"}))
	require.NoError(t, cmdtest.Execute(newCmd(f), append([]string{"--rm", rm}, args...)...), errOut.String())
	return out.String(), errOut.String()
}

// TestTablesEscapeWhatTheClusterSays: names any YARN user (or the cluster's configuration) sets
// reach the operator's terminal escaped, on one line, through every table of `cluster`: no
// escape sequence, bidi override or forged line passes.
func TestTablesEscapeWhatTheClusterSays(t *testing.T) {
	h := hostileJSON(t)

	t.Run("apps", func(t *testing.T) {
		rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
		rm.ReplyJSON("GET /ws/v1/cluster/apps", http.StatusOK, fmt.Sprintf(`{"apps":{"app":[{"id":"application_1_0001",`+
			`"user":%[1]s,"name":%[1]s,"queue":%[1]s,"state":"RUNNING","finalStatus":"UNDEFINED","progress":0}]}}`, h))
		out, _ := runTable(t, func(f *cmdutil.Factory) *cobra.Command { return NewCmdApps(f, nil) }, rm.URL())
		cmdtest.AssertTerminalSafe(t, out)
		assert.Equal(t, 3, strings.Count(out, cmdtest.HostileEscaped), out)
		assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 2, "a header and one row: %s", out)

		// -o json carries the name as the RM sent it (encoding/json escapes it).
		got := runApps(t, rm.URL())
		require.Len(t, got.Apps, 1)
		assert.Equal(t, cmdtest.Hostile, got.Apps[0].Name)
	})

	t.Run("nodes", func(t *testing.T) {
		total := yarnfake.HarnessNode()
		require.Equal(t, "yarn.io/fpga", total[3].Name)
		total[3].Name += "\x1b[2J\u202e"
		body, err := yarnfake.Nodes([]yarnfake.Node{{ID: "n1:45454", Rack: cmdtest.Hostile, Total: total}})
		require.NoError(t, err)
		rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
		rm.ReplyJSON("GET /ws/v1/cluster/nodes", http.StatusOK, string(body))
		out, _ := runTable(t, func(f *cmdutil.Factory) *cobra.Command { return NewCmdNodes(f, nil) }, rm.URL())
		cmdtest.AssertTerminalSafe(t, out)
		assert.Contains(t, out, cmdtest.HostileEscaped)
		assert.Contains(t, out, `yarn.io/fpga\x1b[2J\u202e`, "a resource type's name is the cluster's too")
	})

	t.Run("queues", func(t *testing.T) {
		c, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "scheduler.json")
		require.NoError(t, err)
		body := strings.ReplaceAll(string(c.Body), `"queueName":"default"`, `"queueName":`+h)
		require.NotEqual(t, string(c.Body), body, "the capture names the default queue")
		rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
		rm.ReplyJSON("GET /ws/v1/cluster/scheduler", http.StatusOK, body)
		out, _ := runTable(t, func(f *cmdutil.Factory) *cobra.Command { return NewCmdQueues(f, nil) }, rm.URL())
		cmdtest.AssertTerminalSafe(t, out)
		assert.Contains(t, out, cmdtest.HostileEscaped)
	})

	t.Run("info", func(t *testing.T) {
		body := cmdtest.HostileClusterInfo(t)
		rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
		rm.Reply("GET /ws/v1/cluster/info", http.StatusOK, "application/json", body)
		rm.ReplyJSON("GET /ws/v1/cluster/metrics", http.StatusOK, `{"clusterMetrics":{}}`)
		out, _ := runTable(t, func(f *cmdutil.Factory) *cobra.Command { return NewCmdInfo(f, nil) }, rm.URL())
		cmdtest.AssertTerminalSafe(t, out)
		assert.Equal(t, 2, strings.Count(out, cmdtest.HostileEscaped), out)
	})
}
