package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func nmAnswer(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "yarn", "testdata", "nm-resources", name))
	require.NoError(t, err)
	return string(b)
}

// TestFillGPUDevices: the GPUs a NodeManager's GPU plugin reports each running container holds
// (LinuxContainerExecutor) go to that container; a NodeManager without assignments, one that
// fails, and containers not running or without GPUs are left as they are; one question per node.
func TestFillGPUDevices(t *testing.T) {
	lce := yarnfake.NewNodeManager(t)
	lce.SetResource("yarn.io/gpu", nmAnswer(t, "lce-assigned.json"))
	dce := yarnfake.NewNodeManager(t)
	dce.SetResource("yarn.io/gpu", nmAnswer(t, "3.5.0-gpu-plugin.json"))
	broken := yarnfake.NewNodeManager(t)
	broken.SetResourceStatus("yarn.io/gpu", 500, `{"RemoteException":{"exception":"IOException","message":"boom"}}`)
	containers := []view.AppContainer{
		{ID: "container_1796117006310_0001_01_000001", State: "RUNNING", NodeHTTP: lce.Addr(), AM: true},
		{ID: "container_1796117006310_0001_01_000002", State: "RUNNING", NodeHTTP: lce.Addr(), GPUs: 1},
		{ID: "container_1796117006310_0001_01_000003", State: "RUNNING", NodeHTTP: lce.Addr(), GPUs: 1},
		{ID: "container_1796117006310_0001_01_000004", State: "COMPLETE", NodeHTTP: lce.Addr(), GPUs: 1},
		{ID: "container_1796117006310_0001_01_000005", State: "RUNNING", NodeHTTP: dce.Addr(), GPUs: 1},
		{ID: "container_1796117006310_0001_01_000006", State: "RUNNING", NodeHTTP: broken.Addr(), GPUs: 1},
	}
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{"http://127.0.0.1:1"}, User: "alice"})
	require.NoError(t, err)
	fillGPUDevices(context.Background(), yc, containers)
	assert.Nil(t, containers[0].GPUDevices)
	assert.Equal(t, []view.AssignedGPU{{Index: 1, MinorNumber: 1, UUID: "GPU-aaaa0000-0000-0000-0000-000000000001"}}, containers[1].GPUDevices)
	assert.Equal(t, []view.AssignedGPU{{Index: 3, MinorNumber: 3, UUID: "GPU-aaaa0000-0000-0000-0000-000000000003"}}, containers[2].GPUDevices)
	for _, i := range []int{3, 4, 5} {
		assert.Nil(t, containers[i].GPUDevices, containers[i].ID)
	}
	assert.Len(t, lce.Requests(), 1, "one question per NodeManager")
	assert.Len(t, dce.Requests(), 1)

	var buf bytes.Buffer
	require.NoError(t, writeGPUDevices(&buf, containers))
	assert.Equal(t, "\nGPUs held, as the NodeManagers report them:\n"+
		"  container_1796117006310_0001_01_000002  minor 1  GPU-aaaa0000-0000-0000-0000-000000000001\n"+
		"  container_1796117006310_0001_01_000003  minor 3  GPU-aaaa0000-0000-0000-0000-000000000003\n", buf.String())
	buf.Reset()
	require.NoError(t, writeGPUDevices(&buf, containers[3:]))
	assert.Empty(t, buf.String(), "nothing when no NodeManager reports")

	// Hostile ids from the cluster stay terminal-safe.
	buf.Reset()
	require.NoError(t, writeGPUDevices(&buf, []view.AppContainer{{ID: cmdtest.Hostile, GPUDevices: []view.AssignedGPU{{UUID: cmdtest.Hostile}}}}))
	cmdtest.AssertTerminalSafe(t, buf.String())
}
