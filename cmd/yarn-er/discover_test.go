package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
	"github.com/yarn-er/yarn-er/view"
)

// gpuHost is a fake host with n NVIDIA GPUs and a private coordination directory.
type gpuHost struct {
	tree  *discoverytest.Tree
	coord string
}

func newGPUHost(t testing.TB, n int) gpuHost {
	t.Helper()
	tree := discoverytest.New(t)
	tree.NVIDIAHost(n)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	return gpuHost{tree: tree, coord: filepath.Join(dir, "gpus")}
}

// args returns the arguments of a discover run against the host.
func (h gpuHost) args(extra ...string) []string {
	return append([]string{"discover"}, append(extra, "--host-root", h.tree.Root, "--coordination-file", h.coord)...)
}

func TestDiscoverFlinkContract(t *testing.T) {
	h := newGPUHost(t, 4)
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"two", h.args("2"), cmdutil.ExitOK, "0,1\n", ""},
		{"all", h.args("4"), cmdutil.ExitOK, "0,1,2,3\n", ""},
		{"zero prints nothing", h.args("0"), cmdutil.ExitOK, "", ""},
		{"Flink appends null when discovery-script.args is unset", h.args("1", "null"), cmdutil.ExitOK, "0\n", ""},
		{"too many", h.args("5"), cmdutil.ExitNoDevices, "", "not enough devices: 5 wanted, 4 visible"},
		{"missing amount", h.args(), cmdutil.ExitUsage, "", "missing AMOUNT"},
		{"bad amount", h.args("two"), cmdutil.ExitUsage, "", "AMOUNT \"two\": must be a whole number"},
		{"negative amount", h.args("-1"), cmdutil.ExitUsage, "", "AMOUNT must be a whole number"},
		{"extra argument", h.args("1", "2"), cmdutil.ExitUsage, "", "unexpected arguments"},
		{"Flink's documented misspelling", h.args("1", "--enable-coordination"), cmdutil.ExitUsage, "", "did you mean --enable-coordination-mode?"},
		{"unknown option", h.args("1", "--coordination"), cmdutil.ExitUsage, "", "unknown flag: --coordination"},
		{"bad format", h.args("1", "--format", "csv"), cmdutil.ExitUsage, "", "--format \"csv\""},
		{"bad vendor", h.args("1", "--vendor", "nvida"), cmdutil.ExitUsage, "", "unknown vendor \"nvida\""},
		{"bad backend", h.args("1", "--backend", "cuda"), cmdutil.ExitUsage, "", "--backend \"cuda\""},
		{"no such vendor here", h.args("1", "--vendor", "amd"), cmdutil.ExitNoDevices, "", "no devices found for amd"},
		{"ids instead of indices", h.args("2", "--address", "id"), cmdutil.ExitOK,
			discoverytest.NVIDIAUUID(0) + "," + discoverytest.NVIDIAUUID(1) + "\n", ""},
		{"spark", h.args("2", "--format", "spark", "--name", "gpu"), cmdutil.ExitOK, `{"name":"gpu","addresses":["0","1"]}` + "\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, tc.args...)
			assert.Equal(t, tc.code, res.code, res.stderr)
			assert.Equal(t, tc.stdout, res.stdout)
			if tc.stderr == "" {
				assert.Empty(t, res.stderr)
			} else {
				assert.Contains(t, res.stderr, tc.stderr)
			}
		})
	}
}

func TestDiscoverIgnoresSettingsAndGlobalOutput(t *testing.T) {
	h := newGPUHost(t, 2)
	cfg := filepath.Join(t.TempDir(), "yarn-er.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("format: json\noutput: yaml\nrelease: true\n"), 0o600))
	noise := map[string]string{
		"YARN_ER_FORMAT": "json", "YARN_ER_OUTPUT": "yaml", "YARN_ER_RELEASE": "true", "YARN_ER_VENDOR": "amd",
		"YARN_ER_CONFIG": cfg, "YARN_ER_ADDRESS": "id",
	}
	res := runCLI(t, noise, append(h.args("2"), "-o", "json")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "0,1\n", res.stdout, "exactly one line, whatever the environment and -o say")

	res = runCLI(t, noise, append(h.args("1"), "--config", cfg)...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "0\n", res.stdout)

	// Logs go to stderr only.
	res = runCLI(t, nil, append(h.args("1"), "-v")...)
	require.Equal(t, cmdutil.ExitOK, res.code)
	assert.Equal(t, "0\n", res.stdout)
	assert.Contains(t, res.stderr, "level=DEBUG")
}

func TestDiscoverJSON(t *testing.T) {
	h := newGPUHost(t, 3)
	res := runCLI(t, map[string]string{"CUDA_VISIBLE_DEVICES": "2,0"}, h.args("1", "--format", "json")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var out view.Discover
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	assert.Equal(t, "gpu", out.Name)
	assert.Equal(t, 1, out.Amount)
	assert.Equal(t, discovery.VendorNVIDIA, out.Vendor)
	assert.Equal(t, "procfs", out.Backend)
	assert.Equal(t, 2, out.Available)
	require.Len(t, out.Devices, 1)
	assert.Equal(t, discoverytest.NVIDIAUUID(2), out.Devices[0].ID, "CUDA_VISIBLE_DEVICES order decides")
	assert.Equal(t, 2, out.Devices[0].HostIndex)
	assert.Equal(t, "0", out.Devices[0].Address)
	require.Len(t, out.Skipped, 1)
	assert.Contains(t, out.Skipped[0].Reason, "CUDA_VISIBLE_DEVICES=2,0")
	assert.Nil(t, out.Coordination)

	// With nothing found, json still explains the probes (and the exit code says so).
	res = runCLI(t, nil, "discover", "1", "--format", "json", "--host-root", t.TempDir())
	assert.Equal(t, cmdutil.ExitNoDevices, res.code)
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	assert.NotEmpty(t, out.Probes)
}

func TestDiscoverFakeNvidiaSMI(t *testing.T) {
	path := t.TempDir()
	discoverytest.ToolReplaying(t, path, "nvidia-smi", map[string]string{
		"--query-gpu=index,uuid,pci.bus_id,memory.total,name --format=csv,noheader,nounits": "nvidia-smi-mig-query.csv",
		"-L": "nvidia-smi-mig-L.txt",
	})
	res := runCLI(t, map[string]string{"PATH": path}, "discover", "3", "--host-root", t.TempDir())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "0:0,0:1,2\n", res.stdout, "MIG instances as <gpu>:<mig>, then GPU 1 as CUDA's ordinal 2")
	res = runCLI(t, map[string]string{"PATH": path}, "discover", "2", "--host-root", t.TempDir(), "--address", "id")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f,MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb\n", res.stdout)
}

func TestDiscoverOtherVendors(t *testing.T) {
	for _, tc := range []struct{ tree, vendor, want string }{
		{"amd-kfd", "amd", "0,1\n"},
		{"intel-dfl", "intel-fpga", "0,1\n"},
		{"xilinx", "xilinx", "0\n"},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			tree := discoverytest.Load(t, tc.tree)
			res := runCLI(t, nil, "discover", fmt.Sprint(strings.Count(tc.want, ",")+1), "--host-root", tree.Root, "--vendor", tc.vendor)
			require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
			assert.Equal(t, tc.want, res.stdout)
			res = runCLI(t, nil, "discover", "1", "--host-root", tree.Root) // auto finds the same vendor
			require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
			assert.Equal(t, "0\n", res.stdout)
		})
	}
}

func TestDiscoverCoordination(t *testing.T) {
	h := newGPUHost(t, 3)
	coord := func(extra ...string) []string {
		return h.args(append([]string{"--enable-coordination-mode"}, extra...)...)
	}

	// The owner is this test's parent process; each call hands out new devices (Flink's semantics).
	res := runCLI(t, nil, coord("2")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "0,1\n", res.stdout)
	res = runCLI(t, nil, coord("1")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "2\n", res.stdout)
	res = runCLI(t, nil, coord("1")...)
	assert.Equal(t, cmdutil.ExitNoDevices, res.code)
	assert.Empty(t, res.stdout)
	assert.Contains(t, res.stderr, fmt.Sprintf("pid %d (alive)", os.Getppid()))

	// Without coordination mode the ledger is not consulted (Flink's non-coordination mode).
	res = runCLI(t, nil, h.args("3")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "0,1,2\n", res.stdout)

	res = runCLI(t, nil, h.args("--release", "--format", "json")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var out view.Discover
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	require.NotNil(t, out.Coordination)
	assert.Len(t, out.Coordination.Released, 3)
	assert.Equal(t, os.Getppid(), out.Coordination.Owner.PID)

	res = runCLI(t, nil, coord("3", "--format", "json")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	assert.Len(t, out.Devices, 3)
	assert.Equal(t, h.coord, out.Coordination.File)

	res = runCLI(t, nil, h.args("1", "--release")...)
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "give no AMOUNT")
	res = runCLI(t, nil, h.args("--release", "--owner-pid", "999999999")...)
	assert.Equal(t, cmdutil.ExitError, res.code)
	assert.Contains(t, res.stderr, "owner process 999999999 does not exist")
}

// fakeOwners is a fake /proc whose processes tests create, reuse and end at will.
func fakeOwners(t *testing.T) *discoverytest.Tree {
	proc := discoverytest.New(t)
	proc.Boot("8b1f6c1e-2f6a-4d55-9a3e-1b2c3d4e5f60", discovery.HostPIDNamespace)
	return proc
}

func TestDiscoverPIDReuse(t *testing.T) {
	h := newGPUHost(t, 2)
	proc := fakeOwners(t)
	as := func(pid int, extra ...string) []string {
		return append(h.args(extra...), "--enable-coordination-mode", "--owner-pid", fmt.Sprint(pid), "--proc-root", proc.Root)
	}
	proc.Process(4242, 1000)
	res := runCLI(t, nil, as(4242, "2")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	proc.Process(4343, 1000)
	res = runCLI(t, nil, as(4343, "1")...)
	require.Equal(t, cmdutil.ExitNoDevices, res.code)

	proc.Process(4242, 2000) // pid 4242 now belongs to a new process
	res = runCLI(t, nil, as(4343, "2")...)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "0,1\n", res.stdout)
}

func TestDiscoverOneVersusEleven(t *testing.T) {
	h := newGPUHost(t, 12)
	proc := fakeOwners(t)
	as := func(pid int, env map[string]string, amount string) cliResult {
		proc.Process(pid, uint64(pid))
		return runCLI(t, env, append(h.args(amount), "--enable-coordination-mode", "--owner-pid", fmt.Sprint(pid), "--proc-root", proc.Root)...)
	}
	only := func(v string) map[string]string { return map[string]string{"CUDA_VISIBLE_DEVICES": v} }
	require.Equal(t, cmdutil.ExitOK, as(1001, only("1"), "1").code)
	require.Equal(t, cmdutil.ExitOK, as(1011, only("11"), "1").code)
	require.Equal(t, cmdutil.ExitOK, as(1050, only("0,2,3,4,5,6,7,8,9,10"), "10").code)

	proc.Kill(1001) // GPU 1's owner ends; GPU 11's owner lives on
	res := as(1100, nil, "1")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "1\n", res.stdout)
	res = as(1101, nil, "1")
	assert.Equal(t, cmdutil.ExitNoDevices, res.code, "GPU 11 must not be handed out again")
	assert.Contains(t, res.stderr, discoverytest.NVIDIAUUID(11)+": pid 1011 (alive)")
}

func TestDiscoverRefusesSymlinkedCoordinationFile(t *testing.T) {
	h := newGPUHost(t, 1)
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(victim, h.coord+".lock"))
	res := runCLI(t, nil, h.args("1", "--enable-coordination-mode")...)
	assert.Equal(t, cmdutil.ExitError, res.code)
	assert.Empty(t, res.stdout)
	assert.Contains(t, res.stderr, "gpus.lock: is a symbolic link")
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
}

func TestExecUsageErrors(t *testing.T) {
	h := newGPUHost(t, 1)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"exec"}, cmdutil.ExitUsage, "give the command after --"},
		{[]string{"exec", "true"}, cmdutil.ExitUsage, "give the command after --"},
		{[]string{"exec", "x", "--", "true"}, cmdutil.ExitUsage, "before --"},
		{[]string{"exec", "--amount", "0", "--", "true"}, cmdutil.ExitUsage, "--amount 0"},
		{[]string{"exec", "--vendor", "ati", "--", "true"}, cmdutil.ExitUsage, "unknown vendor"},
		{[]string{"exec", "--host-root", h.tree.Root, "--coordination-file", h.coord, "--", "no-such-command-xyz"}, cmdutil.ExitError, "no-such-command-xyz not found in PATH"},
		{[]string{"exec", "--amount", "2", "--host-root", h.tree.Root, "--coordination-file", h.coord, "--", "/bin/true"}, cmdutil.ExitNoDevices, "not enough devices: 2 wanted, 1 visible"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			res := runCLI(t, map[string]string{"PATH": "/usr/bin:/bin"}, tc.args...)
			assert.Equal(t, tc.code, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.msg)
			assert.Empty(t, res.stdout)
		})
	}
}

// TestDiscoverNameLimitsTheVendors: on a host with GPUs and FPGAs, --name fpga (what yarn-er's AM
// gives exec for submit --fpgas) finds the FPGAs, not the GPUs that --vendor auto tries first;
// --name gpu on a host with FPGAs only finds nothing; without --name auto searches every vendor.
func TestDiscoverNameLimitsTheVendors(t *testing.T) {
	mixed := discoverytest.Load(t, "intel-dfl")
	mixed.NVIDIAHost(2)
	vendorOf := func(res cliResult) string {
		t.Helper()
		require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
		var out struct {
			Vendor string `json:"vendor"`
		}
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
		return out.Vendor
	}
	assert.Equal(t, "nvidia", vendorOf(runCLI(t, nil, "discover", "1", "--host-root", mixed.Root, "--format", "json")))
	assert.Equal(t, "intel-fpga", vendorOf(runCLI(t, nil, "discover", "1", "--host-root", mixed.Root, "--format", "json", "--name", "fpga")))
	assert.Equal(t, "nvidia", vendorOf(runCLI(t, nil, "discover", "1", "--host-root", mixed.Root, "--format", "json", "--name", "GPU")))

	fpgaOnly := discoverytest.Load(t, "intel-dfl")
	res := runCLI(t, nil, "discover", "1", "--host-root", fpgaOnly.Root, "--name", "gpu")
	assert.Equal(t, cmdutil.ExitNoDevices, res.code, res.stderr)
	assert.Equal(t, "intel-fpga", vendorOf(runCLI(t, nil, "discover", "1", "--host-root", fpgaOnly.Root, "--format", "json")))
}
