//go:build linux && cgo

package discovery_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

// busID renders a PCI address as NVML's C char array.
func busID(s string) [32]int8 {
	var b [32]int8
	for i := 0; i < len(s) && i < 31; i++ {
		b[i] = int8(s[i])
	}
	return b
}

func TestNVMLWithoutDriverIsUnavailable(t *testing.T) {
	// A real go-nvml library whose libnvidia-ml.so.1 cannot be loaded: what a host without a driver gives.
	lib := nvml.New(nvml.WithLibraryPath(filepath.Join(t.TempDir(), "libnvidia-ml.so.1")))
	b := discovery.NewNVMLBackend(lib, discovery.Root{})
	ok, reason := b.Probe(context.Background())
	assert.False(t, ok)
	assert.Contains(t, reason, "cannot be loaded")
	_, err := b.Devices(context.Background())
	require.ErrorIs(t, err, discovery.ErrBackendUnavailable)

	// In a chain, the next backend takes over without an error.
	tree := discoverytest.New(t)
	tree.NVIDIAHost(2)
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root:  discovery.NewRoot(tree.Root),
		Chain: []discovery.Backend{b, discoveryProcfs(t, tree)},
	})
	require.NoError(t, err)
	assert.Equal(t, "procfs", res.Backend)
	assert.Empty(t, res.Warnings)
	assert.True(t, res.NVMLCompiled)
}

// discoveryProcfs returns the built-in procfs backend for tree (through a one-backend restriction).
func discoveryProcfs(t *testing.T, tree *discoverytest.Tree) discovery.Backend {
	t.Helper()
	return procfsOnly{root: discovery.NewRoot(tree.Root)}
}

// procfsOnly runs Discover restricted to procfs; it lets a test put the built-in backend into a chain.
type procfsOnly struct{ root discovery.Root }

func (p procfsOnly) Name() string { return "procfs" }
func (p procfsOnly) Probe(context.Context) (bool, string) {
	return true, "procfs"
}
func (p procfsOnly) Devices(ctx context.Context) ([]discovery.Device, error) {
	res, err := discovery.Discover(ctx, discovery.VendorNVIDIA, discovery.Options{Root: p.root, Backends: []string{"procfs"}})
	if err != nil {
		return nil, err
	}
	return res.Devices, nil
}

func TestNVMLInitFailures(t *testing.T) {
	for ret, want := range map[nvml.Return]string{
		nvml.ERROR_LIBRARY_NOT_FOUND: "cannot be loaded",
		nvml.ERROR_DRIVER_NOT_LOADED: "kernel driver is not loaded",
		nvml.ERROR_NO_PERMISSION:     "no permission",
		nvml.ERROR_UNKNOWN:           "nvmlInit: ERROR_UNKNOWN",
	} {
		t.Run(want, func(t *testing.T) {
			lib := &mock.Interface{InitFunc: func() nvml.Return { return ret }}
			ok, reason := discovery.NewNVMLBackend(lib, discovery.Root{}).Probe(context.Background())
			assert.False(t, ok)
			assert.Contains(t, reason, want)
		})
	}
}

func TestNVMLDGXA100(t *testing.T) {
	server := dgxa100.New()
	// The mock leaves the PCI bus id empty; fill it as a real driver would.
	for i, d := range server.Devices {
		dev := d.(*mockserver.Device)
		bus := fmt.Sprintf("00000000:%02X:00.0", 0x07+i*0x10)
		dev.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: busID(bus), PciDeviceId: dev.Config.PciDeviceId}, nvml.SUCCESS
		}
	}
	b := discovery.NewNVMLBackend(server, discovery.Root{})
	ok, reason := b.Probe(context.Background())
	require.True(t, ok, reason)
	assert.Contains(t, reason, "8 GPU(s), driver 550.54.15")
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Chain: []discovery.Backend{b}, CanOpen: func(string) error { return nil },
	})
	require.NoError(t, err)
	require.Len(t, res.Devices, 8)
	d := res.Devices[3]
	assert.Equal(t, server.Devices[3].(*mockserver.Device).UUID, d.ID)
	assert.Equal(t, "0000:37:00.0", d.PCIBusID)
	assert.Equal(t, "Mock NVIDIA A100-SXM4-40GB", d.Model)
	require.NotNil(t, d.MemoryMiB)
	assert.Equal(t, uint64(40960), *d.MemoryMiB)
	require.NotNil(t, d.Minor)
	assert.Equal(t, 3, *d.Minor)
	assert.Equal(t, []string{"/dev/nvidia3", "/dev/nvidiactl"}, d.DevNodes)
	assert.Equal(t, "3", d.Address)
	assert.Equal(t, "nvml", d.Source)
}

// migGPU builds a mock GPU in MIG mode with the given MIG UUIDs at MIG indices 0, 2, ...
func migGPU(uuid string, minor int, migs ...string) *mock.Device {
	handles := map[int]nvml.Device{}
	for i, m := range migs {
		gi, ci, name := i+1, 0, fmt.Sprintf("NVIDIA A100-SXM4-40GB MIG %dg.10gb", i+1)
		mu := m
		handles[2*i] = &mock.Device{
			GetUUIDFunc:              func() (string, nvml.Return) { return mu, nvml.SUCCESS },
			GetNameFunc:              func() (string, nvml.Return) { return name, nvml.SUCCESS },
			GetMemoryInfoFunc:        func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 10 << 30}, nvml.SUCCESS },
			GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return gi, nvml.SUCCESS },
			GetComputeInstanceIdFunc: func() (int, nvml.Return) { return ci, nvml.SUCCESS },
			IsMigDeviceHandleFunc:    func() (bool, nvml.Return) { return true, nvml.SUCCESS },
			GetMinorNumberFunc:       func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
			GetPciInfoFunc:           func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.ERROR_NOT_SUPPORTED },
			GetMaxMigDeviceCountFunc: func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
			GetMigModeFunc:           func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED },
			GetMigDeviceHandleByIndexFunc: func(int) (nvml.Device, nvml.Return) {
				return nil, nvml.ERROR_NOT_SUPPORTED
			},
		}
	}
	mode := nvml.DEVICE_MIG_DISABLE
	if len(migs) > 0 {
		mode = nvml.DEVICE_MIG_ENABLE
	}
	return &mock.Device{
		GetUUIDFunc:        func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetIndexFunc:       func() (int, nvml.Return) { return minor, nvml.SUCCESS },
		GetNameFunc:        func() (string, nvml.Return) { return "NVIDIA A100-SXM4-40GB", nvml.SUCCESS },
		GetMemoryInfoFunc:  func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 40 << 30}, nvml.SUCCESS },
		GetMinorNumberFunc: func() (int, nvml.Return) { return minor, nvml.SUCCESS },
		GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: busID(fmt.Sprintf("00000000:%02X:00.0", 7+minor))}, nvml.SUCCESS
		},
		GetMigModeFunc:           func() (int, int, nvml.Return) { return mode, mode, nvml.SUCCESS },
		GetMaxMigDeviceCountFunc: func() (int, nvml.Return) { return 7, nvml.SUCCESS },
		GetMigDeviceHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if h, ok := handles[i]; ok {
				return h, nvml.SUCCESS
			}
			return nil, nvml.ERROR_NOT_FOUND
		},
	}
}

func TestNVMLMIGAndPermissions(t *testing.T) {
	gpus := []nvml.Device{
		migGPU("GPU-aaaaaaaa-0000-0000-0000-000000000000", 0, "MIG-11111111-0000-0000-0000-000000000000", "MIG-22222222-0000-0000-0000-000000000000"),
		nil, // a GPU the device cgroup denies: NVML counts it but the handle says NO_PERMISSION
		migGPU("GPU-cccccccc-0000-0000-0000-000000000000", 2),
	}
	lib := &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "570.86.15", nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(gpus), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if gpus[i] == nil {
				return nil, nvml.ERROR_NO_PERMISSION
			}
			return gpus[i], nvml.SUCCESS
		},
	}
	tree := discoverytest.Load(t, "nvidia-mig")
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root:    discovery.NewRoot(tree.Root),
		Chain:   []discovery.Backend{discovery.NewNVMLBackend(lib, discovery.NewRoot(tree.Root))},
		CanOpen: func(string) error { return nil },
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"MIG-11111111-0000-0000-0000-000000000000", "MIG-22222222-0000-0000-0000-000000000000",
		"GPU-cccccccc-0000-0000-0000-000000000000"}, ids(res.Devices), "the MIG parent is hidden, the denied GPU skipped")
	assert.Equal(t, []string{"0:0", "0:2", "2"}, addresses(res.Devices))
	m := res.Devices[1]
	assert.Equal(t, discovery.KindMIG, m.Kind)
	assert.Equal(t, "GPU-aaaaaaaa-0000-0000-0000-000000000000", m.Parent)
	assert.Equal(t, "0000:07:00.0", m.PCIBusID)
	require.NotNil(t, m.MIG.GPUInstance)
	assert.Equal(t, 2, *m.MIG.GPUInstance)
	assert.Equal(t, "2g.10gb", m.MIG.Profile, "the profile from NVML's MIG device name")
	assert.Equal(t, uint64(10240), *m.MemoryMiB)
	assert.Equal(t, []string{"/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-caps/nvidia-cap21", "/dev/nvidia-caps/nvidia-cap22"}, m.DevNodes)
	assert.Equal(t, "MIG-22222222-0000-0000-0000-000000000000", m.Key)
	assert.Len(t, lib.ShutdownCalls(), 1, "NVML is initialised once and shut down once")
	assert.Len(t, lib.InitCalls(), 1)
}

// TestNVMLMIGProfileFilter: with NVML, a MIG resource type gets the slices of its profile.
func TestNVMLMIGProfileFilter(t *testing.T) {
	gpus := []nvml.Device{migGPU("GPU-aaaaaaaa-0000-0000-0000-000000000000", 0, "MIG-11111111-0000-0000-0000-000000000000", "MIG-22222222-0000-0000-0000-000000000000")}
	lib := &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "570.86.15", nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(gpus), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) { return gpus[i], nvml.SUCCESS },
	}
	tree := discoverytest.Load(t, "nvidia-mig")
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root:    discovery.NewRoot(tree.Root),
		Chain:   []discovery.Backend{discovery.NewNVMLBackend(lib, discovery.NewRoot(tree.Root))},
		CanOpen: func(string) error { return nil },
		Kind:    discovery.KindMIG, MIGProfile: "2g.10gb",
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"MIG-22222222-0000-0000-0000-000000000000"}, ids(res.Devices))
}

func TestNVMLCountFailure(t *testing.T) {
	lib := &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return 0, nvml.ERROR_GPU_IS_LOST },
	}
	ok, reason := discovery.NewNVMLBackend(lib, discovery.Root{}).Probe(context.Background())
	assert.False(t, ok)
	assert.Contains(t, reason, "ERROR_GPU_IS_LOST")
	assert.Len(t, lib.ShutdownCalls(), 1)
}
