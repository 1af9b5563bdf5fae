package version

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/view"
)

func TestVersionFlagsReachRunF(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdVersion) // fails unless runF is called
	assert.NotNil(t, got.F)
}

func TestVersionRunUsesTheStamp(t *testing.T) {
	f, out, _ := cmdtest.Buffers(cmdutil.Env{})
	f.Output = cmdutil.OutputJSON
	f.Build = cmdutil.BuildStamp{Version: "v9.8.7", Commit: "0123456789abcdef", Date: "2026-01-02T03:04:05Z"}
	require.NoError(t, versionRun(&Options{Base: cmdutil.Base{F: f}}))
	var bi view.BuildInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &bi))
	assert.Equal(t, "v9.8.7", bi.Version)
	assert.Equal(t, "0123456789abcdef", bi.Commit)
	assert.Equal(t, "2026-01-02T03:04:05Z", bi.Date)
	assert.Equal(t, "v9.8.7 (0123456789ab)", String(f.Build))
}

func TestBackendsListEveryDiscoveryBackend(t *testing.T) {
	bs := Backends()
	names := make([]string, 0, len(bs))
	for _, b := range bs {
		names = append(names, b.Name)
		if b.Name != "nvml" {
			assert.True(t, b.Available, b.Name)
			assert.Equal(t, "go", b.Build, b.Name)
		}
	}
	assert.Equal(t, discovery.BackendNames(), names)
}

// The version command's idea of NVML must agree with discovery's own build constraint, which
// Result.NVMLCompiled reports.
func TestBackendsAgreeWithDiscoveryOnNVML(t *testing.T) {
	res, _ := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{Root: discovery.NewRoot(t.TempDir())})
	require.NotNil(t, res)
	nvml := Backends()[0]
	require.Equal(t, "nvml", nvml.Name)
	assert.Equal(t, res.NVMLCompiled, nvml.Available)
	if nvml.Available {
		assert.Equal(t, "cgo", nvml.Build)
	} else {
		assert.Contains(t, nvml.Build, "unavailable (")
	}
}

func TestDiscoveryLine(t *testing.T) {
	tests := []struct {
		name string
		in   []view.DiscoveryBackend
		want string
	}{
		{"cgo build", []view.DiscoveryBackend{{Name: "nvml", Available: true, Build: "cgo"}, {Name: "procfs", Available: true, Build: "go"}, {Name: "kfd", Available: true, Build: "go"}},
			"nvml: cgo; procfs, kfd: pure Go"},
		{"static build", []view.DiscoveryBackend{{Name: "nvml", Build: "unavailable (CGO_ENABLED=0 build)"}, {Name: "procfs", Available: true, Build: "go"}},
			"nvml: unavailable (CGO_ENABLED=0 build); procfs: pure Go"},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, DiscoveryLine(tt.in)) })
	}
}

func TestVersionTextNamesTheBackends(t *testing.T) {
	f, out, _ := cmdtest.Buffers(cmdutil.Env{})
	require.NoError(t, versionRun(&Options{Base: cmdutil.Base{F: f}}))
	assert.Contains(t, out.String(), "\ndiscovery: nvml: ")
	assert.Contains(t, out.String(), "xilinx-pci: pure Go\n")
}
