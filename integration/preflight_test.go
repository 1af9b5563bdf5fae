//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/yarn"
)

// gpuPluginJar returns Flink's real GPU plugin jar (org.apache.flink:flink-external-resource-gpu
// 1.20.0) from the local Maven repository, fetching it with Maven when it is not there yet. Its
// pom names a parent Maven Central does not serve, hence -Dtransitive=false.
func gpuPluginJar(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	jar := filepath.Join(home, ".m2", "repository", "org", "apache", "flink", "flink-external-resource-gpu", "1.20.0", "flink-external-resource-gpu-1.20.0.jar")
	if _, err := os.Stat(jar); err == nil {
		return jar
	}
	mvn := os.Getenv("MVN")
	if mvn == "" {
		mvn = "mvn"
	}
	out, err := exec.Command(mvn, "-B", "-q", "dependency:get", "-Dartifact=org.apache.flink:flink-external-resource-gpu:1.20.0", "-Dtransitive=false").CombinedOutput()
	require.NoError(t, err, "fetching Flink's GPU plugin jar: %s", out)
	return jar
}

// preflightFlinkHome makes a FLINK_HOME whose plugins/external-resource-gpu/ holds Flink's GPU
// plugin jar, an executable nvidia-gpu-discovery.sh and the gpu-discovery-common.sh it sources, as
// Flink's GPU plugin ships them, so that flink.gpu-plugin-jar and flink.discovery-script pass.
func preflightFlinkHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "plugins", "external-resource-gpu")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-gpu-discovery.sh"),
		[]byte("#!/usr/bin/env bash\nsource \"$(dirname \"$0\")\"/gpu-discovery-common.sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gpu-discovery-common.sh"), []byte("#!/usr/bin/env bash\n"), 0o755))
	installGPUPluginJar(t, dir)
	return home
}

// installGPUPluginJar copies Flink's GPU plugin jar into dir.
func installGPUPluginJar(t *testing.T, dir string) {
	t.Helper()
	jar, err := os.ReadFile(gpuPluginJar(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink-external-resource-gpu-1.20.0.jar"), jar, 0o644))
}

// preflightInput loads examples/<flinkFile> (2 GPUs and 1 FPGA per TaskManager) with the dynamic
// properties ("key=value") and the cluster's client configuration, with a client for its RM.
func preflightInput(t *testing.T, ep *Endpoints, flinkFile string, dynamic ...string) preflight.Input {
	t.Helper()
	root, err := RepoRoot()
	require.NoError(t, err)
	env := func(string) string { return "" }
	fc, err := conf.LoadFlink(conf.FlinkOptions{Path: filepath.Join(root, "examples", flinkFile), Getenv: env, Dynamic: dynamic})
	require.NoError(t, err)
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: ep.HadoopConfDir, Getenv: env})
	require.NoError(t, err)
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{ep.RMWebAddress}, User: ep.User, Getenv: env})
	require.NoError(t, err)
	return preflight.Input{Flink: fc, Hadoop: hc, Client: c, FlinkHome: preflightFlinkHome(t)}
}

// runPreflight runs preflight on in and logs its report.
func runPreflight(t *testing.T, in preflight.Input) *preflight.Report {
	t.Helper()
	rep, err := preflight.Run(context.Background(), in)
	require.NoError(t, err)
	logReport(t, rep)
	return rep
}

func logReport(t *testing.T, rep *preflight.Report) {
	t.Helper()
	for _, c := range rep.Checks {
		t.Logf("%-5s %-30s %s [%s]", c.Status, c.ID, c.Message, c.Source)
	}
	t.Log(rep.Verdict())
}

// TestPreflightGoodClusterPassesEveryCheck: the good mini-YARN (docker/conf) and the example Flink
// configurations pass every check, strictly: no warning, nothing skipped but the resource-profile
// checks, which do not apply to a cluster without profiles (TestResourceProfiles runs them on
// docker/conf-profiles), and cluster.placement, which does not apply to Flink's TaskManagers
// (TestPlacement* run it through submit).
func TestPreflightGoodClusterPassesEveryCheck(t *testing.T) {
	ep := cluster(t)
	for _, file := range []string{"flink-conf.yaml", "config.yaml"} {
		t.Run(file, func(t *testing.T) {
			in := preflightInput(t, ep, file)
			in.Strict = true
			rep := runPreflight(t, in)
			var seen []string
			for _, c := range rep.Checks {
				want := preflight.StatusPass
				if c.ID == preflight.IDResourceProfiles || c.ID == preflight.IDProfileMaxAllocation || c.ID == preflight.IDPlacement {
					want = preflight.StatusSkip
				}
				assert.Equal(t, want, c.Status, "%s: %s", c.ID, c.Message)
				seen = append(seen, c.ID)
			}
			assert.Equal(t, preflight.IDs(), seen)
			assert.True(t, rep.OK)
			assert.Contains(t, rep.Verdict(), "TaskManagers will get their gpu and fpga")
			// 2 NodeManagers with 4 GPUs and 2 FPGAs: 2 TaskManagers each.
			for _, c := range rep.Checks {
				if c.ID == preflight.IDCapacity {
					assert.Contains(t, c.Message, "4 on an empty cluster")
				}
			}
		})
	}
}

// TestPreflightMisconfiguredCluster: the misconfigured mini-YARN (DefaultResourceCalculator, no
// extended resource type) fails exactly yarn.resource-type-undeclared, yarn.calculator-not-dominant
// and cluster.type-unknown, for gpu and fpga alike.
func TestPreflightMisconfiguredCluster(t *testing.T) {
	ep := misconfiguredCluster(t)
	rep := runPreflight(t, preflightInput(t, ep, "flink-conf.yaml"))
	failing := map[string][]string{}
	for _, c := range rep.Checks {
		if c.Status == preflight.StatusFail {
			failing[c.ID] = append(failing[c.ID], c.Message)
		}
	}
	assert.ElementsMatch(t, []string{preflight.IDResourceTypeUndeclared, preflight.IDCalculatorNotDominant, preflight.IDTypeUnknown},
		keysOf(failing))
	for _, id := range []string{preflight.IDResourceTypeUndeclared, preflight.IDTypeUnknown} {
		require.Len(t, failing[id], 2, id)
		assert.Contains(t, failing[id][0], "yarn.io/gpu", id)
		assert.Contains(t, failing[id][1], "yarn.io/fpga", id)
	}
	assert.Contains(t, failing[preflight.IDCalculatorNotDominant][0], "DefaultResourceCalculator")
	assert.False(t, rep.OK)
	assert.Contains(t, rep.Verdict(), "will NOT get")
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// runPreflightCLI runs `yarn-er preflight -o json` with the RM taken from the Hadoop configuration
// and the user from $HADOOP_USER_NAME, and returns the report and the exit status.
func runPreflightCLI(t *testing.T, bin, flinkHome string, ep *Endpoints, args ...string) (map[string]any, int, string) {
	t.Helper()
	root, err := RepoRoot()
	require.NoError(t, err)
	cmd := exec.Command(bin, append([]string{"preflight", "--flink-conf", filepath.Join(root, "examples", "flink-conf.yaml"),
		"--hadoop-conf", ep.HadoopConfDir, "-o", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+ep.User, "FLINK_HOME="+flinkHome, "NO_COLOR=1")
	r := runCommand(t, cmd)
	return r.jsonObject(t), r.code, r.stderr
}

// TestPreflightCLIExitCodes: exit 0 and ok true on the good cluster (with Flink's script, and with
// yarn-er itself linked as the discovery script), exit 3 and ok false on the misconfigured one, the
// RM found through the Hadoop configuration.
func TestPreflightCLIExitCodes(t *testing.T) {
	bin := buildBinary(t, "./cmd/yarn-er", false)
	out, code, stderr := runPreflightCLI(t, bin, preflightFlinkHome(t), cluster(t), "--strict", "--containers", "4")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, true, out["ok"])
	checks, _ := out["checks"].([]any)
	assert.Len(t, checks, len(preflight.IDs()))

	// yarn-er linked under Flink's script name: recognised as discover, its arguments checked.
	home := t.TempDir()
	script := filepath.Join(home, "plugins", "external-resource-gpu", "nvidia-gpu-discovery.sh")
	require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
	require.NoError(t, os.Symlink(bin, script))
	installGPUPluginJar(t, filepath.Dir(script))
	out, code, stderr = runPreflightCLI(t, bin, home, cluster(t), "--strict")
	assert.Equal(t, 0, code, stderr)
	found := false
	for _, c := range out["checks"].([]any) {
		m := c.(map[string]any)
		if m["id"] == preflight.IDDiscoveryScript {
			found = true
			assert.Contains(t, m["message"], "yarn-er discover")
		}
	}
	assert.True(t, found)

	out, code, stderr = runPreflightCLI(t, bin, preflightFlinkHome(t), misconfiguredCluster(t))
	assert.Equal(t, 3, code, stderr)
	assert.Equal(t, false, out["ok"])
	assert.True(t, strings.Contains(stderr, "preflight"), stderr)
}

// TestPreflightQueueTooSmall: the real ResourceManager's queue root.default (2 NodeManagers, 8 GPUs
// in all) can never hold 5 TaskManagers of 2 GPUs each besides the JobManager:
// cluster.queue-capacity fails, from the scheduler's own maxEffectiveCapacity.
func TestPreflightQueueTooSmall(t *testing.T) {
	ep := cluster(t)
	in := preflightInput(t, ep, "flink-conf.yaml")
	in.Containers = 5
	rep := runPreflight(t, in)
	var found bool
	for _, c := range rep.Checks {
		if c.ID == preflight.IDQueueCapacity {
			found = true
			assert.Equal(t, preflight.StatusFail, c.Status, c.Message)
			assert.Contains(t, c.Message, "holds at most 4 TaskManager containers")
			assert.Contains(t, c.Message, "besides the JobManager container")
			assert.Contains(t, c.Message, "5 wanted")
		}
		if c.ID == preflight.IDNodeLabel {
			assert.Equal(t, preflight.StatusPass, c.Status, c.Message)
		}
	}
	assert.True(t, found)
	assert.False(t, rep.OK)
}
