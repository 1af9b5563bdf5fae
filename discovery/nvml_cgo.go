//go:build linux && cgo

package discovery

import (
	"context"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlCompiled says whether this binary can talk to NVML.
const nvmlCompiled = true

// nvmlBackend asks the driver through NVML (libnvidia-ml.so.1, loaded with dlopen at Init). It is the
// only backend that knows memory sizes and MIG instances without running a tool.
type nvmlBackend struct {
	lib    nvml.Interface
	root   Root // for the MIG capability files below /proc/driver/nvidia
	inited bool
}

// NewNVMLBackend returns the NVML backend over lib: the real library (nvml.New, optionally with
// nvml.WithLibraryPath) or a mock from github.com/NVIDIA/go-nvml/pkg/nvml/mock. root is where the MIG
// capability files are read.
func NewNVMLBackend(lib nvml.Interface, root Root) Backend {
	return &nvmlBackend{lib: lib, root: root}
}

func newNVMLBackend(libPath string, root Root) Backend {
	var opts []nvml.LibraryOption
	if libPath != "" {
		opts = append(opts, nvml.WithLibraryPath(libPath))
	}
	return NewNVMLBackend(nvml.New(opts...), root)
}

func (b *nvmlBackend) Name() string { return "nvml" }

// Probe initialises NVML and keeps it initialised for Devices: an NVML init can take a long time on a
// host without persistence mode, so it is done once.
func (b *nvmlBackend) Probe(context.Context) (bool, string) {
	if err := b.init(); err != nil {
		return false, err.Error()
	}
	n, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		b.shutdown()
		return false, fmt.Sprintf("nvmlDeviceGetCount: %v", ret)
	}
	version, ret := b.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		version = "unknown"
	}
	return true, fmt.Sprintf("NVML sees %d GPU(s), driver %s", n, version)
}

func (b *nvmlBackend) init() error {
	if b.inited {
		return nil
	}
	switch ret := b.lib.Init(); ret {
	case nvml.SUCCESS:
		b.inited = true
		return nil
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return unavailable("libnvidia-ml.so.1 cannot be loaded (no NVIDIA driver on this host)")
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return unavailable("the NVIDIA kernel driver is not loaded")
	case nvml.ERROR_NO_PERMISSION:
		return unavailable("no permission to talk to the NVIDIA driver")
	default:
		return unavailable("nvmlInit: %v", ret)
	}
}

func (b *nvmlBackend) shutdown() {
	if b.inited {
		_ = b.lib.Shutdown()
		b.inited = false
	}
}

func (b *nvmlBackend) Devices(context.Context) ([]Device, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	defer b.shutdown()
	n, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvmlDeviceGetCount: %w", ret)
	}
	var devs []Device
	for i := 0; i < n; i++ {
		dev, ret := b.lib.DeviceGetHandleByIndex(i)
		if ret == nvml.ERROR_NO_PERMISSION {
			continue // counted by nvmlDeviceGetCount_v2, but this process may not use it (device cgroup)
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvmlDeviceGetHandleByIndex(%d): %w", i, ret)
		}
		gpu, err := b.describe(dev, i)
		if err != nil {
			return nil, err
		}
		migs, err := b.migDevices(dev, gpu)
		if err != nil {
			return nil, err
		}
		if migs != nil {
			devs = append(devs, migs...) // the parent of MIG instances cannot run CUDA work itself
			continue
		}
		devs = append(devs, gpu)
	}
	return devs, nil
}

// describe reads what yarn-er reports of one GPU handle.
func (b *nvmlBackend) describe(dev nvml.Device, index int) (Device, error) {
	uuid, ret := dev.GetUUID()
	if ret != nvml.SUCCESS {
		return Device{}, fmt.Errorf("GPU %d: nvmlDeviceGetUUID: %w", index, ret)
	}
	d := Device{Vendor: VendorNVIDIA, Kind: KindGPU, ID: uuid, HostIndex: index, Source: b.Name()}
	if idx, ret := dev.GetIndex(); ret == nvml.SUCCESS {
		d.HostIndex = idx
	}
	if pci, ret := dev.GetPciInfo(); ret == nvml.SUCCESS {
		if bdf, ok := NormalizePCIBusID(cString(pci.BusId[:])); ok {
			d.PCIBusID = bdf
		} else if bdf, ok := NormalizePCIBusID(fmt.Sprintf("%04x:%02x:%02x.0", pci.Domain, pci.Bus, pci.Device)); ok && (pci.Bus != 0 || pci.Device != 0 || pci.Domain != 0) {
			d.PCIBusID = bdf
		}
	}
	if name, ret := dev.GetName(); ret == nvml.SUCCESS {
		d.Model = name
	}
	if mem, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		d.MemoryMiB = uint64Ptr(mem.Total / (1 << 20))
	}
	if minor, ret := dev.GetMinorNumber(); ret == nvml.SUCCESS {
		d.Minor = intPtr(minor)
		d.DevNodes = nvidiaNodes(d.Minor)
	}
	return d, nil
}

// migDevices lists the MIG instances of a GPU in MIG mode; nil when MIG is off or unsupported.
func (b *nvmlBackend) migDevices(dev nvml.Device, parent Device) ([]Device, error) {
	current, _, ret := dev.GetMigMode()
	if ret == nvml.ERROR_NOT_SUPPORTED || (ret == nvml.SUCCESS && current != nvml.DEVICE_MIG_ENABLE) {
		return nil, nil
	}
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("GPU %s: nvmlDeviceGetMigMode: %w", parent.ID, ret)
	}
	max, ret := dev.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("GPU %s: nvmlDeviceGetMaxMigDeviceCount: %w", parent.ID, ret)
	}
	migs := []Device{} // MIG mode on: the parent is hidden even with no instance
	for j := 0; j < max; j++ {
		mig, ret := dev.GetMigDeviceHandleByIndex(j)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %s: nvmlDeviceGetMigDeviceHandleByIndex(%d): %w", parent.ID, j, ret)
		}
		uuid, ret := mig.GetUUID()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %s MIG %d: nvmlDeviceGetUUID: %w", parent.ID, j, ret)
		}
		d := Device{
			Vendor: VendorNVIDIA, Kind: KindMIG, ID: uuid, PCIBusID: parent.PCIBusID, Parent: parent.ID,
			HostIndex: parent.HostIndex, Minor: parent.Minor, DevNodes: append([]string(nil), parent.DevNodes...),
			MIG: &MIGInfo{Index: j}, Source: b.Name(),
		}
		if name, ret := mig.GetName(); ret == nvml.SUCCESS {
			d.Model = name
			d.MIG.Profile = migProfileOfModel(name)
		} else {
			d.Model = parent.Model + " MIG"
		}
		if mem, ret := mig.GetMemoryInfo(); ret == nvml.SUCCESS {
			d.MemoryMiB = uint64Ptr(mem.Total / (1 << 20))
		}
		gi, ret1 := mig.GetGpuInstanceId()
		ci, ret2 := mig.GetComputeInstanceId()
		if ret1 == nvml.SUCCESS && ret2 == nvml.SUCCESS {
			d.MIG.GPUInstance, d.MIG.ComputeInstance = intPtr(gi), intPtr(ci)
			if parent.Minor != nil {
				d.DevNodes = append(d.DevNodes, migCapNodes(b.root, *parent.Minor, gi, ci)...)
			}
		}
		migs = append(migs, d)
	}
	return migs, nil
}

// migCapNodes returns the /dev/nvidia-caps nodes that grant access to a MIG instance, from the
// "DeviceFileMinor: N" lines of the driver's capability files.
func migCapNodes(root Root, minor, gi, ci int) []string {
	var nodes []string
	for _, f := range []string{
		fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d/mig/gi%d/access", minor, gi),
		fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d/mig/gi%d/ci%d/access", minor, gi, ci),
	} {
		data, err := root.ReadString(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(data, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == "DeviceFileMinor" {
				nodes = append(nodes, "/dev/nvidia-caps/nvidia-cap"+strings.TrimSpace(v))
			}
		}
	}
	return nodes
}

// cString turns a NUL-terminated C char array into a string.
func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}
