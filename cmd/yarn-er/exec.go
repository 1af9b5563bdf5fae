package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/discovery"
)

// execOptions are exec's flags.
type execOptions struct {
	deviceFlags
	amount   int
	infoFile string
}

func newExecCmd(a *app) *cobra.Command {
	o := &execOptions{}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExec(cmd.Context(), a, o, args)
		},
	}
	fs := cmd.Flags()
	o.register(fs)
	fs.IntVar(&o.amount, "amount", 1, "how many devices to lock")
	fs.StringVar(&o.infoFile, "info-file", "", "write the devices (discover's json format) to this file before running the command")
	o.completions(cmd)
	return cmd
}

func runExec(ctx context.Context, a *app, o *execOptions, argv []string) error {
	vendor, err := o.validate()
	if err != nil {
		return err
	}
	if o.amount < 1 || o.amount > 4096 {
		return usageErrorf("--amount %d: must be between 1 and 4096", o.amount)
	}
	path, err := discovery.LookPath(argv[0], a.getenv("PATH"))
	if err != nil {
		return err
	}
	res, err := discovery.Discover(ctx, vendor, o.discoveryOptions(a, false))
	if err != nil {
		return err
	}
	coord, err := o.coordinator(a)
	if err != nil {
		return err
	}
	holding, err := coord.Hold(ctx, res.Devices, o.amount)
	if err != nil {
		return err
	}
	defer holding.Close() // only reached when exec(2) fails
	if o.infoFile != "" {
		if err := writeInfoFile(o.infoFile, toOutput(o.name, o.amount, res, holding.Devices)); err != nil {
			return err
		}
	}
	if err := holding.Inherit(); err != nil {
		return err
	}
	env := deviceEnv(os.Environ(), res.Vendor, holding.Devices)
	a.logger.Debug("running the workload", "command", path, "devices", len(holding.Devices))
	err = syscall.Exec(path, argv, env)
	runtime.KeepAlive(holding)
	return fmt.Errorf("exec %s: %w", path, err)
}

var rocrUUID = regexp.MustCompile(`^GPU-[0-9a-fA-F]{16}$`)

// deviceEnv returns environ with the visibility variables set to exactly the held devices.
func deviceEnv(environ []string, vendor discovery.Vendor, devs []discovery.Device) []string {
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
	if err := writeJSON(&buf, v); err != nil {
		return err
	}
	if err := discovery.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--info-file %s: %w", path, err)
	}
	return nil
}
