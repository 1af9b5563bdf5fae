package shared

import (
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/view"
)

// DefaultCoordinationFile is where discover and exec coordinate unless told otherwise. It differs from
// Flink's /var/tmp/flink-gpu-coordination on purpose: the formats differ.
const DefaultCoordinationFile = "/var/tmp/yarn-er-coordination"

// Argv0Names are the program names under which yarn-er behaves as `yarn-er discover` (see main.go):
// point Flink's external-resource.<name>.param.discovery-script.path at such a symlink.
var Argv0Names = []string{"nvidia-gpu-discovery.sh", "yarn-er-discover"}

// DeviceFlags are the flags discover and exec share.
type DeviceFlags struct {
	Vendor         string
	Name           string
	HostRoot       string
	ProcRoot       string
	Backends       []string
	NVMLLibrary    string
	CommandTimeout time.Duration

	CoordinationFile string
	Shared           bool
	LockTimeout      time.Duration
	ForeignTTL       time.Duration

	fs *pflag.FlagSet // where the flags were registered: whether --name was given
}

// Register adds the device flags to fs.
func (f *DeviceFlags) Register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.Vendor, "vendor", "auto", "device vendor: auto, nvidia, amd, intel-fpga or xilinx")
	fs.StringVar(&f.Name, "name", "gpu", "resource name reported in the spark and json formats; given as gpu or fpga, it also limits --vendor auto to that kind's vendors; a MIG resource type (nvidia.com/mig-1g.10gb) takes only MIG slices of that profile")
	fs.StringVar(&f.HostRoot, "host-root", "/", "directory holding the host's /sys, /proc and /dev")
	fs.StringVar(&f.ProcRoot, "proc-root", "/", "directory holding the /proc in which owner processes are checked")
	fs.StringSliceVar(&f.Backends, "backend", nil, "use only these backends (nvml, procfs, nvidia-smi, kfd, amd-smi, dfl, opae, aocl, xilinx-pci)")
	fs.StringVar(&f.NVMLLibrary, "nvml-library", "", "NVML library to load (default: libnvidia-ml.so.1 from the loader's path)")
	fs.DurationVar(&f.CommandTimeout, "command-timeout", 5*time.Second, "time limit for each run of nvidia-smi, amd-smi or aocl")
	fs.StringVar(&f.CoordinationFile, "coordination-file", DefaultCoordinationFile,
		"coordination file prefix: PATH.lock, PATH.ledger.<uid> and PATH.dev.<device>.lock are kept next to it")
	fs.BoolVar(&f.Shared, "shared-coordination", false, "accept coordination files of other users in a sticky world-writable directory")
	fs.DurationVar(&f.LockTimeout, "lock-timeout", discovery.DefaultLockTimeout, "longest wait for the coordination lock")
	fs.DurationVar(&f.ForeignTTL, "foreign-ttl", 0, "reclaim devices of owners in other PID namespaces after this long (0: never)")
}

// Completions registers the completions of the device flags on cmd.
func (f *DeviceFlags) Completions(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("vendor", cmdutil.FixedCompletion("auto", "nvidia", "amd", "intel-fpga", "xilinx"))
	_ = cmd.RegisterFlagCompletionFunc("backend", cmdutil.FixedCompletion(discovery.BackendNames()...))
}

// Validate checks the device flags and returns the vendor asked for; bad values are usage errors.
func (f *DeviceFlags) Validate() (discovery.Vendor, error) {
	v, err := discovery.ParseVendor(f.Vendor)
	if err != nil {
		return "", cmdutil.Usagef("--vendor: %v", err)
	}
	for _, b := range f.Backends {
		if !slices.Contains(discovery.BackendNames(), b) {
			return "", cmdutil.Usagef("--backend %q: want one of %s", b, strings.Join(discovery.BackendNames(), ", "))
		}
	}
	if f.LockTimeout <= 0 {
		return "", cmdutil.Usagef("--lock-timeout %s: must be positive", f.LockTimeout)
	}
	if f.CommandTimeout <= 0 {
		return "", cmdutil.Usagef("--command-timeout %s: must be positive", f.CommandTimeout)
	}
	if f.ForeignTTL < 0 {
		return "", cmdutil.Usagef("--foreign-ttl %s: must not be negative", f.ForeignTTL)
	}
	if strings.TrimSpace(f.Name) == "" {
		return "", cmdutil.Usagef("--name: must not be empty")
	}
	return v, nil
}

// kind is the kind of device --name asks for when it was given (yarn-er's AM gives it: gpu or fpga),
// else "" (every kind, as --vendor auto always searched).
func (f *DeviceFlags) kind() discovery.Kind {
	if f.fs == nil || !f.fs.Changed("name") {
		return ""
	}
	return discovery.KindOfName(f.Name)
}

// migProfile is the MIG profile --name asks for (nvidia.com/mig-1g.10gb: 1g.10gb), "" otherwise.
func (f *DeviceFlags) migProfile() string {
	if f.kind() != discovery.KindMIG {
		return ""
	}
	return discovery.MIGProfileOfName(f.Name)
}

// DiscoveryOptions are the discovery options of the flags; byID addresses devices by UUID.
func (f *DeviceFlags) DiscoveryOptions(cf *cmdutil.Factory, byID bool) discovery.Options {
	return discovery.Options{
		Root:            discovery.NewRoot(f.HostRoot),
		Kind:            f.kind(),
		MIGProfile:      f.migProfile(),
		Getenv:          cf.Env.Getenv,
		CommandTimeout:  f.CommandTimeout,
		NVMLLibraryPath: f.NVMLLibrary,
		Backends:        f.Backends,
		AddressByID:     byID,
		Logger:          cf.Logger().With("component", "discovery"),
	}
}

// Proc is the /proc of --proc-root.
func (f *DeviceFlags) Proc() discovery.Proc { return discovery.NewProc(discovery.NewRoot(f.ProcRoot)) }

// Coordinator is the coordinator of --coordination-file.
func (f *DeviceFlags) Coordinator(cf *cmdutil.Factory) (*discovery.Coordinator, error) {
	proc := f.Proc()
	return discovery.NewCoordinator(discovery.CoordinatorOptions{
		Path:        f.CoordinationFile,
		Shared:      f.Shared,
		LockTimeout: f.LockTimeout,
		Proc:        &proc,
		ForeignTTL:  f.ForeignTTL,
		Logger:      cf.Logger().With("component", "coordination"),
	})
}

// DiscoverFlags are discover's flags: the device flags and its own.
type DiscoverFlags struct {
	DeviceFlags
	Coordination bool
	Format       string
	Address      string
	Release      bool
	OwnerPID     int
}

// Register adds discover's flags to fs.
func (f *DiscoverFlags) Register(fs *pflag.FlagSet) {
	f.DeviceFlags.Register(fs)
	fs.BoolVar(&f.Coordination, "enable-coordination-mode", false, "hold the devices for the calling process until it ends")
	fs.StringVar(&f.Format, "format", "flink", "output: flink (0,1), spark ({\"name\":…,\"addresses\":[…]}) or json")
	fs.StringVar(&f.Address, "address", "index", "what flink and spark print per device: index or id (UUID)")
	fs.BoolVar(&f.Release, "release", false, "free the devices held for the owner instead of finding new ones")
	fs.IntVar(&f.OwnerPID, "owner-pid", 0, "process that holds the devices (default: the parent of yarn-er)")
}

// Completions registers the completions of discover's flags on cmd.
func (f *DiscoverFlags) Completions(cmd *cobra.Command) {
	f.DeviceFlags.Completions(cmd)
	_ = cmd.RegisterFlagCompletionFunc("format", cmdutil.FixedCompletion("flink", "spark", "json"))
	_ = cmd.RegisterFlagCompletionFunc("address", cmdutil.FixedCompletion("index", "id"))
}

// ValidateDiscoverArgs parses args (what Flink passes after AMOUNT) with discover's own flags and
// the global ones, as `yarn-er discover 1 ARGS...` would, and checks what is left with discover's
// argument rules: preflight's check of Flink's discovery-script.args.
func ValidateDiscoverArgs(args []string) error {
	quiet := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, cmdutil.Env{})
	parent := &cobra.Command{Use: "yarn-er"} // the global flags (-v, --log-level, ...) are discover's too
	quiet.AddGlobalFlags(parent)
	var f DiscoverFlags
	disc := &cobra.Command{Use: "discover", Args: cobra.ArbitraryArgs}
	f.Register(disc.Flags())
	parent.AddCommand(disc)
	if err := disc.ParseFlags(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errors.New("--help prints the help instead of discovering devices")
		}
		return DiscoverFlagError(disc, err)
	}
	_, err := ParseDiscoverAmount(append([]string{"1"}, disc.Flags().Args()...), f.Release)
	return err
}

// DiscoverFlagError turns flag errors of discover's flags into usage errors with hints for the
// usual slips.
func DiscoverFlagError(_ *cobra.Command, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "--enable-coordination") && !strings.Contains(msg, "--enable-coordination-mode"):
		return cmdutil.Usagef("%s: did you mean --enable-coordination-mode? (Flink's documentation spells it --enable-coordination, which Flink's own script silently ignores)", msg)
	case strings.HasPrefix(msg, "unknown shorthand flag: '") && len(msg) > 25 && msg[25] >= '0' && msg[25] <= '9':
		return cmdutil.Usagef("%s: AMOUNT must be a whole number, 0 or more", msg)
	}
	return &cmdutil.UsageError{Err: err}
}

// ParseDiscoverAmount reads discover's positional arguments: AMOUNT, optionally followed by the literal "null" that
// Flink's GPUDriver appends when discovery-script.args is unset.
func ParseDiscoverAmount(args []string, release bool) (int, error) {
	if len(args) == 2 && args[1] == "null" {
		args = args[:1]
	}
	switch {
	case len(args) == 0 && release:
		return 0, nil
	case len(args) == 0:
		return 0, cmdutil.Usagef("missing AMOUNT: say how many devices to find (yarn-er discover AMOUNT)")
	case len(args) > 1:
		return 0, cmdutil.Usagef("unexpected arguments %q after AMOUNT: discover takes only AMOUNT and flags", args[1:])
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 {
		return 0, cmdutil.Usagef("AMOUNT %q: must be a whole number, 0 or more", args[0])
	}
	if n > 4096 {
		return 0, cmdutil.Usagef("AMOUNT %d: no host has that many devices", n)
	}
	if release && n != 0 {
		return 0, cmdutil.Usagef("--release frees every device of the owner; give no AMOUNT (or 0)")
	}
	return n, nil
}

// DiscoverView is the json format of chosen (nil: none yet) out of what discovery found, for discover and
// exec's --info-file.
func DiscoverView(name string, amount int, res *discovery.Result, chosen []discovery.Device) view.Discover {
	if chosen == nil {
		chosen = []discovery.Device{}
	}
	return view.Discover{
		Name: name, Amount: amount, Vendor: res.Vendor, Backend: res.Backend, Devices: chosen,
		Available: len(res.Devices), Skipped: res.Skipped, Probes: res.Probes,
		Warnings: res.Warnings, NVMLCompiled: res.NVMLCompiled,
	}
}
