package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// AMDSMIGPU is one entry of `amd-smi list --json`.
type AMDSMIGPU struct {
	GPU         int    `json:"gpu"`
	BDF         string `json:"bdf"`
	UUID        string `json:"uuid"`
	KFDID       uint64 `json:"kfd_id"`
	NodeID      int    `json:"node_id"`
	PartitionID int    `json:"partition_id"`
}

// ParseAMDSMIList parses `amd-smi list --json`: an array of {"gpu", "bdf", "uuid", "kfd_id", "node_id",
// "partition_id"} objects (unknown fields are ignored).
func ParseAMDSMIList(data []byte) ([]AMDSMIGPU, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	var list []AMDSMIGPU
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("want a JSON array of GPUs: %w", err)
	}
	for i, g := range list {
		if g.GPU < 0 {
			return nil, fmt.Errorf("entry %d: gpu %d is negative", i, g.GPU)
		}
		if g.BDF != "" {
			bdf, ok := NormalizePCIBusID(g.BDF)
			if !ok {
				return nil, fmt.Errorf("entry %d: bdf %q is not a PCI address", i, truncate(g.BDF, 40))
			}
			list[i].BDF = bdf
		}
		if g.BDF == "" && g.UUID == "" {
			return nil, fmt.Errorf("entry %d: neither bdf nor uuid is set", i)
		}
	}
	return list, nil
}

// amdSMI runs `amd-smi list --json`, the fallback when the KFD topology cannot be read.
type amdSMI struct {
	runner Runner
	root   Root
}

func (b amdSMI) Name() string { return "amd-smi" }

func (b amdSMI) Probe(context.Context) (bool, string) {
	return probeTool(b.runner, "amd-smi")
}

func (b amdSMI) Devices(ctx context.Context) ([]Device, error) {
	gpus, err := runParsed(ctx, b.runner, ParseAMDSMIList, "amd-smi list --json", "amd-smi", "list", "--json")
	if err != nil {
		return nil, err
	}
	sort.SliceStable(gpus, func(i, j int) bool { return gpus[i].GPU < gpus[j].GPU })
	devs := make([]Device, 0, len(gpus))
	for _, g := range gpus {
		d := Device{Vendor: VendorAMD, Kind: KindGPU, HostIndex: g.GPU, PCIBusID: g.BDF, Source: b.Name()}
		d.ID = g.UUID
		if d.ID != "" && !strings.HasPrefix(d.ID, "GPU-") {
			d.ID = "GPU-" + d.ID
		}
		if d.PCIBusID != "" {
			if minor, ok := renderMinor(b.root, d.PCIBusID); ok {
				d.Minor = intPtr(minor)
				d.DevNodes = []string{"/dev/kfd", fmt.Sprintf("/dev/dri/renderD%d", minor)}
			}
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// renderMinor finds the DRM render node of a PCI device (/sys/bus/pci/devices/<bdf>/drm/renderD<N>).
func renderMinor(root Root, bdf string) (int, bool) {
	entries, err := root.ReadDir("/sys/bus/pci/devices/" + bdf + "/drm")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "renderD%d", &n); err == nil && n >= 0 {
			return n, true
		}
	}
	return 0, false
}
