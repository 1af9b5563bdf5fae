package discover

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

func TestDiscoverArgv0Names(t *testing.T) {
	assert.True(t, IsArgv0("/opt/flink/plugins/external-resource-gpu/nvidia-gpu-discovery.sh"))
	assert.True(t, IsArgv0("yarn-er-discover"))
	assert.False(t, IsArgv0("/usr/local/bin/yarn-er"))
	assert.False(t, IsArgv0("gpu-discovery-common.sh"))
}

func TestDiscoverFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdDiscover,
		"2", "null", "--enable-coordination-mode", "--format", "json", "--address", "id",
		"--vendor", "amd", "--owner-pid", "42", "--coordination-file", "/var/tmp/x", "--backend", "kfd,amd-smi",
		"--lock-timeout", "2s", "--shared-coordination")
	assert.Equal(t, []string{"2", "null"}, got.Args)
	assert.True(t, got.Coordination)
	assert.Equal(t, "json", got.Format)
	assert.Equal(t, "id", got.Address)
	assert.Equal(t, "amd", got.Vendor)
	assert.Equal(t, 42, got.OwnerPID)
	assert.Equal(t, "/var/tmp/x", got.CoordinationFile)
	assert.Equal(t, []string{"kfd", "amd-smi"}, got.Backends)
	assert.Equal(t, 2*time.Second, got.LockTimeout)
	assert.True(t, got.Shared)
}

func TestDiscoverFlagDefaults(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdDiscover, "1")
	assert.Equal(t, "flink", got.Format)
	assert.Equal(t, "index", got.Address)
	assert.Equal(t, "auto", got.Vendor)
	assert.Equal(t, "gpu", got.Name)
	assert.Equal(t, shared.DefaultCoordinationFile, got.CoordinationFile)
	assert.False(t, got.Coordination)
}

// The owner is the parent whose identity was read: a parent that ends while its start time is read
// (its pid may then already be another process's) is refused, not taken for the one that took over
// its pid.
func TestResolveOwnerRefusesAParentThatEndedMeanwhile(t *testing.T) {
	tr := discoverytest.New(t)
	tr.Boot("boot-1", 4026531836)
	tr.Process(4242, 777)
	for _, tc := range []struct {
		name    string
		parents []int // what successive getppid calls return
		wantErr bool
	}{
		{"the parent lives on", []int{4242, 4242}, false},
		{"the parent ended during the read", []int{4242, 1}, true},
		{"the parent ended during the read, a subreaper took over", []int{4242, 300}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			o := &Options{Base: cmdutil.Base{F: cmdtest.Factory()}}
			o.ProcRoot = tr.Root
			o.getppid = func() int {
				p := tc.parents[min(calls, len(tc.parents)-1)]
				calls++
				return p
			}
			owner, err := resolveOwner(o, false)
			if tc.wantErr {
				require.ErrorIs(t, err, errParentGone)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 4242, owner.PID)
			assert.Equal(t, 2, calls, "the parent is checked again after its identity is read")
		})
	}
}
