package app

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

const hostileID = "application_1796117006310_0001"

// hostileApp is the recorded application hostileID with every field a YARN user sets (name,
// type, tags, queue, user, diagnostics) holding cmdtest.Hostile, in state.
func hostileApp(t *testing.T, state, final string) string {
	t.Helper()
	c, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "app-true-finished.json")
	require.NoError(t, err)
	var v map[string]map[string]any
	require.NoError(t, json.Unmarshal(c.Body, &v))
	app := v["app"]
	require.Equal(t, hostileID, app["id"])
	for _, k := range []string{"name", "applicationType", "applicationTags", "queue", "user"} {
		app[k] = cmdtest.Hostile
	}
	app["diagnostics"] = "first line\r\n" + cmdtest.Hostile
	app["state"], app["finalStatus"] = state, final
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// runApp runs the command newCmd makes on args with the output format output, and returns its
// error, stdout and stderr.
func runApp(t *testing.T, output string, newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) (error, string, string) {
	t.Helper()
	f, out, errOut := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"HADOOP_USER_NAME": "yarner"}))
	f.Output = output
	err := cmdtest.Execute(newCmd(f), args...)
	return err, out.String(), errOut.String()
}

// TestListEscapesWhatUsersName: `app list` shows names, types, users and queues escaped, each row
// on one line.
func TestListEscapesWhatUsersName(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/apps", http.StatusOK, fmt.Sprintf(`{"apps":{"app":[%s]}}`,
		strings.TrimSuffix(strings.TrimPrefix(hostileApp(t, "RUNNING", "UNDEFINED"), `{"app":`), "}")))
	err, out, stderr := runApp(t, cmdutil.OutputTable, func(f *cmdutil.Factory) *cobra.Command { return NewCmdList(f, nil) }, "--rm", rm.URL())
	require.NoError(t, err, stderr)
	cmdtest.AssertTerminalSafe(t, out)
	assert.Equal(t, 3, strings.Count(out, cmdtest.HostileEscaped), "type, user and queue: %s", out)
	assert.Contains(t, out, cmdutil.Printable(string([]rune(cmdtest.Hostile)[:39]))+"…", "the name, cut to 40 runes, then escaped")
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 2, "a header and one row: %s", out)
}

// TestStatusEscapesWhatUsersName: `app status` escapes every field of the application, its
// attempt and its containers; the diagnostics keep their lines, each escaped and indented under
// the label (a CR before a newline dropped), so that none starts a line of its own.
func TestStatusEscapesWhatUsersName(t *testing.T) {
	const attempt = "appattempt_1796117006310_0001_000001"
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+hostileID, http.StatusOK, hostileApp(t, "RUNNING", "UNDEFINED"))
	h, err := json.Marshal(cmdtest.Hostile)
	require.NoError(t, err)
	attempts, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "appattempts-true.json")
	require.NoError(t, err)
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+hostileID+"/appattempts", http.StatusOK,
		strings.Replace(string(attempts.Body), `"nodeId":"localhost:46481"`, `"nodeId":`+string(h), 1))
	// The shape of Hadoop 3.4's answer (attempt-containers.json), which 3.5's captures lack.
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+hostileID+"/appattempts/"+attempt+"/containers", http.StatusOK,
		`{"container":[{"containerId":"container_1796117006310_0001_01_000001","allocatedMB":256,"allocatedVCores":1,`+
			`"containerState":"RUNNING","nodeHttpAddress":"http://localhost:35695","nodeId":`+string(h)+`,`+
			`"allocatedResources":{"entry":[{"key":"memory-mb","value":256},{"key":"vcores","value":1}]}}]}`)

	err, out, stderr := runApp(t, cmdutil.OutputTable, func(f *cmdutil.Factory) *cobra.Command { return NewCmdStatus(f, nil) }, hostileID, "--rm", rm.URL())
	require.NoError(t, err, stderr)
	cmdtest.AssertTerminalSafe(t, out)
	for _, label := range []string{"Name:         ", "Type:         ", "User:         ", "Queue:        ", "Tags:         "} {
		assert.Contains(t, out, "\n"+label+cmdtest.HostileEscaped+"\n", label)
	}
	assert.Contains(t, out, "\nDiagnostics:  first line\n"+
		`              evil\x1b]0;pwned\a\x1b[2J\u202e`+"\n"+
		"              "+cmdtest.HostileForgedLine+"\n")
	assert.Contains(t, out, " on "+cmdtest.HostileEscaped+" (AM container ", "the attempt's node")
	assert.Contains(t, out, "RUNNING  "+cmdtest.HostileEscaped, "the container's node")

	// -o json carries the values as the RM sent them.
	err, out, stderr = runApp(t, cmdutil.OutputJSON, func(f *cmdutil.Factory) *cobra.Command { return NewCmdStatus(f, nil) }, hostileID, "--rm", rm.URL())
	require.NoError(t, err, stderr)
	var got struct{ Name string }
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, cmdtest.Hostile, got.Name)
}

// TestWaitEscapesWhatTheClusterSays: `app wait`'s progress on stderr shows the application's
// state and the first line of its diagnostics escaped, on one line.
func TestWaitEscapesWhatTheClusterSays(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	app := strings.Replace(hostileApp(t, "FAILED", "FAILED"), `first line\r\n`, "", 1)
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+hostileID, http.StatusOK, app)
	attempts, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "appattempts-true.json")
	require.NoError(t, err)
	rm.Reply("GET /ws/v1/cluster/apps/"+hostileID+"/appattempts", http.StatusOK, attempts.ContentType, attempts.Body)

	err, out, stderr := runApp(t, cmdutil.OutputTable, func(f *cmdutil.Factory) *cobra.Command { return NewCmdWait(f, nil) }, hostileID, "--rm", rm.URL())
	assert.Equal(t, cmdutil.ExitAppFailed, cmdutil.ExitCode(err), "%v", err)
	assert.Equal(t, hostileID+" FAILED/FAILED\n", out)
	cmdtest.AssertTerminalSafe(t, stderr)
	assert.Contains(t, stderr, " yarn-er: "+hostileID+` FAILED/FAILED — evil\x1b]0;pwned\a\x1b[2J\u202e …`+"\n")
}

// reported is what yarn-er prints on stderr for err, the command's error.
func reported(err error) string {
	f, _, errOut := cmdtest.Buffers(cmdutil.Env{})
	f.ReportError(NewCmdApp(f), nil, err)
	return errOut.String()
}

// TestErrorsEscapeWhatTheClusterSays: the error yarn-er prints before it exits is one line, with
// no terminal control, whether it quotes a RemoteException's message or the diagnostics of an
// application that failed.
func TestErrorsEscapeWhatTheClusterSays(t *testing.T) {
	h, err := json.Marshal("app " + cmdtest.Hostile + " not found")
	require.NoError(t, err)
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+hostileID, http.StatusNotFound,
		`{"RemoteException":{"exception":"NotFoundException","message":`+string(h)+`,"javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}`)
	err, out, _ := runApp(t, cmdutil.OutputTable, func(f *cmdutil.Factory) *cobra.Command { return NewCmdStatus(f, nil) }, hostileID, "--rm", rm.URL())
	require.Error(t, err)
	assert.Empty(t, out)
	msg := reported(err)
	cmdtest.AssertTerminalSafe(t, msg)
	assert.Contains(t, msg, `NotFoundException: app evil[REDACTED binary][2J\u202e\nyarn-er: application succeeded not found`)
	assert.Equal(t, 1, strings.Count(msg, "\n"), "one line: %q", msg)

	rm = yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+hostileID, http.StatusOK, hostileApp(t, "FAILED", "FAILED"))
	attempts, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "appattempts-true.json")
	require.NoError(t, err)
	rm.Reply("GET /ws/v1/cluster/apps/"+hostileID+"/appattempts", http.StatusOK, attempts.ContentType, attempts.Body)
	err, _, _ = runApp(t, cmdutil.OutputTable, func(f *cmdutil.Factory) *cobra.Command { return NewCmdWait(f, nil) }, hostileID, "--rm", rm.URL(), "--quiet")
	require.Equal(t, cmdutil.ExitAppFailed, cmdutil.ExitCode(err), "%v", err)
	msg = reported(err)
	cmdtest.AssertTerminalSafe(t, msg)
	assert.Equal(t, "yarn-er: application "+hostileID+` ended FAILED/FAILED: first line\r\nevil[REDACTED binary][2J\u202e\nyarn-er: application succeeded`+"\n", msg)
}
