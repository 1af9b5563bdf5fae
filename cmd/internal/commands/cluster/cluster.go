// Package cluster is `yarn-er cluster` and its subcommands info, nodes, queues and apps: what the
// ResourceManager's REST API says about the cluster.
package cluster

import (
	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

// NewCmdCluster returns `yarn-er cluster` with its subcommands.
func NewCmdCluster(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.NewGroupCommand("cluster", "Inspect a YARN cluster: ResourceManager, nodes and their GPUs/FPGAs, queues, applications",
		`Reads the ResourceManager's REST API (/ws/v1/cluster). The RM comes from --rm or from the Hadoop
configuration (--hadoop-conf, HADOOP_CONF_DIR): yarn.resourcemanager.webapp.address, its https
variant under yarn.http.policy=HTTPS_ONLY, or every RM of yarn.resourcemanager.ha.rm-ids, of which
the active one is used. Authentication is Hadoop's simple scheme (--user, HADOOP_USER_NAME, the OS
user) or Kerberos SPNEGO (--keytab/--principal or a kinit credential cache).`,
		NewCmdInfo(f, nil), NewCmdNodes(f, nil), NewCmdQueues(f, nil), NewCmdApps(f, nil))
}

// InfoOptions are `cluster info`'s flags: the connection flags only.
type InfoOptions = cmdutil.ConnOptions

// NewCmdInfo returns `yarn-er cluster info`; runF (nil: infoRun) runs it.
func NewCmdInfo(f *cmdutil.Factory, runF func(*InfoOptions) error) *cobra.Command {
	return cmdutil.NewConnCommand(f, "info", "The ResourceManager: address, HA state, versions, and the cluster's totals", runF, infoRun)
}

// QueuesOptions are `cluster queues`' flags: the connection flags only.
type QueuesOptions = cmdutil.ConnOptions

// NewCmdQueues returns `yarn-er cluster queues`; runF (nil: queuesRun) runs it.
func NewCmdQueues(f *cmdutil.Factory, runF func(*QueuesOptions) error) *cobra.Command {
	return cmdutil.NewConnCommand(f, "queues", "Scheduler queues: capacities and the largest container each allows, extended resources included", runF, queuesRun)
}
