package exec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

func TestDeviceEnv(t *testing.T) {
	nv := []discovery.Device{{ID: "GPU-a", HostIndex: 3}, {ID: "MIG-b", HostIndex: 0}}
	env := DeviceEnv([]string{"PATH=/bin", "CUDA_VISIBLE_DEVICES=0,1,2", "HOME=/root"}, discovery.VendorNVIDIA, nv)
	assert.Equal(t, []string{"PATH=/bin", "HOME=/root", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=GPU-a,MIG-b", "NVIDIA_VISIBLE_DEVICES=GPU-a,MIG-b"}, env)

	amd := []discovery.Device{{ID: "GPU-b6dcce52ef0f3d11", HostIndex: 0}, {ID: "GPU-00ff740f-0000-1000-8040-b2e1a9c0d3f4", HostIndex: 1}}
	env = DeviceEnv([]string{"HIP_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=1", "ROCR_VISIBLE_DEVICES=0,1", "X=y"}, discovery.VendorAMD, amd)
	assert.Equal(t, []string{"X=y", "ROCR_VISIBLE_DEVICES=GPU-b6dcce52ef0f3d11,1"}, env)

	env = DeviceEnv([]string{"X=y"}, discovery.VendorXilinx, []discovery.Device{{ID: "0000:65:00.1"}})
	assert.Equal(t, []string{"X=y"}, env)
}

func TestExecFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdExec,
		"--amount", "2", "--info-file", "/tmp/d.json", "--vendor", "nvidia", "--", "python", "train.py", "--epochs", "3")
	assert.Equal(t, 2, got.Amount)
	assert.Equal(t, "/tmp/d.json", got.InfoFile)
	assert.Equal(t, "nvidia", got.Vendor)
	assert.Equal(t, []string{"python", "train.py", "--epochs", "3"}, got.Args)
}

func TestExecNeedsTheCommandAfterDash(t *testing.T) {
	for _, args := range [][]string{{"--amount", "1"}, {"python", "--", "x"}} {
		cmd := NewCmdExec(cmdtest.Factory(), func(*Options) error { t.Fatal("ran"); return nil })
		assert.Error(t, cmdtest.Execute(cmd, args...), "%q", args)
	}
}

// TestExecUsesTheInjectedEnvironment: the workload's environment is the Factory's, not the process's.
func TestExecUsesTheInjectedEnvironment(t *testing.T) {
	tree := discoverytest.New(t)
	tree.NVIDIAHost(2)
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "work"), []byte("#!/bin/sh\n"), 0o755))
	f, _, _ := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"PATH": bin, "ONLY_HERE": "1"}))
	var gotEnv []string
	o := &Options{Base: cmdutil.Base{F: f, Ctx: context.Background(), Args: []string{"work"}}, Amount: 1,
		Exec: func(_ string, _, env []string) error { gotEnv = env; return errors.New("not really") }}
	o.Vendor, o.Name, o.HostRoot, o.ProcRoot = "nvidia", "gpu", tree.Root, "/"
	o.CommandTimeout, o.LockTimeout = time.Second, time.Second
	coord := t.TempDir()
	require.NoError(t, os.Chmod(coord, 0o755))
	o.CoordinationFile = filepath.Join(coord, "gpus")
	err := execRun(o)
	require.ErrorContains(t, err, "not really")
	assert.Contains(t, gotEnv, "ONLY_HERE=1")
	assert.Contains(t, gotEnv, "PATH="+bin)
	assert.Len(t, gotEnv, 5, "%q", gotEnv) // the two above and the three CUDA variables
}

// TestExecHandsOutMIGSlices: `exec --name nvidia.com/mig-1g.18gb` (what the AM runs for a MIG
// resource type) locks slices of that profile and sets CUDA_VISIBLE_DEVICES to their MIG UUIDs;
// a second exec on the node gets the other slice, a third none (exit 5).
func TestExecHandsOutMIGSlices(t *testing.T) {
	tree := discoverytest.New(t)
	bin := tree.NVIDIAMIGHost(filepath.Join(t.TempDir(), "bin"), nil,
		[]discoverytest.MIGSlice{{Profile: "1g.18gb", GI: 9}, {Profile: "3g.71gb", GI: 2}, {Profile: "1g.18gb", GI: 10}})
	require.NoError(t, os.WriteFile(filepath.Join(bin, "work"), []byte("#!/bin/sh\n"), 0o755))
	coord := t.TempDir()
	require.NoError(t, os.Chmod(coord, 0o755))
	run := func() ([]string, error) {
		f, _, _ := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"PATH": bin}))
		var gotEnv []string
		cmd := NewCmdExec(f, func(o *Options) error {
			o.Exec = func(_ string, _, env []string) error { gotEnv = env; return errors.New("exec'd") }
			return execRun(o)
		})
		err := cmdtest.Execute(cmd, "--name", "nvidia.com/mig-1g.18gb", "--host-root", tree.Root, "--proc-root", "/",
			"--coordination-file", filepath.Join(coord, "gpus"), "--lock-timeout", "1s", "--", "work")
		return gotEnv, err
	}
	// Each run's locks end with it (the test process does not exec): hold the first slice with a
	// coordinator of its own, as a running workload would.
	env, err := run()
	require.ErrorContains(t, err, "exec'd")
	assert.Contains(t, env, "CUDA_VISIBLE_DEVICES="+discoverytest.NVIDIAMIGUUID(1, 0))
	assert.Contains(t, env, "NVIDIA_VISIBLE_DEVICES="+discoverytest.NVIDIAMIGUUID(1, 0))

	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{
		Root: discovery.NewRoot(tree.Root), Getenv: func(k string) string { return map[string]string{"PATH": bin}[k] },
		Kind: discovery.KindMIG, MIGProfile: "1g.18gb"})
	require.NoError(t, err)
	c, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: filepath.Join(coord, "gpus"), LockTimeout: time.Second})
	require.NoError(t, err)
	held, err := c.Hold(context.Background(), res.Devices, 1)
	require.NoError(t, err)
	defer held.Close()
	require.Equal(t, discoverytest.NVIDIAMIGUUID(1, 0), held.Devices[0].ID)

	env, err = run()
	require.ErrorContains(t, err, "exec'd")
	assert.Contains(t, env, "CUDA_VISIBLE_DEVICES="+discoverytest.NVIDIAMIGUUID(1, 2), "the other 1g.18gb slice, never the 3g.71gb one")

	h2, err := c.Hold(context.Background(), res.Devices, 1)
	require.NoError(t, err)
	defer h2.Close()
	_, err = run()
	require.ErrorIs(t, err, discovery.ErrInsufficientDevices)
	assert.Equal(t, cmdutil.ExitNoDevices, cmdutil.ExitCode(err))
}
