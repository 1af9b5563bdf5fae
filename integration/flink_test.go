//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery/discoverytest"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// The Flink tests run Apache Flink 1.20.0 and 2.0.0 (assembled from Maven Central by
// docker/flink/build; $YARN_ER_FLINK_VERSIONS, comma-separated, picks others) on the mini-YARN: a job whose TaskManagers ask YARN for yarn.io/gpu and find their GPUs with yarn-er
// (linked as Flink's nvidia-gpu-discovery.sh) in coordination mode. docs/flink-on-yarn-gpus.md
// walks through the same steps by hand.

// flinkVersions are the Flink versions the tests run: $YARN_ER_FLINK_VERSIONS, else 1.20.0 and
// 2.0.0 (the versions whose modules Maven Central serves here).
func flinkVersions() []string {
	if v := strings.TrimSpace(os.Getenv("YARN_ER_FLINK_VERSIONS")); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"1.20.0", "2.0.0"}
}

// flink2 reports whether version is Flink 2.x: conf/config.yaml only (standard YAML) and no
// run-application command.
func flink2(version string) bool { return strings.HasPrefix(version, "2.") }

const (
	// Budgets for a loaded 2-core machine: a Flink application is RUNNING with its TaskManagers
	// in about a minute there.
	flinkBuildBudget  = 10 * time.Minute
	flinkDeployBudget = 3 * time.Minute
	flinkReportBudget = 3 * time.Minute
	flinkFinishBudget = 2 * time.Minute
	// The job holds its TaskManagers at most this long; the test releases them earlier.
	flinkHoldSeconds = 300
)

// flinkSetup is one Flink home on one mini-YARN, with the fake GPU host both NodeManagers share.
type flinkSetup struct {
	version  string
	ep       *Endpoints
	yarnEr   string // the yarn-er binary
	home     string // FLINK_HOME
	hostRoot string // fake host tree: 8 NVIDIA GPUs
	coord    string // coordination file prefix (in a directory every TaskManager sees)
	out      string // where the job writes its reports
	release  string // the job's --hold file
	env      []string
}

// newFlinkSetup builds Flink and yarn-er, makes a Flink home with yarn-er as the GPU discovery
// script and a fake host of gpus NVIDIA GPUs, and writes conf/flink-conf.yaml with extra lines.
func newFlinkSetup(t *testing.T, ep *Endpoints, version string, gpus int, extra map[string]string) *flinkSetup {
	t.Helper()
	root, err := RepoRoot()
	require.NoError(t, err)
	dir := t.TempDir()
	s := &flinkSetup{
		version: version,
		ep:      ep,
		yarnEr:  buildBinary(t, "./cmd/yarn-er", false),
		home:    filepath.Join(dir, "flink"),
		coord:   filepath.Join(dir, "coord", "gpus"),
		out:     filepath.Join(dir, "out"),
		release: filepath.Join(dir, "release"),
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(s.coord), 0o755))
	require.NoError(t, os.MkdirAll(s.out, 0o755))

	ctx, cancel := context.WithTimeout(context.Background(), flinkBuildBudget)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "docker", "flink", "build"), "home", s.home, "--yarn-er", s.yarnEr)
	cmd.Env = append(os.Environ(), "FLINK_VERSION="+version)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "docker/flink/build home: %s", b)

	tree := discoverytest.New(t)
	tree.NVIDIAHost(gpus)
	s.hostRoot = tree.Root

	hadoopCP, err := harnessHadoopClasspath(root, ep.HadoopVersion)
	require.NoError(t, err)
	javaHome, err := javaHome()
	require.NoError(t, err)
	opts, err := exec.Command(filepath.Join(root, "docker", "flink", "build"), "java17-opts").Output()
	require.NoError(t, err)

	conf := [][2]string{
		{"jobmanager.memory.process.size", "1024m"},
		{"taskmanager.memory.process.size", "1024m"},
		{"taskmanager.memory.managed.size", "64m"},
		{"taskmanager.numberOfTaskSlots", "1"},
		{"parallelism.default", "2"},
		{"external-resources", "gpu"},
		{"external-resource.gpu.amount", "2"},
		{"external-resource.gpu.driver-factory.class", "org.apache.flink.externalresource.gpu.GPUDriverFactory"},
		{"external-resource.gpu.yarn.config-key", "yarn.io/gpu"},
		// The default discovery-script.path is plugins/external-resource-gpu/nvidia-gpu-discovery.sh,
		// the link to yarn-er that YARN localizes into every TaskManager container. Flink splits
		// the arguments on whitespace: no spaces in these paths.
		{"external-resource.gpu.param.discovery-script.args", strings.Join([]string{
			"--enable-coordination-mode", "--coordination-file", s.coord,
			"--host-root", s.hostRoot, "--vendor", "nvidia"}, " ")},
		{"env.java.opts.all", strings.TrimSpace(string(opts))},
		{"containerized.master.env.JAVA_HOME", javaHome},
		{"containerized.taskmanager.env.JAVA_HOME", javaHome},
		{"containerized.master.env.HADOOP_CONF_DIR", ep.HadoopConfDir},
		{"containerized.taskmanager.env.HADOOP_CONF_DIR", ep.HadoopConfDir},
		{"containerized.taskmanager.env.CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
		// Hadoop for the JobManager and TaskManagers: the cluster's configuration and the
		// mini-YARN's own client jars, on the containers' classpath (flink.yarn.* goes to
		// Flink's YarnConfiguration).
		{"flink.yarn.application.classpath", ep.HadoopConfDir + "," + strings.ReplaceAll(hadoopCP, ":", ",")},
		{"restart-strategy.type", "fixed-delay"},
		{"restart-strategy.fixed-delay.attempts", "3"},
		{"restart-strategy.fixed-delay.delay", "1 s"},
		{"yarn.application-attempts", "1"},
	}
	// extra replaces keys in place: config.yaml (Flink 2) refuses a key set twice.
	extraKeys := keys(extra)
	for _, k := range extraKeys {
		replaced := false
		for i := range conf {
			if conf[i][0] == k {
				conf[i][1], replaced = extra[k], true
			}
		}
		if !replaced {
			conf = append(conf, [2]string{k, extra[k]})
		}
	}
	// Flink 1.x: the legacy flat flink-conf.yaml; Flink 2: config.yaml, standard YAML (quoted
	// values, so that "--enable-coordination-mode ..." and "1 s" stay strings).
	var yaml strings.Builder
	for _, kv := range conf {
		if flink2(version) {
			fmt.Fprintf(&yaml, "%s: %s\n", kv[0], strconv.Quote(kv[1]))
		} else {
			fmt.Fprintf(&yaml, "%s: %s\n", kv[0], kv[1])
		}
	}
	require.NoError(t, os.WriteFile(s.confFile(), []byte(yaml.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.home, "conf", "log4j.properties"), []byte(flinkLog4j), 0o644))

	s.env = append(os.Environ(),
		"FLINK_HOME="+s.home, "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_CLASSPATH="+hadoopCP,
		"HADOOP_USER_NAME="+ep.User, "JAVA_HOME="+javaHome, "NO_COLOR=1")
	return s
}

// confFile is the Flink configuration file of the setup's version.
func (s *flinkSetup) confFile() string {
	if flink2(s.version) {
		return filepath.Join(s.home, "conf", "config.yaml")
	}
	return filepath.Join(s.home, "conf", "flink-conf.yaml")
}

// flinkLog4j is the log4j 2 configuration of the client, the JobManager and the TaskManagers
// (Flink ships conf/log4j.properties to the containers and sets log.file there).
const flinkLog4j = `rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.fileName = ${sys:log.file}
appender.main.append = false
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{HH:mm:ss,SSS} %-5p %-60c %x - %m%n
`

// harnessHadoopClasspath returns the Hadoop client jars of the mini-YARN harness build of the
// cluster's Hadoop line (docker/mini-yarn builds each line into target/hadoop-<version>/): the
// shaded hadoop-client-api and hadoop-client-runtime, and commons-logging, which they call.
func harnessHadoopClasspath(root, hadoopVersion string) (string, error) {
	lib := filepath.Join(root, "docker", "harness", "target", "hadoop-"+hadoopVersion, "current", "lib")
	var jars []string
	for _, pattern := range []string{"hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "commons-logging-*.jar"} {
		m, err := filepath.Glob(filepath.Join(lib, pattern))
		if err != nil || len(m) != 1 {
			return "", fmt.Errorf("want one %s in %s (docker/mini-yarn build), found %d", pattern, lib, len(m))
		}
		real, err := filepath.EvalSymlinks(m[0])
		if err != nil {
			return "", err
		}
		jars = append(jars, real)
	}
	return strings.Join(jars, ":"), nil
}

// javaHome returns $JAVA_HOME, else the home of the java on PATH.
func javaHome() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		return h, nil
	}
	out, err := exec.Command("java", "-XshowSettings:properties", "-version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("java -XshowSettings:properties: %w: %s", err, out)
	}
	m := regexp.MustCompile(`(?m)^\s*java\.home = (.+)$`).FindSubmatch(out)
	if m == nil {
		return "", errors.New("java.home not found in java -XshowSettings:properties")
	}
	return strings.TrimSpace(string(m[1])), nil
}

// preflight runs `yarn-er preflight -o json` on the Flink configuration against the cluster.
func (s *flinkSetup) preflight(t *testing.T) (map[string]any, int) {
	t.Helper()
	cmd := exec.Command(s.yarnEr, "preflight", "--flink-conf", s.confFile(),
		"--hadoop-conf", s.ep.HadoopConfDir, "--rm", s.ep.RMWebAddress, "--containers", "2", "-o", "json")
	cmd.Env = s.env
	r := runCommand(t, cmd)
	rep := r.jsonObject(t)
	for _, c := range checksOf(rep) {
		t.Logf("preflight %-5v %-32v %v", c["status"], c["id"], c["message"])
	}
	return rep, r.code
}

func checksOf(rep map[string]any) []map[string]any {
	raw, _ := rep["checks"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, c := range raw {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

var submittedApp = regexp.MustCompile(`Submitted application (application_\d+_\d+)`)

// deploy runs the GPU report job in application mode (Flink 1.20: flink run-application -t
// yarn-application; 2.0: flink run -t yarn-application) and returns the YARN application id once
// the client has deployed it.
func (s *flinkSetup) deploy(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), flinkDeployBudget)
	defer cancel()
	action := "run-application"
	if flink2(s.version) {
		action = "run"
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.home, "bin", "flink"), action, "-t", "yarn-application",
		"-Dyarn.application.name="+name,
		filepath.Join(s.home, "examples", "flink-gpu-report-job.jar"),
		"--out", s.out, "--hold", s.release, "--hold-timeout", fmt.Sprint(flinkHoldSeconds))
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	clientLog, _ := os.ReadFile(filepath.Join(s.home, "log", "flink-client.log"))
	m := submittedApp.FindSubmatch(clientLog)
	require.NoError(t, err, "flink run-application: %s\nclient log tail:\n%s", out, tail(clientLog, 40))
	require.NotNil(t, m, "no application id in the client log:\n%s", tail(clientLog, 40))
	t.Logf("deployed %s", m[1])
	return string(m[1])
}

// awaitReplacement waits for a TaskManager that is none of first (a replacement after a kill) to
// report, failing early when the application ends, and returns it with every TaskManager alive
// now: the replacement, and whichever first ones survived (a global failover may have moved the
// others too; their new reports are then the replacement's peers).
func (s *flinkSetup) awaitReplacement(t *testing.T, ctx context.Context, c *yarn.Client, app string, first ...tmReport) (tmReport, []tmReport) {
	t.Helper()
	var replacement tmReport
	deadline := time.Now().Add(flinkReportBudget)
	for replacement.ResourceID == "" {
		for name, r := range s.reports(t) {
			if r.Attempt > 0 && !slices.ContainsFunc(first, func(f tmReport) bool { return f.ResourceID == r.ResourceID }) {
				t.Logf("replacement: %s from %s pid %d GPUs %v", name, r.ResourceID, r.PID, r.GPU)
				replacement = r
			}
		}
		if replacement.ResourceID != "" {
			break
		}
		a, err := c.App(ctx, app)
		require.NoError(t, err)
		require.False(t, a.State.Terminal(), "application ended after the kill: %s/%s %s", a.State, a.FinalStatus, a.Diagnostics)
		require.True(t, time.Now().Before(deadline), "no replacement TaskManager after %s\n%s",
			flinkReportBudget, s.containerLogs(app, "jobmanager.log", 40))
		time.Sleep(time.Second)
	}
	live := []tmReport{replacement}
	for _, r := range s.reports(t) {
		if r.ResourceID != replacement.ResourceID && alive(r.PID) {
			live = append(live, r)
		}
	}
	return replacement, live
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// tmReport is one line the job wrote: what one subtask's TaskManager got.
type tmReport struct {
	Subtask     int      `json:"subtask"`
	Attempt     int      `json:"attempt"`
	ResourceID  string   `json:"resourceId"`
	ContainerID string   `json:"containerId"`
	PID         int      `json:"pid"`
	GPU         []string `json:"gpu"`
	CUDAVisible *string  `json:"cudaVisibleDevices"`
}

func (s *flinkSetup) reports(t *testing.T) map[string]tmReport {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(s.out, "report-*.json"))
	require.NoError(t, err)
	out := map[string]tmReport{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var r tmReport
		require.NoError(t, json.Unmarshal(b, &r), "%s: %s", f, b)
		out[filepath.Base(f)] = r
	}
	return out
}

// waitReports waits until the job wrote the reports named, failing early when the application
// ends.
func (s *flinkSetup) waitReports(t *testing.T, c *yarn.Client, app string, names ...string) map[string]tmReport {
	t.Helper()
	deadline := time.Now().Add(flinkReportBudget)
	for {
		got := s.reports(t)
		missing := 0
		for _, n := range names {
			if _, ok := got[n]; !ok {
				missing++
			}
		}
		if missing == 0 {
			return got
		}
		a, err := c.App(context.Background(), app)
		require.NoError(t, err)
		require.False(t, a.State.Terminal(), "application %s ended (%s/%s) before reporting %v: %s\n%s",
			app, a.State, a.FinalStatus, names, a.Diagnostics, s.containerLogs(app, "jobmanager.log", 30))
		require.True(t, time.Now().Before(deadline), "no reports %v after %s; have %v\n%s",
			names, flinkReportBudget, keys(got), s.containerLogs(app, "taskmanager.log", 30))
		time.Sleep(time.Second)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// containerLogs returns the tails of the application's container logs called name (the
// NodeManagers of the mini-YARN keep them below its state dir), for failure messages.
func (s *flinkSetup) containerLogs(app, name string, n int) string {
	var b strings.Builder
	_ = filepath.WalkDir(filepath.Join(s.ep.StateDir, "target"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name && strings.Contains(p, app) {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "== %s\n%s\n", p, tail(data, n))
		}
		return nil
	})
	return b.String()
}

// grepContainerLogs reports whether any container log of the application contains s.
func (s *flinkSetup) grepContainerLogs(app, needle string) string {
	found := ""
	_ = filepath.WalkDir(filepath.Join(s.ep.StateDir, "target"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" || !strings.Contains(p, app) || !strings.HasSuffix(p, ".log") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			if strings.Contains(sc.Text(), needle) {
				found = sc.Text()
				return filepath.SkipAll
			}
		}
		return nil
	})
	return found
}

// usedGPUs sums yarn.io/gpu in use over the cluster's nodes.
func usedGPUs(t *testing.T, c *yarn.Client) int64 {
	t.Helper()
	nodes, err := c.Nodes(context.Background(), yarn.NodesQuery{})
	require.NoError(t, err)
	var n int64
	for _, node := range nodes {
		n += node.Used.Value("yarn.io/gpu")
	}
	return n
}

// waitUsedGPUs polls the RM until want yarn.io/gpu are in use and returns what it saw last.
func waitUsedGPUs(t *testing.T, c *yarn.Client, want int64, budget time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(budget)
	for {
		n := usedGPUs(t, c)
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// assertDisjoint checks that every report has exactly 2 GPUs and that no GPU index appears in
// two of them.
func assertDisjoint(t *testing.T, reps []tmReport) {
	t.Helper()
	owner := map[string]string{}
	for _, r := range reps {
		assert.Len(t, r.GPU, 2, "TaskManager %s (subtask %d, attempt %d) GPUs %v", r.ResourceID, r.Subtask, r.Attempt, r.GPU)
		for _, g := range r.GPU {
			if prev, ok := owner[g]; ok {
				assert.Failf(t, "GPU handed out twice", "GPU %s went to %s and %s", g, prev, r.ResourceID)
			}
			owner[g] = r.ResourceID
		}
	}
}

// TestFlinkGPUsOnYARN: on the good mini-YARN, preflight passes; a Flink job with 2 TaskManagers ×
// 2 GPUs gets 4 yarn.io/gpu from YARN and 2 distinct GPUs per TaskManager from yarn-er; a
// TaskManager killed with SIGKILL is replaced by one whose discovery gets GPUs no live
// TaskManager holds; the job finishes and no live process holds a GPU afterwards.
func TestFlinkGPUsOnYARN(t *testing.T) {
	parallelOn(t, mainGuard)
	for _, v := range flinkVersions() {
		t.Run("flink-"+v, func(t *testing.T) { testFlinkGPUsOnYARN(t, v) })
	}
}

func testFlinkGPUsOnYARN(t *testing.T, version string) {
	ep := cluster(t)
	s := newFlinkSetup(t, ep, version, 8, nil)
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{ep.RMWebAddress}, User: ep.User})
	require.NoError(t, err)

	rep, code := s.preflight(t)
	require.Equal(t, 0, code, "preflight on the good cluster: %v", rep["verdict"])
	assert.Equal(t, true, rep["ok"])
	for _, ch := range checksOf(rep) {
		assert.NotEqual(t, "fail", ch["status"], "%v: %v", ch["id"], ch["message"])
	}

	// Containers of earlier tests may still be winding down.
	require.Zero(t, waitUsedGPUs(t, c, 0, time.Minute), "yarn.io/gpu in use before the job: another application holds them")
	app := s.deploy(t, "flink-gpu-e2e-"+version)
	t.Cleanup(func() {
		if a, err := c.App(context.Background(), app); err == nil && !a.State.Terminal() {
			_, _, _ = c.KillApplication(context.Background(), app)
		}
	})

	first := s.waitReports(t, c, app, "report-0-0.json", "report-1-0.json")
	r0, r1 := first["report-0-0.json"], first["report-1-0.json"]
	t.Logf("TaskManagers: %s pid %d GPUs %v; %s pid %d GPUs %v", r0.ResourceID, r0.PID, r0.GPU, r1.ResourceID, r1.PID, r1.GPU)
	assert.NotEqual(t, r0.ResourceID, r1.ResourceID, "both subtasks ran in one TaskManager")
	assert.True(t, strings.HasPrefix(r0.ContainerID, "container_"), "not a YARN container: %q", r0.ContainerID)
	assert.Equal(t, r0.ContainerID, r0.ResourceID, "on YARN the TaskManager's resource id is its container id")
	assertDisjoint(t, []tmReport{r0, r1})
	assert.Nil(t, r0.CUDAVisible, "nothing sets CUDA_VISIBLE_DEVICES in the TaskManagers")

	// Both TaskManagers hold their containers while the job holds them: 2 × 2 yarn.io/gpu, all
	// of them this application's.
	assert.EqualValues(t, 4, waitUsedGPUs(t, c, 4, 30*time.Second), "yarn.io/gpu in use while the TaskManagers ran")
	if a, err := c.App(context.Background(), app); assert.NoError(t, err) && a.Allocated.Len() > 0 {
		assert.EqualValues(t, 4, a.Allocated.Value("yarn.io/gpu"), "yarn.io/gpu allocated to %s", app)
	}

	// SIGKILL one TaskManager: Flink asks YARN for a new container, whose discovery must get
	// GPUs that the surviving TaskManager does not hold.
	require.True(t, alive(r0.PID), "TaskManager pid %d is not a live process here", r0.PID)
	require.NoError(t, syscall.Kill(r0.PID, syscall.SIGKILL))
	t.Logf("killed TaskManager %s (pid %d)", r0.ResourceID, r0.PID)
	_, live := s.awaitReplacement(t, context.Background(), c, app, r0, r1)
	require.False(t, alive(r0.PID))
	assertDisjoint(t, live)

	// Release the job; it finishes and YARN ends every container.
	require.NoError(t, os.WriteFile(s.release, nil, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), flinkFinishBudget)
	defer cancel()
	a, err := c.WaitApp(ctx, app, time.Second, nil)
	require.NoError(t, err, "application %s did not end", app)
	assert.Equal(t, records.AppFinished, a.State, a.Diagnostics)
	assert.Equal(t, records.FinalSucceeded, a.FinalStatus, a.Diagnostics)

	// The ledger is clean: once the TaskManager JVMs are gone, a new owner gets all 8 GPUs
	// (dead owners' entries are reclaimed, a live owner's never are), and releases them.
	for _, r := range s.reports(t) {
		for i := 0; alive(r.PID) && i < 60; i++ {
			time.Sleep(500 * time.Millisecond)
		}
		require.False(t, alive(r.PID), "TaskManager pid %d outlived its application", r.PID)
	}
	args := []string{"--enable-coordination-mode", "--coordination-file", s.coord, "--host-root", s.hostRoot,
		"--vendor", "nvidia", "--owner-pid", fmt.Sprint(os.Getpid())}
	out, err := exec.Command(s.yarnEr, append([]string{"discover", "8"}, args...)...).CombinedOutput()
	require.NoError(t, err, "discover 8 after the job: %s", out)
	assert.Equal(t, "0,1,2,3,4,5,6,7", strings.TrimSpace(string(out)))
	out, err = exec.Command(s.yarnEr, append([]string{"discover", "--release"}, args...)...).CombinedOutput()
	require.NoError(t, err, "discover --release: %s", out)
	ledgers, err := filepath.Glob(s.coord + ".ledger.*")
	require.NoError(t, err)
	for _, l := range ledgers {
		b, err := os.ReadFile(l)
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			assert.False(t, strings.HasPrefix(line, "v1 "), "%s still holds %q", l, line)
		}
	}
}

// flinkUnsupported is what Flink's (1.20, 2.0) YARN resource manager throws when a TaskManager asks for a
// resource type the ResourceManager does not know (TaskExecutorProcessSpecContainerResource-
// PriorityAdapter); preflight quotes it.
const flinkUnsupported = "External resource yarn.io/gpu is not supported by the Yarn cluster."

// TestFlinkGPUsOnMisconfiguredYARN: on the misconfigured mini-YARN (no yarn.io/gpu type,
// DefaultResourceCalculator) preflight fails and says why; Flink then indeed fails: its resource
// manager refuses to request TaskManagers with the message preflight quotes, no TaskManager
// starts (so none runs without GPUs), and the job ends with NoResourceAvailableException.
func TestFlinkGPUsOnMisconfiguredYARN(t *testing.T) {
	parallelOn(t, &misconfiguredMiniYARN.guard)
	for _, v := range flinkVersions() {
		t.Run("flink-"+v, func(t *testing.T) { testFlinkGPUsOnMisconfiguredYARN(t, v) })
	}
}

func testFlinkGPUsOnMisconfiguredYARN(t *testing.T, version string) {
	ep := misconfiguredCluster(t)
	s := newFlinkSetup(t, ep, version, 8, map[string]string{
		// Fail after 30 s instead of 5 minutes, and only once.
		"slot.request.timeout":  "30000",
		"restart-strategy.type": "none",
	})
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{ep.RMWebAddress}, User: ep.User})
	require.NoError(t, err)

	rep, code := s.preflight(t)
	assert.Equal(t, 3, code, "preflight exit status on the misconfigured cluster")
	assert.Equal(t, false, rep["ok"])
	failing := map[string]string{}
	for _, ch := range checksOf(rep) {
		if ch["status"] == "fail" {
			failing[fmt.Sprint(ch["id"])] = fmt.Sprint(ch["message"])
		}
	}
	require.Contains(t, failing, "yarn.resource-type-undeclared")
	require.Contains(t, failing, "cluster.type-unknown")
	assert.Contains(t, failing, "yarn.calculator-not-dominant")
	assert.Contains(t, failing["cluster.type-unknown"], "yarn.io/gpu")
	// What preflight predicts for Flink.
	assert.Contains(t, failing["yarn.resource-type-undeclared"], flinkUnsupported)
	assert.Contains(t, failing["cluster.type-unknown"], flinkUnsupported)
	assert.NotContains(t, failing["cluster.type-unknown"], "drops the type")

	app := s.deploy(t, "flink-gpu-e2e-misconfigured-"+version)
	t.Cleanup(func() {
		if a, err := c.App(context.Background(), app); err == nil && !a.State.Terminal() {
			_, _, _ = c.KillApplication(context.Background(), app)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), flinkDeployBudget)
	defer cancel()
	a, err := c.WaitApp(ctx, app, time.Second, nil)
	require.NoError(t, err, "application %s did not end\n%s", app, s.containerLogs(app, "jobmanager.log", 40))
	t.Logf("application %s: %s/%s", app, a.State, a.FinalStatus)

	// What Flink did: it failed. The resource manager refused every TaskManager request with
	// the message preflight quoted, so no TaskManager ran, with or without GPUs.
	assert.Equal(t, records.FinalFailed, a.FinalStatus, "final status of the Flink application")
	line := s.grepContainerLogs(app, flinkUnsupported)
	assert.NotEmpty(t, line, "the JobManager log does not say %q\n%s", flinkUnsupported, s.containerLogs(app, "jobmanager.log", 40))
	t.Logf("Flink: %s", strings.TrimSpace(line))
	assert.NotEmpty(t, s.grepContainerLogs(app, "NoResourceAvailableException"), "the job did not fail for want of slots")
	assert.Empty(t, s.reports(t), "a TaskManager ran on the misconfigured cluster")
	assert.Empty(t, s.containerLogs(app, "taskmanager.log", 1), "a TaskManager container started")
}
