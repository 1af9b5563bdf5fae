package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

const runningApp = `{"app":{"id":"application_1_0007","user":"flink","name":"yarn-er: train","queue":"root.default",
 "state":"RUNNING","finalStatus":"UNDEFINED","progress":25.0,"applicationType":"YARN-ER","applicationTags":"team-a,nightly",
 "startedTime":1796116535624,"runningContainers":3,"diagnostics":"",
 "resourceInfo":{"resourceUsagesByPartition":[{"partitionName":"","used":{"memory":2304,"vCores":3,
  "resourceInformations":{"resourceInformation":[{"name":"memory-mb","units":"Mi","value":2304},{"name":"vcores","value":3},{"name":"yarn.io/gpu","value":2}]}}}]}}}`

const runningAttempts = `{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1_0007_000001","appAttemptState":"RUNNING",
 "containerId":"container_1_0007_01_000001","nodeId":"nm1:8041"}]}}`

const runningContainers = `{"container":[
 {"containerId":"container_1_0007_01_000002","containerState":"RUNNING","nodeId":"nm2:8041","allocatedMB":1024,"allocatedVCores":1,
  "allocatedResources":{"entry":[{"key":"memory-mb","value":1024},{"key":"vcores","value":1},{"key":"yarn.io/gpu","value":1}]}},
 {"containerId":"container_1_0007_01_000001","containerState":"RUNNING","nodeId":"nm1:8041","allocatedMB":256,"allocatedVCores":1},
 {"containerId":"container_1_0007_01_000003","containerState":"RUNNING","nodeId":"nm1:8041","allocatedMB":1024,"allocatedVCores":1,
  "allocatedResources":{"entry":[{"key":"memory-mb","value":1024},{"key":"vcores","value":1},{"key":"yarn.io/gpu","value":1}]}}]}`

func appRM(t *testing.T) *yarnfake.RM {
	rm := newClusterRM(t)
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0007", 200, runningApp)
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0007/appattempts", 200, runningAttempts)
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0007/appattempts/appattempt_1_0007_000001/containers", 200, runningContainers)
	return rm
}

func TestAppStatus(t *testing.T) {
	rm := appRM(t)
	res := runCLI(t, clusterEnv, "app", "status", "application_1_0007", "--rm", rm.URL(), "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var out struct {
		ID, State, FinalStatus, Type, User, Queue string
		Progress                                  float64
		Tags                                      []string
		GPUs                                      int64
		Attempt                                   struct{ ID, AmContainerID, Node string }
		Containers                                []struct {
			ID, Node string
			GPUs     int64
			AM       bool
			Resource map[string]int64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
	assert.Equal(t, "RUNNING", out.State)
	assert.Equal(t, "YARN-ER", out.Type)
	assert.Equal(t, []string{"team-a", "nightly"}, out.Tags)
	assert.Equal(t, int64(2), out.GPUs)
	assert.Equal(t, 25.0, out.Progress)
	assert.Equal(t, "appattempt_1_0007_000001", out.Attempt.ID)
	require.Len(t, out.Containers, 3)
	assert.Equal(t, "container_1_0007_01_000001", out.Containers[0].ID, "sorted by id")
	assert.True(t, out.Containers[0].AM)
	assert.Equal(t, int64(1), out.Containers[1].GPUs)
	assert.Equal(t, "nm2:8041", out.Containers[1].Node)
	assert.Equal(t, int64(1024), out.Containers[1].Resource["memory-mb"])

	res = runCLI(t, clusterEnv, "app", "status", "application_1_0007", "--rm", rm.URL())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "State:        RUNNING")
	assert.Contains(t, res.stdout, "container_1_0007_01_000001 (AM)")
	assert.Regexp(t, `container_1_0007_01_000002\s+RUNNING\s+nm2:8041\s+1024\s+1\s+1`, res.stdout)

	res = runCLI(t, clusterEnv, "app", "status", "not-an-id", "--rm", rm.URL())
	assert.NotEqual(t, cmdutil.ExitOK, res.code)
	assert.Contains(t, res.stderr, "application_<cluster timestamp>_<sequence>")
}

func TestAppListActiveNewestFirst(t *testing.T) {
	rm := newClusterRM(t)
	rm.ReplyJSON("GET /ws/v1/cluster/apps", 200, `{"apps":{"app":[
	 {"id":"application_1_0001","name":"old","state":"RUNNING","finalStatus":"UNDEFINED","startedTime":1000,"runningContainers":2},
	 {"id":"application_1_0002","name":"new","state":"ACCEPTED","finalStatus":"UNDEFINED","startedTime":2000,"runningContainers":0,
	  "resourceInfo":{"resourceUsagesByPartition":[{"used":{"memory":1,"vCores":1,"resourceInformations":{"resourceInformation":[{"name":"yarn.io/gpu","value":4}]}}}]}}]}}`)
	res := runCLI(t, clusterEnv, "app", "list", "--rm", rm.URL())
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "GPUS", strings.Fields(lines[0])[9])
	assert.True(t, strings.HasPrefix(lines[1], "application_1_0002"), "newest first: %s", res.stdout)
	assert.Equal(t, "4", strings.Fields(lines[1])[9])
	q := queries(rm)[0]
	assert.Equal(t, []string{"NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING"}, q["states"], "active applications by default")

	res = runCLI(t, clusterEnv, "app", "list", "--rm", rm.URL(), "--all", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Empty(t, queries(rm)[1]["states"])
	var out []map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	require.Len(t, out, 2)
	assert.Equal(t, 4.0, out[0]["gpus"])
}

func TestAppKillAndWait(t *testing.T) {
	rm := newClusterRM(t)
	var killed atomic.Bool
	rm.Handle("PUT /ws/v1/cluster/apps/application_1_0007/state", func(w http.ResponseWriter, _ *http.Request) {
		killed.Store(true)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"state":"RUNNING"}`))
	})
	rm.Handle("GET /ws/v1/cluster/apps/application_1_0007", func(w http.ResponseWriter, _ *http.Request) {
		state, final := "RUNNING", "UNDEFINED"
		if killed.Load() {
			state, final = "KILLED", "KILLED"
		}
		_, _ = fmt.Fprintf(w, `{"app":{"id":"application_1_0007","state":"%s","finalStatus":"%s"}}`, state, final)
	})
	// No HDFS: the staging cleanup is skipped with a warning, the kill still succeeds.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(`<configuration><property><name>fs.defaultFS</name><value>file:///</value></property></configuration>`), 0o600))
	res := runCLI(t, clusterEnv, "app", "kill", "application_1_0007", "--rm", rm.URL(), "--hadoop-conf", dir)
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Equal(t, "application_1_0007 KILLED/KILLED\n", res.stdout)

	res = runCLI(t, clusterEnv, "app", "wait", "application_1_0007", "--rm", rm.URL(), "-q")
	assert.Equal(t, cmdutil.ExitAppKilled, res.code, res.stderr)
	assert.Contains(t, res.stderr, "ended KILLED/KILLED")

	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0008", 200, `{"app":{"id":"application_1_0008","state":"FINISHED","finalStatus":"FAILED","diagnostics":"rank 2 (container_x on nm1) exited 1"}}`)
	res = runCLI(t, clusterEnv, "app", "wait", "application_1_0008", "--rm", rm.URL(), "-q")
	assert.Equal(t, cmdutil.ExitAppFailed, res.code, res.stderr)
	assert.Contains(t, res.stderr, "rank 2")
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0009", 200, `{"app":{"id":"application_1_0009","state":"FINISHED","finalStatus":"SUCCEEDED"}}`)
	res = runCLI(t, clusterEnv, "app", "wait", "application_1_0009", "--rm", rm.URL(), "-q")
	assert.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
}

func TestSubmitUsageErrors(t *testing.T) {
	rm := newClusterRM(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"submit", "--rm", rm.URL()}, cmdutil.ExitUsage, "no command"},
		{[]string{"submit", "--rm", rm.URL(), "--containers", "0", "--", "true"}, cmdutil.ExitUsage, "--containers 0"},
		{[]string{"submit", "--rm", rm.URL(), "--env", "NOEQUALS", "--", "true"}, cmdutil.ExitUsage, `--env "NOEQUALS"`},
		{[]string{"submit", "--rm", rm.URL(), "--file", "/nonexistent#x", "--", "true"}, cmdutil.ExitUsage, "does not exist"},
		{[]string{"submit", "--rm", rm.URL(), "--am-memory", "lots", "--", "true"}, cmdutil.ExitUsage, "--am-memory"},
		{[]string{"submit", "--rm", rm.URL(), "--progress", "fancy", "--", "true"}, cmdutil.ExitUsage, "--progress"},
		{[]string{"submit", "--rm", rm.URL(), "--", "true"}, cmdutil.ExitUsage, "no Hadoop configuration"},
	} {
		t.Run(strings.Join(tc.args[3:], " "), func(t *testing.T) {
			res := runCLI(t, clusterEnv, tc.args...)
			assert.Equal(t, tc.code, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.msg)
		})
	}
	// The command's own flags are not yarn-er's: everything after the command goes to it.
	assert.Empty(t, queries(rm), "nothing asked of the RM")
}
