package discovery_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

func TestParseVisibleDevices(t *testing.T) {
	idx := func(i int) discovery.VisibleEntry { return discovery.VisibleEntry{Index: i, MIG: -1} }
	id := func(s string) discovery.VisibleEntry { return discovery.VisibleEntry{Index: -1, MIG: -1, ID: s} }
	cases := []struct {
		in   string
		want discovery.VisibleList
	}{
		{"", discovery.VisibleList{All: true}},
		{"all", discovery.VisibleList{All: true}},
		{" ALL ", discovery.VisibleList{All: true}},
		{"none", discovery.VisibleList{}},
		{"void", discovery.VisibleList{}},
		{"0,1", discovery.VisibleList{Entries: []discovery.VisibleEntry{idx(0), idx(1)}}},
		{"2, 0", discovery.VisibleList{Entries: []discovery.VisibleEntry{idx(2), idx(0)}}},
		{"1,1,0", discovery.VisibleList{Entries: []discovery.VisibleEntry{idx(1), idx(0)}}},
		{"GPU-5c89852c,3", discovery.VisibleList{Entries: []discovery.VisibleEntry{id("GPU-5c89852c"), idx(3)}}},
		{"MIG-GPU-5c89852c-d268/1/0", discovery.VisibleList{Entries: []discovery.VisibleEntry{id("MIG-GPU-5c89852c-d268/1/0")}}},
		{"0:1", discovery.VisibleList{Entries: []discovery.VisibleEntry{{Index: 0, MIG: 1}}}},
		{"-1", discovery.VisibleList{Truncated: true, Stopped: "-1"}},
		{"0,foo,1", discovery.VisibleList{Entries: []discovery.VisibleEntry{idx(0)}, Truncated: true, Stopped: "foo"}},
		{"0,,1", discovery.VisibleList{Entries: []discovery.VisibleEntry{idx(0)}, Truncated: true, Stopped: ""}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, discovery.ParseVisibleDevices(tc.in))
		})
	}
}

func discoverNVIDIA(t *testing.T, vars map[string]string) (*discovery.Result, error) {
	t.Helper()
	tree := discoverytest.New(t)
	tree.NVIDIAHost(4)
	return discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root: discovery.NewRoot(tree.Root), Getenv: env(vars),
	})
}

func TestCUDAVisibleDevices(t *testing.T) {
	u := discoverytest.NVIDIAUUID
	cases := []struct {
		name      string
		vars      map[string]string
		wantIDs   []string
		wantWarn  string
		noDevices bool
	}{
		{"unset", nil, []string{u(0), u(1), u(2), u(3)}, "", false},
		{"order given", map[string]string{"CUDA_VISIBLE_DEVICES": "2,0"}, []string{u(2), u(0)}, "", false},
		{"uuid and prefix", map[string]string{"CUDA_VISIBLE_DEVICES": u(3) + ",GPU-00000000-0000-0000-0000-00000000000"}, []string{u(3)},
			"names no visible device", false}, // the prefix matches GPUs 0..3: ambiguous
		{"unique prefix", map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-00000000-0000-0000-0000-000000000001"}, []string{u(1)}, "", false},
		{"stops at bad entry", map[string]string{"CUDA_VISIBLE_DEVICES": "1,x,2"}, []string{u(1)}, "\"x\"", false},
		{"stops at missing index", map[string]string{"CUDA_VISIBLE_DEVICES": "3,7,0"}, []string{u(3)}, "entry 7", false},
		{"minus one hides all", map[string]string{"CUDA_VISIBLE_DEVICES": "-1"}, nil, "", true},
		{"nvidia host indices keep host order", map[string]string{"NVIDIA_VISIBLE_DEVICES": "3,1"}, []string{u(1), u(3)}, "", false},
		{"nvidia uuid", map[string]string{"NVIDIA_VISIBLE_DEVICES": u(2)}, []string{u(2)}, "", false},
		{"nvidia none", map[string]string{"NVIDIA_VISIBLE_DEVICES": "none"}, nil, "", true},
		{"nvidia all", map[string]string{"NVIDIA_VISIBLE_DEVICES": "all"}, []string{u(0), u(1), u(2), u(3)}, "", false},
		{"nvidia already applied by the container runtime", map[string]string{"NVIDIA_VISIBLE_DEVICES": "5,6"},
			[]string{u(0), u(1), u(2), u(3)}, "already applied", false},
		{"both: CUDA indices count what NVIDIA_VISIBLE_DEVICES left", map[string]string{"NVIDIA_VISIBLE_DEVICES": "1,2,3", "CUDA_VISIBLE_DEVICES": "0"},
			[]string{u(1)}, "", false},
		{"AMD variables do not touch NVIDIA", map[string]string{"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0"},
			[]string{u(0), u(1), u(2), u(3)}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := discoverNVIDIA(t, tc.vars)
			if tc.noDevices {
				require.ErrorIs(t, err, discovery.ErrNoDevices)
				assert.NotEmpty(t, res.Skipped)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantIDs, ids(res.Devices))
			for i, d := range res.Devices {
				assert.Equal(t, i, d.Index)
			}
			if tc.wantWarn != "" {
				require.NotEmpty(t, res.Warnings)
				assert.Contains(t, res.Warnings[0], tc.wantWarn)
			} else {
				assert.Empty(t, res.Warnings)
			}
		})
	}
}

func TestROCmVisibleDevices(t *testing.T) {
	tree := discoverytest.Load(t, "amd-kfd")
	run := func(vars map[string]string) []string {
		res, err := discovery.Discover(context.Background(), discovery.VendorAMD, discovery.Options{
			Root: discovery.NewRoot(tree.Root), Getenv: env(vars),
		})
		if err != nil {
			return nil
		}
		return ids(res.Devices)
	}
	a, b := "GPU-b6dcce52ef0f3d11", "GPU-3cf27f04cfd3cbc7"
	assert.Equal(t, []string{a, b}, run(nil))
	assert.Equal(t, []string{b, a}, run(map[string]string{"ROCR_VISIBLE_DEVICES": "1,0"}))
	assert.Equal(t, []string{b}, run(map[string]string{"ROCR_VISIBLE_DEVICES": b}))
	// HIP indices count the devices ROCR_VISIBLE_DEVICES left.
	assert.Equal(t, []string{a}, run(map[string]string{"ROCR_VISIBLE_DEVICES": "1,0", "HIP_VISIBLE_DEVICES": "1"}))
	// Without HIP_VISIBLE_DEVICES, HIP reads CUDA_VISIBLE_DEVICES.
	assert.Equal(t, []string{b}, run(map[string]string{"CUDA_VISIBLE_DEVICES": "1"}))
	assert.Empty(t, run(map[string]string{"ROCR_VISIBLE_DEVICES": "-1"}))
}

func TestAddressByID(t *testing.T) {
	tree := discoverytest.New(t)
	tree.NVIDIAHost(2)
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root: discovery.NewRoot(tree.Root), AddressByID: true,
	})
	require.NoError(t, err)
	assert.Equal(t, []string{discoverytest.NVIDIAUUID(0), discoverytest.NVIDIAUUID(1)}, addresses(res.Devices))
}
