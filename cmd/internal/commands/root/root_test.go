package root

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

// TestGlobalFlagsReachTheFactory: -o, -v, --log-level, --log-format and --config land in the
// Factory, and every command is registered.
func TestGlobalFlagsReachTheFactory(t *testing.T) {
	f, out, _ := cmdtest.Buffers(cmdutil.Env{})
	cmd := NewCmdRoot(f)
	cmdtest.Parse(t, cmd, "version", "-o", "yaml", "-v", "--log-level", "error", "--log-format", "json")
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
	f, out, _ := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"YARN_ER_OUTPUT": "json"}))
	cmdtest.Parse(t, NewCmdRoot(f), "version")
	assert.Equal(t, cmdutil.OutputJSON, f.Output)
	assert.Contains(t, out.String(), `"goVersion": "go`)
}

// TestSettingsFileLocations: the settings file is --config, else $YARN_ER_CONFIG, else
// $XDG_CONFIG_HOME/yarn-er/config.yaml, else ~/.config/yarn-er/config.yaml; a missing default
// file is no error, a missing named one is a usage error.
func TestSettingsFileLocations(t *testing.T) {
	write := func(t *testing.T, path, body string) string {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		return path
	}
	dir := t.TempDir()
	jsonFile := write(t, filepath.Join(dir, "named", "json.yaml"), "output: json\n")
	yamlFile := write(t, filepath.Join(dir, "named", "yaml.yaml"), "output: yaml\n")
	xdg := filepath.Join(dir, "xdg")
	write(t, filepath.Join(xdg, "yarn-er", "config.yaml"), "output: yaml\n")
	home := filepath.Join(dir, "home")
	write(t, filepath.Join(home, ".config", "yarn-er", "config.yaml"), "output: json\n")

	cases := []struct {
		name  string
		env   map[string]string
		args  []string
		want  string
		usage bool
	}{
		{name: "YARN_ER_CONFIG", env: map[string]string{"YARN_ER_CONFIG": jsonFile}, want: cmdutil.OutputJSON},
		{name: "--config beats YARN_ER_CONFIG", env: map[string]string{"YARN_ER_CONFIG": jsonFile}, args: []string{"--config", yamlFile}, want: cmdutil.OutputYAML},
		{name: "YARN_ER_CONFIG beats the default file", env: map[string]string{"YARN_ER_CONFIG": jsonFile, "XDG_CONFIG_HOME": xdg}, want: cmdutil.OutputJSON},
		{name: "XDG_CONFIG_HOME default", env: map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": home}, want: cmdutil.OutputYAML},
		{name: "HOME fallback", env: map[string]string{"HOME": home}, want: cmdutil.OutputJSON},
		{name: "relative XDG_CONFIG_HOME is ignored", env: map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": home}, want: cmdutil.OutputJSON},
		{name: "no default file", env: map[string]string{"HOME": filepath.Join(dir, "nobody")}, want: cmdutil.OutputTable},
		{name: "environment beats the file", env: map[string]string{"YARN_ER_CONFIG": jsonFile, "YARN_ER_OUTPUT": "yaml"}, want: cmdutil.OutputYAML},
		{name: "missing YARN_ER_CONFIG file", env: map[string]string{"YARN_ER_CONFIG": filepath.Join(dir, "none.yaml")}, usage: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := cmdtest.Buffers(cmdutil.EnvFromMap(tc.env))
			err := cmdtest.Execute(NewCmdRoot(f), append([]string{"version"}, tc.args...)...)
			if tc.usage {
				require.Error(t, err)
				assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))
				assert.Contains(t, err.Error(), "YARN_ER_CONFIG")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, f.Output)
		})
	}
}

// TestSettingsFileUnknownKeyWarns: a key that is no flag's name is a warning naming the key and
// the file; keys of other commands' flags are known.
func TestSettingsFileUnknownKeyWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("output: json\nhadoop-conf: /etc/hadoop\ncontainers: 4\nhadop-conf: /typo\n"), 0o600))
	f, out, errOut := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"YARN_ER_CONFIG": path}))
	cmdtest.Parse(t, NewCmdRoot(f), "version")
	assert.Contains(t, out.String(), `"goVersion"`)
	assert.Contains(t, errOut.String(), "key=hadop-conf")
	assert.Contains(t, errOut.String(), path)
	assert.NotContains(t, errOut.String(), "key=hadoop-conf")
	assert.NotContains(t, errOut.String(), "key=containers")
	assert.NotContains(t, errOut.String(), "key=output")
}
