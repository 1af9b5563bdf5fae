package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// capturesDir holds the RM answers captured from the real mini-YARN (see its README.md).
var capturesDir = filepath.Join("..", "..", "yarn", "yarnfake", "captures", "hadoop-3.5.0")

// newClusterRM is package yarnfake's fake RM answering only the routes a test sets.
func newClusterRM(t *testing.T) *yarnfake.RM { return yarnfake.New(t, yarnfake.WithRoutesOnly()) }

// replyCapture routes "METHOD /path" of rm to the recorded answer called name.
func replyCapture(t *testing.T, rm *yarnfake.RM, route, name string) {
	t.Helper()
	require.NoError(t, rm.ReplyCapture(route, name))
}

// queries returns the queries of the requests rm received, oldest first.
func queries(rm *yarnfake.RM) []url.Values {
	var out []url.Values
	for _, r := range rm.Requests() {
		out = append(out, r.Query)
	}
	return out
}

var clusterEnv = map[string]string{"HADOOP_USER_NAME": "flink"}

func TestClusterNodesJSONShape(t *testing.T) {
	rm := newClusterRM(t)
	rm.ReplyJSON("GET /ws/v1/cluster/nodes", 200, `{"nodes":{"node":[
	 {"rack":"/default-rack","state":"RUNNING","id":"h:p","nodeHostName":"h","nodeHTTPAddress":"h:p",
	  "usedResource":{"memory":1024,"vCores":1,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","units":"Mi","value":1024},{"name":"vcores","value":1},{"name":"yarn.io/gpu","value":1}]}},
	  "availableResource":{"memory":7168,"vCores":7,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","units":"Mi","value":7168},{"name":"vcores","value":7},{"name":"yarn.io/gpu","value":3}]}},
	  "totalResource":{"memory":8192,"vCores":8,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","units":"Mi","value":8192},{"name":"vcores","value":8},{"name":"yarn.io/gpu","value":4}]}}},
	 {"rack":"/r2","state":"RUNNING","id":"cpu:p","nodeHostName":"cpu","nodeHTTPAddress":"cpu:p",
	  "totalResource":{"memory":4096,"vCores":4,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","units":"Mi","value":4096},{"name":"vcores","value":4},{"name":"yarn.io/gpu","value":0}]}}}]}}`)

	res := runCLI(t, clusterEnv, "cluster", "nodes", "--rm", rm.URL(), "--resource", "yarn.io/gpu", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	want := `{"nodes":[{"id":"h:p","state":"RUNNING","host":"h","rack":"/default-rack","httpAddress":"h:p",
	  "total":{"memory-mb":8192,"vcores":8,"yarn.io/gpu":4},"used":{"memory-mb":1024,"vcores":1,"yarn.io/gpu":1},
	  "available":{"memory-mb":7168,"vcores":7,"yarn.io/gpu":3}}]}`
	assert.JSONEq(t, want, res.stdout)
	assert.True(t, strings.Index(res.stdout, `"memory-mb"`) < strings.Index(res.stdout, `"vcores"`), "memory-mb, vcores, then the rest")
	assert.Equal(t, []string{"flink"}, queries(rm)[0]["user.name"])

	// Without the filter both nodes; a node without a scheduler report has null used/available.
	res = runCLI(t, clusterEnv, "cluster", "nodes", "--rm", rm.URL(), "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var out struct {
		Nodes []map[string]any `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	require.Len(t, out.Nodes, 2)
	assert.Equal(t, "cpu:p", out.Nodes[0]["id"], "sorted by id")
	assert.Nil(t, out.Nodes[0]["used"])

	res = runCLI(t, clusterEnv, "cluster", "nodes", "--rm", rm.URL())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, []string{"NODE", "STATE", "RACK", "memory-mb", "vcores", "yarn.io/gpu"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"cpu:p", "RUNNING", "/r2", "-/-/4096Mi", "-/-/4", "-/-/0"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"h:p", "RUNNING", "/default-rack", "1024/7168/8192Mi", "1/7/8", "1/3/4"}, strings.Fields(lines[2]))
	assert.Contains(t, lines[3], "used/available/total")

	// A type no node reports is a usage error, not an empty list.
	res = runCLI(t, clusterEnv, "cluster", "nodes", "--rm", rm.URL(), "-o", "yaml", "--resource", "nvidia.com/gpu")
	require.Equal(t, cmdutil.ExitUsage, res.code, res.stderr)
	assert.Empty(t, res.stdout)
	assert.Contains(t, res.stderr, `--resource "nvidia.com/gpu": no node has a resource of that type`)
}

func TestClusterNodesCapturedAndStates(t *testing.T) {
	rm := newClusterRM(t)
	replyCapture(t, rm, "GET /ws/v1/cluster/nodes", "nodes-busy.json")
	res := runCLI(t, clusterEnv, "cluster", "nodes", "--rm", rm.URL(), "--state", "running,unhealthy", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, []string{"RUNNING,UNHEALTHY"}, queries(rm)[0]["states"])
	var out view.Nodes
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	require.Len(t, out.Nodes, 2)
	for _, n := range out.Nodes {
		assert.Equal(t, int64(4), n.Total.Quantity("yarn.io/gpu").Value)
	}
}

func TestClusterInfoHA(t *testing.T) {
	standby, active := newClusterRM(t), newClusterRM(t)
	standby.ReplyJSON("GET /ws/v1/cluster/info", 200, `{"clusterInfo":{"id":7,"state":"STARTED","haState":"STANDBY","hadoopVersion":"3.3.6"}}`)
	replyCapture(t, active, "GET /ws/v1/cluster/info", "info.json")
	replyCapture(t, active, "GET /ws/v1/cluster/metrics", "metrics-busy.json")
	rms := standby.URL() + "," + active.URL()

	res := runCLI(t, clusterEnv, "cluster", "info", "--rm", rms, "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var out view.ClusterInfo
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	assert.Equal(t, active.URL(), out.ResourceManager)
	assert.Equal(t, "ACTIVE", out.HAState)
	assert.Equal(t, "3.5.0", out.HadoopVersion)
	require.Len(t, out.ResourceManagers, 2)
	assert.Equal(t, "STANDBY", out.ResourceManagers[0].HAState)
	require.NotNil(t, out.Metrics)
	assert.Equal(t, int64(8), out.Metrics.Total.Quantity("yarn.io/gpu").Value)
	assert.Equal(t, int64(2), out.Metrics.ActiveNodes)

	res = runCLI(t, clusterEnv, "cluster", "info", "--rm", rms)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "ResourceManager:")
	assert.Contains(t, res.stdout, active.URL()+" (ACTIVE)")
	assert.Contains(t, res.stdout, "STANDBY")
	assert.Contains(t, res.stdout, "yarn.io/gpu 0/8")
}

func TestClusterQueues(t *testing.T) {
	rm := newClusterRM(t)
	replyCapture(t, rm, "GET /ws/v1/cluster/scheduler", "scheduler.json")
	res := runCLI(t, clusterEnv, "cluster", "queues", "--rm", rm.URL(), "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var out view.Queues
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	assert.Equal(t, "capacityScheduler", out.Scheduler)
	require.Len(t, out.Queues, 2)
	assert.Equal(t, "root.default", out.Queues[1].Path)
	assert.True(t, out.Queues[1].Leaf)
	assert.Equal(t, int64(9223372036854775807), out.Queues[1].MaximumAllocation.Quantity("yarn.io/gpu").Value, "Long.MAX_VALUE survives to the JSON output")
	assert.Contains(t, res.stdout, `"yarn.io/gpu": 9223372036854775807`)

	res = runCLI(t, clusterEnv, "cluster", "queues", "--rm", rm.URL())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "Scheduler: capacityScheduler")
	assert.Contains(t, res.stdout, "  default  RUNNING")
	assert.Contains(t, res.stdout, "yarn.io/gpu=unbounded")
	assert.Contains(t, res.stdout, "memory-mb=16384Mi")
}

// TestClusterQueuesFairScheduler: FairScheduler paths are the RM's queueName (not
// "root.root.default"), names the last element, and each queue's scheduling policy is shown.
func TestClusterQueuesFairScheduler(t *testing.T) {
	rm := newClusterRM(t)
	body, err := os.ReadFile(filepath.Join("..", "..", "yarn", "testdata", "variants", "scheduler-fair.json"))
	require.NoError(t, err)
	rm.ReplyJSON("GET /ws/v1/cluster/scheduler", 200, string(body))
	res := runCLI(t, clusterEnv, "cluster", "queues", "--rm", rm.URL(), "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var out view.Queues
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	assert.Equal(t, "fairScheduler", out.Scheduler)
	var paths, names, policies []string
	for _, q := range out.Queues {
		paths = append(paths, q.Path)
		names = append(names, q.Name)
		policies = append(policies, q.SchedulingPolicy)
	}
	assert.Equal(t, []string{"root", "root.default", "root.gpu", "root.gpu.train"}, paths)
	assert.Equal(t, []string{"root", "default", "gpu", "train"}, names)
	assert.Equal(t, []string{"DRF", "fair", "DRF", "DRF"}, policies)
	assert.Equal(t, int64(2), out.Queues[3].MaximumAllocation.Quantity("yarn.io/gpu").Value, "maxContainerAllocation")
	assert.Equal(t, int64(3), out.Queues[1].NumApplications)
	assert.NotContains(t, res.stdout, "root.root")

	// The CapacityScheduler's queues have no policy: the key is left out.
	replyCapture(t, rm, "GET /ws/v1/cluster/scheduler", "scheduler.json")
	res = runCLI(t, clusterEnv, "cluster", "queues", "--rm", rm.URL(), "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.NotContains(t, res.stdout, "schedulingPolicy")

	rm.ReplyJSON("GET /ws/v1/cluster/scheduler", 200, string(body))
	res = runCLI(t, clusterEnv, "cluster", "queues", "--rm", rm.URL())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\n    train  ")
	assert.NotContains(t, res.stdout, "root.")
}

func TestClusterApps(t *testing.T) {
	rm := newClusterRM(t)
	replyCapture(t, rm, "GET /ws/v1/cluster/apps", "apps.json")
	res := runCLI(t, clusterEnv, "cluster", "apps", "--rm", rm.URL(), "--state", "accepted", "--queue", "default",
		"--owner", "yarner", "--limit", "10", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	q := queries(rm)[0]
	assert.Equal(t, []string{"ACCEPTED"}, q["states"])
	assert.Equal(t, []string{"default"}, q["queue"])
	assert.Equal(t, []string{"yarner"}, q["user"])
	assert.Empty(t, q["limit"], "--limit is applied after sorting, not by the RM")
	var out view.Apps
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	require.Len(t, out.Apps, 2)
	assert.Equal(t, "application_1796117006310_0002", out.Apps[0].ID, "newest first")
	assert.Equal(t, int64(128), out.Apps[0].Allocated.Quantity("memory-mb").Value)
	assert.Equal(t, "FAILED", out.Apps[1].State)

	res = runCLI(t, clusterEnv, "cluster", "apps", "--rm", rm.URL())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "application_1796117006310_0001  yarn-er-true")

	replyCapture(t, rm, "GET /ws/v1/cluster/apps", "apps-empty.json")
	res = runCLI(t, clusterEnv, "cluster", "apps", "--rm", rm.URL())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "(no applications)")
}

func TestClusterErrorsAndExitCodes(t *testing.T) {
	rm := newClusterRM(t)
	anon, err := os.ReadFile(filepath.Join(capturesDir, "error-401-anonymous.txt"))
	require.NoError(t, err)
	rm.ReplyJSON("GET /ws/v1/cluster/nodes", 401, string(anon))
	rm.ReplyJSON("GET /ws/v1/cluster/scheduler", 403, `{"RemoteException":{"exception":"ForbiddenException","message":"Only admins can carry out this operation.","javaClassName":"org.apache.hadoop.yarn.webapp.ForbiddenException"}}`)
	rm.ReplyJSON("GET /ws/v1/cluster/apps", 500, `{"RemoteException":{"exception":"NullPointerException","message":"boom","javaClassName":"java.lang.NullPointerException"}}`)

	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		msg  string
	}{
		{[]string{"cluster", "nodes", "--rm", rm.URL()}, clusterEnv, cmdutil.ExitAuth, "Authentication required"},
		{[]string{"cluster", "queues", "--rm", rm.URL()}, clusterEnv, cmdutil.ExitAuth, "Only admins can carry out this operation."},
		{[]string{"cluster", "apps", "--rm", rm.URL(), "--rm-timeout", "5s"}, clusterEnv, cmdutil.ExitError, "NullPointerException: boom"},
		{[]string{"cluster", "nodes"}, clusterEnv, cmdutil.ExitUsage, "give --rm URL, or --hadoop-conf DIR"},
		{[]string{"cluster", "nodes", "--rm", rm.URL(), "--auth", "ntlm"}, clusterEnv, cmdutil.ExitUsage, "--auth"},
		{[]string{"cluster", "nodes", "--rm", rm.URL(), "--keytab", "k"}, clusterEnv, cmdutil.ExitUsage, "--keytab needs --principal"},
		{[]string{"cluster", "nodes", "--rm", rm.URL(), "--tls-cert", "c"}, clusterEnv, cmdutil.ExitUsage, "go together"},
		{[]string{"cluster", "nodes", "--rm", "ftp://x"}, clusterEnv, cmdutil.ExitError, "neither http nor https"},
		{[]string{"cluster", "apps", "--rm", rm.URL(), "--limit", "-1"}, clusterEnv, cmdutil.ExitUsage, "--limit"},
		{[]string{"cluster", "nodes", "--rm", rm.URL(), "--auth", "kerberos", "--krb5-conf", "/nonexistent/krb5.conf"}, clusterEnv, cmdutil.ExitAuth, "/nonexistent/krb5.conf"},
		{[]string{"cluster", "bogus"}, clusterEnv, cmdutil.ExitUsage, "unknown command"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			res := runCLI(t, tc.env, tc.args...)
			assert.Equal(t, tc.code, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.msg)
			assert.Empty(t, res.stdout)
		})
	}
}

func TestClusterSettingsFromEnvironment(t *testing.T) {
	rm := newClusterRM(t)
	replyCapture(t, rm, "GET /ws/v1/cluster/nodes", "nodes.json")
	env := map[string]string{"YARN_ER_RM": rm.URL(), "YARN_ER_USER": "alice", "HADOOP_USER_NAME": "bob"}
	res := runCLI(t, env, "cluster", "nodes", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, []string{"alice"}, queries(rm)[0]["user.name"], "--user (here from YARN_ER_USER) beats HADOOP_USER_NAME")

	// The RM address from the Hadoop configuration.
	dir := t.TempDir()
	site := `<configuration><property><name>yarn.resourcemanager.webapp.address</name><value>` +
		strings.TrimPrefix(rm.URL(), "http://") + `</value></property></configuration>`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(site), 0o600))
	res = runCLI(t, map[string]string{"HADOOP_CONF_DIR": dir, "HADOOP_USER_NAME": "bob"}, "cluster", "nodes", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, []string{"bob"}, queries(rm)[1]["user.name"])
}
