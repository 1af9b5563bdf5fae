package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
)

func TestPreflightFlags(t *testing.T) {
	streams, _, _ := cmdutil.TestStreams()
	var got *Options
	cmd := NewCmdPreflight(cmdutil.New(streams, cmdutil.Env{}), func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--flink-conf", "conf/", "-D", "k=v", "--containers", "8", "--queue", "root.gpu", "--strict",
		"--rm", "http://rm:8088", "--hadoop-conf", "/h", "--rm-timeout", "3s", "--flink-version", "2.0.0"})
	require.NoError(t, cmd.Execute())
	require.NotNil(t, got)
	assert.Equal(t, "conf/", got.Flink.Path)
	assert.Equal(t, []string{"k=v"}, got.Flink.Dynamic)
	assert.Equal(t, 8, got.Containers)
	assert.Equal(t, "root.gpu", got.Queue)
	assert.True(t, got.Strict)
	assert.Equal(t, []string{"http://rm:8088"}, got.Conn.RM.Addrs)
	assert.Equal(t, "/h", got.Conn.Hadoop.Dir)
	assert.Equal(t, "3s", got.Conn.RM.Timeout.String())
	assert.Equal(t, "2.0.0", got.Flink.Version)
}

func TestPreflightRunRejectsNegativeContainers(t *testing.T) {
	streams, out, _ := cmdutil.TestStreams()
	err := preflightRun(&Options{Base: cmdutil.Base{F: cmdutil.New(streams, cmdutil.Env{})}, Containers: -1})
	assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))
	assert.Empty(t, out.String())
}
