//go:build release

// Package release_test checks the binaries of make release (release/build.sh) in dist/: make
// release-check. Every binary is in SHA256SUMS and matches it; a static build has no interpreter and
// no shared library; an NVML build needs nothing newer than glibc 2.17, not libnvidia-ml itself, and
// binds lazily; the binaries this machine can run (its own architecture, others under qemu-user
// when installed) report their backends in `version -o json` and find GPUs in the fake host trees
// of package discoverytest.
package release_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery/discoverytest"
	"github.com/yarn-er/yarn-er/view"
)

// maxGLIBC is the oldest glibc the NVML builds must run on (CentOS 7's).
var maxGLIBC = [2]int{2, 17}

// binary is one file of dist/.
type binary struct {
	path string
	arch string // GOARCH
	nvml bool   // the cgo build with NVML
	am   bool   // the small ApplicationMaster binary (yarn-er-am)
}

// distDir is $DIST (relative to the repository root, as for release/build.sh), by default dist.
func distDir(t *testing.T) string {
	d := os.Getenv("DIST")
	if d == "" {
		d = "dist"
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join("..", d)
	}
	return d
}

func binaries(t *testing.T) []binary {
	arches := strings.Fields(os.Getenv("ARCHES"))
	if len(arches) == 0 {
		arches = []string{"amd64", "arm64"}
	}
	var out []binary
	for _, a := range arches {
		p := filepath.Join(distDir(t), "yarn-er-linux-"+a)
		out = append(out, binary{path: p, arch: a}, binary{path: p + "-nvml", arch: a, nvml: true},
			binary{path: filepath.Join(distDir(t), "yarn-er-am-linux-"+a), arch: a, am: true})
	}
	return out
}

func TestChecksums(t *testing.T) {
	f, err := os.Open(filepath.Join(distDir(t), "SHA256SUMS"))
	require.NoError(t, err, "run make release first")
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "SHA256SUMS line %q", sc.Text())
		sums[name] = sum
	}
	require.NoError(t, sc.Err())
	var want []string
	for _, b := range binaries(t) {
		name := filepath.Base(b.path)
		want = append(want, name)
		data, err := os.ReadFile(b.path)
		require.NoError(t, err)
		h := sha256.Sum256(data)
		assert.Equal(t, hex.EncodeToString(h[:]), sums[name], name)
		t.Logf("%s: %d bytes, sha256 %s", name, len(data), sums[name])
	}
	assert.ElementsMatch(t, want, slices.Collect(mapKeys(sums)))
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var glibcVersion = regexp.MustCompile(`^GLIBC_(\d+)\.(\d+)(?:\.\d+)?$`)

// newerThanMax says whether a symbol version like GLIBC_2.34 is newer than maxGLIBC.
func newerThanMax(t *testing.T, v string) bool {
	m := glibcVersion.FindStringSubmatch(v)
	if m == nil {
		return false // GLIBC_PRIVATE and non-glibc versions are checked by the library list
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > maxGLIBC[0] || major == maxGLIBC[0] && minor > maxGLIBC[1]
}

func TestELF(t *testing.T) {
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for _, b := range binaries(t) {
		t.Run(filepath.Base(b.path), func(t *testing.T) {
			f, err := elf.Open(b.path)
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, machine[b.arch], f.Machine)
			interp := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
			libs, err := f.ImportedLibraries()
			require.NoError(t, err)
			if !b.nvml {
				assert.False(t, interp, "a static build has no program interpreter")
				assert.Empty(t, libs, "a static build needs no shared library")
				return
			}
			assert.True(t, interp)
			for _, l := range libs {
				assert.Contains(t, []string{"libc.so.6", "libdl.so.2", "libpthread.so.0", "libresolv.so.2"}, l,
					"the NVML build needs only glibc (libnvidia-ml.so.1 is loaded with dlopen)")
			}
			syms, err := f.DynamicSymbols()
			require.NoError(t, err)
			versions := map[string]bool{}
			for _, s := range syms {
				if s.Version == "" {
					continue
				}
				versions[s.Version] = true
				assert.False(t, newerThanMax(t, s.Version), "%s needs %s", s.Name, s.Version)
			}
			t.Logf("symbol versions: %s; libraries: %s", strings.Join(slices.Sorted(mapKeysBool(versions)), " "), strings.Join(libs, " "))
			// The NVML functions are bound on their first call, after dlopen: not at start-up.
			flags, _ := f.DynValue(elf.DT_FLAGS)
			flags1, _ := f.DynValue(elf.DT_FLAGS_1)
			for _, v := range flags {
				assert.Zero(t, v&uint64(elf.DF_BIND_NOW), "DT_FLAGS has BIND_NOW")
			}
			for _, v := range flags1 {
				assert.Zero(t, v&uint64(elf.DF_1_NOW), "DT_FLAGS_1 has NOW")
			}
			objdumpVersions(t, b.path, versions)
		})
	}
}

func mapKeysBool(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// objdumpVersions checks binutils' view (objdump -T) of the GLIBC versions against debug/elf's.
func objdumpVersions(t *testing.T, path string, want map[string]bool) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Log("objdump not installed (binutils): debug/elf's symbol versions only")
		return
	}
	out, err := exec.Command(objdump, "-T", path).Output()
	require.NoError(t, err)
	got := map[string]bool{}
	for _, v := range regexp.MustCompile(`GLIBC_[0-9.]+`).FindAllString(string(out), -1) {
		got[v] = true
		assert.False(t, newerThanMax(t, v), "objdump -T: %s", v)
	}
	wantGLIBC := map[string]bool{}
	for v := range want {
		if glibcVersion.MatchString(v) {
			wantGLIBC[v] = true
		}
	}
	assert.Equal(t, wantGLIBC, got, "objdump -T and debug/elf disagree")
}

// runner returns how to run b on this machine, or "" and why not.
func runner(b binary) (prefix []string, why string) {
	if b.arch == runtime.GOARCH {
		return nil, ""
	}
	qemu := map[string]string{"arm64": "aarch64", "amd64": "x86_64"}[b.arch]
	for _, name := range []string{"qemu-" + qemu + "-static", "qemu-" + qemu} {
		if p, err := exec.LookPath(name); err == nil {
			if !b.nvml {
				return []string{p}, ""
			}
			// The NVML build needs the target's glibc: qemu-user finds it with -L.
			for _, sysroot := range []string{"/usr/" + qemu + "-linux-gnu"} {
				if _, err := os.Stat(filepath.Join(sysroot, "lib")); err == nil {
					return []string{p, "-L", sysroot}, ""
				}
			}
			return nil, "no " + b.arch + " glibc for qemu-user (apt-get install libc6-" + b.arch + "-cross)"
		}
	}
	return nil, "qemu-user is not installed (apt-get install qemu-user-static)"
}

func run(t *testing.T, b binary, prefix []string, args ...string) (string, string, int) {
	t.Helper()
	argv := append(slices.Clone(prefix), b.path)
	cmd := exec.Command(argv[0], append(argv[1:], args...)...)
	cmd.Env = []string{"PATH=/nonexistent"} // no nvidia-smi: only the backends under test
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return stdout.String(), stderr.String(), exitErr.ExitCode()
	}
	require.NoError(t, err)
	return stdout.String(), stderr.String(), 0
}

func TestRun(t *testing.T) {
	for _, b := range binaries(t) {
		t.Run(filepath.Base(b.path), func(t *testing.T) {
			prefix, why := runner(b)
			if why != "" {
				t.Skip(why)
			}
			if b.am {
				// The small AM binary: it runs, and submit pairs it with both yarn-er builds of
				// its architecture (same source revision, OS and architecture).
				stdout, stderr, code := run(t, b, prefix, "version")
				require.Equal(t, 0, code, stderr)
				assert.Regexp(t, `^yarn-er-am \S+\n$`, stdout)
				ai, err := buildinfo.ReadFile(b.path)
				require.NoError(t, err)
				for _, yarnEr := range []string{"yarn-er-linux-" + b.arch, "yarn-er-linux-" + b.arch + "-nvml"} {
					bi, err := buildinfo.ReadFile(filepath.Join(distDir(t), yarnEr))
					require.NoError(t, err)
					for _, k := range []string{"GOOS", "GOARCH", "vcs.revision", "vcs.modified"} {
						assert.Equal(t, buildSetting(bi, k), buildSetting(ai, k), "%s of %s", k, yarnEr)
					}
				}
				return
			}
			stdout, stderr, code := run(t, b, prefix, "version", "-o", "json")
			require.Equal(t, 0, code, stderr)
			var bi view.BuildInfo
			require.NoError(t, json.Unmarshal([]byte(stdout), &bi), stdout)
			assert.Equal(t, "linux/"+b.arch, bi.Platform)
			assert.NotEmpty(t, bi.Version)
			assert.NotEmpty(t, bi.Commit)
			require.NotEmpty(t, bi.Discovery)
			assert.Equal(t, "nvml", bi.Discovery[0].Name)
			if b.nvml {
				assert.True(t, bi.Discovery[0].Available)
				assert.Equal(t, "cgo", bi.Discovery[0].Build)
			} else {
				assert.False(t, bi.Discovery[0].Available)
				assert.Equal(t, "unavailable (CGO_ENABLED=0 build)", bi.Discovery[0].Build)
			}
			for _, d := range bi.Discovery[1:] {
				assert.True(t, d.Available, d.Name)
				assert.Equal(t, "go", d.Build, d.Name)
			}

			// Flink's discovery-script contract against the fake host trees of the discovery tests.
			built := discoverytest.New(t)
			built.NVIDIAHost(4)
			for name, root := range map[string]string{"NVIDIAHost(4)": built.Root, "nvidia-procfs": discoverytest.Load(t, "nvidia-procfs").Root} {
				coord := filepath.Join(t.TempDir(), "gpus")
				stdout, stderr, code = run(t, b, prefix, "discover", "2", "--host-root", root, "--coordination-file", coord)
				require.Equal(t, 0, code, "%s: %s", name, stderr)
				assert.Equal(t, "0,1\n", stdout, name)
				stdout, stderr, code = run(t, b, prefix, "discover", "1", "--enable-coordination-mode", "--host-root", root, "--coordination-file", coord)
				require.Equal(t, 0, code, "%s: %s", name, stderr)
				assert.Equal(t, "0\n", stdout, name)
			}

			// A copy named as Flink's script, as docs/install.md ships it in $FLINK_HOME/plugins,
			// run the way Flink's GPUDriver runs it: "<script> <amount> <args>", args "null" when unset.
			if prefix == nil {
				script := filepath.Join(t.TempDir(), "nvidia-gpu-discovery.sh")
				data, err := os.ReadFile(b.path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(script, data, 0o755))
				stdout, stderr, code = run(t, binary{path: script}, nil, "2", "null", "--host-root", built.Root,
					"--coordination-file", filepath.Join(t.TempDir(), "gpus"))
				require.Equal(t, 0, code, stderr)
				assert.Equal(t, "0,1\n", stdout)
			}
		})
	}
}

func buildSetting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// fakeNVML is a libnvidia-ml.so.1 that initialises and sees no GPU, for TestNVMLBindsAtRunTime.
const fakeNVML = `#include <string.h>
int nvmlInit_v2(void) { return 0; }
int nvmlInit(void) { return 0; }
int nvmlInitWithFlags(unsigned int f) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 0; return 0; }
int nvmlDeviceGetCount(unsigned int *n) { *n = 0; return 0; }
int nvmlSystemGetDriverVersion(char *v, unsigned int len) { strncpy(v, "999.99-fake", len); return 0; }
const char *nvmlErrorString(int r) { return "fake error"; }
`

// TestNVMLBindsAtRunTime loads a fake NVML into the NVML builds this machine runs natively: the NVML
// functions, left unresolved at link time, must bind to it (the probe names its driver version).
func TestNVMLBindsAtRunTime(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) for the fake NVML library")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "fake-nvml.c")
	lib := filepath.Join(dir, "libnvidia-ml.so.1")
	require.NoError(t, os.WriteFile(src, []byte(fakeNVML), 0o600))
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	ran := false
	for _, b := range binaries(t) {
		if !b.nvml || b.arch != runtime.GOARCH {
			continue
		}
		ran = true
		stdout, stderr, code := run(t, b, nil, "discover", "1", "--backend", "nvml", "--nvml-library", lib, "--format", "json",
			"--coordination-file", filepath.Join(dir, "gpus"))
		assert.Equal(t, 5, code, "no GPU: exit 5; stderr: %s", stderr)
		var res view.Discover
		require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
		require.NotEmpty(t, res.Probes)
		assert.Equal(t, "nvml", res.Probes[0].Backend)
		assert.Equal(t, "NVML sees 0 GPU(s), driver 999.99-fake", res.Probes[0].Reason)
	}
	if !ran {
		t.Skip("no NVML build for " + runtime.GOARCH)
	}
}
