package discovery

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Options configure Discover. The zero value reads the real host and finds no tool (no PATH).
type Options struct {
	// Root is where /sys, /proc/driver and /dev are read; the zero Root is the real host.
	Root Root
	// Kind limits the vendors an automatic search (vendor "") tries to those of this kind of
	// device (AutoVendors); "" tries every vendor. KindMIG keeps only MIG slices (of MIGProfile
	// when set), KindGPU keeps MIG slices only on a host without whole GPUs.
	Kind Kind
	// MIGProfile, with Kind KindMIG, keeps only the slices of this profile (1g.10gb).
	MIGProfile string
	// Getenv reads the visibility variables and PATH; nil reads nothing (every device visible).
	Getenv func(string) string
	// Runner runs nvidia-smi, amd-smi and aocl; nil means an ExecRunner on Getenv("PATH").
	Runner Runner
	// CommandTimeout bounds each tool run of the default Runner; 0 means 5 s.
	CommandTimeout time.Duration
	// CanOpen checks that this process may open a device node (given below Root); nil opens it
	// read-write and closes it again.
	CanOpen func(path string) error
	// NVMLLibraryPath is the NVML library to load; "" lets the dynamic loader find libnvidia-ml.so.1.
	NVMLLibraryPath string
	// Backends, when set, restricts the chains to the backends named (nvml, procfs, nvidia-smi, kfd,
	// amd-smi, dfl, opae, aocl, xilinx-pci).
	Backends []string
	// Chain, when set, replaces the built-in backends of the vendor asked for (tests, mocks).
	Chain []Backend
	// AddressByID makes Device.Address the device ID instead of the index.
	AddressByID bool
	// Logger receives debug and warning messages; nil discards them.
	Logger *slog.Logger
}

// SkippedDevice is a device a backend listed that this process may not use, and why.
type SkippedDevice struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Result is what Discover found. Its JSON shape is public (`yarn-er discover --format json`).
type Result struct {
	// Vendor is the vendor whose devices were found ("" when none was).
	Vendor Vendor `json:"vendor"`
	// Backend is the backend that listed them.
	Backend string `json:"backend"`
	// Devices are the usable devices, Index 0..n-1.
	Devices []Device `json:"devices"`
	// Skipped are devices hidden by a visibility variable or whose nodes cannot be opened.
	Skipped []SkippedDevice `json:"skipped"`
	// Probes says what each backend tried answered.
	Probes []ProbeResult `json:"probes"`
	// Warnings are problems that did not stop discovery (a bad visibility entry, a failing backend).
	Warnings []string `json:"warnings"`
	// NVMLCompiled says whether this binary can use NVML at all.
	NVMLCompiled bool `json:"nvmlCompiled"`
}

// Discover finds the usable devices of vendor ("" = auto: NVIDIA, AMD, Intel FPGA, Xilinx, the first
// with a usable device). It returns a *NoDevicesError (wrapping ErrNoDevices) when none is usable;
// the Result is returned with it, for its probes.
func Discover(ctx context.Context, vendor Vendor, opts Options) (*Result, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if opts.Runner == nil {
		opts.Runner = ExecRunner{Path: opts.Getenv("PATH"), Timeout: opts.CommandTimeout}
	}
	if opts.CanOpen == nil {
		opts.CanOpen = openCheck
	}
	vendors := []Vendor{vendor}
	if vendor == "" {
		if opts.Chain != nil {
			return nil, fmt.Errorf("a custom backend chain needs an explicit vendor")
		}
		vendors = AutoVendors(opts.Kind)
	}
	res := &Result{NVMLCompiled: nvmlCompiled, Devices: []Device{}, Skipped: []SkippedDevice{}, Probes: []ProbeResult{}, Warnings: []string{}}
	for _, v := range vendors {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		chain := opts.Chain
		if chain == nil {
			chain = builtinChain(v, opts)
		}
		devs, backend := runChain(ctx, v, chain, opts, res)
		if backend == "" {
			continue
		}
		usable := postprocess(v, devs, opts, res)
		if len(usable) > 0 {
			res.Vendor, res.Backend, res.Devices = v, backend, usable
			return res, nil
		}
	}
	return res, &NoDevicesError{Vendor: vendor, Probes: res.Probes, Skipped: res.Skipped}
}

// builtinChain returns the backends of vendor in the order they are tried.
func builtinChain(v Vendor, opts Options) []Backend {
	var chain []Backend
	switch v {
	case VendorNVIDIA:
		if opts.Root.IsHost() {
			chain = append(chain, newNVMLBackend(opts.NVMLLibraryPath, opts.Root))
		} else {
			chain = append(chain, skippedBackend{name: "nvml", reason: "NVML talks to the real driver and cannot read the host root " + opts.Root.Dir()})
		}
		chain = append(chain, nvidiaProcfs{root: opts.Root}, nvidiaSMI{runner: opts.Runner})
	case VendorAMD:
		chain = []Backend{amdKFD{root: opts.Root}, amdSMI{runner: opts.Runner, root: opts.Root}}
	case VendorIntelFPGA:
		chain = []Backend{intelDFL{root: opts.Root}, intelOPAE{root: opts.Root}, aocl{runner: opts.Runner}}
	case VendorXilinx:
		chain = []Backend{xilinxPCI{root: opts.Root}}
	}
	if len(opts.Backends) == 0 {
		return chain
	}
	allowed := map[string]bool{}
	for _, b := range opts.Backends {
		allowed[b] = true
	}
	var out []Backend
	for _, b := range chain {
		if allowed[b.Name()] {
			out = append(out, b)
		}
	}
	return out
}

// BackendNames lists every built-in backend name, for validating --backend.
func BackendNames() []string {
	return []string{"nvml", "procfs", "nvidia-smi", "kfd", "amd-smi", "dfl", "opae", "aocl", "xilinx-pci"}
}

// skippedBackend stands for a backend that cannot run in this configuration.
type skippedBackend struct{ name, reason string }

func (s skippedBackend) Name() string                         { return s.name }
func (s skippedBackend) Probe(context.Context) (bool, string) { return false, s.reason }
func (s skippedBackend) Devices(context.Context) ([]Device, error) {
	return nil, unavailable("%s", s.reason)
}

// runChain tries the backends in order and returns the devices of the first that works.
func runChain(ctx context.Context, v Vendor, chain []Backend, opts Options, res *Result) ([]Device, string) {
	for _, b := range chain {
		ok, reason := b.Probe(ctx)
		reason = strings.TrimPrefix(reason, ErrBackendUnavailable.Error()+": ")
		pr := ProbeResult{Vendor: v, Backend: b.Name(), OK: ok, Reason: reason}
		if !ok {
			opts.Logger.Debug("backend unavailable", "vendor", v, "backend", b.Name(), "reason", reason)
			res.Probes = append(res.Probes, pr)
			continue
		}
		devs, err := b.Devices(ctx)
		if err != nil {
			pr.OK, pr.Reason = false, "listing failed: "+err.Error()
			opts.Logger.Warn("backend failed, trying the next", "vendor", v, "backend", b.Name(), "err", err)
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s/%s: %v", v, b.Name(), err))
			res.Probes = append(res.Probes, pr)
			continue
		}
		n := len(devs)
		pr.Devices = &n
		opts.Logger.Debug("backend listed devices", "vendor", v, "backend", b.Name(), "devices", n)
		res.Probes = append(res.Probes, pr)
		return devs, b.Name()
	}
	return nil, ""
}

// postprocess applies the visibility variables and the open check, and numbers what is left.
func postprocess(v Vendor, devs []Device, opts Options, res *Result) []Device {
	count := map[string]int{}
	for i := range devs {
		devs[i].Vendor = v
		if devs[i].ID == "" {
			devs[i].ID = devs[i].PCIBusID // backends leave ID empty when they know no better identity
		}
		devs[i].Key = coordinationKey(devs[i])
		count[devs[i].Key]++
	}
	for i := range devs {
		if count[devs[i].Key] > 1 {
			// Partitions of one card (AMD MI300 CPX) share a PCI address: tell them apart by ID.
			devs[i].Key = keyUnsafe.ReplaceAllString(devs[i].Key+"."+devs[i].ID, "_")
		}
	}
	if kept, skipped := filterKind(devs, opts.Kind, strings.ToLower(opts.MIGProfile)); len(skipped) > 0 {
		res.Skipped = append(res.Skipped, skipped...)
		devs = kept
	}
	skip := func(before, after []Device, reason string) {
		kept := map[string]bool{}
		for _, d := range after {
			kept[d.ID] = true
		}
		for _, d := range before {
			if !kept[d.ID] {
				res.Skipped = append(res.Skipped, SkippedDevice{ID: d.ID, Reason: reason})
			}
		}
	}
	warn := func(ws []string) {
		for _, w := range ws {
			opts.Logger.Warn(w)
			res.Warnings = append(res.Warnings, w)
		}
	}
	if v == VendorNVIDIA {
		if val := opts.Getenv("NVIDIA_VISIBLE_DEVICES"); val != "" {
			after, ws := selectNVIDIAVisible(devs, ParseVisibleDevices(val))
			warn(ws)
			skip(devs, after, "not in NVIDIA_VISIBLE_DEVICES="+val)
			devs = after
		}
	}
	var open []Device
	for _, d := range devs {
		if err := canOpenAll(d, opts); err != nil {
			res.Skipped = append(res.Skipped, SkippedDevice{ID: d.ID, Reason: err.Error()})
			opts.Logger.Debug("device skipped", "id", d.ID, "reason", err)
			continue
		}
		open = append(open, d)
	}
	devs = open
	apply := func(variable string) {
		val := opts.Getenv(variable)
		if val == "" {
			return
		}
		after, ws := selectOrdered(devs, ParseVisibleDevices(val), variable)
		warn(ws)
		skip(devs, after, "not in "+variable+"="+val)
		devs = after
	}
	switch v {
	case VendorNVIDIA:
		apply("CUDA_VISIBLE_DEVICES")
	case VendorAMD:
		apply("ROCR_VISIBLE_DEVICES")
		if opts.Getenv("HIP_VISIBLE_DEVICES") != "" {
			apply("HIP_VISIBLE_DEVICES")
		} else {
			apply("CUDA_VISIBLE_DEVICES") // HIP reads it when HIP_VISIBLE_DEVICES is unset
		}
	}
	for i := range devs {
		devs[i].Index = i
		switch {
		case opts.AddressByID:
			devs[i].Address = devs[i].ID
		case devs[i].MIG != nil:
			devs[i].Address = fmt.Sprintf("%d:%d", devs[i].HostIndex, devs[i].MIG.Index)
		default:
			devs[i].Address = strconv.Itoa(i)
		}
		if devs[i].DevNodes == nil {
			devs[i].DevNodes = []string{}
		}
	}
	return devs
}

// canOpenAll checks every node of d.
func canOpenAll(d Device, opts Options) error {
	for _, node := range d.DevNodes {
		if err := opts.CanOpen(opts.Root.Path(node)); err != nil {
			return fmt.Errorf("cannot open %s: %w", node, err)
		}
	}
	return nil
}
