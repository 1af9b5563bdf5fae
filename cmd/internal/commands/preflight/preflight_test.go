package preflight

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func TestPreflightTableColours(t *testing.T) {
	rep := &preflight.Report{OK: false, Checks: []preflight.Check{
		{ID: preflight.IDAmountInvalid, Status: preflight.StatusFail, Message: "bad", Fix: "fix it", Source: "f:1"},
		{ID: preflight.IDClusterReachable, Status: preflight.StatusSkip, Message: "no RM"},
	}}
	var b bytes.Buffer
	require.NoError(t, shared.WritePreflightTable(&b, rep, true))
	out := b.String()
	assert.Contains(t, out, "\x1b[31m✗\x1b[0m flink.amount-invalid")
	assert.Contains(t, out, "\x1b[2m-\x1b[0m cluster.reachable")
	assert.Contains(t, out, "fix: fix it")
	assert.Contains(t, out, "at:  f:1")
	b.Reset()
	require.NoError(t, shared.WritePreflightTable(&b, rep, false))
	assert.NotContains(t, b.String(), "\x1b[")
}

// TestPreflightTableExplainsTheIDs: ids such as flink.no-yarn-config-key name the problem a check
// looks for, so a passing line would read like a finding; the table says what ✓ in front of them
// means before the first check.
func TestPreflightTableExplainsTheIDs(t *testing.T) {
	rep := &preflight.Report{OK: true, Checks: []preflight.Check{
		{ID: preflight.IDNoYarnConfigKey, Status: preflight.StatusPass, Message: "requested on YARN: gpu → yarn.io/gpu"},
		{ID: preflight.IDClusterReachable, Status: preflight.StatusSkip, Message: "no RM"},
	}}
	var b bytes.Buffer
	require.NoError(t, shared.WritePreflightTable(&b, rep, false))
	lines := strings.Split(b.String(), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	legend := lines[0] + " " + lines[1]
	assert.Contains(t, legend, "✓ passed, ! warning, ✗ failed, - skipped")
	assert.Contains(t, legend, "names the problem the check looks for")
	assert.Contains(t, legend, "that problem was not found")
	assert.Equal(t, "", lines[2])
	assert.Equal(t, "Flink configuration", lines[3])
	assert.Contains(t, b.String(), "✓ flink.no-yarn-config-key  requested on YARN", "the ids stay")
}

// TestTableEscapesWhatTheClusterSays: a preflight against an RM whose answers hold terminal
// controls (here its HA state and Hadoop version) prints them escaped, each check on its line;
// with colour, the table's own ANSI colours are the only escape sequences.
func TestTableEscapesWhatTheClusterSays(t *testing.T) {
	body := cmdtest.HostileClusterInfo(t)
	rm := yarnfake.New(t)
	rm.Reply("GET /ws/v1/cluster/info", http.StatusOK, "application/json", body)

	f, out, errOut := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"HADOOP_USER_NAME": "yarner"}))
	err := cmdtest.Execute(NewCmdPreflight(f, nil), "--rm", rm.URL(), "--flink-conf", t.TempDir(),
		"-D", "taskmanager.memory.process.size=1g", "-D", "external-resources=gpu", "-D", "external-resource.gpu.amount=1",
		"-D", "external-resource.gpu.yarn.config-key=yarn.io/gpu")
	require.Contains(t, []int{cmdutil.ExitOK, cmdutil.ExitFindings}, cmdutil.ExitCode(err), "%v\n%s", err, errOut.String())
	cmdtest.AssertTerminalSafe(t, out.String())
	assert.Contains(t, out.String(), "HA state "+cmdtest.HostileEscaped+")", "cluster.reachable quotes the HA state")

	rep := &preflight.Report{OK: false, Checks: []preflight.Check{
		{ID: preflight.IDClusterReachable, Status: preflight.StatusFail, Message: cmdtest.Hostile, Fix: cmdtest.Hostile, Source: cmdtest.Hostile},
	}}
	var b bytes.Buffer
	require.NoError(t, shared.WritePreflightTable(&b, rep, true))
	assert.Equal(t, 3, strings.Count(b.String(), cmdtest.HostileEscaped), b.String())
	assert.NotContains(t, strings.NewReplacer("\x1b[31m", "", "\x1b[2m", "", "\x1b[1m", "", "\x1b[0m", "").Replace(b.String()), "\x1b",
		"no escape sequence but the table's own colours")
}
