package submit

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildAM builds cmd/yarn-er-am into dir (with -buildvcs=vcs) and returns its path.
func buildAM(t *testing.T, dir, vcs string) string {
	t.Helper()
	out := filepath.Join(dir, AMBinaryName)
	cmd := exec.Command("go", "build", "-mod=mod", "-buildvcs="+vcs, "-o", out, "../cmd/yarn-er-am")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o755))
}

func TestBesideName(t *testing.T) {
	for bin, want := range map[string]string{
		"yarn-er":                  "yarn-er-am",
		"yarn-er-linux-arm64":      "yarn-er-am-linux-arm64",
		"yarn-er-linux-amd64-nvml": "yarn-er-am-linux-amd64",
		"my-tool":                  "yarn-er-am",
	} {
		assert.Equal(t, want, besideName(bin), bin)
	}
}

func TestCompareBuilds(t *testing.T) {
	build := func(path, version string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Path: path, Main: debug.Module{Path: "github.com/yarn-er/yarn-er", Version: version}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	const am, cli = "github.com/yarn-er/yarn-er/cmd/yarn-er-am", "github.com/yarn-er/yarn-er/cmd/yarn-er"
	base := []string{"GOOS", "linux", "GOARCH", "amd64", "vcs.revision", "abc", "vcs.time", "2026-12-01T10:00:00Z", "vcs.modified", "false"}
	with := func(k, v string) []string {
		out := append([]string(nil), base...)
		for i := 0; i < len(out); i += 2 {
			if out[i] == k {
				out[i+1] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		am, yc *debug.BuildInfo
		err    string
	}{
		{"same build", build(am, "v1.2.0", base...), build(cli, "v1.2.0", append(base, "-ldflags", "-X main.version=v1.2.0")...), ""},
		{"other architecture", build(am, "v1.2.0", with("GOARCH", "arm64")...), build(cli, "v1.2.0", base...), "GOARCH=arm64, the yarn-er binary with GOARCH=amd64"},
		{"other OS", build(am, "v1.2.0", with("GOOS", "darwin")...), build(cli, "v1.2.0", base...), "GOOS=darwin"},
		{"other revision", build(am, "v1.2.0", with("vcs.revision", "def")...), build(cli, "v1.2.0", base...), "vcs.revision=def"},
		{"uncommitted changes in one", build(am, "v1.2.0", with("vcs.modified", "true")...), build(cli, "v1.2.0", base...), "vcs.modified=true"},
		{"no revision in one", build(am, "(devel)", "GOOS", "linux", "GOARCH", "amd64"), build(cli, "v1.2.0", base...), "vcs.revision=(unknown)"},
		{"other version", build(am, "v1.1.0", base...), build(cli, "v1.2.0", base...), "module version v1.1.0"},
		{"another program", build("example.com/tool", "v1.2.0", base...), build(cli, "v1.2.0", base...), "not yarn-er's yarn-er-am"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := compareBuilds(tc.am, tc.yc)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

// TestAMBinary: the yarn-er-am beside the yarn-er binary is staged when it is of the same build;
// otherwise the yarn-er binary runs the AM, and an --am-binary that does not match is refused.
func TestAMBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds yarn-er-am")
	}
	same := t.TempDir()
	am := buildAM(t, same, "auto")
	// A binary of the same build standing in for yarn-er (only its build information counts).
	bin := filepath.Join(same, "yarn-er")
	copyFile(t, am, bin)
	alone := filepath.Join(t.TempDir(), "yarn-er")
	copyFile(t, am, alone)
	links := t.TempDir()
	require.NoError(t, os.Symlink(bin, filepath.Join(links, "yarn-er")))
	notGo := filepath.Join(t.TempDir(), AMBinaryName)
	require.NoError(t, os.WriteFile(notGo, []byte("#!/bin/sh\n"), 0o755))
	self, err := os.Executable() // a Go binary, but not yarn-er-am
	require.NoError(t, err)

	for _, tc := range []struct {
		name, bin, explicit string
		want                string // the AM binary chosen, "" none
		skipped, err        string // substrings
	}{
		{"beside, same build", bin, "", am, "", ""},
		{"beside the link's target", filepath.Join(links, "yarn-er"), "", am, "", ""},
		{"none beside", alone, "", "", "no yarn-er-am beside", ""},
		{"explicit, same build", alone, am, am, "", ""},
		{"explicit, not a Go binary", bin, notGo, "", "", "not a Go binary"},
		{"explicit, another program", bin, self, "", "", "not yarn-er's yarn-er-am"},
		{"explicit, missing", bin, filepath.Join(same, "absent"), "", "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, skipped, err := amBinary(tc.bin, tc.explicit)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "--am-binary")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			if tc.skipped == "" {
				assert.Empty(t, skipped)
			} else {
				assert.Contains(t, skipped, tc.skipped)
			}
		})
	}

	// Beside, but of another build (here: one without the source revision, where the first
	// build has one): skipped with the reason, and the yarn-er binary runs the AM.
	bi, err := buildinfo.ReadFile(am)
	require.NoError(t, err)
	if setting(bi, "vcs.revision") == "" {
		return // not built in a git checkout: both builds look alike
	}
	mixed := t.TempDir()
	buildAM(t, mixed, "false")
	copyFile(t, am, filepath.Join(mixed, "yarn-er"))
	got, skipped, err := amBinary(filepath.Join(mixed, "yarn-er"), "")
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Contains(t, skipped, "vcs.revision=(unknown)")
}
