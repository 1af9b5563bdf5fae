//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envHDFSHAState names a running mini-YARN started with --hdfs-ha from docker/conf, to reuse.
const envHDFSHAState = "YARN_ER_MINIYARN_HDFS_HA_STATE"

// hdfsHAMiniYARN is docker/conf's cluster whose HDFS is an HA nameservice (start --hdfs-ha):
// fs.defaultFS is hdfs://mini-ns, the first NameNode of dfs.ha.namenodes a standby.
var hdfsHAMiniYARN = &lazyCluster{what: "HA HDFS", env: envHDFSHAState, conf: "conf", state: "mini-yarn-hdfs-ha",
	flags: []string{"--hdfs-ha"}}

// TestHDFSNameservice: on an HDFS that is an HA nameservice whose first NameNode is a standby, a
// job is staged on hdfs://<nameservice>/..., its ApplicationMaster (which has no Hadoop
// configuration: the job spec lists the NameNodes) records its ranks there, so that a second
// attempt after `kill-am` adopts them all, and removes the staging directory at the end.
func TestHDFSNameservice(t *testing.T) {
	parallelOn(t, &hdfsHAMiniYARN.guard)
	ep := hdfsHAMiniYARN.endpoints(t)
	require.Equal(t, "mini-ns", ep.HDFSNameservice)
	require.Equal(t, "hdfs://mini-ns", ep.HDFSURI)
	require.NotEmpty(t, ep.HDFSStandbyNameNode)
	hdfsSite, err := os.ReadFile(filepath.Join(ep.HadoopConfDir, "hdfs-site.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(hdfsSite), ep.HDFSStandbyNameNode, "the client configuration lists the standby NameNode")

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	// Attempt 2 adopts the ranks through the ranks record on the nameservice's active NameNode,
	// past the standby.
	appID, _, res := killAMUnderJob(t, ctx, ep)
	assert.Equal(t, "hdfs://mini-ns/user/"+ep.User+"/.yarn-er/"+appID, res["stagingDir"])
	hc := hdfsClient(t, ep)
	dir := "/user/" + ep.User + "/.yarn-er/" + appID
	require.Eventually(t, func() bool {
		_, err := hc.Stat(dir)
		return os.IsNotExist(err)
	}, time.Minute, 500*time.Millisecond, "the AM removed the staging directory %s", dir)
	if strings.HasPrefix(ep.HadoopVersion, "3.5.") {
		// The AM's log, from the NodeManagers' web services (Hadoop 3.5's mini-YARN only).
		logs := runCLI(t, ctx, ep, "app", "logs", appID)
		require.Equal(t, 0, logs.code, logs.stderr)
		assert.NotContains(t, logs.stdout, "ranks record not written")
		assert.Contains(t, logs.stdout, "am: staging directory removed")
	}
}
