package discovery

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// NVIDIAInformation is what the NVIDIA driver tells in /proc/driver/nvidia/gpus/<bus>/information.
type NVIDIAInformation struct {
	Model       string
	UUID        string
	BusLocation string // normalised PCI address
	Minor       *int   // "Device Minor": the N of /dev/nvidiaN
	Excluded    bool   // "GPU Excluded: Yes": the driver keeps the GPU from applications
}

// ParseNVIDIAInformation parses the "Key: value" lines of a driver information file. Keys it does not
// know are ignored; a line without a colon is an error naming the line.
func ParseNVIDIAInformation(data []byte) (NVIDIAInformation, error) {
	var info NVIDIAInformation
	err := eachLine(data, func(line int, text string) error {
		key, val, ok := strings.Cut(text, ":")
		if !ok {
			return fmt.Errorf("line %d: %q is not \"Key: value\"", line, truncate(text, 60))
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "Model":
			info.Model = val
		case "GPU UUID":
			if val != "" && !strings.EqualFold(val, "N/A") {
				info.UUID = val
			}
		case "Bus Location":
			bdf, ok := NormalizePCIBusID(val)
			if !ok {
				return fmt.Errorf("line %d: Bus Location %q is not a PCI address", line, truncate(val, 40))
			}
			info.BusLocation = bdf
		case "Device Minor":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 1<<20 {
				return fmt.Errorf("line %d: Device Minor %q is not a number", line, truncate(val, 40))
			}
			info.Minor = intPtr(n)
		case "GPU Excluded":
			info.Excluded = strings.EqualFold(val, "yes")
		}
		return nil
	})
	if err != nil {
		return NVIDIAInformation{}, err
	}
	if info.UUID == "" && info.BusLocation == "" {
		return NVIDIAInformation{}, fmt.Errorf("neither \"GPU UUID\" nor \"Bus Location\" is present")
	}
	return info, nil
}

// truncate shortens s to at most n bytes and an ellipsis for error messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // never cut a character in two
	}
	return s[:n] + "…"
}

// nvidiaProcfs reads the driver's per-GPU information files. It needs no library and no tool, but knows
// no memory size and cannot name MIG instances: when a GPU has MIG instances it fails, so that the chain
// moves on to nvidia-smi.
type nvidiaProcfs struct{ root Root }

const nvidiaGPUsDir = "/proc/driver/nvidia/gpus"

func (b nvidiaProcfs) Name() string { return "procfs" }

func (b nvidiaProcfs) Probe(context.Context) (bool, string) {
	return probeDirEntries(b.root, nvidiaGPUsDir, "NVIDIA kernel driver", "lists %d GPU(s)")
}

func (b nvidiaProcfs) Devices(context.Context) ([]Device, error) {
	entries, err := readBackendDir(b.root, nvidiaGPUsDir)
	if err != nil {
		return nil, err
	}
	var devs []Device
	for _, e := range entries {
		file := path.Join(nvidiaGPUsDir, e.Name(), "information")
		data, err := b.root.ReadFile(file)
		if err != nil {
			return nil, err
		}
		info, err := ParseNVIDIAInformation(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.root.Path(file), err)
		}
		if info.Excluded {
			continue
		}
		if info.BusLocation == "" {
			if bdf, ok := NormalizePCIBusID(e.Name()); ok {
				info.BusLocation = bdf
			}
		}
		if info.Minor != nil {
			if migs, _ := b.root.Glob(fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d/mig/gi*", *info.Minor)); len(migs) > 0 {
				return nil, fmt.Errorf("GPU %s has %d MIG instance(s), which the driver's procfs cannot name", info.BusLocation, len(migs))
			}
		}
		d := Device{
			Vendor:   VendorNVIDIA,
			Kind:     KindGPU,
			ID:       info.UUID,
			PCIBusID: info.BusLocation,
			Model:    info.Model,
			Minor:    info.Minor,
			DevNodes: nvidiaNodes(info.Minor),
			Source:   b.Name(),
		}
		devs = append(devs, d)
	}
	// NVML and nvidia-smi number GPUs in PCI bus order; do the same.
	sort.SliceStable(devs, func(i, j int) bool { return devs[i].PCIBusID < devs[j].PCIBusID })
	for i := range devs {
		devs[i].HostIndex = i
	}
	return devs, nil
}

// nvidiaNodes lists what a CUDA workload opens: the GPU's own node plus the control nodes.
func nvidiaNodes(minor *int) []string {
	if minor == nil {
		return nil
	}
	return []string{fmt.Sprintf("/dev/nvidia%d", *minor), "/dev/nvidiactl"}
}
