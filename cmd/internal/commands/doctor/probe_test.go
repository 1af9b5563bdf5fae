package doctor

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// fakeHost writes a host tree whose driver lists gpus NVIDIA GPUs and whose /dev holds the nodes
// of the minors in nodes only (a cgroup-isolated container's view), and returns its root.
func fakeHost(t *testing.T, gpus int, nodes ...int) string {
	t.Helper()
	root := t.TempDir()
	for i := range gpus {
		bus := fmt.Sprintf("0000:%02x:00.0", 0x10+i)
		dir := filepath.Join(root, "proc/driver/nvidia/gpus", bus)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		info := fmt.Sprintf("Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-0000000%d-0000-0000-0000-000000000000\nBus Location: \t %s\nDevice Minor: \t %d\n", i, bus, i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "information"), []byte(info), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "dev/nvidiactl"), nil, 0o666))
	for _, m := range nodes {
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("dev/nvidia%d", m)), nil, 0o666))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/driver/nvidia/version"),
		[]byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version: 12\n"), 0o644))
	return root
}

// cgroupFiles writes a /proc/self/cgroup with lines and, for v1, the devices controller's
// devices.list of path; it returns both paths.
func cgroupFiles(t *testing.T, lines string, path string, rules string) (self, fs string) {
	t.Helper()
	dir := t.TempDir()
	self = filepath.Join(dir, "cgroup")
	require.NoError(t, os.WriteFile(self, []byte(lines), 0o644))
	fs = filepath.Join(dir, "sys-fs-cgroup")
	if rules != "" {
		d := filepath.Join(fs, "devices", path)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "devices.list"), []byte(rules), 0o644))
	}
	return self, fs
}

func TestProbe(t *testing.T) {
	const container = "container_1796117006310_0001_01_000003" // lce-assigned.json gives it minor 3
	lce, err := os.ReadFile("../../../../yarn/testdata/nm-resources/lce-assigned.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		nodes    []int
		cgroup   string
		rules    string
		nm       func(*yarnfake.NodeManager)
		check    func(t *testing.T, p *view.DoctorProbe)
		verdict  string
		noNMPort bool
		cgPath   string // where devices.list lies below the devices controller (default the container's)
	}{
		{
			name: "LinuxContainerExecutor, the plugin assigns minor 3, cgroup v1 lets only it open", nodes: []int{3},
			cgroup: "12:devices:/yarn/" + container + "\n11:memory:/yarn/" + container + "\n",
			rules:  "c 195:3 rwm\nc 195:255 rwm\n",
			nm: func(nm *yarnfake.NodeManager) {
				nm.SetResource("yarn.io/gpu", string(lce))
				nm.SetConf(keyExecutor, LinuxContainerExecutor)
				nm.SetConf(keyPlugins, "yarn.io/gpu")
				nm.SetConf(keyCgroupsMount, "true")
			},
			check: func(t *testing.T, p *view.DoctorProbe) {
				assert.Equal(t, view.DoctorAssignment{State: AssignAssigned, Minors: []int64{3}}, p.NodeManager)
				assert.Equal(t, view.DoctorCgroup{Version: "v1", Path: "/yarn/" + container, Rules: []string{"c 195:3 rwm", "c 195:255 rwm"}}, p.Cgroup)
				assert.Equal(t, view.DoctorExecutor{Class: LinuxContainerExecutor, Plugins: "yarn.io/gpu", CgroupsMount: "true", Source: "nodemanager /conf"}, p.Executor)
			},
			verdict: view.VerdictOK,
		},
		{
			name: "DefaultContainerExecutor (unset), no plugin, cgroup v1 allows all", nodes: []int{0, 1, 2, 3},
			cgroup: "4:devices:/\n", rules: "a *:* rwm\n", cgPath: "/",
			nm: func(*yarnfake.NodeManager) {},
			check: func(t *testing.T, p *view.DoctorProbe) {
				assert.Equal(t, AssignNoPlugin, p.NodeManager.State)
				assert.True(t, p.Cgroup.AllowsAll)
				assert.Equal(t, view.DoctorExecutor{Class: defaultExecutor, CgroupsMount: "false", Source: "nodemanager /conf"}, p.Executor)
			},
			verdict: view.VerdictLeak,
		},
		{
			name: "the plugin without LinuxContainerExecutor (503), cgroup v2", nodes: []int{0, 1},
			cgroup: "0::/system.slice/nm.service\n",
			nm: func(nm *yarnfake.NodeManager) {
				nm.SetResourceStatus("yarn.io/gpu", http.StatusServiceUnavailable,
					`{"RemoteException":{"exception":"YarnException","message":"Linux Container Executor is not configured for the NodeManager."}}`)
				nm.SetConf(keyPlugins, "yarn.io/gpu")
			},
			check: func(t *testing.T, p *view.DoctorProbe) {
				assert.Equal(t, AssignNone, p.NodeManager.State)
				assert.Equal(t, "v2", p.Cgroup.Version)
				assert.Equal(t, "/system.slice/nm.service", p.Cgroup.Path)
				assert.Empty(t, p.Cgroup.Rules)
			},
			verdict: view.VerdictLeak,
		},
		{
			name: "outside YARN: no NodeManager to ask", nodes: []int{2}, noNMPort: true,
			cgroup: "garbage\n", nm: func(*yarnfake.NodeManager) {},
			check: func(t *testing.T, p *view.DoctorProbe) {
				assert.Equal(t, "unknown", p.Node)
				assert.Equal(t, AssignUnreachable, p.NodeManager.State)
				assert.Equal(t, "unknown", p.Cgroup.Version)
				assert.Contains(t, p.Executor.Source, "unknown: ")
				assert.Contains(t, p.Errors[0], "NM_HOST and NM_PORT are not set")
			},
			verdict: view.VerdictOK,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nm := yarnfake.NewNodeManager(t)
			tc.nm(nm)
			host, webPort, _ := strings.Cut(nm.Addr(), ":")
			env := map[string]string{"NM_HOST": host, "NM_PORT": "8041", "NM_HTTP_PORT": webPort, "CONTAINER_ID": container,
				"USER": "alice", "YARN_ER_HOST_ROOT": "/somewhere", "CUDA_VISIBLE_DEVICES": ""}
			if tc.noNMPort {
				delete(env, "NM_PORT")
				delete(env, "NM_HTTP_PORT")
			}
			if tc.cgPath == "" {
				tc.cgPath = "/yarn/" + container
			}
			self, fs := cgroupFiles(t, tc.cgroup, tc.cgPath, tc.rules)
			pr := &prober{root: discovery.NewRoot(fakeHost(t, 4, tc.nodes...)),
				lookup:     func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				selfCgroup: self, cgroupFS: fs, toolTimeout: time.Second, httpTimeout: 5 * time.Second}
			p := pr.run(context.Background(), 1)

			assert.Equal(t, view.DoctorProbeVersion, p.Version)
			assert.Equal(t, int64(1), p.Granted)
			assert.Equal(t, "procfs", p.Backend)
			require.Len(t, p.Listed, 4, "the driver lists every GPU, whatever opens")
			for _, d := range p.Listed {
				want := false
				for _, m := range tc.nodes {
					want = want || d.Minor == m
				}
				assert.Equal(t, want, d.Opens, "minor %d", d.Minor)
				if !want {
					assert.Contains(t, d.Error, fmt.Sprintf("/dev/nvidia%d: no such file or directory", d.Minor))
				}
			}
			assert.Equal(t, map[string]string{"YARN_ER_HOST_ROOT": "/somewhere", "CUDA_VISIBLE_DEVICES": ""}, p.Env, "set variables only, empty ones too")
			assert.Equal(t, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024", p.Driver.Version)
			assert.Len(t, p.Driver.Procfs, 4)
			assert.Nil(t, p.Driver.NVML, "no NVML below a fake host root")
			assert.NotEmpty(t, p.Driver.NVMLDetail)
			assert.Equal(t, "n/a", p.Driver.Agree)
			if !tc.noNMPort {
				assert.Equal(t, host+":8041", p.Node)
				assert.Equal(t, container, p.Container)
				for _, r := range nm.Requests() {
					if r.Path == "/conf" {
						assert.Equal(t, "alice", r.Query.Get("user.name"), "simple authentication as the container's user")
					}
				}
			}
			tc.check(t, p)

			// The report goes through the marker line and back, and the verdict follows.
			var buf strings.Builder
			require.NoError(t, WriteReport(&buf, p))
			back, err := ParseReports(strings.NewReader(buf.String()))
			require.NoError(t, err)
			require.Len(t, back, 1)
			assert.Equal(t, tc.verdict, Judge(&back[0]).Verdict)
		})
	}
}

// The executor: what /conf answers, the default for an unset key, unknown (with why) when the
// NodeManager cannot be asked.
func TestProbeExecutor(t *testing.T) {
	nm := yarnfake.NewNodeManager(t)
	nm.SetConf(keyCgroupsMount, "true")
	for _, tc := range []struct {
		name string
		addr string
		want view.DoctorExecutor
		src  string
	}{
		{name: "unset keys: the defaults", addr: nm.Addr(), want: view.DoctorExecutor{Class: defaultExecutor, CgroupsMount: "true", Source: "nodemanager /conf"}},
		{name: "nothing listening", addr: "127.0.0.1:1", src: "unknown: the NodeManager's /conf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := &prober{lookup: func(string) (string, bool) { return "", false }, httpTimeout: 5 * time.Second}
			ex := pr.executor(context.Background(), tc.addr)
			if tc.src != "" {
				assert.Empty(t, ex.Class)
				assert.Contains(t, ex.Source, tc.src)
				return
			}
			assert.Equal(t, tc.want, ex)
		})
	}
}

// The coordination ledger of the probe's user: read without its lock, a symbolic link refused.
func TestProbeCoordination(t *testing.T) {
	at := time.Unix(1796447000, 0)
	ledger := "# yarn-er device ledger v1\n" +
		discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: "0000:10:00.0", Owner: discovery.Owner{PID: 4242, StartTime: 1, BootID: "b", PIDNS: 1}, Acquired: at}) + "\n" +
		discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: "0000:11:00.0", Owner: discovery.Owner{PID: 4343, StartTime: 1, BootID: "b", PIDNS: 1}, Acquired: at}) + "\n" +
		"0 4242\n" // Flink's format: skipped
	for _, tc := range []struct {
		name   string
		setup  func(dir string) string // returns YARN_ER_COORDINATION_FILE ("" unset)
		held   []view.DoctorHeld
		detail string
	}{
		{name: "nothing handed out yet", setup: func(dir string) string { return filepath.Join(dir, "gpus") }},
		{name: "two devices handed out, a foreign line skipped", setup: func(dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "gpus.ledger.1000"), []byte(ledger), 0o600))
			return filepath.Join(dir, "gpus")
		}, held: []view.DoctorHeld{{Key: "0000:10:00.0", PID: 4242}, {Key: "0000:11:00.0", PID: 4343}}, detail: "1 line(s) skipped"},
		{name: "the default file when the variable is unset", setup: func(dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "default.ledger.1000"), []byte(ledger), 0o600))
			return ""
		}, held: []view.DoctorHeld{{Key: "0000:10:00.0", PID: 4242}, {Key: "0000:11:00.0", PID: 4343}}, detail: "1 line(s) skipped"},
		{name: "a symbolic link is not followed", setup: func(dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "elsewhere"), []byte(ledger), 0o600))
			require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "gpus.ledger.1000")))
			return filepath.Join(dir, "gpus")
		}, detail: "too many levels of symbolic links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := tc.setup(dir)
			env := map[string]string{}
			want := filepath.Join(dir, "default")
			if file != "" {
				env["YARN_ER_COORDINATION_FILE"] = file
				want = file
			}
			pr := &prober{lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				coordinationDefault: filepath.Join(dir, "default"), uid: 1000}
			c := pr.coordination()
			assert.Equal(t, want, c.File)
			assert.Equal(t, tc.held, c.Held)
			if tc.detail == "" {
				assert.Empty(t, c.Detail)
			} else {
				assert.Contains(t, c.Detail, tc.detail)
			}
		})
	}
}
