package yarn

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func readNMResource(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "nm-resources", name))
	require.NoError(t, err)
	return string(b)
}

func TestNodeResource(t *testing.T) {
	for _, tc := range []struct {
		file        string
		plugin      bool
		devices     int
		assignments bool
		held        map[string][]int64 // container → minor numbers
	}{
		{"3.5.0-gpu-plugin.json", true, 4, false, nil},
		{"3.5.0-no-plugin.json", false, 0, false, nil},
		{"lce-assigned.json", true, 4, true, map[string][]int64{
			"container_1796117006310_0001_01_000002": {1}, "container_1796117006310_0001_01_000003": {3}, "container_1796117006310_0001_01_000004": nil}},
		{"jersey1-single.json", true, 1, true, map[string][]int64{"container_1796117006310_0002_01_000002": {0}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			nm := yarnfake.NewNodeManager(t)
			nm.SetResource("yarn.io/gpu", readNMResource(t, tc.file))
			nd, err := testClient(t, Options{}, "http://127.0.0.1:1").NodeResource(context.Background(), nm.Addr(), "yarn.io/gpu")
			require.NoError(t, err)
			assert.Equal(t, "yarn.io/gpu", nd.Resource)
			assert.Equal(t, tc.plugin, nd.Plugin)
			assert.Len(t, nd.Devices, tc.devices)
			assert.Equal(t, tc.assignments, nd.Assignments)
			for i, d := range nd.Devices {
				assert.Equal(t, i, d.Index)
				assert.Equal(t, int64(i), d.MinorNumber)
				assert.NotEmpty(t, d.UUID)
			}
			for c, minors := range tc.held {
				var got []int64
				for _, a := range nd.HeldBy(c) {
					got = append(got, a.MinorNumber)
				}
				assert.Equal(t, minors, got, c)
			}
			reqs := nm.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, "/ws/v1/node/resources/yarn.io/gpu", reqs[0].Path)
			assert.Equal(t, "yarner", reqs[0].Query.Get("user.name"))
		})
	}
	// The GPU plugin without LinuxContainerExecutor's handler may answer 503 instead (one of the
	// mini-YARN's NodeManagers does): a plugin without assignments, not an error.
	nm503 := yarnfake.NewNodeManager(t)
	body := readNMResource(t, "3.5.0-gpu-plugin-no-lce-503.json")
	nm503.SetResourceStatus("yarn.io/gpu", 503, body)
	nd503, err := testClient(t, Options{}, "http://127.0.0.1:1").NodeResource(context.Background(), nm503.Addr(), "yarn.io/gpu")
	require.NoError(t, err)
	assert.True(t, nd503.Plugin)
	assert.False(t, nd503.Assignments)
	assert.Contains(t, nd503.NoAssignments, "Linux Container Executor is not configured")
	nm503.SetResourceStatus("yarn.io/gpu", 500, `{"RemoteException":{"exception":"IOException","message":"disk"}}`)
	_, err = testClient(t, Options{}, "http://127.0.0.1:1").NodeResource(context.Background(), nm503.Addr(), "yarn.io/gpu")
	assert.ErrorContains(t, err, "disk")

	// The NodeManager's answer for a resource no plugin serves.
	nm := yarnfake.NewNodeManager(t)
	nd, err := testClient(t, Options{}, "http://127.0.0.1:1").NodeResource(context.Background(), nm.Addr(), "yarn.io/fpga")
	require.NoError(t, err)
	assert.False(t, nd.Plugin)
}

func TestNodeResourceErrors(t *testing.T) {
	c := testClient(t, Options{}, "http://127.0.0.1:1")
	_, err := c.NodeResource(context.Background(), "", "yarn.io/gpu")
	assert.ErrorContains(t, err, "want a NodeManager address")
	nm := yarnfake.NewNodeManager(t)
	nm.SetResource("yarn.io/gpu", `{"gpuDeviceInformation": [}`)
	_, err = c.NodeResource(context.Background(), nm.Addr(), "yarn.io/gpu")
	assert.ErrorIs(t, err, ErrUnexpectedResponse)
}

func FuzzDecodeNodeResource(f *testing.F) {
	for _, name := range []string{"3.5.0-gpu-plugin.json", "3.5.0-no-plugin.json", "lce-assigned.json", "jersey1-single.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "nm-resources", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		nd, err := decodeNodeResource(b, "yarn.io/gpu")
		if err != nil {
			return
		}
		for i, d := range nd.Devices {
			if d.Index != i {
				t.Fatalf("device %d has index %d", i, d.Index)
			}
		}
		_ = nd.HeldBy("container_1_0001_01_000001")
	})
}
