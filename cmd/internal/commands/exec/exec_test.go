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
