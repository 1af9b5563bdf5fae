package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

func TestPreflightFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdPreflight,
		"--flink-conf", "conf/", "-D", "k=v", "--containers", "8", "--queue", "root.gpu", "--strict",
		"--rm", "http://rm:8088", "--hadoop-conf", "/h", "--rm-timeout", "3s", "--flink-version", "2.0.0")
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
	f, out, _ := cmdtest.Buffers(cmdutil.Env{})
	err := preflightRun(&Options{Base: cmdutil.Base{F: f}, Containers: -1})
	assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))
	assert.Empty(t, out.String())
}
