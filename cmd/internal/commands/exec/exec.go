// Package exec is `yarn-er exec`: lock free devices and become the workload on them.
package exec

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/discovery"
)

// Options are exec's flags and the command to run.
type Options struct {
	shared.DeviceFlags
	cmdutil.Base // Args: the command after --
	// Amount is --amount, InfoFile --info-file.
	Amount   int
	InfoFile string
	// Exec replaces the process with the workload; syscall.Exec unless a test sets it.
	Exec func(path string, argv, env []string) error
}

// NewCmdExec returns `yarn-er exec`; runF (nil: execRun) runs it.
func NewCmdExec(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Base: cmdutil.Base{F: f}, Exec: syscall.Exec}
	cmd := &cobra.Command{
		Use:   "exec [flags] -- CMD [ARGS...]",
		Short: "Lock free devices and run a command on them; the devices stay taken exactly as long as it lives",
		Long: `exec finds --amount free devices, takes one flock(2) per device, tells the command which devices
are its own, and becomes the command (exec(2)) keeping the lock descriptors open. The locks go with
the command and every child that inherits them: the devices are free again the moment the last of
them ends, however it ends (SIGKILL and the OOM killer included). No ledger entry is left behind.

The command sees:
  NVIDIA: CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES set to the devices' UUIDs
          (CUDA numbers them 0..N-1 in that order), CUDA_DEVICE_ORDER=PCI_BUS_ID;
  AMD:    ROCR_VISIBLE_DEVICES set to the GPUs' UUIDs (host indices where the UUID is not in
          ROCm's form); HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES removed;
  all:    --info-file, when given, receives the JSON of 'yarn-er discover --format json'.

exec and 'discover --enable-coordination-mode' use the same --coordination-file and never hand out
the same device.`,
		Example: `  yarn-er exec --amount 2 -- python train.py --epochs 3
  yarn-er exec --vendor amd --info-file /tmp/devices.json -- ./bench`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() < 0 || len(args) == 0 {
				return fmt.Errorf("give the command after --: yarn-er exec [flags] -- CMD [ARGS...]")
			}
			if cmd.ArgsLenAtDash() > 0 {
				return fmt.Errorf("unexpected arguments %q before --", args[:cmd.ArgsLenAtDash()])
			}
			return nil
		},
		RunE: cmdutil.RunE(o, runF, execRun),
	}
	fs := cmd.Flags()
	o.Register(fs)
	fs.IntVar(&o.Amount, "amount", 1, "how many devices to lock")
	fs.StringVar(&o.InfoFile, "info-file", "", "write the devices (discover's json format) to this file before running the command")
	o.Completions(cmd)
	return cmd
}

func execRun(o *Options) error {
	ctx, argv := o.Ctx, o.Args
	vendor, err := o.Validate()
	if err != nil {
		return err
	}
	if o.Amount < 1 || o.Amount > 4096 {
		return cmdutil.Usagef("--amount %d: must be between 1 and 4096", o.Amount)
	}
	path, err := discovery.LookPath(argv[0], o.F.Env.Getenv("PATH"))
	if err != nil {
		return err
	}
	res, err := discovery.Discover(ctx, vendor, o.DiscoveryOptions(o.F, false))
	if err != nil {
		return err
	}
	coord, err := o.Coordinator(o.F)
	if err != nil {
		return err
	}
	holding, err := coord.Hold(ctx, res.Devices, o.Amount)
	if err != nil {
		return err
	}
	defer holding.Close() // only reached when exec(2) fails
	if o.InfoFile != "" {
		if err := writeInfoFile(o.InfoFile, shared.DiscoverView(o.Name, o.Amount, res, holding.Devices)); err != nil {
			return err
		}
	}
	if err := holding.Inherit(); err != nil {
		return err
	}
	env := DeviceEnv(o.F.Env.Environ(), res.Vendor, holding.Devices)
	o.F.Logger().Debug("running the workload", "command", path, "devices", len(holding.Devices))
	err = o.Exec(path, argv, env)
	runtime.KeepAlive(holding)
	return fmt.Errorf("exec %s: %w", path, err)
}

var rocrUUID = regexp.MustCompile(`^GPU-[0-9a-fA-F]{16}$`)

// DeviceEnv returns environ with the visibility variables set to exactly the held devices.
func DeviceEnv(environ []string, vendor discovery.Vendor, devs []discovery.Device) []string {
	set := map[string]string{}
	var unset []string
	switch vendor {
	case discovery.VendorNVIDIA:
		ids := make([]string, len(devs))
		for i, d := range devs {
			ids[i] = d.ID
		}
		set["CUDA_VISIBLE_DEVICES"] = strings.Join(ids, ",")
		set["NVIDIA_VISIBLE_DEVICES"] = strings.Join(ids, ",")
		set["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
	case discovery.VendorAMD:
		ids := make([]string, len(devs))
		for i, d := range devs {
			if rocrUUID.MatchString(d.ID) {
				ids[i] = d.ID
			} else {
				ids[i] = strconv.Itoa(d.HostIndex)
			}
		}
		set["ROCR_VISIBLE_DEVICES"] = strings.Join(ids, ",")
		unset = []string{"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}
	}
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok {
			continue
		}
		if !slices.Contains(unset, k) {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	return out
}

// writeInfoFile writes v as JSON to path atomically (see discovery.WriteFileAtomic).
func writeInfoFile(path string, v any) error {
	var buf bytes.Buffer
	if err := cmdutil.WriteJSON(&buf, v); err != nil {
		return err
	}
	if err := discovery.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--info-file %s: %w", path, err)
	}
	return nil
}
