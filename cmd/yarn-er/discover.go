package main

import (
	"context"
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
)

// defaultCoordinationFile is where discover and exec coordinate unless told otherwise. It differs from
// Flink's /var/tmp/flink-gpu-coordination on purpose: the formats differ.
const defaultCoordinationFile = "/var/tmp/yarn-er-coordination"

// discoverArgv0 are the program names under which yarn-er behaves as `yarn-er discover` (see main.go):
// point Flink's external-resource.<name>.param.discovery-script.path at such a symlink.
var discoverArgv0 = []string{"nvidia-gpu-discovery.sh", "yarn-er-discover"}

// deviceFlags are the flags discover and exec share.
type deviceFlags struct {
	vendor         string
	name           string
	hostRoot       string
	procRoot       string
	backends       []string
	nvmlLibrary    string
	commandTimeout time.Duration

	coordinationFile string
	shared           bool
	lockTimeout      time.Duration
	foreignTTL       time.Duration
}

func (f *deviceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.vendor, "vendor", "auto", "device vendor: auto, nvidia, amd, intel-fpga or xilinx")
	fs.StringVar(&f.name, "name", "gpu", "resource name reported in the spark and json formats")
	fs.StringVar(&f.hostRoot, "host-root", "/", "directory holding the host's /sys, /proc and /dev")
	fs.StringVar(&f.procRoot, "proc-root", "/", "directory holding the /proc in which owner processes are checked")
	fs.StringSliceVar(&f.backends, "backend", nil, "use only these backends (nvml, procfs, nvidia-smi, kfd, amd-smi, dfl, opae, aocl, xilinx-pci)")
	fs.StringVar(&f.nvmlLibrary, "nvml-library", "", "NVML library to load (default: libnvidia-ml.so.1 from the loader's path)")
	fs.DurationVar(&f.commandTimeout, "command-timeout", 5*time.Second, "time limit for each run of nvidia-smi, amd-smi or aocl")
	fs.StringVar(&f.coordinationFile, "coordination-file", defaultCoordinationFile,
		"coordination file prefix: PATH.lock, PATH.ledger.<uid> and PATH.dev.<device>.lock are kept next to it")
	fs.BoolVar(&f.shared, "shared-coordination", false, "accept coordination files of other users in a sticky world-writable directory")
	fs.DurationVar(&f.lockTimeout, "lock-timeout", discovery.DefaultLockTimeout, "longest wait for the coordination lock")
	fs.DurationVar(&f.foreignTTL, "foreign-ttl", 0, "reclaim devices of owners in other PID namespaces after this long (0: never)")
}

func (f *deviceFlags) completions(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("vendor", fixedCompletion("auto", "nvidia", "amd", "intel-fpga", "xilinx"))
	_ = cmd.RegisterFlagCompletionFunc("backend", fixedCompletion(discovery.BackendNames()...))
}

func (f *deviceFlags) validate() (discovery.Vendor, error) {
	v, err := discovery.ParseVendor(f.vendor)
	if err != nil {
		return "", usageErrorf("--vendor: %v", err)
	}
	for _, b := range f.backends {
		if !slices.Contains(discovery.BackendNames(), b) {
			return "", usageErrorf("--backend %q: want one of %s", b, strings.Join(discovery.BackendNames(), ", "))
		}
	}
	if f.lockTimeout <= 0 {
		return "", usageErrorf("--lock-timeout %s: must be positive", f.lockTimeout)
	}
	if f.commandTimeout <= 0 {
		return "", usageErrorf("--command-timeout %s: must be positive", f.commandTimeout)
	}
	if f.foreignTTL < 0 {
		return "", usageErrorf("--foreign-ttl %s: must not be negative", f.foreignTTL)
	}
	if strings.TrimSpace(f.name) == "" {
		return "", usageErrorf("--name: must not be empty")
	}
	return v, nil
}

func (f *deviceFlags) discoveryOptions(a *app, byID bool) discovery.Options {
	return discovery.Options{
		Root:            discovery.NewRoot(f.hostRoot),
		Getenv:          a.getenv,
		CommandTimeout:  f.commandTimeout,
		NVMLLibraryPath: f.nvmlLibrary,
		Backends:        f.backends,
		AddressByID:     byID,
		Logger:          a.logger.With("component", "discovery"),
	}
}

func (f *deviceFlags) proc() discovery.Proc { return discovery.NewProc(discovery.NewRoot(f.procRoot)) }

func (f *deviceFlags) coordinator(a *app) (*discovery.Coordinator, error) {
	proc := f.proc()
	return discovery.NewCoordinator(discovery.CoordinatorOptions{
		Path:        f.coordinationFile,
		Shared:      f.shared,
		LockTimeout: f.lockTimeout,
		Proc:        &proc,
		ForeignTTL:  f.foreignTTL,
		Logger:      a.logger.With("component", "coordination"),
	})
}

// discoverOptions are discover's own flags.
type discoverOptions struct {
	deviceFlags
	coordination bool
	format       string
	address      string
	release      bool
	ownerPID     int
}

// discoverOutput is the json format. Its shape is public.
type discoverOutput struct {
	Name         string                    `json:"name"`
	Amount       int                       `json:"amount"`
	Vendor       discovery.Vendor          `json:"vendor"`
	Backend      string                    `json:"backend"`
	Devices      []discovery.Device        `json:"devices"`
	Available    int                       `json:"available"`
	Coordination *coordinationOutput       `json:"coordination"`
	Skipped      []discovery.SkippedDevice `json:"skipped"`
	Probes       []discovery.ProbeResult   `json:"probes"`
	Warnings     []string                  `json:"warnings"`
	NVMLCompiled bool                      `json:"nvmlCompiled"`
}

type coordinationOutput struct {
	File     string          `json:"file"`
	Owner    discovery.Owner `json:"owner"`
	Released []string        `json:"released,omitempty"`
}

func newDiscoverCmd(a *app) *cobra.Command {
	o := &discoverOptions{}
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
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.setupLogger() },
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiscover(cmd.Context(), a, o, args)
		},
	}
	fs := cmd.Flags()
	o.register(fs)
	fs.BoolVar(&o.coordination, "enable-coordination-mode", false, "hold the devices for the calling process until it ends")
	fs.StringVar(&o.format, "format", "flink", "output: flink (0,1), spark ({\"name\":…,\"addresses\":[…]}) or json")
	fs.StringVar(&o.address, "address", "index", "what flink and spark print per device: index or id (UUID)")
	fs.BoolVar(&o.release, "release", false, "free the devices held for the owner instead of finding new ones")
	fs.IntVar(&o.ownerPID, "owner-pid", 0, "process that holds the devices (default: the parent of yarn-er)")
	o.completions(cmd)
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion("flink", "spark", "json"))
	_ = cmd.RegisterFlagCompletionFunc("address", fixedCompletion("index", "id"))
	cmd.SetFlagErrorFunc(discoverFlagError)
	return cmd
}

// discoverFlagError turns flag errors into usage errors with hints for the usual slips.
func discoverFlagError(_ *cobra.Command, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "--enable-coordination") && !strings.Contains(msg, "--enable-coordination-mode"):
		return usageErrorf("%s: did you mean --enable-coordination-mode? (Flink's documentation spells it --enable-coordination, which Flink's own script silently ignores)", msg)
	case strings.HasPrefix(msg, "unknown shorthand flag: '") && len(msg) > 25 && msg[25] >= '0' && msg[25] <= '9':
		return usageErrorf("%s: AMOUNT must be a whole number, 0 or more", msg)
	}
	return &usageError{err: err}
}

// parseAmount reads the positional arguments: AMOUNT, optionally followed by the literal "null" that
// Flink's GPUDriver appends when discovery-script.args is unset.
func parseAmount(args []string, release bool) (int, error) {
	if len(args) == 2 && args[1] == "null" {
		args = args[:1]
	}
	switch {
	case len(args) == 0 && release:
		return 0, nil
	case len(args) == 0:
		return 0, usageErrorf("missing AMOUNT: say how many devices to find (yarn-er discover AMOUNT)")
	case len(args) > 1:
		return 0, usageErrorf("unexpected arguments %q after AMOUNT: discover takes only AMOUNT and flags", args[1:])
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 {
		return 0, usageErrorf("AMOUNT %q: must be a whole number, 0 or more", args[0])
	}
	if n > 4096 {
		return 0, usageErrorf("AMOUNT %d: no host has that many devices", n)
	}
	if release && n != 0 {
		return 0, usageErrorf("--release frees every device of the owner; give no AMOUNT (or 0)")
	}
	return n, nil
}

func runDiscover(ctx context.Context, a *app, o *discoverOptions, args []string) error {
	amount, err := parseAmount(args, o.release)
	if err != nil {
		return err
	}
	vendor, err := o.validate()
	if err != nil {
		return err
	}
	switch o.format {
	case "flink", "spark", "json":
	default:
		return usageErrorf("--format %q: want flink, spark or json", o.format)
	}
	if o.address != "index" && o.address != "id" {
		return usageErrorf("--address %q: want index or id", o.address)
	}
	if o.ownerPID < 0 {
		return usageErrorf("--owner-pid %d: not a process id", o.ownerPID)
	}
	if o.release {
		return runRelease(ctx, a, o)
	}
	if amount == 0 {
		return nil // Flink's contract: nothing asked, nothing printed
	}
	res, derr := discovery.Discover(ctx, vendor, o.discoveryOptions(a, o.address == "id"))
	if derr != nil {
		if res != nil && o.format == "json" {
			_ = writeJSON(a.streams.Out, toOutput(o.name, amount, res, nil))
		}
		return derr
	}
	out := toOutput(o.name, amount, res, nil)
	chosen := res.Devices
	if o.coordination {
		owner, err := resolveOwner(a, o, true)
		if err != nil {
			return err
		}
		coord, err := o.coordinator(a)
		if err != nil {
			return err
		}
		chosen, err = coord.Acquire(ctx, owner, res.Devices, amount)
		if err != nil {
			return err
		}
		out.Coordination = &coordinationOutput{File: o.coordinationFile, Owner: owner}
	} else {
		if len(chosen) < amount {
			return &discovery.InsufficientDevicesError{Wanted: amount, Visible: len(chosen), Free: len(chosen)}
		}
		chosen = chosen[:amount]
	}
	out.Devices = chosen
	return printDevices(a.streams.Out, o, out)
}

// toOutput is the json format of chosen (nil: none yet) out of what discovery found, for discover and
// exec's --info-file.
func toOutput(name string, amount int, res *discovery.Result, chosen []discovery.Device) discoverOutput {
	if chosen == nil {
		chosen = []discovery.Device{}
	}
	return discoverOutput{
		Name: name, Amount: amount, Vendor: res.Vendor, Backend: res.Backend, Devices: chosen,
		Available: len(res.Devices), Skipped: res.Skipped, Probes: res.Probes,
		Warnings: res.Warnings, NVMLCompiled: res.NVMLCompiled,
	}
}

func printDevices(w io.Writer, o *discoverOptions, out discoverOutput) error {
	addrs := make([]string, len(out.Devices))
	for i, d := range out.Devices {
		addrs[i] = d.Address
	}
	switch o.format {
	case "spark":
		b, err := json.Marshal(struct {
			Name      string   `json:"name"`
			Addresses []string `json:"addresses"`
		}{o.name, addrs})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "json":
		return writeJSON(w, out)
	}
	_, err := fmt.Fprintln(w, strings.Join(addrs, ","))
	return err
}

// resolveOwner names the process the devices are held for: --owner-pid, else the parent.
func resolveOwner(a *app, o *discoverOptions, warnShell bool) (discovery.Owner, error) {
	proc := o.proc()
	pid := o.ownerPID
	if pid == 0 {
		pid = os.Getppid()
		if pid == 1 && proc.PIDNS("self") == discovery.HostPIDNamespace {
			return discovery.Owner{}, errors.New("the calling process has already exited (yarn-er's parent is init); pass --owner-pid")
		}
	}
	owner, err := proc.Owner(pid)
	if err != nil {
		return discovery.Owner{}, fmt.Errorf("cannot identify the owner: %w", err)
	}
	if o.ownerPID == 0 && warnShell {
		switch comm := proc.Comm(pid); comm {
		case "sh", "bash", "dash", "zsh", "ksh", "ash", "busybox":
			a.logger.Warn("the devices are held for a shell, which frees them when it ends; "+
				"in a wrapper script use 'exec yarn-er discover \"$@\"'", "owner", pid, "command", comm)
		}
	}
	return owner, nil
}

func runRelease(ctx context.Context, a *app, o *discoverOptions) error {
	owner, err := resolveOwner(a, o, false)
	if err != nil {
		return err
	}
	coord, err := o.coordinator(a)
	if err != nil {
		return err
	}
	released, err := coord.Release(ctx, owner)
	if err != nil {
		return err
	}
	a.logger.Info("released devices", "owner", owner.PID, "devices", strings.Join(released, ","))
	if o.format == "json" {
		return writeJSON(a.streams.Out, discoverOutput{
			Name: o.name, Devices: []discovery.Device{}, Skipped: []discovery.SkippedDevice{},
			Probes: []discovery.ProbeResult{}, Warnings: []string{},
			Coordination: &coordinationOutput{File: o.coordinationFile, Owner: owner, Released: released},
		})
	}
	return nil
}

// isDiscoverArgv0 reports whether the program was started under one of discover's names.
func isDiscoverArgv0(argv0 string) bool {
	return slices.Contains(discoverArgv0, filepath.Base(argv0))
}
