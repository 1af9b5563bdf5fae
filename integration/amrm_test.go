//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/integration/testam/result"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// testAMRun is one submission of the test AM.
type testAMRun struct {
	AppID  string
	App    *yarn.App
	Result result.Result
	// MaxGPUsUsed is the largest sum of used yarn.io/gpu over /ws/v1/cluster/nodes seen while
	// the application ran.
	MaxGPUsUsed int64
	// SubmitToFinish is the wall time from submission to a terminal state.
	SubmitToFinish time.Duration
}

// runTestAM submits the test AM through the RM REST API, localized from a file: URL with its
// exact size and millisecond timestamp, waits for it to finish while watching the nodes' GPUs,
// and returns its result.
func runTestAM(t testing.TB, ep *Endpoints, bin string, env map[string]string) *testAMRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	yc := yarnClient(t, ep)
	dir := t.TempDir()
	resultPath := filepath.Join(dir, "result.json")
	logPath := filepath.Join(dir, "am.log")
	na, err := yc.NewApplication(ctx)
	require.NoError(t, err)
	amEnv := map[string]string{
		"YARNER_TESTAM_SCHEDULER": ep.RMSchedulerAddress,
		"YARNER_TESTAM_RESULT":    resultPath,
		"YARNER_TESTAM_LOG":       logPath,
	}
	for k, v := range env {
		amEnv[k] = v
	}
	run := &testAMRun{AppID: na.ID}
	run.MaxGPUsUsed, run.SubmitToFinish = runApp(t, ctx, yc, yarn.ApplicationSubmissionContext{
		ApplicationID:   na.ID,
		ApplicationName: "yarn-er testam " + t.Name(),
		ApplicationType: "yarn-er-testam",
		MaxAppAttempts:  1,
		Resource:        records.NewResources(128, 1),
		AMContainerSpec: yarn.ContainerLaunchContext{
			LocalResources: map[string]records.LocalResource{"testam": localFileResource(t, bin)},
			Environment:    amEnv,
			Commands:       []string{"./testam 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"},
		},
	}, []string{resultPath, logPath}, func(app *yarn.App) { run.App = app })
	// The RM reports the application finished once the AM unregistered, a moment before the AM
	// writes its last result and exits: wait for that.
	for {
		b, err := os.ReadFile(resultPath)
		if err == nil {
			run.Result = result.Result{}
			require.NoError(t, json.Unmarshal(b, &run.Result))
			if run.Result.Done {
				return run
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the AM wrote no final result (app %s %s/%s: %s): %v", na.ID, run.App.State, run.App.FinalStatus, run.App.Diagnostics, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestAMRMGPUContainers: a Go AM registers over Hadoop IPC with its AMRMToken, asks for 4
// containers with yarn.io/gpu=1, gets them, starts a command in each through the NodeManager
// protocol, sees them complete, and unregisters SUCCEEDED.
func TestAMRMGPUContainers(t *testing.T) {
	ep := cluster(t)
	bin := buildBinary(t, "./integration/testam", true)
	run := runTestAM(t, ep, bin, map[string]string{
		"YARNER_TESTAM_MODE":         "containers",
		"YARNER_TESTAM_CONTAINERS":   "4",
		"YARNER_TESTAM_GPUS":         "1",
		"YARNER_TESTAM_COMMAND":      "sleep 6",
		"YARNER_TESTAM_HEARTBEAT_MS": "250",
		"YARNER_TESTAM_PROBES":       "1",
	})
	r := run.Result
	require.Empty(t, r.Error)
	assert.Equal(t, records.AppFinished, run.App.State)
	assert.Equal(t, records.FinalSucceeded, run.App.FinalStatus, "diagnostics: %s", run.App.Diagnostics)
	assert.True(t, r.Unregistered)

	// Registration: the RM's resource types and maximum capability came over the wire.
	assert.Contains(t, r.ResourceTypes, "yarn.io/gpu")
	assert.Equal(t, int64(4), r.MaxCapability["yarn.io/gpu"], "largest NodeManager has 4 GPUs")
	assert.Contains(t, r.TokenKinds, "YARN_AM_RM_TOKEN")
	_, seq, _ := strings.Cut(run.AppID, "application_")
	assert.Equal(t, "appattempt_"+seq+"_000001", r.Attempt, "the AMRMToken identifies this attempt")

	// Allocation: 4 containers, each really carrying one GPU.
	require.Len(t, r.Allocated, 4)
	nodes := map[string]bool{}
	for _, c := range r.Allocated {
		assert.Equal(t, int64(1), c.Resource["yarn.io/gpu"], "container %s", c.ID)
		assert.Equal(t, int32(1), c.Priority)
		nodes[c.Node] = true
	}
	assert.Empty(t, r.Released, "no container had to be given back")
	assert.Equal(t, len(nodes), r.NMTokens, "an NMToken for every node with a container")

	// NodeManager protocol: all started, one queried while running, all completed with exit 0.
	assert.Len(t, r.Launched, 4)
	for id, st := range r.Statuses {
		assert.Equal(t, "RUNNING", st, "getContainerStatuses of %s", id)
	}
	require.Len(t, r.Completed, 4)
	for _, c := range r.Completed {
		assert.Equal(t, "COMPLETE", c.State, c.ID)
		assert.Equal(t, int32(0), c.ExitStatus, "%s: %s", c.ID, c.Diagnostics)
	}

	// While they ran, the RM's node report showed the GPUs in use.
	assert.GreaterOrEqual(t, run.MaxGPUsUsed, int64(4), "used yarn.io/gpu over /ws/v1/cluster/nodes")

	// A second registration is refused by the real RM with a typed exception.
	p, ok := r.Probes["registerTwice"]
	require.True(t, ok)
	assert.Equal(t, "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException", p.Class)
	assert.True(t, p.IsSent, "errors.Is(err, amrm.ErrInvalidRequest)")

	// Wire-level mistakes, answered by the real RM.
	if p, ok := r.Probes["simpleAuth"]; assert.True(t, ok) {
		assert.Equal(t, "org.apache.hadoop.security.AccessControlException", p.Class, "SIMPLE auth: %s", p.Error)
		assert.Contains(t, p.Message, "SIMPLE authentication is not enabled")
		t.Logf("fact: SIMPLE auth -> %s: %q", p.Class, p.Message)
	}
	if p, ok := r.Probes["wrongPassword"]; assert.True(t, ok) {
		assert.True(t, p.IsSent, "errors.Is(err, ErrAuthentication): %s", p.Error)
		t.Logf("fact: wrong token password -> %s: %q", p.Class, p.Message)
	}
	if p, ok := r.Probes["wrongResponseId"]; assert.True(t, ok) {
		assert.Equal(t, "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException", p.Class, p.Error)
		assert.Contains(t, p.Message, "Invalid responseId in AllocateRequest")
		t.Logf("fact: wrong responseId -> %s: %q", p.Class, p.Message)
	}
	// The RM moved on without the client (another connection's heartbeats): the client reads the
	// id the RM expects from its refusal and sends the heartbeat again.
	if p, ok := r.Probes["resync"]; assert.True(t, ok) {
		assert.Equal(t, "no error", p.Error, "Allocate after the RM's responseId moved on")
		assert.Equal(t, "responseId 3", p.Message, "the resent heartbeat carried id 2, the RM answered 3")
	}

	t.Logf("facts: token file format %s, kinds %v; register twice -> %s: %q", r.TokenFileFormat, r.TokenKinds, p.Class, p.Message)
	t.Logf("timings (ms from AM start) %v, heartbeats %d, AM max RSS %d KiB, max GPUs in use %d",
		r.TimingsMs, r.Heartbeats, r.MaxRSSKB, run.MaxGPUsUsed)
}

// TestAMRMUnknownResourceType: asking for a resource type the RM does not know fails in the AM
// with a clear error before anything is sent.
func TestAMRMUnknownResourceType(t *testing.T) {
	ep := cluster(t)
	bin := buildBinary(t, "./integration/testam", true)
	run := runTestAM(t, ep, bin, map[string]string{"YARNER_TESTAM_MODE": "unknown-resource"})
	r := run.Result
	require.Empty(t, r.Error)
	assert.True(t, r.UnknownIsSentinel, "errors.Is(err, amrm.ErrUnknownResource)")
	assert.Equal(t, 0, r.AllocatesBeforeError, "refused before any allocate call")
	assert.Contains(t, r.UnknownResourceError, `"yarn.io/nonexistent"`)
	assert.Contains(t, r.UnknownResourceError, "yarn.io/gpu", "names the types the RM knows")
	assert.Contains(t, r.UnknownResourceError, "yarn.resource-types", "says how to fix it")
	// The AM unregistered FAILED with that error as diagnostics, visible through REST.
	assert.Equal(t, records.AppFinished, run.App.State)
	assert.Equal(t, records.FinalFailed, run.App.FinalStatus)
	assert.Contains(t, run.App.Diagnostics, "yarn.io/nonexistent")
	assert.True(t, r.Unregistered)
}

// BenchmarkAMRMAllocate measures, inside the test AM, the time from its start to all containers
// allocated and to all launched through the NodeManager protocol, and the AM's peak RSS. Run with
// bench/amrm-allocate.sh (one iteration per case).
func BenchmarkAMRMAllocate(b *testing.B) {
	ep := cluster(b)
	bin := buildBinary(b, "./integration/testam", true)
	cases := []struct {
		n, gpus, heartbeatMs int
	}{
		{4, 1, 1000}, {4, 0, 1000}, {16, 0, 1000}, {64, 0, 1000},
		{4, 1, 100}, {16, 0, 100}, {64, 0, 100},
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("containers=%d/gpu=%d/heartbeat=%dms", c.n, c.gpus, c.heartbeatMs), func(b *testing.B) {
			var sums map[string]float64
			for i := 0; i < b.N; i++ {
				run := runTestAM(b, ep, bin, map[string]string{
					"YARNER_TESTAM_MODE":         "containers",
					"YARNER_TESTAM_CONTAINERS":   fmt.Sprint(c.n),
					"YARNER_TESTAM_GPUS":         fmt.Sprint(c.gpus),
					"YARNER_TESTAM_MEMORY_MB":    "64",
					"YARNER_TESTAM_COMMAND":      "true",
					"YARNER_TESTAM_HEARTBEAT_MS": fmt.Sprint(c.heartbeatMs),
				})
				r := run.Result
				if r.Error != "" || run.App.FinalStatus != records.FinalSucceeded || len(r.Launched) != c.n {
					b.Fatalf("run failed: %s (%s/%s: %s)", r.Error, run.App.State, run.App.FinalStatus, run.App.Diagnostics)
				}
				if sums == nil {
					sums = map[string]float64{}
				}
				sums["ms-registered"] += float64(r.TimingsMs["registered"])
				sums["ms-allocated"] += float64(r.TimingsMs["allAllocated"])
				sums["ms-allocated-n-1"] += float64(r.TimingsMs["allButOneAllocated"])
				sums["ms-launched"] += float64(r.TimingsMs["allLaunched"])
				sums["am-maxrss-KiB"] += float64(r.MaxRSSKB)
				sums["s-submit-to-finish"] += run.SubmitToFinish.Seconds()
			}
			for k, v := range sums {
				b.ReportMetric(v/float64(b.N), k)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
