package app

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// A captured 3.3.6 cluster (two idle 4-GPU nodes) with a waiting application asking for 5 GPUs
// per container: no node is large enough, even empty.
func whyRM(t *testing.T, name string) *yarnfake.RM {
	rm := yarnfake.New(t, yarnfake.WithVersion("3.3.6"))
	rm.ReplyJSON("GET /ws/v1/cluster/apps", http.StatusOK, `{"apps":{"app":[{"id":"application_1_0001","name":`+name+`,
 "user":"bob","queue":"root.default","state":"RUNNING","finalStatus":"UNDEFINED",
 "resourceRequests":[{"priority":1,"resourceName":"*","numContainers":2,"relaxLocality":true,
  "capability":{"memory":1024,"vCores":1,"resourceInformations":{"resourceInformation":[
   {"name":"memory-mb","value":1024,"units":"Mi"},{"name":"vcores","value":1,"units":""},{"name":"yarn.io/gpu","value":5,"units":""}]}}}]}]}}`)
	return rm
}

func whyCmd(f *cmdutil.Factory) *cobra.Command { return NewCmdWhy(f, nil) }

func TestWhyRun(t *testing.T) {
	rm := whyRM(t, `"big"`)
	err, out, stderr := runApp(t, cmdutil.OutputJSON, whyCmd, "--rm", rm.URL(), "application_1_0001")
	require.NoError(t, err, stderr)
	var got view.AppWhy
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.True(t, got.Waiting)
	require.NotEmpty(t, got.Reasons)
	assert.Equal(t, "no-node-offers", got.Reasons[0].Code)
	assert.Equal(t, int64(2), got.Asks[0].Containers)

	err, out, _ = runApp(t, cmdutil.OutputTable, whyCmd, "--rm", rm.URL(), "application_1_0001")
	require.NoError(t, err)
	assert.Contains(t, out, "[no-node-offers]")
	assert.Contains(t, out, "2 × <memory-mb:1024")

	err, _, _ = runApp(t, cmdutil.OutputJSON, whyCmd, "--rm", rm.URL(), "application_1_0099")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not list it")
	err, _, _ = runApp(t, cmdutil.OutputJSON, whyCmd, "--rm", rm.URL(), "bogus")
	assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))
}

func TestWhyHostileNames(t *testing.T) {
	rm := whyRM(t, `"\u001b]0;pwned\u0007evil\u202e"`)
	err, out, _ := runApp(t, cmdutil.OutputTable, whyCmd, "--rm", rm.URL(), "application_1_0001")
	require.NoError(t, err)
	cmdtest.AssertTerminalSafe(t, out)
}
