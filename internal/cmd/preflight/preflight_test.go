package preflight

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/preflight"
)

func TestValidateDiscoverArgs(t *testing.T) {
	for _, ok := range [][]string{
		nil, {"null"}, {"--enable-coordination-mode"}, {"--enable-coordination-mode", "--coordination-file", "/var/tmp/x"},
		{"--coordination-file=/x", "--vendor", "nvidia", "-v"}, {"--format", "json", "--log-level", "debug"},
	} {
		assert.NoError(t, validateDiscoverArgs(ok), "%q", ok)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--enable-coordination"}, "did you mean --enable-coordination-mode"},
		{[]string{"--bogus"}, "unknown flag"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--coordination-file"}, "needs an argument"},
		{[]string{"--release"}, "--release"},
		{[]string{"--help"}, "help"},
	} {
		err := validateDiscoverArgs(tc.args)
		require.Error(t, err, "%q", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
}

func TestPreflightTableColours(t *testing.T) {
	rep := &preflight.Report{OK: false, Checks: []preflight.Check{
		{ID: preflight.IDAmountInvalid, Status: preflight.StatusFail, Message: "bad", Fix: "fix it", Source: "f:1"},
		{ID: preflight.IDClusterReachable, Status: preflight.StatusSkip, Message: "no RM"},
	}}
	var b bytes.Buffer
	require.NoError(t, writePreflightTable(&b, rep, true))
	out := b.String()
	assert.Contains(t, out, "\x1b[31m✗\x1b[0m flink.amount-invalid")
	assert.Contains(t, out, "\x1b[2m-\x1b[0m cluster.reachable")
	assert.Contains(t, out, "fix: fix it")
	assert.Contains(t, out, "at:  f:1")
	b.Reset()
	require.NoError(t, writePreflightTable(&b, rep, false))
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
	require.NoError(t, writePreflightTable(&b, rep, false))
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
