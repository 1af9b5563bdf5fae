package cluster

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

func TestNodesFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdNodes, "--state", "RUNNING,LOST", "--resource", "yarn.io/gpu", "--rm", "http://rm1:8088,rm2:8088",
		"--rm-timeout", "5s", "--hadoop-conf", "/etc/hadoop/conf", "--user", "flink")
	assert.Equal(t, []string{"RUNNING", "LOST"}, got.States)
	assert.Equal(t, "yarn.io/gpu", got.Resource)
	assert.Equal(t, []string{"http://rm1:8088", "rm2:8088"}, got.Conn.RM.Addrs)
	assert.Equal(t, 5*time.Second, got.Conn.RM.Timeout)
	assert.Equal(t, "/etc/hadoop/conf", got.Conn.Hadoop.Dir)
	assert.Equal(t, "flink", got.Conn.RM.User)
	assert.NotNil(t, got.Ctx)
}

func TestNodesFlagDefaults(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdNodes)
	assert.Empty(t, got.States)
	assert.Empty(t, got.Resource)
	assert.Equal(t, 30*time.Second, got.Conn.RM.Timeout)
	assert.Equal(t, 60*time.Second, got.Conn.RM.Failover)
	assert.Equal(t, "auto", got.Conn.RM.Auth)
}

func TestAppsFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdApps, "--state", "RUNNING", "--state", "ACCEPTED", "--queue", "root.gpu", "--owner", "alice",
		"--type", "Apache Flink", "--limit", "20", "--auth", "kerberos", "--keytab", "/k", "--principal", "p@R")
	assert.Equal(t, []string{"RUNNING", "ACCEPTED"}, got.States)
	assert.Equal(t, "root.gpu", got.Queue)
	assert.Equal(t, "alice", got.Owner)
	assert.Equal(t, []string{"Apache Flink"}, got.Types)
	assert.Equal(t, 20, got.Limit)
	assert.Equal(t, "kerberos", got.Conn.RM.Auth)
	assert.Equal(t, "/k", got.Conn.RM.Kerberos.Keytab)
	assert.Equal(t, "p@R", got.Conn.RM.Kerberos.Principal)
}

func TestInfoAndQueuesFlags(t *testing.T) {
	info := cmdtest.Capture(t, NewCmdInfo, "--rm", "https://rm:8090", "--tls-ca", "/ca.pem", "--insecure-skip-tls-verify")
	assert.Equal(t, []string{"https://rm:8090"}, info.Conn.RM.Addrs)
	assert.Equal(t, "/ca.pem", info.Conn.RM.TLS.CAFile)
	assert.True(t, info.Conn.RM.TLS.InsecureSkipVerify)

	queues := cmdtest.Capture(t, NewCmdQueues, "--do-as", "bob", "--rm-failover-timeout", "0")
	assert.Equal(t, "bob", queues.Conn.RM.DoAs)
	assert.Zero(t, queues.Conn.RM.Failover)
}

func TestClusterSubcommandsTakeNoArguments(t *testing.T) {
	f := cmdtest.Factory()
	for _, cmd := range []*cobra.Command{
		NewCmdInfo(f, func(*InfoOptions) error { return nil }),
		NewCmdNodes(f, func(*NodesOptions) error { return nil }),
		NewCmdQueues(f, func(*QueuesOptions) error { return nil }),
		NewCmdApps(f, func(*AppsOptions) error { return nil }),
	} {
		assert.Error(t, cmdtest.Execute(cmd, "extra"), cmd.Name())
	}
}
