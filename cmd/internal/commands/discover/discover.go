// Package discover is `yarn-er discover`, a drop-in for Flink's GPU discovery script. Its flags
// and argument rules are in package shared: exec uses the device flags, preflight checks the
// arguments Flink passes with them.
package discover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/view"
)

// Options are discover's flags and arguments.
type Options struct {
	shared.DiscoverFlags
	cmdutil.Base // Args: AMOUNT (and Flink's trailing "null")

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
	o.Register(cmd.Flags())
	o.Completions(cmd)
	cmd.SetFlagErrorFunc(shared.DiscoverFlagError)
	return cmd
}

func discoverRun(o *Options) error {
	ctx, out := o.Ctx, o.F.IO.Out
	amount, err := shared.ParseDiscoverAmount(o.Args, o.Release)
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
			_ = cmdutil.WriteJSON(out, shared.DiscoverView(o.Name, amount, res, nil))
		}
		return derr
	}
	v := shared.DiscoverView(o.Name, amount, res, nil)
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
	return slices.Contains(shared.Argv0Names, filepath.Base(argv0))
}
