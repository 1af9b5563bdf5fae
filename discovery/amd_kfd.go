package discovery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
)

// KFDProperties are the "key value" lines of a KFD topology properties file
// (/sys/class/kfd/kfd/topology/nodes/N/properties and …/mem_banks/M/properties). Every value is an
// unsigned integer.
type KFDProperties map[string]uint64

// ParseKFDProperties parses a KFD properties file. A line that is not "key value" with a decimal value
// is an error naming the line.
func ParseKFDProperties(data []byte) (KFDProperties, error) {
	props := KFDProperties{}
	err := eachLine(data, func(line int, text string) error {
		f := strings.Fields(text)
		if len(f) != 2 {
			return fmt.Errorf("line %d: %q is not \"key value\"", line, truncate(text, 60))
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: %s value %q is not an unsigned integer", line, truncate(f[0], 40), truncate(f[1], 30))
		}
		props[f[0]] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return props, nil
}

// gfxTarget renders gfx_target_version (90010) as the ISA name ROCm uses (gfx90a).
func gfxTarget(v uint64) string {
	if v == 0 {
		return ""
	}
	major, minor, step := v/10000, (v/100)%100, v%100
	return fmt.Sprintf("gfx%d%x%x", major, minor, step)
}

// amdKFD reads the KFD topology: a node with SIMDs is a GPU (or a GPU partition).
type amdKFD struct{ root Root }

const kfdNodesDir = "/sys/class/kfd/kfd/topology/nodes"

const amdPCIVendor = 0x1002

func (b amdKFD) Name() string { return "kfd" }

func (b amdKFD) Probe(context.Context) (bool, string) {
	return probeDirEntries(b.root, kfdNodesDir, "amdgpu/KFD driver", "has %d node(s)")
}

func (b amdKFD) Devices(context.Context) ([]Device, error) {
	entries, err := readBackendDir(b.root, kfdNodesDir)
	if err != nil {
		return nil, err
	}
	type node struct {
		n     int
		props KFDProperties
		dir   string
	}
	var nodes []node
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := path.Join(kfdNodesDir, e.Name())
		data, err := b.root.ReadFile(path.Join(dir, "properties"))
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				continue // recent kernels hide nodes of GPUs the device cgroup denies
			}
			return nil, err
		}
		props, err := ParseKFDProperties(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.root.Path(path.Join(dir, "properties")), err)
		}
		if props["simd_count"] == 0 {
			continue // a CPU node
		}
		if v, ok := props["vendor_id"]; ok && v != amdPCIVendor {
			continue
		}
		nodes = append(nodes, node{n: n, props: props, dir: dir})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].n < nodes[j].n })
	devs := make([]Device, 0, len(nodes))
	for i, nd := range nodes {
		p := nd.props
		d := Device{Vendor: VendorAMD, Kind: KindGPU, HostIndex: i, Model: gfxTarget(p["gfx_target_version"]), Source: b.Name()}
		if loc, ok := p["location_id"]; ok {
			d.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.%x", p["domain"]&0xffff, (loc>>8)&0xff, (loc>>3)&0x1f, loc&0x7)
		}
		if id := p["unique_id"]; id != 0 {
			d.ID = fmt.Sprintf("GPU-%016x", id)
		} else {
			d.ID = d.PCIBusID
		}
		if d.ID == "" {
			d.ID = fmt.Sprintf("kfd-node-%d", nd.n)
		}
		if minor, ok := p["drm_render_minor"]; ok && minor < 1<<20 {
			d.Minor = intPtr(int(minor))
			d.DevNodes = []string{"/dev/kfd", fmt.Sprintf("/dev/dri/renderD%d", minor)}
		}
		d.MemoryMiB = b.memory(nd.dir)
		devs = append(devs, d)
	}
	return devs, nil
}

// memory sums the frame-buffer banks (heap_type 1 public, 2 private) of a node; nil when none is known.
func (b amdKFD) memory(dir string) *uint64 {
	banks, err := b.root.ReadDir(path.Join(dir, "mem_banks"))
	if err != nil {
		return nil
	}
	var total uint64
	found := false
	for _, bank := range banks {
		data, err := b.root.ReadFile(path.Join(dir, "mem_banks", bank.Name(), "properties"))
		if err != nil {
			continue
		}
		props, err := ParseKFDProperties(data)
		if err != nil {
			continue
		}
		if ht := props["heap_type"]; ht == 1 || ht == 2 {
			total += props["size_in_bytes"]
			found = true
		}
	}
	if !found {
		return nil
	}
	return uint64Ptr(total / (1 << 20))
}
