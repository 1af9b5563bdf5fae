package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
)

// flinkHome makes a FLINK_HOME with Flink's GPU plugin scripts: nvidia-gpu-discovery.sh (mode) and
// gpu-discovery-common.sh next to it unless noCommon.
func flinkHome(t testing.TB, mode os.FileMode, noCommon bool) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, filepath.Dir(DefaultDiscoveryScript))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	script := "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")\"/gpu-discovery-common.sh\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, DefaultDiscoveryScript), []byte(script), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(home, DefaultDiscoveryScript), mode))
	if !noCommon {
		require.NoError(t, os.WriteFile(filepath.Join(dir, flinkCommonScript), []byte("#!/usr/bin/env bash\n"), 0o755))
	}
	writeJar(t, filepath.Join(dir, "flink-external-resource-gpu-1.20.0.jar"), true, gpuService)
	return home
}

// linkHome makes a FLINK_HOME holding only rel, a symbolic link to target, and returns it.
func linkHome(t testing.TB, rel, target string) string {
	t.Helper()
	home := t.TempDir()
	p := filepath.Join(home, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.Symlink(target, p))
	return home
}

// fakeYarnEr makes an executable named yarn-er and returns its path.
func fakeYarnEr(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin", "yarn-er")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("\x7fELF fake"), 0o755))
	return bin
}

// discoverCmd mimics yarn-er discover's argument rules: flags it knows, AMOUNT only, "null"
// allowed.
func discoverCmd(exe string) DiscoverCommand {
	return DiscoverCommand{
		Executable: exe,
		Names:      []string{"nvidia-gpu-discovery.sh", "yarn-er-discover"},
		ValidateArgs: func(args []string) error {
			if len(args) == 1 && args[0] == "null" {
				return nil
			}
			for i := 0; i < len(args); i++ {
				switch args[i] {
				case "--enable-coordination-mode", "--shared-coordination":
				case "--coordination-file":
					i++
				case "--enable-coordination":
					return errors.New("unknown flag: --enable-coordination: did you mean --enable-coordination-mode?")
				default:
					return errors.New("unknown flag: " + args[i])
				}
			}
			return nil
		},
	}
}

func TestDiscoveryScript(t *testing.T) {
	exe := fakeYarnEr(t)
	absMissing := filepath.Join(t.TempDir(), "nope.sh")
	cases := []struct {
		name   string
		home   func(t *testing.T) string
		extra  string // Flink configuration lines added
		blank  bool   // discovery-script.path set to a blank value
		status Status
		parts  []string
		fix    string
	}{
		{
			name: "Flink's script, executable, with its common file", status: StatusPass,
			home:  func(t *testing.T) string { return flinkHome(t, 0o755, false) },
			parts: []string{"Flink's nvidia-gpu-discovery.sh", "is executable"},
		},
		{
			name: "FLINK_HOME unknown", status: StatusSkip,
			home:  func(t *testing.T) string { return "" },
			parts: []string{"FLINK_HOME", "not known"},
		},
		{
			name: "missing", status: StatusFail,
			home:  func(t *testing.T) string { return t.TempDir() },
			parts: []string{"does not exist", "FileNotFoundException"}, fix: "ln -s",
		},
		{
			name: "not executable", status: StatusFail,
			home:  func(t *testing.T) string { return flinkHome(t, 0o644, false) },
			parts: []string{"is not executable"}, fix: "chmod +x",
		},
		{
			name: "common file missing", status: StatusFail,
			home:  func(t *testing.T) string { return flinkHome(t, 0o755, true) },
			parts: []string{"gpu-discovery-common.sh", "missing"},
		},
		{
			name: "a directory", status: StatusFail,
			home: func(t *testing.T) string {
				h := t.TempDir()
				require.NoError(t, os.MkdirAll(filepath.Join(h, DefaultDiscoveryScript), 0o755))
				return h
			},
			parts: []string{"not a regular file"},
		},
		{
			name: "broken link", status: StatusFail,
			home: func(t *testing.T) string {
				return linkHome(t, DefaultDiscoveryScript, filepath.Join(t.TempDir(), "gone"))
			},
			parts: []string{"broken link"},
		},
		{
			name: "yarn-er linked under Flink's script name", status: StatusPass,
			home:  func(t *testing.T) string { return linkHome(t, DefaultDiscoveryScript, exe) },
			parts: []string{"yarn-er discover", "a link to " + exe},
		},
		{
			name: "yarn-er linked under another name runs the CLI", status: StatusFail,
			home:  func(t *testing.T) string { return linkHome(t, filepath.Join("plugins", "discover.sh"), exe) },
			extra: "external-resource.gpu.param.discovery-script.path: plugins/discover.sh\n",
			parts: []string{`under the name "discover.sh"`, "not discover"}, fix: "name the link",
		},
		{
			name: "blank path", status: StatusFail,
			home:  func(t *testing.T) string { return t.TempDir() },
			blank: true,
			parts: []string{"is not configured"},
		},
		{
			name: "absolute path missing on this host", status: StatusWarn,
			home:  func(t *testing.T) string { return "" },
			extra: "external-resource.gpu.param.discovery-script.path: " + absMissing + "\n",
			parts: []string{"does not exist", "checked on this host only"}, fix: "every NodeManager host",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := flinkConf(t, goodFlink+tc.extra)
			if tc.blank {
				fc.Set("external-resource.gpu.param.discovery-script.path", " ", conf.Source{File: "flink-conf.yaml", Line: 42})
			}
			rep := run(t, Input{Flink: fc, FlinkHome: tc.home(t), FlinkHomeOrigin: "$FLINK_HOME", Discover: discoverCmd(exe)})
			e := requireOne(t, rep, IDDiscoveryScript, tc.status, tc.parts...)
			if tc.fix != "" {
				assert.Contains(t, e.Fix, tc.fix)
			}
			if tc.status != StatusSkip {
				assert.NotEmpty(t, e.Source)
			}
		})
	}
}

func TestDiscoveryScriptOnlyForGPUDriverOrScriptPath(t *testing.T) {
	text := withoutLines(goodFlink, "external-resource.gpu.driver-factory.class") +
		"external-resource.gpu.driver-factory.class: com.example.MyGPUFactory\n"
	rep := run(t, Input{Flink: flinkConf(t, text), FlinkHome: t.TempDir()})
	requireOne(t, rep, IDDiscoveryScript, StatusSkip, "no resource uses Flink's GPU driver")
	requireOne(t, rep, IDCoordinationArgs, StatusSkip)

	// A script path makes any driver's script checked.
	home := flinkHome(t, 0o755, false)
	rep = run(t, Input{Flink: flinkConf(t, text+"external-resource.gpu.param.discovery-script.path: "+DefaultDiscoveryScript+"\n"), FlinkHome: home})
	requireOne(t, rep, IDDiscoveryScript, StatusPass)
}

func TestCoordinationArgs(t *testing.T) {
	exe := fakeYarnEr(t)
	yarnErHome := func(t *testing.T) string { return linkHome(t, DefaultDiscoveryScript, exe) }
	customHome := func(t *testing.T) string {
		h := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(h, "mine.sh"), []byte("#!/bin/sh\necho 0\n"), 0o755))
		return h
	}
	flinkScript := func(t *testing.T) string { return flinkHome(t, 0o755, false) }
	cases := []struct {
		name   string
		home   func(t *testing.T) string
		args   string // "-" leaves the key out
		path   string
		status Status
		parts  []string
		fix    string
	}{
		{name: "Flink's script, coordination on", home: flinkScript, args: "--enable-coordination-mode", status: StatusPass, parts: []string{"coordination on"}},
		{name: "Flink's script, no args", home: flinkScript, args: "-", status: StatusPass, parts: []string{"coordination off"}},
		{name: "Flink's script with a file", home: flinkScript, args: "--enable-coordination-mode  --coordination-file /tmp/x", status: StatusPass},
		{
			name: "the documented misspelling", home: flinkScript, args: "--enable-coordination", status: StatusWarn,
			parts: []string{"spelling of Flink's documentation", "silently off"}, fix: "write --enable-coordination-mode",
		},
		{name: "unknown option", home: flinkScript, args: "--enable-coordination-mode --verbose", status: StatusWarn, parts: []string{`"--verbose"`}},
		{name: "file without mode", home: flinkScript, args: "--coordination-file /tmp/x", status: StatusWarn, parts: []string{"no effect without --enable-coordination-mode"}},
		{name: "file without path", home: flinkScript, args: "--enable-coordination-mode --coordination-file", status: StatusWarn, parts: []string{"no path"}},
		{name: "file with =", home: flinkScript, args: "--enable-coordination-mode --coordination-file=/tmp/x", status: StatusWarn, parts: []string{"separate word"}, fix: "--coordination-file /tmp/x"},
		{name: "Flink's script missing: args still checked", home: func(t *testing.T) string { return t.TempDir() }, args: "--enable-coordination", status: StatusWarn},
		{name: "yarn-er discover, good", home: yarnErHome, args: "--enable-coordination-mode --coordination-file /var/tmp/x", status: StatusPass, parts: []string{"yarn-er discover", "coordination on"}},
		{name: "yarn-er discover, no args", home: yarnErHome, args: "-", status: StatusPass},
		{
			name: "yarn-er discover, the documented misspelling", home: yarnErHome, args: "--enable-coordination", status: StatusFail,
			parts: []string{"refuses them", "did you mean"}, fix: "write --enable-coordination-mode",
		},
		{name: "yarn-er discover, unknown flag", home: yarnErHome, args: "--bogus", status: StatusFail, parts: []string{"--bogus"}},
		{name: "custom script", home: customHome, path: "mine.sh", args: "--foo", status: StatusSkip, parts: []string{"custom script"}},
		{name: "custom script with the misspelling", home: customHome, path: "mine.sh", args: "--enable-coordination", status: StatusWarn},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := withoutLines(goodFlink, "external-resource.gpu.param.discovery-script.args")
			if tc.args != "-" {
				text += "external-resource.gpu.param.discovery-script.args: " + tc.args + "\n"
			}
			if tc.path != "" {
				text += "external-resource.gpu.param.discovery-script.path: " + tc.path + "\n"
			}
			rep := run(t, Input{Flink: flinkConf(t, text), FlinkHome: tc.home(t), Discover: discoverCmd(exe)})
			first := requireFirst(t, rep, IDCoordinationArgs, []Status{tc.status}, tc.parts...)
			if tc.fix != "" {
				assert.Contains(t, first.Fix, tc.fix)
			}
			if tc.status == StatusWarn || tc.status == StatusFail {
				assert.Contains(t, first.Source, "flink-conf.yaml:")
			}
		})
	}
}

func TestSplitScriptArgs(t *testing.T) {
	assert.Equal(t, []string{"--a", "b", "'c", "d'"}, SplitScriptArgs(" --a\tb\n'c  d' "))
	assert.Empty(t, SplitScriptArgs(" \t\r\f\n"))
	// Java's StringTokenizer does not split at other Unicode spaces.
	assert.Equal(t, []string{"a\u00a0b"}, SplitScriptArgs("a\u00a0b"))
}

func TestCheckFlinkScriptArgs(t *testing.T) {
	assert.Empty(t, CheckFlinkScriptArgs(nil))
	assert.Empty(t, CheckFlinkScriptArgs([]string{"null"}))
	assert.Empty(t, CheckFlinkScriptArgs([]string{"--coordination-file", "/x", "--enable-coordination-mode"}))
	f := CheckFlinkScriptArgs([]string{"--enable-coordination"})
	require.Len(t, f, 1)
	assert.Equal(t, "write --enable-coordination-mode", f[0].Fix)
	f = CheckFlinkScriptArgs([]string{"--enable-coordination-mode", "null", "x"})
	require.Len(t, f, 2)
	assert.True(t, slices.ContainsFunc(f, func(a ArgFinding) bool { return strings.Contains(a.Message, `"x"`) }))
}
