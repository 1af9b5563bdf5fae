// Package discover is `yarn-er discover`, a drop-in for Flink's GPU discovery script, and the
// device flags it shares with exec.
package discover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/internal/cmdutil"
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
}

// Register adds the device flags to fs.
func (f *DeviceFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Vendor, "vendor", "auto", "device vendor: auto, nvidia, amd, intel-fpga or xilinx")
	fs.StringVar(&f.Name, "name", "gpu", "resource name reported in the spark and json formats")
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

// DiscoveryOptions are the discovery options of the flags; byID addresses devices by UUID.
func (f *DeviceFlags) DiscoveryOptions(cf *cmdutil.Factory, byID bool) discovery.Options {
	return discovery.Options{
		Root:            discovery.NewRoot(f.HostRoot),
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

// Options are discover's flags and arguments.
type Options struct {
	DeviceFlags
	cmdutil.Base // Args: AMOUNT (and Flink's trailing "null")
	Coordination bool
	Format       string
	Address      string
	Release      bool
	OwnerPID     int

	// getppid is os.Getppid, or a test's stand-in.
	getppid func() int
}

// NewCmdDiscover returns `yarn-er discover`; runF (nil: discoverRun) runs it.
func NewCmdDiscover(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "discover AMOUNT",
		Short: "Find AMOUNT free GPUs or FPGAs and print them the way Flink's discovery script does",
		Long: `discover finds AMOUNT usable devices on this host and prints them for Flink's GPU driver (or
Spark, or as JSON). It is a drop-in for Flink's nvidia-gpu-discovery.sh: AMOUNT comes first, the flink
format prints one line of comma-separated indices on stdout, every log goes to stderr, and a
non-zero exit means no device information.

With --enable-coordination-mode the devices are recorded for the calling process (the parent of
yarn-er, normally the TaskManager JVM) until it ends, so TaskManagers and containers on one host
never share a device. Dead owners are reclaimed; live owners are never robbed; devices held by
'yarn-er exec' workloads are skipped.

For Flink, link the binary under Flink's script name and point the discovery script at the link:
  ln -s /usr/local/bin/yarn-er $FLINK_HOME/plugins/external-resource-gpu/nvidia-gpu-discovery.sh
  external-resource.gpu.param.discovery-script.args: --enable-coordination-mode
yarn-er then runs as a direct child of the TaskManager. Never wrap it in a shell script (the shell
would become the owner and exit at once), or use 'exec yarn-er discover "$@"' in the wrapper.

discover ignores YARN_ER_* variables and --config: only its command line counts.

Exit codes: 0 ok (AMOUNT 0 prints nothing), 2 bad arguments, 5 not enough free devices or the
coordination lock timed out, 1 any other error.`,
		Example: `  yarn-er discover 2
  yarn-er discover 1 --enable-coordination-mode --coordination-file /var/tmp/flink-gpus
  yarn-er discover 2 --format spark --name gpu
  yarn-er discover 0 --release --owner-pid 4242`,
		Args: cobra.ArbitraryArgs,
		// discover serves scripts (Flink's GPU driver): the environment and the settings file must
		// not change what it prints, so only the logger is set up.
		PersistentPreRunE: func(*cobra.Command, []string) error { return f.SetupLogger() },
		RunE:              cmdutil.RunE(o, runF, discoverRun),
	}
	fs := cmd.Flags()
	o.Register(fs)
	fs.BoolVar(&o.Coordination, "enable-coordination-mode", false, "hold the devices for the calling process until it ends")
	fs.StringVar(&o.Format, "format", "flink", "output: flink (0,1), spark ({\"name\":…,\"addresses\":[…]}) or json")
	fs.StringVar(&o.Address, "address", "index", "what flink and spark print per device: index or id (UUID)")
	fs.BoolVar(&o.Release, "release", false, "free the devices held for the owner instead of finding new ones")
	fs.IntVar(&o.OwnerPID, "owner-pid", 0, "process that holds the devices (default: the parent of yarn-er)")
	o.Completions(cmd)
	_ = cmd.RegisterFlagCompletionFunc("format", cmdutil.FixedCompletion("flink", "spark", "json"))
	_ = cmd.RegisterFlagCompletionFunc("address", cmdutil.FixedCompletion("index", "id"))
	cmd.SetFlagErrorFunc(FlagError)
	return cmd
}

// FlagError turns flag errors into usage errors with hints for the usual slips.
func FlagError(_ *cobra.Command, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "--enable-coordination") && !strings.Contains(msg, "--enable-coordination-mode"):
		return cmdutil.Usagef("%s: did you mean --enable-coordination-mode? (Flink's documentation spells it --enable-coordination, which Flink's own script silently ignores)", msg)
	case strings.HasPrefix(msg, "unknown shorthand flag: '") && len(msg) > 25 && msg[25] >= '0' && msg[25] <= '9':
		return cmdutil.Usagef("%s: AMOUNT must be a whole number, 0 or more", msg)
	}
	return &cmdutil.UsageError{Err: err}
}

// ParseAmount reads the positional arguments: AMOUNT, optionally followed by the literal "null" that
// Flink's GPUDriver appends when discovery-script.args is unset.
func ParseAmount(args []string, release bool) (int, error) {
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

func discoverRun(o *Options) error {
	ctx, out := o.Ctx, o.F.IO.Out
	amount, err := ParseAmount(o.Args, o.Release)
	if err != nil {
		return err
	}
	vendor, err := o.Validate()
	if err != nil {
		return err
	}
	switch o.Format {
	case "flink", "spark", "json":
	default:
		return cmdutil.Usagef("--format %q: want flink, spark or json", o.Format)
	}
	if o.Address != "index" && o.Address != "id" {
		return cmdutil.Usagef("--address %q: want index or id", o.Address)
	}
	if o.OwnerPID < 0 {
		return cmdutil.Usagef("--owner-pid %d: not a process id", o.OwnerPID)
	}
	if o.Release {
		return releaseRun(o)
	}
	if amount == 0 {
		return nil // Flink's contract: nothing asked, nothing printed
	}
	res, derr := discovery.Discover(ctx, vendor, o.DiscoveryOptions(o.F, o.Address == "id"))
	if derr != nil {
		if res != nil && o.Format == "json" {
			_ = cmdutil.WriteJSON(out, View(o.Name, amount, res, nil))
		}
		return derr
	}
	v := View(o.Name, amount, res, nil)
	chosen := res.Devices
	if o.Coordination {
		owner, coord, err := ownerAndCoordinator(o, true)
		if err != nil {
			return err
		}
		chosen, err = coord.Acquire(ctx, owner, res.Devices, amount)
		if err != nil {
			return err
		}
		v.Coordination = &view.Coordination{File: o.CoordinationFile, Owner: owner}
	} else {
		if len(chosen) < amount {
			return &discovery.InsufficientDevicesError{Wanted: amount, Visible: len(chosen), Free: len(chosen)}
		}
		chosen = chosen[:amount]
	}
	v.Devices = chosen
	return printDevices(out, o, v)
}

// View is the json format of chosen (nil: none yet) out of what discovery found, for discover and
// exec's --info-file.
func View(name string, amount int, res *discovery.Result, chosen []discovery.Device) view.Discover {
	if chosen == nil {
		chosen = []discovery.Device{}
	}
	return view.Discover{
		Name: name, Amount: amount, Vendor: res.Vendor, Backend: res.Backend, Devices: chosen,
		Available: len(res.Devices), Skipped: res.Skipped, Probes: res.Probes,
		Warnings: res.Warnings, NVMLCompiled: res.NVMLCompiled,
	}
}

func printDevices(w io.Writer, o *Options, out view.Discover) error {
	addrs := make([]string, len(out.Devices))
	for i, d := range out.Devices {
		addrs[i] = d.Address
	}
	switch o.Format {
	case "spark":
		b, err := json.Marshal(struct {
			Name      string   `json:"name"`
			Addresses []string `json:"addresses"`
		}{o.Name, addrs})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "json":
		return cmdutil.WriteJSON(w, out)
	}
	_, err := fmt.Fprintln(w, strings.Join(addrs, ","))
	return err
}

// errParentGone: discover was asked for the parent's devices, and the parent has ended.
var errParentGone = errors.New("the calling process has already exited (yarn-er was handed to another parent); pass --owner-pid")

// resolveOwner names the process the devices are held for: --owner-pid, else the parent.
func resolveOwner(o *Options, warnShell bool) (discovery.Owner, error) {
	proc := o.Proc()
	getppid := o.getppid
	if getppid == nil {
		getppid = os.Getppid
	}
	pid := o.OwnerPID
	if pid == 0 {
		pid = getppid()
		if pid == 1 && proc.PIDNS("self") == discovery.HostPIDNamespace {
			return discovery.Owner{}, errParentGone
		}
	}
	owner, err := proc.Owner(pid)
	if err != nil {
		return discovery.Owner{}, fmt.Errorf("cannot identify the owner: %w", err)
	}
	// The parent may have ended while its start time was read, and its pid gone to another process:
	// the devices would then be held for that one. A process is re-parented when its parent ends, for
	// good, so the same parent after the read means that the identity read is the parent's.
	if o.OwnerPID == 0 && getppid() != pid {
		return discovery.Owner{}, errParentGone
	}
	if o.OwnerPID == 0 && warnShell {
		switch comm := proc.Comm(pid); comm {
		case "sh", "bash", "dash", "zsh", "ksh", "ash", "busybox":
			o.F.Logger().Warn("the devices are held for a shell, which frees them when it ends; "+
				"in a wrapper script use 'exec yarn-er discover \"$@\"'", "owner", pid, "command", comm)
		}
	}
	return owner, nil
}

// ownerAndCoordinator resolves the owner (resolveOwner) and opens the coordination file: what
// acquiring and releasing devices both need.
func ownerAndCoordinator(o *Options, warnShell bool) (discovery.Owner, *discovery.Coordinator, error) {
	owner, err := resolveOwner(o, warnShell)
	if err != nil {
		return discovery.Owner{}, nil, err
	}
	coord, err := o.Coordinator(o.F)
	if err != nil {
		return discovery.Owner{}, nil, err
	}
	return owner, coord, nil
}

func releaseRun(o *Options) error {
	owner, coord, err := ownerAndCoordinator(o, false)
	if err != nil {
		return err
	}
	released, err := coord.Release(o.Ctx, owner)
	if err != nil {
		return err
	}
	o.F.Logger().Info("released devices", "owner", owner.PID, "devices", strings.Join(released, ","))
	if o.Format == "json" {
		return cmdutil.WriteJSON(o.F.IO.Out, view.Discover{
			Name: o.Name, Devices: []discovery.Device{}, Skipped: []discovery.SkippedDevice{},
			Probes: []discovery.ProbeResult{}, Warnings: []string{},
			Coordination: &view.Coordination{File: o.CoordinationFile, Owner: owner, Released: released},
		})
	}
	return nil
}

// IsArgv0 reports whether the program was started under one of discover's names.
func IsArgv0(argv0 string) bool {
	return slices.Contains(Argv0Names, filepath.Base(argv0))
}
