package yarn

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

// These tests replay JSON captured from the real mini-YARN (Hadoop 3.5.0, see
// yarnfake/captures/README.md) through a fake RM and check every decoded field that matters.

func TestReplayClusterInfo(t *testing.T) {
	rm, c := replayRM(t, "GET /ws/v1/cluster/info", "info.json")

	info, err := c.ClusterInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "ACTIVE", info.HAState)
	assert.Equal(t, "STARTED", info.State)
	assert.Equal(t, "3.5.0", info.HadoopVersion)
	assert.Equal(t, "3.5.0", info.ResourceManagerVersion)
	assert.Equal(t, int64(1796117006310), info.ID)
	assert.Equal(t, int64(1796117006310), info.StartedOn.UnixMilli())
	assert.Equal(t, rm.URL(), info.RMAddress)
	assert.Contains(t, info.RMStateStoreName, "NullRMStateStore")

	reqs := rm.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, []string{"yarner"}, reqs[0].Query["user.name"], "simple auth sends user.name")
	assert.Equal(t, "application/json", reqs[0].Header.Get("Accept"))
}

func TestReplayMetrics(t *testing.T) {
	_, c := replayRM(t, "GET /ws/v1/cluster/metrics", "metrics-busy.json")

	m, err := c.Metrics(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(2), m.ActiveNodes)
	assert.Equal(t, int64(32768), m.TotalMB)
	assert.Equal(t, int64(80), m.TotalVirtualCores)
	assert.Equal(t, int64(128), m.AllocatedMB)
	assert.Equal(t, int64(1), m.AppsRunning)
	assert.Equal(t, qmap{
		records.MemoryMB: {Value: 32768, Units: "Mi"}, records.VCores: {Value: 80}, records.GPU: {Value: 8}, records.FPGA: {Value: 4},
	}, quantities(m.TotalClusterResourcesAcrossPartition))
	assert.Equal(t, int64(128), m.TotalUsedResourcesAcrossPartition.Value(records.MemoryMB))
	assert.Equal(t, int64(0), m.TotalReservedResourcesAcrossPartition.Value(records.GPU))
}

func TestReplayNodes(t *testing.T) {
	rm, c := replayRM(t, "GET /ws/v1/cluster/nodes", "nodes-busy.json")

	nodes, err := c.Nodes(context.Background(), NodesQuery{States: []string{"running"}})
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	for _, n := range nodes {
		assert.Equal(t, "RUNNING", n.State)
		assert.Equal(t, "/default-rack", n.Rack)
		assert.Equal(t, "localhost", n.Host)
		assert.Equal(t, "3.5.0", n.Version)
		assert.False(t, n.TotalDerived)
		assert.Equal(t, qmap{
			records.MemoryMB: {Value: 16384, Units: "Mi"}, records.VCores: {Value: 40}, records.GPU: {Value: 4}, records.FPGA: {Value: 2},
		}, quantities(n.Total), n.ID)
		sum, err := n.Used.Add(n.Available)
		require.NoError(t, err)
		assert.Equal(t, n.Total, sum, "used + available = total on %s", n.ID)
	}
	// One node runs the AM (128 MB, 1 vcore).
	used := nodes[0].Used.Value(records.MemoryMB) + nodes[1].Used.Value(records.MemoryMB)
	assert.Equal(t, int64(128), used)
	assert.Equal(t, []string{"RUNNING"}, rm.Requests()[0].Query["states"], "states are sent upper-case")
}

func TestReplayEmptyNodes(t *testing.T) {
	_, c := replayRM(t, "GET /ws/v1/cluster/nodes", "nodes-decommissioned.json") // {"nodes":{}}
	nodes, err := c.Nodes(context.Background(), NodesQuery{States: []string{"DECOMMISSIONED"}})
	require.NoError(t, err)
	assert.Empty(t, nodes)
}

func TestReplayNode(t *testing.T) {
	rm, c := replayRM(t, "GET /ws/v1/cluster/nodes/localhost:43009", "node.json")
	replyCapture(t, rm, "GET /ws/v1/cluster/nodes/nope:1", "error-404-node.json")

	n, err := c.Node(context.Background(), "localhost:43009")
	require.NoError(t, err)
	assert.Equal(t, "localhost:43009", n.ID)
	assert.Equal(t, int64(4), n.Total.Value(records.GPU))
	assert.Equal(t, int64(2), n.Available.Value(records.FPGA))

	_, err = c.Node(context.Background(), "nope:1")
	require.ErrorIs(t, err, ErrNotFound)
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "NotFoundException", re.Exception)
	assert.Equal(t, "org.apache.hadoop.yarn.webapp.NotFoundException", re.Class)
	assert.Equal(t, "nodeId, nope:1, is not found", re.Message)
}

func TestReplayScheduler(t *testing.T) {
	_, c := replayRM(t, "GET /ws/v1/cluster/scheduler", "scheduler.json")

	s, err := c.Scheduler(context.Background())
	require.NoError(t, err)
	assert.Equal(t, CapacityScheduler, s.Type)
	// The scheduler's maximumAllocation holds the configured maximum of the extended types:
	// Long.MAX_VALUE, which must survive decoding exactly.
	assert.Equal(t, int64(math.MaxInt64), s.MaximumAllocation.Value(records.GPU))
	assert.Equal(t, int64(16384), s.MaximumAllocation.Value(records.MemoryMB))

	qs := s.Queues()
	require.Len(t, qs, 2)
	assert.Equal(t, "root", qs[0].Path)
	assert.False(t, qs[0].Leaf)
	def := s.Queue("default")
	require.NotNil(t, def)
	assert.Equal(t, "root.default", def.Path)
	assert.True(t, def.Leaf)
	assert.Equal(t, "RUNNING", def.State)
	assert.InDelta(t, 100.0, def.Capacity, 1e-9)
	assert.InDelta(t, 100.0, def.AbsoluteMaxCapacity, 1e-9)
	assert.Equal(t, int64(40), def.MaximumAllocation.Value(records.VCores))
	assert.Equal(t, int64(8), def.MaxEffectiveCapacity.Value(records.GPU))
	// maximum-am-resource-percent 0.5 of the queue (the real RM's AMResourceLimit).
	assert.Equal(t, int64(16384), def.AMResourceLimit.Value(records.MemoryMB))
	assert.Equal(t, int64(16384), def.UserAMResourceLimit.Value(records.MemoryMB))
	assert.Equal(t, int64(0), def.UsedAMResource.Value(records.MemoryMB))
	assert.Equal(t, []string{"*"}, def.NodeLabels)
	assert.NotZero(t, def.Used.Len())
	assert.Same(t, def, s.Queue("root.default"))
}

func TestReplayApps(t *testing.T) {
	rm, c := replayRM(t, "GET /ws/v1/cluster/apps", "apps.json")

	apps, err := c.Apps(context.Background(), AppsQuery{States: []string{"accepted", "RUNNING"}, Limit: 5})
	require.NoError(t, err)
	require.Len(t, apps, 2)
	byID := map[string]App{}
	for _, a := range apps {
		byID[a.ID] = a
	}
	done := byID["application_1796117006310_0001"]
	assert.Equal(t, records.AppFailed, done.State)
	assert.Equal(t, records.FinalFailed, done.FinalStatus)
	assert.Equal(t, "yarner", done.User)
	assert.Equal(t, "root.default", done.Queue)
	assert.Equal(t, []string{"capture", "yarn-er"}, done.ApplicationTags)
	assert.Contains(t, done.Diagnostics, "exited with  exitCode: 0")
	assert.Contains(t, done.ResourceSeconds, records.MemoryMB)
	sleeping := byID["application_1796117006310_0002"]
	assert.Equal(t, records.AppAccepted, sleeping.State)
	assert.Equal(t, int64(128), sleeping.AllocatedMB)
	assert.Equal(t, int64(128), sleeping.Allocated.Value(records.MemoryMB))
	assert.Equal(t, int64(0), sleeping.Allocated.Value(records.GPU))
	q := rm.Requests()[0].Query
	assert.Equal(t, []string{"ACCEPTED,RUNNING"}, q["states"])
	assert.Equal(t, []string{"5"}, q["limit"])
}

func TestReplayEmptyApps(t *testing.T) {
	_, c := replayRM(t, "GET /ws/v1/cluster/apps", "apps-empty.json") // {"apps":{}} on 3.5
	apps, err := c.Apps(context.Background(), AppsQuery{})
	require.NoError(t, err)
	assert.Empty(t, apps)
}

func TestReplayAppAttemptsAndState(t *testing.T) {
	rm := newFakeRM(t)
	const id = "application_1796117006310_0001"
	replyCapture(t, rm, "GET /ws/v1/cluster/apps/"+id, "app-true-finished.json")
	replyCapture(t, rm, "GET /ws/v1/cluster/apps/"+id+"/appattempts", "appattempts-true.json")
	replyCapture(t, rm, "GET /ws/v1/cluster/apps/"+id+"/state", "app-true-state.json")
	replyCapture(t, rm, "GET /ws/v1/cluster/apps/application_1_0001", "error-404-app.json")
	c := testClient(t, Options{}, rm.URL())
	ctx := context.Background()

	app, err := c.App(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, records.AppFailed, app.State)
	assert.True(t, app.FinishedTime.After(app.StartedTime))

	attempts, err := c.AppAttempts(ctx, id)
	require.NoError(t, err)
	require.Len(t, attempts, 1)
	assert.Equal(t, int64(1), attempts[0].ID)
	assert.Equal(t, "appattempt_1796117006310_0001_000001", attempts[0].AppAttemptID)
	assert.Equal(t, "FAILED", attempts[0].State)
	assert.Equal(t, "container_1796117006310_0001_01_000001", attempts[0].ContainerID)

	state, err := c.AppState(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, records.AppFailed, state)

	_, err = c.App(ctx, "application_1_0001")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "app with id: application_1_0001 not found")

	_, err = c.App(ctx, "bogus")
	require.Error(t, err, "an id that is not an application id is refused before any request")
	assert.Len(t, rm.Requests(), 4)
}

func TestReplayNewApplication(t *testing.T) {
	_, c := replayRM(t, "POST /ws/v1/cluster/apps/new-application", "new-application.json")

	na, err := c.NewApplication(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "application_1796117006310_0001", na.ID)
	assert.Equal(t, qmap{records.MemoryMB: {Value: 16384, Units: "Mi"}, records.VCores: {Value: 40}, records.GPU: {Value: 4}, records.FPGA: {Value: 2}},
		quantities(na.MaximumResourceCapability))
	require.Len(t, na.ResourceInformation, 4)
	gpu := na.ResourceInformation[2]
	assert.Equal(t, records.GPU, gpu.Name)
	assert.Equal(t, "COUNTABLE", gpu.ResourceType)
	assert.Equal(t, int64(math.MaxInt64), gpu.MaximumAllocation)
}

func TestReplaySubmitAndKill(t *testing.T) {
	rm := newFakeRM(t)
	const id = "application_1796117006310_0002"
	replyCapture(t, rm, "POST /ws/v1/cluster/apps", "submit-sleep.txt")
	c := testClient(t, Options{}, rm.URL())
	ctx := context.Background()

	err := c.SubmitApplication(ctx, ApplicationSubmissionContext{
		ApplicationID: id, ApplicationName: "sleep", Queue: "default",
		AMContainerSpec: ContainerLaunchContext{Commands: []string{"sleep 600"}, Environment: map[string]string{"B": "2", "A": "1"}},
		Resource:        records.NewResources(128, 1),
		MaxAppAttempts:  1,
	})
	require.NoError(t, err)
	sent := rm.Requests()[0]
	assert.Equal(t, "application/json", sent.Header.Get("Content-Type"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(sent.Body, &body))
	assert.Equal(t, id, body["application-id"])
	spec := body["am-container-spec"].(map[string]any)
	assert.Equal(t, map[string]any{"command": []any{"sleep 600"}}, spec["commands"])
	assert.Equal(t, map[string]any{"entry": []any{
		map[string]any{"key": "A", "value": "1"}, map[string]any{"key": "B", "value": "2"},
	}}, spec["environment"])

	for _, tc := range []struct {
		capture    string
		state      records.ApplicationState
		inProgress bool
	}{
		{"kill-accepted.json", records.AppKilled, true},
		{"kill-done.json", records.AppKilled, false},
		{"kill-finished.json", records.AppFailed, false},
	} {
		replyCapture(t, rm, "PUT /ws/v1/cluster/apps/"+id+"/state", tc.capture)
		state, inProgress, err := c.KillApplication(ctx, id)
		require.NoError(t, err, tc.capture)
		assert.Equal(t, tc.state, state, tc.capture)
		assert.Equal(t, tc.inProgress, inProgress, tc.capture)
	}
	last := rm.Requests()[len(rm.Requests())-1]
	assert.JSONEq(t, `{"state":"KILLED"}`, string(last.Body))
}

func TestReplayErrors(t *testing.T) {
	for _, tc := range []struct {
		capture   string
		route     string
		sentinels []error
		exception string
		message   string
	}{
		{"error-403-new-application-disabled.json", "POST /ws/v1/cluster/apps/new-application",
			[]error{ErrRESTSubmissionDisabled, ErrForbidden}, "", "App submission via REST is disabled."},
		{"error-403-submit-disabled.json", "POST /ws/v1/cluster/apps",
			[]error{ErrRESTSubmissionDisabled, ErrForbidden}, "", "App submission via REST is disabled."},
		{"error-submit-too-much-memory.json", "POST /ws/v1/cluster/apps",
			[]error{ErrBadRequest}, "BadRequestException", "Requested more memory than configured max"},
		{"error-401-anonymous.txt", "POST /ws/v1/cluster/apps",
			[]error{ErrUnauthorized}, "", "Authentication required"},
		{"error-400-appid.json", "POST /ws/v1/cluster/apps",
			[]error{ErrBadRequest}, "BadRequestException", "Invalid ApplicationId prefix: bogus. The valid ApplicationId should start with prefix application"},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			rm, c := replayRM(t, tc.route, tc.capture)
			var err error
			if tc.route == "POST /ws/v1/cluster/apps/new-application" {
				_, err = c.NewApplication(context.Background())
			} else {
				err = c.SubmitApplication(context.Background(), ApplicationSubmissionContext{
					ApplicationID:   "application_1796117006310_0003",
					AMContainerSpec: ContainerLaunchContext{Commands: []string{"/bin/true"}},
					Resource:        records.NewResources(1<<20, 1),
				})
			}
			require.Error(t, err)
			for _, s := range tc.sentinels {
				assert.ErrorIs(t, err, s)
			}
			assert.NotErrorIs(t, err, ErrNotFound)
			var re *records.RemoteError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.exception, re.Exception)
			assert.Equal(t, tc.message, re.Message)
			assert.Equal(t, http.MethodPost, re.Method)
			assert.Equal(t, 1, len(rm.Requests()), "a refused POST is not retried")
			assert.False(t, errors.Is(err, ErrServer))
		})
	}
}

func TestReplayConf(t *testing.T) {
	rm, c := replayRM(t, "GET /conf", "conf.json")

	rc, err := c.Conf(context.Background())
	require.NoError(t, err)
	assert.Greater(t, len(rc.Properties), 500)
	p, ok := rc.Lookup("yarn.resource-types")
	require.True(t, ok)
	assert.Equal(t, "yarn.io/gpu,yarn.io/fpga", p.Value)
	assert.Equal(t, "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
		rc.Get("yarn.resourcemanager.scheduler.class"))
	assert.Equal(t, "true", rc.Get("yarn.webapp.enable-rest-app-submissions"))
	assert.Equal(t, "", rc.Get("no.such.property"))
	assert.Equal(t, []string{"json"}, rm.Requests()[0].Query["format"])

	single := newFakeRM(t)
	replyCapture(t, single, "GET /conf", "conf-name.json")
	rc, err = testClient(t, Options{}, single.URL()).Conf(context.Background())
	require.NoError(t, err)
	require.Len(t, rc.Properties, 1)
	assert.Equal(t, "yarn.io/gpu,yarn.io/fpga", rc.Get("yarn.resource-types"))
}
