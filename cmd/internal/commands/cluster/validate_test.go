package cluster

import (
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

// resourceJSON is a resourceInfo of the RM's REST API with these name=value resources.
func resourceJSON(res map[string]int64) string {
	var parts []string
	for name, v := range res {
		parts = append(parts, fmt.Sprintf(`{"name":%q,"units":"","value":%d}`, name, v))
	}
	return `{"resourceInformations":{"resourceInformation":[` + strings.Join(parts, ",") + `]}}`
}

// nodesRM answers /ws/v1/cluster/nodes with one node per resource map; it returns the RM's URL
// and the fake RM, which records the requests.
func nodesRM(t *testing.T, nodes ...map[string]int64) (string, *yarnfake.RM) {
	t.Helper()
	var items []string
	for i, res := range nodes {
		items = append(items, fmt.Sprintf(`{"id":"n%d:8041","state":"RUNNING","rack":"/r","nodeHostName":"n%d","nodeHTTPAddress":"n%d:8042","totalResource":%s,"usedResource":%s,"availableResource":%s}`,
			i, i, i, resourceJSON(res), resourceJSON(map[string]int64{}), resourceJSON(res)))
	}
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/nodes", http.StatusOK, fmt.Sprintf(`{"nodes":{"node":[%s]}}`, strings.Join(items, ",")))
	return rm.URL(), rm
}

// execute runs cmd with args and returns its error, stdout and stderr.
func execute(newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) (error, string) {
	f, out, _ := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"HADOOP_USER_NAME": "u"}))
	return cmdtest.Execute(newCmd(f), args...), out.String()
}

func nodesCmd(f *cmdutil.Factory) *cobra.Command { return NewCmdNodes(f, nil) }
func appsCmd(f *cmdutil.Factory) *cobra.Command  { return NewCmdApps(f, nil) }

// TestStatesValidatedBeforeTheRM: an unknown --state is a usage error listing YARN's states, and no
// request reaches the RM (which would answer with a Java enum error).
func TestStatesValidatedBeforeTheRM(t *testing.T) {
	rm, fake := nodesRM(t, map[string]int64{"memory-mb": 1024, "vcores": 2})
	for _, tc := range []struct {
		cmd   func(*cmdutil.Factory) *cobra.Command
		state string
		want  []string
	}{
		{nodesCmd, "BOGUS", []string{`--state "BOGUS"`, "NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING", "DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"}},
		{nodesCmd, "RUNNING,BOGUS", []string{`--state "BOGUS"`}},
		{appsCmd, "BOGUS", []string{`--state "BOGUS"`, "NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED"}},
		{appsCmd, "SUCCEEDED", []string{`--state "SUCCEEDED"`, "KILLED"}},
	} {
		err, out := execute(tc.cmd, "--rm", rm, "--state", tc.state)
		require.Error(t, err, tc.state)
		assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err), "%s: %v", tc.state, err)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w)
		}
		assert.Empty(t, out)
	}
	assert.Empty(t, fake.Requests(), "no request reached the RM")

	// Case does not matter (the RM upper-cases too).
	err, _ := execute(nodesCmd, "--rm", rm, "--state", "running,Lost")
	require.NoError(t, err)
	assert.Len(t, fake.Requests(), 1)
}

// TestResourceTypeNoNodeHas: --resource naming a type that no node reports at all is a usage error
// that suggests the nearest type the nodes do report; a known type that no node has free is not.
func TestResourceTypeNoNodeHas(t *testing.T) {
	rm, _ := nodesRM(t,
		map[string]int64{"memory-mb": 1024, "vcores": 2, "yarn.io/gpu": 4, "yarn.io/fpga": 0},
		map[string]int64{"memory-mb": 1024, "vcores": 2, "yarn.io/fpga": 0})
	err, out := execute(nodesCmd, "--rm", rm, "--resource", "yarn.io/gpuu")
	require.Error(t, err)
	assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))
	assert.Contains(t, err.Error(), `--resource "yarn.io/gpuu": no node has a resource of that type`)
	assert.Contains(t, err.Error(), "did you mean yarn.io/gpu?")
	assert.Contains(t, err.Error(), "memory-mb, vcores, yarn.io/fpga, yarn.io/gpu")
	assert.Empty(t, out)

	// Far from every type: no suggestion, the list only.
	err, _ = execute(nodesCmd, "--rm", rm, "--resource", "example.com/tpu-v5")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "did you mean")
	assert.Contains(t, err.Error(), "types the nodes report: memory-mb")

	// A type the nodes report, but none above zero: no matching node, exit 0.
	err, out = execute(nodesCmd, "--rm", rm, "--resource", "yarn.io/fpga")
	require.NoError(t, err)
	assert.Contains(t, out, "(no nodes)")

	// A known type: the nodes that have it.
	err, out = execute(nodesCmd, "--rm", rm, "--resource", "yarn.io/gpu")
	require.NoError(t, err)
	assert.Contains(t, out, "n0:8041")
	assert.NotContains(t, out, "n1:8041")
}

func TestNearest(t *testing.T) {
	known := []string{"memory-mb", "vcores", "yarn.io/fpga", "yarn.io/gpu"}
	for _, tc := range []struct{ in, want string }{
		{"yarn.io/gpuu", "yarn.io/gpu"},
		{"yarn.io/GPU", "yarn.io/gpu"},
		{"yarn.io/fgpa", "yarn.io/fpga"},
		{"vcore", "vcores"},
		{"memory", "memory-mb"},
		{"nvidia.com/gpu", ""},
		{"", ""},
	} {
		assert.Equal(t, tc.want, nearest(tc.in, known), tc.in)
	}
}
