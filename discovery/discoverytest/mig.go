package discoverytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MIGSlice is one MIG instance of a generated GPU: its profile (1g.10gb) and the GPU and compute
// instance ids the driver gives it.
type MIGSlice struct {
	Profile string
	GI, CI  int
}

// NVIDIAMIGUUID is the UUID of the generated MIG slice j of GPU i (modern MIG UUIDs are opaque;
// these differ from each other and from every GPU UUID).
func NVIDIAMIGUUID(i, j int) string { return fmt.Sprintf("MIG-00000000-0000-%04d-0000-%012d", i, j) }

// NVIDIAMIGHost adds GPUs to the tree, one per entry of slices: nil is a GPU with MIG off, a list
// its MIG slices (MIG on). The tree gets what the driver shows for them (procfs information
// files, /dev nodes, and for MIG GPUs the capability files below
// /proc/driver/nvidia/capabilities/gpu<minor>/mig/, from which procfs cannot name the slices);
// bin gets a fake nvidia-smi answering the two calls discovery makes, --query-gpu (CSV) and -L
// (one line per GPU, "  MIG <profile> Device <n>: (UUID: MIG-...)" per slice, as the real one
// prints them). It returns bin, for PATH.
func (tr *Tree) NVIDIAMIGHost(bin string, slices ...[]MIGSlice) string {
	tr.t.Helper()
	var csv, list strings.Builder
	for i, ms := range slices {
		bus := NVIDIABusID(i)
		tr.File("/proc/driver/nvidia/gpus/"+bus+"/information", NVIDIAInformation("NVIDIA H200", NVIDIAUUID(i), bus, i))
		tr.File(fmt.Sprintf("/dev/nvidia%d", i), "")
		fmt.Fprintf(&csv, "%d, %s, 0000%s, 143771, NVIDIA H200\n", i, NVIDIAUUID(i), strings.ToUpper(bus))
		fmt.Fprintf(&list, "GPU %d: NVIDIA H200 (UUID: %s)\n", i, NVIDIAUUID(i))
		for j, m := range ms {
			capMinor := 100 + 10*i + 2*j
			tr.File(fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d/mig/gi%d/access", i, m.GI),
				fmt.Sprintf("DeviceFileMinor: %d\nDeviceFileMode: 292\nDeviceFileModify: 1\n", capMinor))
			tr.File(fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu%d/mig/gi%d/ci%d/access", i, m.GI, m.CI),
				fmt.Sprintf("DeviceFileMinor: %d\nDeviceFileMode: 292\nDeviceFileModify: 1\n", capMinor+1))
			fmt.Fprintf(&list, "  MIG %-11s Device %2d: (UUID: %s)\n", m.Profile, j, NVIDIAMIGUUID(i, j))
		}
	}
	tr.File("/dev/nvidiactl", "")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		tr.t.Fatal(err)
	}
	for name, content := range map[string]string{"nvidia-smi-query.csv": csv.String(), "nvidia-smi-L.txt": list.String()} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(content), 0o644); err != nil {
			tr.t.Fatal(err)
		}
	}
	script := fmt.Sprintf("case \"$*\" in\n  %q) cat %q ;;\n  -L) cat %q ;;\n  *) echo \"nvidia-smi (fake): unexpected arguments: $*\" >&2; exit 9 ;;\nesac\n",
		"--query-gpu=index,uuid,pci.bus_id,memory.total,name --format=csv,noheader,nounits",
		filepath.Join(bin, "nvidia-smi-query.csv"), filepath.Join(bin, "nvidia-smi-L.txt"))
	Tool(tr.t, bin, "nvidia-smi", script)
	return bin
}
