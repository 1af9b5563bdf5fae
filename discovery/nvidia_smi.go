package discovery

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// nvidiaSMIQuery is the --query-gpu list; the name comes last because it is the only field that could
// contain a comma.
const nvidiaSMIQuery = "index,uuid,pci.bus_id,memory.total,name"

// NVIDIASMIGPU is one line of `nvidia-smi --query-gpu=index,uuid,pci.bus_id,memory.total,name
// --format=csv,noheader,nounits`.
type NVIDIASMIGPU struct {
	Index     int
	UUID      string
	PCIBusID  string  // normalised
	MemoryMiB *uint64 // nil for "[N/A]"
	Name      string
}

// ParseNVIDIASMICSV parses nvidia-smi's CSV answer to the query above. Errors name the line.
func ParseNVIDIASMICSV(data []byte) ([]NVIDIASMIGPU, error) {
	var out []NVIDIASMIGPU
	err := eachLine(data, func(line int, text string) error {
		f := strings.SplitN(text, ",", 5)
		if len(f) != 5 {
			return fmt.Errorf("line %d: %q has %d fields, want %d (%s)", line, truncate(text, 80), len(f), 5, nvidiaSMIQuery)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil || idx < 0 || idx > 1<<16 {
			return fmt.Errorf("line %d: index %q is not a number", line, truncate(f[0], 20))
		}
		g := NVIDIASMIGPU{Index: idx, UUID: f[1], Name: f[4]}
		if !strings.HasPrefix(g.UUID, "GPU-") {
			return fmt.Errorf("line %d: uuid %q does not start with GPU-", line, truncate(f[1], 60))
		}
		bdf, ok := NormalizePCIBusID(f[2])
		if !ok {
			return fmt.Errorf("line %d: pci.bus_id %q is not a PCI address", line, truncate(f[2], 40))
		}
		g.PCIBusID = bdf
		if mem, err := strconv.ParseUint(f[3], 10, 64); err == nil {
			g.MemoryMiB = uint64Ptr(mem)
		} else if !isNotAvailable(f[3]) {
			return fmt.Errorf("line %d: memory.total %q is not a number of MiB", line, truncate(f[3], 20))
		}
		out = append(out, g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func isNotAvailable(s string) bool {
	switch strings.ToLower(strings.Trim(s, "[] ")) {
	case "n/a", "not supported", "unknown error", "insufficient permissions":
		return true
	}
	return false
}

// NVIDIASMIMIG is one MIG device from `nvidia-smi -L`.
type NVIDIASMIMIG struct {
	GPUIndex   int
	ParentUUID string
	Profile    string // "3g.20gb"
	Index      int    // "Device N"
	UUID       string // MIG-… (legacy: MIG-GPU-<uuid>/<gi>/<ci>)
	GI, CI     *int   // from a legacy UUID only
}

var (
	smiGPULine = regexp.MustCompile(`^GPU (\d+): (.*?) ?\(UUID: (GPU-[^)\s]+)\)\s*$`)
	smiMIGLine = regexp.MustCompile(`^MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)\s]+)\)\s*$`)
	legacyMIG  = regexp.MustCompile(`^MIG-(GPU-[^/]+)/(\d+)/(\d+)$`)
)

// ParseNVIDIASMIList parses `nvidia-smi -L` and returns the MIG devices it lists (GPU lines only give
// the parents). Lines it does not recognise are errors naming the line.
func ParseNVIDIASMIList(data []byte) ([]NVIDIASMIMIG, error) {
	var out []NVIDIASMIMIG
	parent, parentIdx := "", -1
	err := eachLine(data, func(line int, text string) error {
		if m := smiGPULine.FindStringSubmatch(text); m != nil {
			idx, err := strconv.Atoi(m[1])
			if err != nil || idx > 1<<16 {
				return fmt.Errorf("line %d: GPU index %q is not a number", line, m[1])
			}
			parent, parentIdx = m[3], idx
			return nil
		}
		if m := smiMIGLine.FindStringSubmatch(text); m != nil {
			if parent == "" {
				return fmt.Errorf("line %d: MIG device before any GPU line", line)
			}
			idx, err := strconv.Atoi(m[2])
			if err != nil || idx > 1<<16 {
				return fmt.Errorf("line %d: MIG device index %q is not a number", line, m[2])
			}
			mig := NVIDIASMIMIG{GPUIndex: parentIdx, ParentUUID: parent, Profile: m[1], Index: idx, UUID: m[3]}
			if l := legacyMIG.FindStringSubmatch(mig.UUID); l != nil {
				gi, err1 := strconv.Atoi(l[2])
				ci, err2 := strconv.Atoi(l[3])
				if err1 == nil && err2 == nil {
					mig.GI, mig.CI = intPtr(gi), intPtr(ci)
				}
			}
			out = append(out, mig)
			return nil
		}
		return fmt.Errorf("line %d: %q is neither a GPU nor a MIG line", line, truncate(text, 80))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// nvidiaSMI runs nvidia-smi (Flink's own way): the CSV query, then -L for MIG devices.
type nvidiaSMI struct{ runner Runner }

func (b nvidiaSMI) Name() string { return "nvidia-smi" }

func (b nvidiaSMI) Probe(context.Context) (bool, string) {
	return probeTool(b.runner, "nvidia-smi")
}

func (b nvidiaSMI) Devices(ctx context.Context) ([]Device, error) {
	gpus, err := runParsed(ctx, b.runner, ParseNVIDIASMICSV, "nvidia-smi --query-gpu",
		"nvidia-smi", "--query-gpu="+nvidiaSMIQuery, "--format=csv,noheader,nounits")
	if err != nil {
		return nil, err
	}
	sort.SliceStable(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	migs, err := runParsed(ctx, b.runner, ParseNVIDIASMIList, "nvidia-smi -L", "nvidia-smi", "-L")
	if err != nil {
		return nil, err
	}
	byParent := map[string][]NVIDIASMIMIG{}
	for _, m := range migs {
		byParent[m.ParentUUID] = append(byParent[m.ParentUUID], m)
	}
	var devs []Device
	for _, g := range gpus {
		if ms := byParent[g.UUID]; len(ms) > 0 {
			for _, m := range ms {
				devs = append(devs, Device{
					Vendor: VendorNVIDIA, Kind: KindMIG, ID: m.UUID, PCIBusID: g.PCIBusID,
					Model: g.Name + " MIG " + m.Profile, Parent: g.UUID, HostIndex: g.Index,
					MIG:    &MIGInfo{Index: m.Index, GPUInstance: m.GI, ComputeInstance: m.CI, Profile: m.Profile},
					Source: b.Name(),
				})
			}
			continue
		}
		devs = append(devs, Device{
			Vendor: VendorNVIDIA, Kind: KindGPU, ID: g.UUID, PCIBusID: g.PCIBusID, Model: g.Name,
			MemoryMiB: g.MemoryMiB, HostIndex: g.Index, Source: b.Name(),
		})
	}
	return devs, nil
}
