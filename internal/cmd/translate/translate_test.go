package translate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
)

func TestTranslateFlags(t *testing.T) {
	streams, _, _ := cmdutil.TestStreams()
	var got *Options
	cmd := NewCmdTranslate(cmdutil.New(streams, cmdutil.Env{}), func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--flink-conf", "conf/", "-D", "external-resources=gpu", "--dynamic", "a=b,c", "--hadoop-conf", "/h", "--flink-version", "1.x"})
	require.NoError(t, cmd.Execute())
	require.NotNil(t, got)
	assert.Equal(t, "conf/", got.Flink.Path)
	// -D is a string array: a comma stays inside the value, as in Flink's CLI.
	assert.Equal(t, []string{"external-resources=gpu", "a=b,c"}, got.Flink.Dynamic)
	assert.Equal(t, "/h", got.Hadoop.Dir)
	assert.Equal(t, "1.x", got.Flink.Version)
}

func TestTranslateRunRendersJSON(t *testing.T) {
	streams, out, _ := cmdutil.TestStreams()
	f := cmdutil.New(streams, cmdutil.Env{})
	f.Output = cmdutil.OutputJSON
	opts := &Options{Base: cmdutil.Base{F: f}, Flink: cmdutil.FlinkFlags{Dynamic: []string{
		"external-resources=gpu", "external-resource.gpu.amount=2", "external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"taskmanager.memory.process.size=4g", "taskmanager.numberOfTaskSlots=2",
	}}}
	require.NoError(t, translateRun(opts))
	assert.Contains(t, out.String(), `"yarn.io/gpu": 2`)
	assert.Contains(t, out.String(), `"memory-mb": 4096`)
}
