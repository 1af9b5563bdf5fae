//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envGPUPluginState names a running mini-YARN started with --gpu-plugin, to reuse.
const envGPUPluginState = "YARN_ER_MINIYARN_GPU_PLUGIN_STATE"

// gpuPluginMiniYARN is docker/conf's cluster started with --gpu-plugin: the NodeManagers discover
// their GPUs through YARN's GPU plugin (a fake nvidia-smi), not a configured count. NodeManager 0
// also isolates its containers' GPUs (--isolate-node 0), for TestGPUPluginDoctor.
var gpuPluginMiniYARN = &lazyCluster{what: "GPU plugin", env: envGPUPluginState, conf: "conf",
	state: "mini-yarn-gpu-plugin", flags: []string{"--gpu-plugin", "--isolate-node", "0"}}

// TestGPUPluginMode: with --gpu-plugin both NodeManagers advertise their 4 yarn.io/gpu through the
// plugin (the configured count is gone from their configuration), yarn-er reads the plugin's
// devices from each NodeManager's resource endpoint (Hadoop 3.5: the NodeManagers' web servers
// run), which reports no assignments under DefaultContainerExecutor, and a GPU submit still runs.
func TestGPUPluginMode(t *testing.T) {
	parallelOn(t, &gpuPluginMiniYARN.guard)
	ep := gpuPluginMiniYARN.endpoints(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	nodes := runCLI(t, ctx, ep, "cluster", "nodes", "-o", "json")
	require.Equal(t, 0, nodes.code, nodes.stderr)
	var nv struct {
		Nodes []struct {
			ID    string           `json:"id"`
			Total map[string]int64 `json:"total"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(nodes.stdout), &nv), nodes.stdout)
	require.Len(t, nv.Nodes, 2)
	for _, n := range nv.Nodes {
		assert.Equal(t, int64(4), n.Total["yarn.io/gpu"], "node %s: the plugin's 4 GPUs", n.ID)
	}
	// Through the plugin: the NodeManagers' own configuration has no count (docker/mini-yarn
	// writes theirs without it), and the plugin's discovery ran.
	nr, err := os.ReadFile(filepath.Join(ep.StateDir, "daemon-conf", "node-resources.xml"))
	require.NoError(t, err)
	assert.NotContains(t, string(nr), "yarn.nodemanager.resource-type.yarn.io/gpu")
	log, err := os.ReadFile(ep.ClusterLog)
	require.NoError(t, err)
	assert.Contains(t, string(log), "GpuDiscoverer: Discovered GPU information")

	if ep.HadoopAtLeast(3, 5) {
		for _, nm := range ep.NodeManagers {
			nd, err := yarnClient(t, ep).NodeResource(ctx, nm.HTTPAddress, "yarn.io/gpu")
			require.NoError(t, err, nm.ID)
			assert.True(t, nd.Plugin, nm.ID)
			assert.False(t, nd.Assignments, "%s: DefaultContainerExecutor assigns no GPUs", nm.ID)
			assert.NotEmpty(t, nd.NoAssignments, nm.ID)
			// Some of the in-JVM NodeManagers answer the device list, some 503 (no LCE handler).
			if len(nd.Devices) > 0 {
				assert.Len(t, nd.Devices, 4, nm.ID)
			}
		}
	} else {
		t.Logf("Hadoop %s: the NodeManagers' web servers are off in the mini-YARN (docker/README.md); their resource endpoint is not read", ep.HadoopVersion)
	}

	share := t.TempDir()
	r := runCLI(t, ctx, ep, append(append([]string{"submit", "--containers", "4", "--gpus", "1", "--memory", "128m", "-o", "json"},
		shareEnv(share)...), "--", "sh", "-c", `test -n "$CUDA_VISIBLE_DEVICES"`)...)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
}
