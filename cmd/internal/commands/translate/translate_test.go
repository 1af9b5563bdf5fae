package translate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

func TestTranslateFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdTranslate,
		"--flink-conf", "conf/", "-D", "external-resources=gpu", "--dynamic", "a=b,c", "--hadoop-conf", "/h", "--flink-version", "1.x")
	assert.Equal(t, "conf/", got.Flink.Path)
	// -D is a string array: a comma stays inside the value, as in Flink's CLI.
	assert.Equal(t, []string{"external-resources=gpu", "a=b,c"}, got.Flink.Dynamic)
	assert.Equal(t, "/h", got.Hadoop.Dir)
	assert.Equal(t, "1.x", got.Flink.Version)
}

func TestTranslateRunRendersJSON(t *testing.T) {
	f, out, _ := cmdtest.Buffers(cmdutil.Env{})
	f.Output = cmdutil.OutputJSON
	opts := &Options{Base: cmdutil.Base{F: f}, Flink: cmdutil.FlinkFlags{Dynamic: []string{
		"external-resources=gpu", "external-resource.gpu.amount=2", "external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"taskmanager.memory.process.size=4g", "taskmanager.numberOfTaskSlots=2",
	}}}
	require.NoError(t, translateRun(opts))
	assert.Contains(t, out.String(), `"yarn.io/gpu": 2`)
	assert.Contains(t, out.String(), `"memory-mb": 4096`)
}

// A translation that fails still shows the load warnings, which the output would have held: here
// the one that says why the memory is not configured (the byte order mark hides the first key).
func TestTranslateFailureLogsTheWarnings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flink-conf.yaml")
	require.NoError(t, os.WriteFile(path, []byte("\uFEFFtaskmanager.memory.process.size: 4g\nexternal-resources: gpu\n"), 0o644))
	f, out, errOut := cmdtest.Buffers(cmdutil.Env{})
	require.NoError(t, f.SetupLogger())
	opts := &Options{Base: cmdutil.Base{F: f}, Flink: cmdutil.FlinkFlags{Path: path}}
	err := translateRun(opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "taskmanager.memory.process.size")
	assert.Empty(t, out.String())
	assert.Contains(t, errOut.String(), "byte order mark")
	assert.Contains(t, errOut.String(), path+":1")
}

// TestTableEscapesTheConfiguration: names and values from a configuration file others may write
// reach the terminal escaped, each on its line: a driver parameter, a key's warning.
func TestTableEscapesTheConfiguration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flink-conf.yaml")
	require.NoError(t, os.WriteFile(path, []byte("taskmanager.memory.process.size: 4g\n"+
		"external-resources: gpu\n"+
		"external-resource.gpu.amount: 1\n"+
		"external-resource.gpu.yarn.config-key: yarn.io/gpu\n"+
		"external-resource.gpu.param.discovery-script.args: evil\x1b]0;pwned\x07\x1b[2J\u202e "+cmdtest.HostileForgedLine+"\n"+
		"taskmanager.memory.\u202eprocess.size: 1g\n"), 0o644))
	f, out, errOut := cmdtest.Buffers(cmdutil.Env{})
	opts := &Options{Base: cmdutil.Base{F: f}, Flink: cmdutil.FlinkFlags{Path: path}}
	require.NoError(t, translateRun(opts), errOut.String())
	cmdtest.AssertTerminalSafe(t, out.String())
	assert.Contains(t, out.String(), `discovery-script.args=evil\x1b]0;pwned\a\x1b[2J\u202e `+cmdtest.HostileForgedLine)
	assert.Contains(t, out.String(), `taskmanager.memory.\u202eprocess.size`, "the warning about the key")
}

// With resource profiles on in the Hadoop configuration, translate names the smallest profile that
// holds the TaskManager container.
func TestTranslateNamesTheSmallestProfile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(`<configuration>
<property><name>yarn.resourcemanager.resource-profiles.enabled</name><value>true</value></property>
</configuration>`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "resource-types.xml"), []byte(`<configuration>
<property><name>yarn.resource-types</name><value>yarn.io/gpu</value></property></configuration>`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "resource-profiles.json"), []byte(`{
"default": {"memory-mb": 1024, "vcores": 1},
"gpu-small": {"memory-mb": 4096, "vcores": 2, "yarn.io/gpu": 2},
"gpu-large": {"memory-mb": 16384, "vcores": 8, "yarn.io/gpu": 4}}`), 0o644))
	for _, tc := range []struct {
		gpus, want string
	}{{"2", "Smallest resource profile that holds it: gpu-small <memory-mb:4096, vcores:2, yarn.io/gpu:2>"},
		{"3", "Smallest resource profile that holds it: gpu-large"},
		{"8", "No resource profile holds it"}} {
		f, out, _ := cmdtest.Buffers(cmdutil.Env{})
		opts := &Options{Base: cmdutil.Base{F: f}, Hadoop: cmdutil.HadoopFlags{Dir: dir}, Flink: cmdutil.FlinkFlags{Dynamic: []string{
			"external-resources=gpu", "external-resource.gpu.amount=" + tc.gpus, "external-resource.gpu.yarn.config-key=yarn.io/gpu",
			"taskmanager.memory.process.size=4g", "taskmanager.numberOfTaskSlots=2",
		}}}
		require.NoError(t, translateRun(opts))
		assert.Contains(t, out.String(), tc.want, tc.gpus)
	}
}
