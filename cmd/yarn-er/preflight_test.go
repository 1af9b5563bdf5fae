package main

import (
	"archive/zip"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	rootcmd "github.com/yarn-er/yarn-er/cmd/internal/commands/root"
	"github.com/yarn-er/yarn-er/internal/testsupport/flinktest"
	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// preflightFlink is a legacy flink-conf.yaml with 2 GPUs (Flink's GPU driver) and 1 FPGA.
const preflightFlink = flinktest.TwoGPUsOneFPGA

// preflightEnv writes a Flink configuration and a FLINK_HOME with an executable discovery script
// (Flink's, or a link to target when target is set), and returns the conf file and the
// environment.
func preflightEnv(t *testing.T, flink, target string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	cf := filepath.Join(dir, "flink-conf.yaml")
	require.NoError(t, os.WriteFile(cf, []byte(flink), 0o644))
	home := t.TempDir()
	plugin := filepath.Join(home, "plugins", "external-resource-gpu")
	require.NoError(t, os.MkdirAll(plugin, 0o755))
	script := filepath.Join(plugin, "nvidia-gpu-discovery.sh")
	if target != "" {
		require.NoError(t, os.Symlink(target, script))
	} else {
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n. \"$(dirname \"$0\")\"/gpu-discovery-common.sh\n"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(plugin, "gpu-discovery-common.sh"), []byte("#!/bin/sh\n"), 0o755))
	}
	writeGPUPluginJar(t, filepath.Join(plugin, "flink-external-resource-gpu-1.20.0.jar"))
	return cf, map[string]string{"FLINK_HOME": home}
}

// writeGPUPluginJar writes a jar laid out like Flink's GPU plugin: the driver factory class and
// its ServiceLoader entry.
func writeGPUPluginJar(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{
		"org/apache/flink/externalresource/gpu/GPUDriverFactory.class":                                 "\xca\xfe\xba\xbe",
		"META-INF/services/org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory": preflight.GPUDriverFactory + "\n",
	} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

// preflightHadoop writes the Hadoop configuration of the good mini-YARN (docker/conf).
func preflightHadoop(t *testing.T, calculator string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"resource-types.xml":     `<property><name>yarn.resource-types</name><value>yarn.io/gpu,yarn.io/fpga</value></property>`,
		"node-resources.xml":     `<property><name>yarn.nodemanager.resource-type.yarn.io/gpu</name><value>4</value></property><property><name>yarn.nodemanager.resource-type.yarn.io/fpga</name><value>2</value></property>`,
		"capacity-scheduler.xml": `<property><name>yarn.scheduler.capacity.resource-calculator</name><value>` + calculator + `</value></property>`,
		"yarn-site.xml":          `<property><name>yarn.scheduler.maximum-allocation-mb</name><value>16384</value></property><property><name>yarn.scheduler.maximum-allocation-vcores</name><value>32</value></property>`,
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("<configuration>"+body+"</configuration>\n"), 0o644))
	}
	return dir
}

const dominant = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"

// preflightRMServer serves the captures of the good mini-YARN; status forces an answer code for
// every path.
func preflightRMServer(t *testing.T, status int) string {
	t.Helper()
	url, _ := preflightRMServerRecording(t, status, nil)
	return url
}

// preflightRMServerRecording is preflightRMServer that also serves extra paths (path → body) and
// returns a function listing the queries received so far.
func preflightRMServerRecording(t *testing.T, status int, extra map[string][]byte) (string, func() []url.Values) {
	t.Helper()
	files := map[string]string{
		"/ws/v1/cluster/info":      "info.json",
		"/ws/v1/cluster/nodes":     "nodes.json",
		"/ws/v1/cluster/scheduler": "scheduler.json",
		"/conf":                    "conf.json",
	}
	rm := newClusterRM(t)
	for path, name := range files {
		replyCapture(t, rm, "GET "+path, name)
	}
	for path, body := range extra {
		rm.Reply("GET "+path, http.StatusOK, "application/json", body)
	}
	if status != 0 {
		rm.Fault("*", yarnfake.Fault{Status: status,
			Body: `{"RemoteException":{"exception":"AuthorizationException","message":"Unable to obtain user name, user not authenticated","javaClassName":"org.apache.hadoop.security.authorize.AuthorizationException"}}`})
	}
	return rm.URL(), func() []url.Values { return queries(rm) }
}

func TestPreflightPassesOffline(t *testing.T) {
	cf, env := preflightEnv(t, preflightFlink, "")
	res := runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf", preflightHadoop(t, dominant))
	require.Equal(t, cmdutil.ExitOK, res.code, res.stdout+res.stderr)
	out := res.stdout
	for _, want := range []string{"Flink configuration\n", "Hadoop configuration\n", "Live cluster\n",
		"✓ flink.discovery-script", "✓ yarn.calculator-not-dominant", "- cluster.reachable", "no ResourceManager known"} {
		assert.Contains(t, out, want)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "preflight: 23 passed, 13 skipped — "), lines[len(lines)-1])
	assert.NotContains(t, out, "\x1b[", "no colours when stdout is not a terminal")
	// Groups in order.
	assert.Less(t, strings.Index(out, "Flink configuration"), strings.Index(out, "Hadoop configuration"))
	assert.Less(t, strings.Index(out, "Hadoop configuration"), strings.Index(out, "Live cluster"))
}

func TestPreflightFailsWithExitThree(t *testing.T) {
	cf, env := preflightEnv(t, preflightFlink, "")
	res := runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf",
		preflightHadoop(t, "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator"))
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stderr)
	assert.Contains(t, res.stdout, "✗ yarn.calculator-not-dominant")
	assert.Contains(t, res.stdout, "fix: set yarn.scheduler.capacity.resource-calculator=")
	assert.Contains(t, res.stdout, "at:  ")
	assert.Contains(t, res.stdout, "TaskManagers will NOT get their gpu and fpga")
	// The verdict is printed once, in the report: not repeated on stderr.
	assert.Equal(t, 1, strings.Count(res.stdout, "preflight: 1 failed"), res.stdout)
	assert.Empty(t, res.stderr)

	// JSON has no verdict line: the summary goes to stderr, once.
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf",
		preflightHadoop(t, "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator"), "-o", "json")
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stderr)
	assert.NotContains(t, res.stdout, "preflight: 1 failed")
	assert.Equal(t, 1, strings.Count(res.stderr, "yarn-er: preflight: 1 failed"), res.stderr)
}

func TestPreflightStrict(t *testing.T) {
	// No driver factory for fpga: a warning.
	flink := strings.Replace(preflightFlink, "external-resource.fpga.driver-factory.class: org.apache.flink.externalresource.fpga.FPGADriverFactory\n", "", 1)
	cf, env := preflightEnv(t, flink, "")
	res := runCLI(t, env, "preflight", "--flink-conf", cf)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "! flink.no-driver-factory")

	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--strict")
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stderr)
	assert.Contains(t, res.stdout, "warnings count as failures (--strict)")
	assert.Empty(t, res.stderr)
}

func TestPreflightJSONShape(t *testing.T) {
	cf, env := preflightEnv(t, preflightFlink, "")
	res := runCLI(t, env, "preflight", "--flink-conf", cf, "-D", "external-resource.gpu.amount=0", "-o", "json")
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stderr)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &top), res.stdout)
	assert.Len(t, top, 2)
	assert.Equal(t, "false", string(top["ok"]))
	var checks []map[string]any
	require.NoError(t, json.Unmarshal(top["checks"], &checks))
	ids := map[string]bool{}
	for _, c := range checks {
		assert.Len(t, c, 5, "%v", c)
		for _, k := range []string{"id", "status", "message", "fix", "source"} {
			_, isString := c[k].(string)
			assert.True(t, isString, "%s of %v", k, c)
		}
		assert.Contains(t, []string{"pass", "warn", "fail", "skip"}, c["status"])
		ids[c["id"].(string)] = true
		if c["id"] == preflight.IDAmountInvalid {
			assert.Equal(t, "fail", c["status"])
			assert.Equal(t, "-D external-resource.gpu.amount", c["source"])
		}
	}
	for _, id := range preflight.IDs() {
		assert.True(t, ids[id], id)
	}
	assert.NotContains(t, res.stdout, `\u003c`, "no HTML escaping")

	res = runCLI(t, env, "preflight", "--flink-conf", cf, "-o", "yaml")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var y struct {
		OK     bool             `yaml:"ok"`
		Checks []map[string]any `yaml:"checks"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &y))
	assert.True(t, y.OK)
	assert.Len(t, y.Checks, len(preflight.IDs()))
}

func TestPreflightLive(t *testing.T) {
	cf, env := preflightEnv(t, preflightFlink, "")
	url := preflightRMServer(t, 0)
	res := runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf", preflightHadoop(t, dominant),
		"--rm", url, "--user", "alice", "--containers", "4", "--strict")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, "✓ cluster.capacity")
	assert.Contains(t, res.stdout, "4 TaskManager containers")
	assert.Contains(t, res.stdout, "preflight: 33 passed, 3 skipped — TaskManagers will get their gpu and fpga")

	// 5 do not fit now, and the queue (8 GPUs at most) can never hold them.
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--rm", url, "--user", "alice", "--containers", "5")
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stderr)
	assert.Contains(t, res.stdout, "! cluster.capacity")
	assert.Contains(t, res.stdout, "✗ cluster.queue-capacity")

	// The RM refuses the user: the report is printed, the exit status says authentication.
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--rm", preflightRMServer(t, http.StatusUnauthorized), "--user", "alice")
	require.Equal(t, cmdutil.ExitAuth, res.code, res.stderr)
	assert.Contains(t, res.stdout, "✗ cluster.reachable")
	assert.Contains(t, res.stderr, "refused the credentials")
}

func TestPreflightUsageAndErrors(t *testing.T) {
	cf, env := preflightEnv(t, preflightFlink, "")
	res := runCLI(t, env, "preflight", "--flink-conf", cf, "--containers", "-1")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "--containers")
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "extra")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--auth", "bogus")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "--auth")
	res = runCLI(t, env, "preflight", "--flink-conf", filepath.Join(t.TempDir(), "nope.yaml"))
	assert.Equal(t, cmdutil.ExitError, res.code)
	assert.Contains(t, res.stderr, "nope.yaml")
	// No Flink configuration anywhere: a usage error, never a passing report of nothing.
	res = runCLI(t, nil, "preflight")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Empty(t, res.stdout)
	assert.Contains(t, res.stderr, "no Flink configuration found")
	bad := filepath.Join(t.TempDir(), "hadoop")
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "yarn-site.xml"), []byte("<configuration><property>"), 0o644))
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf", bad)
	assert.Equal(t, cmdutil.ExitError, res.code)
	assert.Contains(t, res.stderr, "yarn-site.xml")
}

func TestPreflightYarnErAsDiscoveryScript(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	// yarn-er linked as Flink's script, with the documented misspelling: discover would refuse it.
	flink := strings.Replace(preflightFlink, "args: --enable-coordination-mode", "args: --enable-coordination", 1)
	cf, env := preflightEnv(t, flink, exe)
	res := runCLI(t, env, "preflight", "--flink-conf", cf)
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stdout)
	assert.Contains(t, res.stdout, "✓ flink.discovery-script")
	assert.Contains(t, res.stdout, "yarn-er discover")
	assert.Contains(t, res.stdout, "✗ flink.coordination-args")
	assert.Contains(t, res.stdout, "did you mean --enable-coordination-mode?")

	cf, env = preflightEnv(t, preflightFlink, exe)
	res = runCLI(t, env, "preflight", "--flink-conf", cf)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stdout)
	assert.Contains(t, res.stdout, "understood by yarn-er discover (coordination on)")
}

func TestFlinkHomeFromInstallation(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "conf"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(home, "lib"), 0o755))
	cf := filepath.Join(home, "conf", "flink-conf.yaml")
	require.NoError(t, os.WriteFile(cf, []byte(preflightFlink), 0o644))
	res := runCLI(t, nil, "preflight", "--flink-conf", cf)
	// The installation has no GPU plugin: the script is missing there.
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stdout)
	assert.Contains(t, res.stdout, "✗ flink.discovery-script")
	assert.Contains(t, res.stdout, filepath.Join(home, "plugins", "external-resource-gpu", "nvidia-gpu-discovery.sh"))
	assert.Contains(t, res.stdout, "FLINK_HOME from the installation of "+cf)
}

// TestPreflightUsesClusterRMFlags: preflight registers the Hadoop and ResourceManager flags of the
// cluster commands, with the same names, help texts, defaults and types.
func TestPreflightUsesClusterRMFlags(t *testing.T) {
	f, _, _ := cmdtest.Buffers(cmdutil.Env{})
	root := rootcmd.NewCmdRoot(f)
	pf, _, err := root.Find([]string{"preflight"})
	require.NoError(t, err)
	info, _, err := root.Find([]string{"cluster", "info"})
	require.NoError(t, err)

	probe := &cobra.Command{Use: "probe"}
	f.NewClusterConn(probe)
	var names []string
	probe.Flags().VisitAll(func(f *pflag.Flag) {
		names = append(names, f.Name)
		for _, c := range []*cobra.Command{pf, info} {
			g := c.Flags().Lookup(f.Name)
			require.NotNil(t, g, "%s has no --%s", c.CommandPath(), f.Name)
			assert.Equal(t, f.Usage, g.Usage, "--%s of %s", f.Name, c.CommandPath())
			assert.Equal(t, f.DefValue, g.DefValue, "--%s of %s", f.Name, c.CommandPath())
			assert.Equal(t, f.Shorthand, g.Shorthand, "--%s of %s", f.Name, c.CommandPath())
			assert.Equal(t, f.Value.Type(), g.Value.Type(), "--%s of %s", f.Name, c.CommandPath())
		}
	})
	for _, want := range []string{"hadoop-conf", "rm", "user", "do-as", "auth", "principal", "keytab", "krb5-ccache",
		"krb5-conf", "spnego-principal", "tls-ca", "tls-cert", "tls-key", "insecure-skip-tls-verify", "rm-timeout", "rm-failover-timeout"} {
		assert.Contains(t, names, want)
	}
}

// TestPreflightRMFromEnvironment: YARN_ER_RM and YARN_ER_USER configure preflight's RM as they do
// the cluster commands'.
func TestPreflightRMFromEnvironment(t *testing.T) {
	cf, env := preflightEnv(t, preflightFlink, "")
	rmURL, queries := preflightRMServerRecording(t, 0, nil)
	env["YARN_ER_RM"] = rmURL
	env["YARN_ER_USER"] = "alice"
	env["HADOOP_USER_NAME"] = "bob"
	res := runCLI(t, env, "preflight", "--flink-conf", cf)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, "✓ cluster.reachable")
	require.NotEmpty(t, queries())
	for _, q := range queries() {
		assert.Equal(t, []string{"alice"}, q["user.name"])
	}

	// A bad value in the environment is a usage error naming the variable, as for cluster.
	env["YARN_ER_RM_TIMEOUT"] = "soon"
	res = runCLI(t, env, "preflight", "--flink-conf", cf)
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "YARN_ER_RM_TIMEOUT")
}

// TestPreflightWithoutRM: no RM configured is a skip of the live checks with the reason (the text
// cluster gives as a usage error); a Hadoop configuration without an RM address says so.
func TestPreflightWithoutRM(t *testing.T) {
	cf, env := preflightEnv(t, preflightFlink, "")
	res := runCLI(t, env, "preflight", "--flink-conf", cf, "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var rep struct {
		Checks []preflight.Check `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep))
	reason := ""
	for _, c := range rep.Checks {
		if c.ID == preflight.IDClusterReachable {
			assert.Equal(t, preflight.StatusSkip, c.Status)
			reason = c.Message
		}
	}
	assert.Equal(t, "no ResourceManager known: give --rm URL, or --hadoop-conf DIR (or HADOOP_CONF_DIR) with the cluster's yarn-site.xml", reason)
	cluster := runCLI(t, env, "cluster", "info")
	assert.Equal(t, cmdutil.ExitUsage, cluster.code)
	assert.Contains(t, cluster.stderr, reason)

	dir := preflightHadoop(t, dominant)
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf", dir)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	for _, want := range []string{"- cluster.reachable", "no ResourceManager known from the Hadoop configuration in " + dir,
		"yarn.resourcemanager.webapp.address", "or give --rm URL"} {
		assert.Contains(t, res.stdout, want)
	}
	cluster = runCLI(t, env, "cluster", "info", "--hadoop-conf", dir)
	assert.Equal(t, cmdutil.ExitUsage, cluster.code)
	assert.Contains(t, cluster.stderr, "no ResourceManager known from the Hadoop configuration in "+dir)

	// Flags that are wrong stay usage errors even without an RM.
	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--tls-cert", "c.pem")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "--tls-cert and --tls-key go together")
}

// TestPreflightLiveEffectiveMaximum: an RM that serves /ws/v1/cluster/scheduler-overview (Hadoop
// 3.4+) gives its effective maximum allocation, which catches a request the files allow.
func TestPreflightLiveEffectiveMaximum(t *testing.T) {
	overview, err := os.ReadFile(filepath.Join(capturesDir, "scheduler-overview.json"))
	require.NoError(t, err)
	rmURL, _ := preflightRMServerRecording(t, 0, map[string][]byte{"/ws/v1/cluster/scheduler-overview": overview})
	cf, env := preflightEnv(t, preflightFlink, "")
	hadoop := preflightHadoop(t, dominant)

	res := runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf", hadoop, "--rm", rmURL, "--user", "alice")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, "✓ yarn.max-allocation-exceeded")
	assert.Contains(t, res.stdout, "yarn.io/gpu 2 ≤ 4 (effective)")

	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf", hadoop, "-D", "external-resource.gpu.amount=5")
	require.Equal(t, cmdutil.ExitOK, res.code, "offline, the files allow any number of GPUs: %s", res.stdout)

	res = runCLI(t, env, "preflight", "--flink-conf", cf, "--hadoop-conf", hadoop, "--rm", rmURL, "--user", "alice",
		"-D", "external-resource.gpu.amount=5")
	require.Equal(t, cmdutil.ExitFindings, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, "✗ yarn.max-allocation-exceeded")
	assert.Contains(t, res.stdout, "above the ResourceManager's effective maximum allocation 4")
	assert.Contains(t, res.stdout, "✗ cluster.queue-max-allocation")
}
