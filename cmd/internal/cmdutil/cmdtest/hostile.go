package cmdtest

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// Hostile is a string any YARN user can put in front of an operator (as an application's name, tag,
// type or diagnostics, a queue, a node label): it sets the terminal's title, clears the screen,
// reverses the text after it, and starts a line that reads like yarn-er's own.
const Hostile = "evil\x1b]0;pwned\x07\x1b[2J\u202e\n" + HostileForgedLine

// HostileForgedLine is the line Hostile forges.
const HostileForgedLine = "yarn-er: application succeeded"

// HostileEscaped is Hostile as cmdutil.Printable shows it: on one line, every control visible.
const HostileEscaped = `evil\x1b]0;pwned\a\x1b[2J\u202e\n` + HostileForgedLine

// AssertTerminalSafe checks that out, what a command wrote for a terminal, holds no control
// character other than the newlines that end its lines (no ESC, BEL, CR, tab, C1 control) and no
// bidi control, and that none of its lines starts with the line Hostile forges (an indented line,
// as the continuation of a multi-line value under its label, does not read as yarn-er's own).
func AssertTerminalSafe(t testing.TB, out string) bool {
	t.Helper()
	ok := true
	for i, r := range out {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			ok = assert.Failf(t, "a control character reaches the terminal", "%U at byte %d of %q", r, i, out)
			break
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, HostileForgedLine) {
			ok = assert.Failf(t, "a forged line reaches the terminal", "%q in %q", line, out)
		}
	}
	return ok
}

// HostileClusterInfo is the captured /ws/v1/cluster/info of yarnfake's default Hadoop version with
// its HA state and Hadoop version set to Hostile.
func HostileClusterInfo(t testing.TB) []byte {
	t.Helper()
	c, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "info.json")
	require.NoError(t, err)
	var v map[string]map[string]any
	require.NoError(t, json.Unmarshal(c.Body, &v))
	v["clusterInfo"]["haState"] = Hostile
	v["clusterInfo"]["hadoopVersion"] = Hostile
	body, err := json.Marshal(v)
	require.NoError(t, err)
	return body
}
