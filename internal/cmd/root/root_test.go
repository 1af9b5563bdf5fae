package root

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
)

// TestGlobalFlagsReachTheFactory: -o, -v, --log-level, --log-format and --config land in the
// Factory, and every command is registered.
func TestGlobalFlagsReachTheFactory(t *testing.T) {
	streams, out, _ := cmdutil.TestStreams()
	f := cmdutil.New(streams, cmdutil.Env{})
	cmd := NewCmdRoot(f)
	cmd.SetArgs([]string{"version", "-o", "yaml", "-v", "--log-level", "error", "--log-format", "json"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, cmdutil.OutputYAML, f.Output)
	assert.True(t, f.Verbose)
	assert.Equal(t, "error", f.LogLevel)
	assert.Equal(t, "json", f.LogFormat)
	assert.Contains(t, out.String(), "goVersion: go")

	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	for _, want := range []string{"translate", "preflight", "cluster", "discover", "exec", "version", "exit-codes"} {
		assert.Contains(t, names, want)
	}
}

// TestSettingsFromTheInjectedEnvironment: YARN_ER_<FLAG> comes from the Factory's environment.
func TestSettingsFromTheInjectedEnvironment(t *testing.T) {
	streams, out, _ := cmdutil.TestStreams()
	f := cmdutil.New(streams, cmdutil.EnvFromMap(map[string]string{"YARN_ER_OUTPUT": "json"}))
	cmd := NewCmdRoot(f)
	cmd.SetArgs([]string{"version"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, cmdutil.OutputJSON, f.Output)
	assert.Contains(t, out.String(), `"goVersion": "go`)
}
