package discovery_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

// migHost is an H200 host with GPU 0 whole and GPU 1 in MIG mode with two 1g.18gb slices and
// one 3g.71gb slice (H200's profiles), as the driver and nvidia-smi show them.
func migHost(t *testing.T) (root, path string) {
	t.Helper()
	tree := discoverytest.New(t)
	bin := tree.NVIDIAMIGHost(filepath.Join(t.TempDir(), "bin"), nil,
		[]discoverytest.MIGSlice{{Profile: "1g.18gb", GI: 9, CI: 0}, {Profile: "1g.18gb", GI: 10, CI: 0}, {Profile: "3g.71gb", GI: 2, CI: 0}})
	return tree.Root, bin
}

func discoverKind(t *testing.T, root, path string, kind discovery.Kind, profile string) (*discovery.Result, error) {
	t.Helper()
	return discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root: discovery.NewRoot(root), Getenv: env(map[string]string{"PATH": path}), Kind: kind, MIGProfile: profile,
	})
}

func skippedIDs(res *discovery.Result) []string {
	var out []string
	for _, s := range res.Skipped {
		out = append(out, s.ID)
	}
	return out
}

// TestMIGSlicesOfAProfile: a MIG resource type gets the slices of its profile only, with their
// MIG- UUIDs, profiles and parents; procfs cannot name slices, so nvidia-smi -L does.
func TestMIGSlicesOfAProfile(t *testing.T) {
	root, path := migHost(t)
	res, err := discoverKind(t, root, path, discovery.KindMIG, "1g.18gb")
	require.NoError(t, err)
	assert.Equal(t, "nvidia-smi", res.Backend)
	assert.Equal(t, []string{discoverytest.NVIDIAMIGUUID(1, 0), discoverytest.NVIDIAMIGUUID(1, 1)}, ids(res.Devices))
	for _, d := range res.Devices {
		assert.Equal(t, discovery.KindMIG, d.Kind)
		assert.Equal(t, discoverytest.NVIDIAUUID(1), d.Parent)
		require.NotNil(t, d.MIG)
		assert.Equal(t, "1g.18gb", d.MIG.Profile)
		assert.Equal(t, d.ID, d.Key, "slices are coordinated by their own UUID")
	}
	assert.ElementsMatch(t, []string{discoverytest.NVIDIAUUID(0), discoverytest.NVIDIAMIGUUID(1, 2)}, skippedIDs(res))

	res, err = discoverKind(t, root, path, discovery.KindMIG, "")
	require.NoError(t, err)
	assert.Len(t, res.Devices, 3, "a MIG kind without a profile takes any slice")

	res, err = discoverKind(t, root, path, discovery.KindMIG, "7g.141gb")
	require.ErrorIs(t, err, discovery.ErrNoDevices)
	assert.Contains(t, res.Skipped[len(res.Skipped)-1].Reason, "a MIG 3g.71gb slice, not 7g.141gb")
}

// TestGPUKindOnMIGHosts: gpu takes the whole GPUs of a host that has some, never a slice (whose
// resource type is its own); on a host of slices only (offered as yarn.io/gpu), the slices.
func TestGPUKindOnMIGHosts(t *testing.T) {
	root, path := migHost(t)
	res, err := discoverKind(t, root, path, discovery.KindGPU, "")
	require.NoError(t, err)
	assert.Equal(t, []string{discoverytest.NVIDIAUUID(0)}, ids(res.Devices))
	require.Len(t, res.Skipped, 3)
	assert.Contains(t, res.Skipped[0].Reason, "ask for its MIG resource type (nvidia.com/mig-1g.18gb)")

	tree := discoverytest.New(t)
	bin := tree.NVIDIAMIGHost(filepath.Join(t.TempDir(), "bin"), []discoverytest.MIGSlice{{Profile: "1g.18gb", GI: 9}, {Profile: "1g.18gb", GI: 10}})
	res, err = discoverKind(t, tree.Root, bin, discovery.KindGPU, "")
	require.NoError(t, err)
	assert.Equal(t, []string{discoverytest.NVIDIAMIGUUID(0, 0), discoverytest.NVIDIAMIGUUID(0, 1)}, ids(res.Devices))

	res, err = discoverKind(t, root, path, "", "")
	require.NoError(t, err)
	assert.Len(t, res.Devices, 4, "no kind: everything, as before")
}

// TestMIGSliceNeverToTwo: exec's coordination hands each slice to one holder: two holders of one
// slice get the two 1g.18gb slices, a third finds none free.
func TestMIGSliceNeverToTwo(t *testing.T) {
	root, path := migHost(t)
	res, err := discoverKind(t, root, path, discovery.KindMIG, "1g.18gb")
	require.NoError(t, err)
	f := newCoordFixture(t)
	c := f.coordinator()
	ctx := context.Background()
	h1, err := c.Hold(ctx, res.Devices, 1)
	require.NoError(t, err)
	h2, err := f.coordinator().Hold(ctx, res.Devices, 1)
	require.NoError(t, err)
	assert.NotEqual(t, h1.Devices[0].ID, h2.Devices[0].ID)
	assert.ElementsMatch(t, ids(res.Devices), []string{h1.Devices[0].ID, h2.Devices[0].ID})
	_, err = f.coordinator().Hold(ctx, res.Devices, 1)
	require.ErrorIs(t, err, discovery.ErrInsufficientDevices)
	require.NoError(t, h1.Close())
	h3, err := c.Hold(ctx, res.Devices, 1)
	require.NoError(t, err)
	assert.Equal(t, h1.Devices[0].ID, h3.Devices[0].ID, "a slice is free again once its holder is gone")
	require.NoError(t, h2.Close())
	require.NoError(t, h3.Close())
}

func TestMIGNames(t *testing.T) {
	for name, want := range map[string]string{
		"nvidia.com/mig-1g.10gb": "1g.10gb", "mig-3g.40gb": "3g.40gb", "yarn.io/MIG-1G.10GB": "1g.10gb",
		"gpu": "", "nvidia.com/gpu": "", "mig-": "", "migration": "",
	} {
		assert.Equal(t, want, discovery.MIGProfileOfName(name), name)
	}
	assert.Equal(t, discovery.KindMIG, discovery.KindOfName("nvidia.com/mig-1g.10gb"))
	assert.Equal(t, discovery.KindGPU, discovery.KindOfName("GPU"))
	assert.Equal(t, discovery.Kind(""), discovery.KindOfName("nvidia.com/gpu"))
}
