package discovery

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Vendor names a device vendor family. The values are the ones --vendor accepts.
type Vendor string

// The vendors discovery knows.
const (
	VendorNVIDIA    Vendor = "nvidia"
	VendorAMD       Vendor = "amd"
	VendorIntelFPGA Vendor = "intel-fpga"
	VendorXilinx    Vendor = "xilinx"
)

// autoOrder is the order in which "auto" tries the vendors.
var autoOrder = []Vendor{VendorNVIDIA, VendorAMD, VendorIntelFPGA, VendorXilinx}

// AutoVendors returns the vendors "auto" tries, in order, for devices of kind: the GPU vendors for
// KindGPU (and KindMIG), the FPGA vendors for KindFPGA, every vendor for "". A host with GPUs and
// FPGAs then never hands a GPU to a process that asked for an FPGA, or the other way round.
func AutoVendors(kind Kind) []Vendor {
	switch kind {
	case KindGPU, KindMIG:
		return []Vendor{VendorNVIDIA, VendorAMD}
	case KindFPGA:
		return []Vendor{VendorIntelFPGA, VendorXilinx}
	}
	return slices.Clone(autoOrder)
}

// KindOfName is the kind of device a resource name asks for: "gpu" (any case) KindGPU, "fpga"
// KindFPGA, a MIG resource type (nvidia.com/mig-1g.10gb, see MIGProfileOfName) KindMIG, anything
// else "" (every kind).
func KindOfName(name string) Kind {
	if MIGProfileOfName(name) != "" {
		return KindMIG
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "gpu":
		return KindGPU
	case "fpga":
		return KindFPGA
	}
	return ""
}

// ParseVendor reads a --vendor value: auto (returned as ""), nvidia, amd, intel-fpga or xilinx.
func ParseVendor(s string) (Vendor, error) {
	switch v := Vendor(strings.ToLower(strings.TrimSpace(s))); v {
	case "auto", "":
		return "", nil
	case VendorNVIDIA, VendorAMD, VendorIntelFPGA, VendorXilinx:
		return v, nil
	}
	return "", fmt.Errorf("unknown vendor %q: want auto, nvidia, amd, intel-fpga or xilinx", s)
}

// Kind says what sort of device a Device is.
type Kind string

// The device kinds.
const (
	KindGPU  Kind = "gpu"  // a whole GPU
	KindMIG  Kind = "mig"  // an NVIDIA MIG instance (a slice of a GPU)
	KindFPGA Kind = "fpga" // an FPGA port, region or card
)

// MIGInfo locates a MIG instance on its parent GPU.
type MIGInfo struct {
	// Index is the MIG device's index on its parent (nvidia-smi -L "Device N").
	Index int `json:"index"`
	// GPUInstance is the GPU instance id, nil when the backend cannot tell.
	GPUInstance *int `json:"gpuInstance"`
	// ComputeInstance is the compute instance id, nil when the backend cannot tell.
	ComputeInstance *int `json:"computeInstance"`
	// Profile is the MIG profile (1g.10gb, 3g.40gb), "" when the backend cannot tell.
	Profile string `json:"profile,omitempty"`
}

// Device is one allocatable device. Its JSON shape is public (`yarn-er discover --format json`).
type Device struct {
	// Index is the device's ordinal in the view the workload gets: the position after the visibility
	// variables were applied, in PCI bus order (CUDA with CUDA_DEVICE_ORDER=PCI_BUS_ID, nvidia-smi and
	// NVML number GPUs this way) or the order a *_VISIBLE_DEVICES variable gave.
	Index int `json:"index"`
	// Address is what the flink and spark formats print for the device: the index, "<gpu>:<mig>" for a
	// MIG instance, or the ID when IDs were asked for.
	Address string `json:"address"`
	// HostIndex is the device's position in the host's enumeration before any visibility variable.
	HostIndex int `json:"hostIndex"`
	// ID is the stable identity: the GPU-/MIG- UUID, the AMD unique id, the FPGA port, else the PCI address.
	ID string `json:"id"`
	// Key is the coordination key: the name under which ledgers and lock files record the device.
	Key string `json:"key"`
	// Vendor is the device's vendor.
	Vendor Vendor `json:"vendor"`
	// Kind is gpu, mig or fpga.
	Kind Kind `json:"kind"`
	// PCIBusID is the normalised PCI address (dddd:bb:dd.f), "" when unknown.
	PCIBusID string `json:"pciBusId"`
	// Model is the product name, "" when unknown.
	Model string `json:"model"`
	// MemoryMiB is the device memory in MiB, nil when the backend does not know it.
	MemoryMiB *uint64 `json:"memoryMiB"`
	// Minor is the device node's minor number where the vendor has one (NVIDIA /dev/nvidiaN), else nil.
	Minor *int `json:"minor"`
	// DevNodes are the device files a workload needs (host paths, not below the host root).
	DevNodes []string `json:"devNodes"`
	// Parent is the parent GPU's UUID of a MIG instance, "" otherwise.
	Parent string `json:"parent,omitempty"`
	// MIG locates a MIG instance on its parent; nil for whole devices.
	MIG *MIGInfo `json:"mig,omitempty"`
	// Firmware describes what an FPGA is loaded with (AFU or interface id, shell name), "" otherwise.
	Firmware string `json:"firmware,omitempty"`
	// Source is the backend that found the device.
	Source string `json:"source"`
}

// Backend is one way of finding devices of a vendor.
type Backend interface {
	// Name is the backend's short name (nvml, procfs, nvidia-smi, kfd, amd-smi, dfl, opae, xilinx-pci, aocl).
	Name() string
	// Probe says whether the backend can run here and why (or why not), without listing devices.
	Probe(ctx context.Context) (ok bool, reason string)
	// Devices lists the devices, in the host's enumeration order.
	Devices(ctx context.Context) ([]Device, error)
}

var (
	bdfRE  = regexp.MustCompile(`^([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)
	bdfRE2 = regexp.MustCompile(`^([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)
)

// NormalizePCIBusID turns "00000000:07:00.0", "0000:07:00.0" or "07:00.0" into "0000:07:00.0". It
// reports false for anything that is not a PCI address.
func NormalizePCIBusID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if m := bdfRE.FindStringSubmatch(s); m != nil {
		dom, err := strconv.ParseUint(m[1], 16, 32)
		if err != nil || dom > 0xffff {
			return "", false
		}
		return strings.ToLower(fmt.Sprintf("%04x:%s:%s.%s", dom, m[2], m[3], m[4])), true
	}
	if m := bdfRE2.FindStringSubmatch(s); m != nil {
		return strings.ToLower(fmt.Sprintf("0000:%s:%s.%s", m[1], m[2], m[3])), true
	}
	return "", false
}

// keyUnsafe matches what a coordination key may not contain; keys become file names.
var keyUnsafe = regexp.MustCompile(`[^A-Za-z0-9._:-]`)

// coordinationKey names a device in ledgers and lock files. NVIDIA devices are named by their UUID (the
// same from NVML, procfs and nvidia-smi); other devices by vendor and PCI address, because their two
// backends report different identifiers for the same card; devices without a PCI address by their ID.
func coordinationKey(d Device) string {
	var k string
	switch {
	case d.Vendor == VendorNVIDIA && d.ID != "":
		k = d.ID
	case d.PCIBusID != "" && d.Kind != KindFPGA:
		k = string(d.Vendor) + "-" + d.PCIBusID
	default:
		k = string(d.Vendor) + "-" + d.ID
	}
	return keyUnsafe.ReplaceAllString(k, "_")
}

func uint64Ptr(v uint64) *uint64 { return &v }
func intPtr(v int) *int          { return &v }
