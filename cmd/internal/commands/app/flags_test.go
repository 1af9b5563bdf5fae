package app

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

func TestListFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdList,
		"--all", "--state", "RUNNING,FINISHED", "--app-user", "alice", "--queue", "gpu", "--type", "YARN-ER",
		"--limit", "5", "--rm", "http://rm:8088", "--rm-timeout", "7s")
	assert.True(t, got.All)
	assert.Equal(t, []string{"RUNNING", "FINISHED"}, got.States)
	assert.Equal(t, "alice", got.User)
	assert.Equal(t, "gpu", got.Queue)
	assert.Equal(t, []string{"YARN-ER"}, got.Types)
	assert.Equal(t, 5, got.Limit)
	assert.Equal(t, []string{"http://rm:8088"}, got.Conn.RM.Addrs)
	assert.Equal(t, 7*time.Second, got.Conn.RM.Timeout)
}

func TestListRefusesBadFlagsBeforeAskingTheRM(t *testing.T) {
	for _, args := range [][]string{{"--limit", "-1"}, {"--state", "SLEEPING"}} {
		err := listRun(&ListOptions{Base: cmdutil.Base{F: cmdtest.Factory()}, Limit: -1, States: args[1:]})
		var usage *cmdutil.UsageError
		assert.ErrorAs(t, err, &usage, args)
	}
}

func TestIDCommandsFlags(t *testing.T) {
	for name, mk := range map[string]func(*cmdutil.Factory, func(*IDOptions) error) *cobra.Command{
		"status": NewCmdStatus, "kill": NewCmdKill,
	} {
		got := cmdtest.Capture(t, mk, "application_1_0007", "--user", "bob")
		assert.Equal(t, []string{"application_1_0007"}, got.Args, name)
		assert.Equal(t, "bob", got.Conn.RM.User, name)
	}
}

func TestWaitAndLogsFlags(t *testing.T) {
	w := cmdtest.Capture(t, NewCmdWait, "-q", "application_1_0007")
	assert.True(t, w.Quiet)
	assert.Equal(t, []string{"application_1_0007"}, w.Args)

	l := cmdtest.Capture(t, NewCmdLogs, "application_1_0007",
		"--container", "container_1_0007_01_000002", "--file", "stderr,gpu.log")
	assert.Equal(t, "container_1_0007_01_000002", l.Logs.Container)
	assert.Equal(t, []string{"stderr", "gpu.log"}, l.Logs.Files)

	l.Logs.Container = "container_x"
	err := logsRun(l)
	var usage *cmdutil.UsageError
	require.ErrorAs(t, err, &usage)
	assert.Contains(t, err.Error(), "--container", "a bad container id is refused before the RM is asked")
	assert.False(t, l.RankSet)
	assert.False(t, l.Logs.Follow)

	l = cmdtest.Capture(t, NewCmdLogs, "application_1_0007", "--rank", "0", "-f")
	assert.True(t, l.RankSet)
	assert.Equal(t, 0, l.Rank)
	assert.True(t, l.Logs.Follow)
	l.Rank = -1
	err = logsRun(l)
	require.ErrorAs(t, err, &usage)
	assert.Contains(t, err.Error(), "--rank -1")

	l = cmdtest.Capture(t, NewCmdLogs, "application_1_0007", "--role", "worker", "--rank", "1")
	assert.Equal(t, "worker", l.Logs.Role)
	assert.Equal(t, 1, l.Rank)
	l.Logs.Role = "not a role"
	err = logsRun(l)
	require.ErrorAs(t, err, &usage)
	assert.Contains(t, err.Error(), `--role "not a role"`)
}
