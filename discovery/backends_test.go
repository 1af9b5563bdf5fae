package discovery_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

// env returns a Getenv over a map.
func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// replaying writes a fake tool replaying a file of testdata/tools per argument line and returns the
// PATH holding it.
func replaying(t *testing.T, tool string, replies map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	discoverytest.ToolReplaying(t, dir, tool, replies)
	return dir
}

// nvidiaSMI writes a fake nvidia-smi replaying the given CSV and -L files and returns its PATH.
func nvidiaSMI(t *testing.T, csv, list string) string {
	t.Helper()
	return replaying(t, "nvidia-smi", map[string]string{
		"--query-gpu=index,uuid,pci.bus_id,memory.total,name --format=csv,noheader,nounits": csv,
		"-L": list,
	})
}

// discoverTree runs Discover for vendor on the host tree of testdata/trees/<tree>.txtar, with no
// tools, and checks that backend answered.
func discoverTree(t *testing.T, tree string, vendor discovery.Vendor, backend string) *discovery.Result {
	t.Helper()
	res, err := discoverOn(vendor, discoverytest.Load(t, tree).Root, "")
	require.NoError(t, err)
	assert.Equal(t, backend, res.Backend)
	return res
}

// discoverOn runs Discover for vendor on the host tree at root with path as the only PATH ("": no
// tools).
func discoverOn(vendor discovery.Vendor, root, path string) (*discovery.Result, error) {
	return discovery.Discover(context.Background(), vendor, discovery.Options{
		Root: discovery.NewRoot(root), Getenv: env(map[string]string{"PATH": path}),
	})
}

// ids returns the devices' ids, in order.
func ids(devs []discovery.Device) []string {
	return each(devs, func(d discovery.Device) string { return d.ID })
}

// addresses returns the devices' addresses, in order.
func addresses(devs []discovery.Device) []string {
	return each(devs, func(d discovery.Device) string { return d.Address })
}

// each returns f of every device, in order.
func each(devs []discovery.Device, f func(discovery.Device) string) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = f(d)
	}
	return out
}

func TestNVIDIAProcfs(t *testing.T) {
	res := discoverTree(t, "nvidia-procfs", discovery.VendorNVIDIA, "procfs")
	// PCI bus order, the excluded GPU (0000:8a:00.0) left out.
	assert.Equal(t, []string{
		"GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f",
		"GPU-1a2b3c4d-0000-1111-2222-333344445555",
		"GPU-9c1f7a3e-55d2-4c1e-9b7a-0c3b2d1e4f03",
	}, ids(res.Devices))
	assert.Equal(t, []string{"0", "1", "2"}, addresses(res.Devices))
	d := res.Devices[2]
	assert.Equal(t, "0000:c3:00.0", d.PCIBusID)
	assert.Equal(t, "NVIDIA A100-SXM4-40GB", d.Model)
	require.NotNil(t, d.Minor)
	assert.Equal(t, 3, *d.Minor)
	assert.Equal(t, []string{"/dev/nvidia3", "/dev/nvidiactl"}, d.DevNodes)
	assert.Nil(t, d.MemoryMiB, "procfs does not know the memory size")
	assert.Equal(t, discovery.KindGPU, d.Kind)
	assert.Equal(t, "GPU-9c1f7a3e-55d2-4c1e-9b7a-0c3b2d1e4f03", d.Key)
	require.Len(t, res.Probes, 2)
	assert.Equal(t, "nvml", res.Probes[0].Backend)
	assert.False(t, res.Probes[0].OK)
	assert.Contains(t, res.Probes[0].Reason, "host root")
}

func TestNVIDIAProcfsWithMIGFallsBackToNvidiaSMI(t *testing.T) {
	tree := discoverytest.Load(t, "nvidia-mig")
	path := nvidiaSMI(t, "nvidia-smi-mig-query.csv", "nvidia-smi-mig-L.txt")
	res, err := discoverOn(discovery.VendorNVIDIA, tree.Root, path)
	require.NoError(t, err)
	assert.Equal(t, "nvidia-smi", res.Backend)
	require.Len(t, res.Probes, 3)
	assert.False(t, res.Probes[1].OK)
	assert.Contains(t, res.Probes[1].Reason, "MIG")
	require.Len(t, res.Devices, 3)
	assert.Equal(t, []string{"MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f", "MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb",
		"GPU-1a2b3c4d-0000-1111-2222-333344445555"}, ids(res.Devices))
	assert.Equal(t, []string{"0:0", "0:1", "2"}, addresses(res.Devices))
	mig := res.Devices[1]
	assert.Equal(t, discovery.KindMIG, mig.Kind)
	assert.Equal(t, "GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f", mig.Parent)
	assert.Equal(t, "NVIDIA A100-SXM4-40GB MIG 2g.10gb", mig.Model)
	require.NotNil(t, mig.MIG)
	assert.Equal(t, 1, mig.MIG.Index)
	assert.Equal(t, "0000:07:00.0", mig.PCIBusID)
}

func TestNvidiaSMI(t *testing.T) {
	path := nvidiaSMI(t, "nvidia-smi-query.csv", "nvidia-smi-L.txt")
	res, err := discoverOn(discovery.VendorNVIDIA, t.TempDir(), path)
	require.NoError(t, err)
	assert.Equal(t, "nvidia-smi", res.Backend)
	require.Len(t, res.Devices, 4)
	assert.Equal(t, "0000:0f:00.0", res.Devices[1].PCIBusID, "domain shortened, hex lower-cased")
	require.NotNil(t, res.Devices[0].MemoryMiB)
	assert.Equal(t, uint64(40960), *res.Devices[0].MemoryMiB)
	assert.Nil(t, res.Devices[2].MemoryMiB, "[N/A] is unknown")
	assert.Equal(t, "nvidia-smi", res.Devices[3].Source)
	assert.Empty(t, res.Devices[3].DevNodes)
}

func TestNvidiaSMILegacyMIGUUIDs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(discoverytest.TestdataDir(), "tools", "nvidia-smi-legacy-mig-L.txt"))
	require.NoError(t, err)
	migs, err := discovery.ParseNVIDIASMIList(data)
	require.NoError(t, err)
	require.Len(t, migs, 2)
	require.NotNil(t, migs[1].GI)
	assert.Equal(t, 2, *migs[1].GI)
	assert.Equal(t, 0, *migs[1].CI)
	assert.Equal(t, "GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f", migs[1].ParentUUID)
}

func TestNvidiaSMIFailures(t *testing.T) {
	root := discovery.NewRoot(t.TempDir())
	t.Run("not on PATH", func(t *testing.T) {
		res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
			Root: root, Getenv: env(map[string]string{"PATH": t.TempDir()}),
		})
		require.ErrorIs(t, err, discovery.ErrNoDevices)
		assert.Contains(t, err.Error(), "nvidia-smi not found in PATH")
		assert.Contains(t, err.Error(), "NVIDIA kernel driver not loaded")
		assert.Empty(t, res.Devices)
	})
	// withSMI discovers NVIDIA devices with only a fake nvidia-smi running script on PATH.
	withSMI := func(t *testing.T, script string, timeout time.Duration) (*discovery.Result, error) {
		dir := t.TempDir()
		discoverytest.Tool(t, dir, "nvidia-smi", script)
		return discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
			Root: root, Getenv: env(map[string]string{"PATH": dir}), CommandTimeout: timeout,
		})
	}
	t.Run("exits non-zero", func(t *testing.T) {
		res, err := withSMI(t, "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\" >&2; exit 9\n", 0)
		require.ErrorIs(t, err, discovery.ErrNoDevices)
		require.Len(t, res.Warnings, 1)
		assert.Contains(t, res.Warnings[0], "couldn't communicate with the NVIDIA driver")
	})
	t.Run("hangs", func(t *testing.T) {
		_, err := withSMI(t, "exec sleep 30\n", 200*time.Millisecond)
		require.ErrorIs(t, err, discovery.ErrNoDevices)
		assert.Contains(t, err.Error(), "no answer within 200ms")
	})
	t.Run("garbage", func(t *testing.T) {
		_, err := withSMI(t, "echo 'Field \"memory.total\" is not a valid field to query.'\n", 0)
		require.ErrorIs(t, err, discovery.ErrNoDevices)
		assert.Contains(t, err.Error(), "line 1")
	})
}

func TestAMDKFD(t *testing.T) {
	res := discoverTree(t, "amd-kfd", discovery.VendorAMD, "kfd")
	require.Len(t, res.Devices, 2, "the CPU node is not a GPU")
	d := res.Devices[0]
	assert.Equal(t, "GPU-b6dcce52ef0f3d11", d.ID)
	assert.Equal(t, "0000:03:00.0", d.PCIBusID)
	assert.Equal(t, "amd-0000:03:00.0", d.Key)
	assert.Equal(t, "gfx90a", d.Model)
	require.NotNil(t, d.MemoryMiB)
	assert.Equal(t, uint64(65520), *d.MemoryMiB)
	assert.Equal(t, []string{"/dev/kfd", "/dev/dri/renderD128"}, d.DevNodes)
	assert.Equal(t, "0000:c4:00.0", res.Devices[1].PCIBusID)
	assert.Equal(t, "1", res.Devices[1].Address)
}

func TestAMDSMI(t *testing.T) {
	tree := discoverytest.Load(t, "amd-kfd")
	require.NoError(t, os.RemoveAll(tree.Path("/sys/class/kfd")))
	res, err := discoverOn(discovery.VendorAMD, tree.Root, replaying(t, "amd-smi", map[string]string{"list --json": "amd-smi-list.json"}))
	require.NoError(t, err)
	assert.Equal(t, "amd-smi", res.Backend)
	require.Len(t, res.Devices, 2)
	assert.Equal(t, "GPU-00ff740f-0000-1000-8040-b2e1a9c0d3f4", res.Devices[0].ID)
	assert.Equal(t, "0000:c4:00.0", res.Devices[0].PCIBusID)
	assert.Equal(t, []string{"/dev/kfd", "/dev/dri/renderD136"}, res.Devices[0].DevNodes)
	assert.Equal(t, "amd-0000:c4:00.0", res.Devices[0].Key, "the same key as the KFD backend gives this card")
	assert.Equal(t, 1, res.Devices[1].HostIndex)
}

func TestIntelDFL(t *testing.T) {
	res := discoverTree(t, "intel-dfl", discovery.VendorIntelFPGA, "dfl")
	require.Len(t, res.Devices, 2, "the port with an all-f AFU id is unusable")
	assert.Equal(t, []string{"dfl-port.0", "dfl-port.2"}, ids(res.Devices))
	assert.Equal(t, "0000:5e:00.0", res.Devices[0].PCIBusID)
	assert.Equal(t, "0000:be:00.0", res.Devices[1].PCIBusID)
	assert.Equal(t, "afu d8424dc4a4a3c413f89e433683f9040b, interface ce48969398f05f33946d560708be108a", res.Devices[0].Firmware)
	assert.Equal(t, []string{"/dev/dfl-port.2"}, res.Devices[1].DevNodes)
	assert.Equal(t, discovery.KindFPGA, res.Devices[1].Kind)
	assert.Equal(t, "intel-fpga-dfl-port.2", res.Devices[1].Key)
}

func TestIntelOPAE(t *testing.T) {
	res := discoverTree(t, "intel-opae", discovery.VendorIntelFPGA, "opae")
	require.Len(t, res.Devices, 1)
	d := res.Devices[0]
	assert.Equal(t, "intel-fpga-port.0", d.ID)
	assert.Equal(t, "0000:06:00.0", d.PCIBusID)
	assert.Equal(t, "afu d8424dc4a4a3c413f89e433683f9040b, interface 69528db6eb31577a8c3668f9faa081f6", d.Firmware)
	assert.Equal(t, []string{"/dev/intel-fpga-port.0"}, d.DevNodes)
}

func TestAOCL(t *testing.T) {
	tree := discoverytest.New(t)
	tree.File("/dev/aclnalla_pcie0", "")
	tree.File("/dev/aclnalla_pcie2", "")
	res, err := discoverOn(discovery.VendorIntelFPGA, tree.Root, replaying(t, "aocl", map[string]string{"diagnose": "aocl-diagnose.txt"}))
	require.NoError(t, err)
	assert.Equal(t, "aocl", res.Backend)
	assert.Equal(t, []string{"aclnalla_pcie0", "aclnalla_pcie2"}, ids(res.Devices), "acl1 failed its diagnostic")
	assert.Equal(t, "0000:02:00.0", res.Devices[0].PCIBusID)
	assert.Equal(t, "0000:84:00.1", res.Devices[1].PCIBusID)
	assert.Equal(t, "Intel FPGA (nalla_pcie)", res.Devices[0].Model)
	assert.Equal(t, []string{"/dev/aclnalla_pcie2"}, res.Devices[1].DevNodes)
}

func TestXilinx(t *testing.T) {
	tree := discoverytest.Load(t, "xilinx")
	res, err := discoverOn(discovery.VendorXilinx, tree.Root, "")
	require.NoError(t, err)
	require.Len(t, res.Devices, 1, "the management function is not a device")
	d := res.Devices[0]
	assert.Equal(t, "0000:65:00.1", d.ID)
	assert.Equal(t, "Xilinx FPGA (xilinx_u250_gen3x16_xdma_shell_4_1)", d.Model)
	assert.Equal(t, []string{"/dev/dri/renderD129"}, d.DevNodes)
	assert.Equal(t, "xilinx-0000:65:00.1", d.Key)
}

func TestAutoVendor(t *testing.T) {
	t.Run("AMD only", func(t *testing.T) {
		tree := discoverytest.Load(t, "amd-kfd")
		res, err := discoverOn("", tree.Root, "")
		require.NoError(t, err)
		assert.Equal(t, discovery.VendorAMD, res.Vendor)
		assert.Len(t, res.Devices, 2)
	})
	t.Run("NVIDIA before FPGA", func(t *testing.T) {
		tree := discoverytest.Load(t, "nvidia-procfs")
		tree.Apply(filepath.Join(discoverytest.TestdataDir(), "trees", "xilinx.txtar"))
		res, err := discoverOn("", tree.Root, "")
		require.NoError(t, err)
		assert.Equal(t, discovery.VendorNVIDIA, res.Vendor)
	})
	t.Run("nothing", func(t *testing.T) {
		res, err := discoverOn("", t.TempDir(), "")
		var nd *discovery.NoDevicesError
		require.ErrorAs(t, err, &nd)
		assert.Equal(t, "no devices found for any vendor", strings.SplitN(err.Error(), " (", 2)[0])
		backends := map[string]bool{}
		for _, p := range res.Probes {
			backends[p.Backend] = true
		}
		for _, b := range discovery.BackendNames() {
			assert.True(t, backends[b], "probe of %s reported", b)
		}
	})
}

func TestBackendRestriction(t *testing.T) {
	tree := discoverytest.Load(t, "nvidia-procfs")
	path := nvidiaSMI(t, "nvidia-smi-query.csv", "nvidia-smi-L.txt")
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root: discovery.NewRoot(tree.Root), Getenv: env(map[string]string{"PATH": path}), Backends: []string{"nvidia-smi"},
	})
	require.NoError(t, err)
	assert.Equal(t, "nvidia-smi", res.Backend)
	assert.Len(t, res.Devices, 4)
}

func TestUnopenableNodesAreSkipped(t *testing.T) {
	tree := discoverytest.Load(t, "nvidia-procfs")
	denied := tree.Path("/dev/nvidia1")
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root: discovery.NewRoot(tree.Root),
		CanOpen: func(p string) error {
			if p == denied {
				return os.ErrPermission
			}
			return nil
		},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f", "GPU-9c1f7a3e-55d2-4c1e-9b7a-0c3b2d1e4f03"}, ids(res.Devices))
	assert.Equal(t, []string{"0", "1"}, addresses(res.Devices), "indices are renumbered as CUDA renumbers under a device cgroup")
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, "GPU-1a2b3c4d-0000-1111-2222-333344445555", res.Skipped[0].ID)
	assert.Contains(t, res.Skipped[0].Reason, "/dev/nvidia1")

	// A missing node makes the device unusable too (default open check).
	require.NoError(t, os.Remove(tree.Path("/dev/nvidia0")))
	res, err = discoverOn(discovery.VendorNVIDIA, tree.Root, "")
	require.NoError(t, err)
	assert.Len(t, res.Devices, 2)
	assert.Contains(t, res.Skipped[0].Reason, "no such file")
}

func TestNormalizePCIBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:07:00.0": "0000:07:00.0",
		"0000:C3:00.0":     "0000:c3:00.0",
		"0a:00.1":          "0000:0a:00.1",
		" 0001:65:00.7 ":   "0001:65:00.7",
	} {
		got, ok := discovery.NormalizePCIBusID(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "0000:07:00", "07:00.8", "100000000:07:00.0", "pci0000:5e", "zz:00.0"} {
		_, ok := discovery.NormalizePCIBusID(bad)
		assert.False(t, ok, bad)
	}
}

func TestParseVendor(t *testing.T) {
	v, err := discovery.ParseVendor("AUTO")
	require.NoError(t, err)
	assert.Equal(t, discovery.Vendor(""), v)
	v, err = discovery.ParseVendor("intel-fpga")
	require.NoError(t, err)
	assert.Equal(t, discovery.VendorIntelFPGA, v)
	_, err = discovery.ParseVendor("nvida")
	assert.ErrorContains(t, err, "want auto, nvidia, amd, intel-fpga or xilinx")
}

func TestPartitionsOfOneCardGetTheirOwnKeys(t *testing.T) {
	tree := discoverytest.Load(t, "amd-kfd")
	// A third KFD node on the same PCI address as node 1: a second partition of that card.
	props, err := os.ReadFile(tree.Path("/sys/class/kfd/kfd/topology/nodes/1/properties"))
	require.NoError(t, err)
	second := strings.Replace(strings.Replace(string(props), "unique_id 13176633465372622097", "unique_id 42", 1), "drm_render_minor 128", "drm_render_minor 129", 1)
	tree.File("/sys/class/kfd/kfd/topology/nodes/3/properties", second)
	tree.File("/dev/dri/renderD129", "")
	res, err := discoverOn(discovery.VendorAMD, tree.Root, "")
	require.NoError(t, err)
	require.Len(t, res.Devices, 3)
	assert.Equal(t, "amd-0000:03:00.0.GPU-b6dcce52ef0f3d11", res.Devices[0].Key)
	assert.Equal(t, "amd-0000:c4:00.0", res.Devices[1].Key)
	assert.Equal(t, "amd-0000:03:00.0.GPU-000000000000002a", res.Devices[2].Key)
}
