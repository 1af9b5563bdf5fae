package submit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// TestFollow walks an application through ACCEPTED, RUNNING with containers coming up, and
// FINISHED, and checks the events say what changed.
func TestFollow(t *testing.T) {
	polls := []string{
		`{"app":{"id":"application_1_0001","state":"ACCEPTED","finalStatus":"UNDEFINED"}}`,
		`{"app":{"id":"application_1_0001","state":"ACCEPTED","finalStatus":"UNDEFINED"}}`,
		`{"app":{"id":"application_1_0001","state":"RUNNING","finalStatus":"UNDEFINED","progress":0}}`,
		`{"app":{"id":"application_1_0001","state":"RUNNING","finalStatus":"UNDEFINED","progress":50}}`,
		`{"app":{"id":"application_1_0001","state":"FINISHED","finalStatus":"SUCCEEDED","progress":100}}`,
	}
	containers := []string{
		`{"container":[{"containerId":"container_1_0001_01_000001","containerState":"RUNNING"}]}`,
		`{"container":[{"containerId":"container_1_0001_01_000001","containerState":"RUNNING"},
		  {"containerId":"container_1_0001_01_000002","containerState":"RUNNING","allocatedResources":{"entry":[{"key":"yarn.io/gpu","value":1}]}},
		  {"containerId":"container_1_0001_01_000003","containerState":"NEW","allocatedResources":{"entry":[{"key":"yarn.io/gpu","value":1}]}}]}`,
	}
	var n, nc atomic.Int32
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.Handle("GET /ws/v1/cluster/apps/application_1_0001", func(w http.ResponseWriter, _ *http.Request) {
		i := min(int(n.Add(1))-1, len(polls)-1)
		_, _ = fmt.Fprint(w, polls[i])
	})
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts", http.StatusOK,
		`{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1_0001_000001","containerId":"container_1_0001_01_000001"}]}}`)
	rm.Handle("GET /ws/v1/cluster/apps/application_1_0001/appattempts/appattempt_1_0001_000001/containers", func(w http.ResponseWriter, _ *http.Request) {
		i := min(int(nc.Add(1))-1, len(containers)-1)
		_, _ = fmt.Fprint(w, containers[i])
	})
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	c, err := New(Options{YARN: yc, PollPeriod: time.Millisecond, Stage: stage.Options{}})
	require.NoError(t, err)
	var events []Event
	app, err := c.Follow(context.Background(), "application_1_0001", func(e Event) { events = append(events, e) })
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, app.FinalStatus)
	require.Len(t, events, 4, "the repeated ACCEPTED is no event")
	assert.Equal(t, []string{"state", "progress", "containers", "diagnostics"}, events[0].Changed)
	assert.Equal(t, []string{"state"}, events[1].Changed)
	assert.Equal(t, 0, events[1].Allocated, "the AM's container is not a worker")
	assert.Equal(t, []string{"progress", "containers"}, events[2].Changed)
	assert.Equal(t, 2, events[2].Allocated)
	assert.Equal(t, 1, events[2].Running)
	assert.Equal(t, int64(2), events[2].GPUs())
	assert.Equal(t, "application_1_0001 RUNNING: 2 containers allocated, 1 running, 2 GPUs, 2/4 ranks done", FormatEvent(events[2], 4))
	assert.Equal(t, "application_1_0001 RUNNING: 2 containers allocated, 1 running, 2 GPUs, progress 50%", FormatEvent(events[2], 0))
	assert.Equal(t, "application_1_0001 FINISHED/SUCCEEDED", FormatEvent(events[3], 4))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n.Store(0)
	_, err = c.Follow(ctx, "application_1_0001", nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestFormat(t *testing.T) {
	assert.Equal(t, "512 B", FormatBytes(512))
	assert.Equal(t, "1.5 KiB", FormatBytes(1536))
	assert.Equal(t, "20.8 MiB", FormatBytes(21810380))
	assert.Equal(t, "2.0 GiB", FormatBytes(2<<30))
	p := stage.Progress{Name: "yarn-er", Bytes: 1 << 20, Total: 4 << 20, FileCount: 2, Elapsed: time.Second}
	assert.Equal(t, "staging 1.0 MiB/4.0 MiB (25%) at 1.0 MiB/s, file 1/2 yarn-er", FormatUpload(p))
	long := &yarn.App{ID: "a", State: records.AppAccepted, Diagnostics: string(make([]byte, 500))}
	assert.LessOrEqual(t, len([]rune(FormatEvent(Event{App: long}, 1))), 200)
}

// TestFollowWaitsForARecoveringRM: an application the RM knew and then answers 404 for (a
// restarted RM recovering its state, or one taking over), or an RM that fails past the client's
// retries (restarting, failing over), is waited for, with one warning, and followed to its end;
// an error before the application was seen fails at once; one that lasts fails after
// RecoveryWait, naming the wait.
func TestFollowWaitsForARecoveringRM(t *testing.T) {
	notFound := `{"RemoteException":{"exception":"NotFoundException","message":"app with id: application_1_0001 not found","javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}`
	running := `{"app":{"id":"application_1_0001","state":"RUNNING","finalStatus":"UNDEFINED"}}`
	finished := `{"app":{"id":"application_1_0001","state":"FINISHED","finalStatus":"SUCCEEDED","progress":100}}`
	for _, tc := range []struct {
		name  string
		polls []string // "" is a 404, "503" the RM failing
		wait  time.Duration
		err   string
		is    error
	}{
		{"known, lost, known again", []string{running, "", "", running, finished}, time.Minute, "", nil},
		{"never known", []string{""}, time.Minute, "not found", yarn.ErrNotFound},
		{"lost for good", []string{running, ""}, 30 * time.Millisecond, "has not known the application for 30ms", yarn.ErrNotFound},
		// An RM restarting or failing over for longer than the client's retries: waited out.
		{"known, RM failing, back", []string{running, "503", "503", running, finished}, time.Minute, "", nil},
		{"never answered", []string{"503"}, time.Minute, "503", yarn.ErrServer},
		{"RM failing for good", []string{running, "503"}, 30 * time.Millisecond, "no ResourceManager has answered for the application for 30ms", yarn.ErrServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
			rm.Handle("GET /ws/v1/cluster/apps/application_1_0001", func(w http.ResponseWriter, _ *http.Request) {
				body := tc.polls[min(int(n.Add(1))-1, len(tc.polls)-1)]
				w.Header().Set("Content-Type", "application/json")
				if body == "503" {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				if body == "" {
					w.WriteHeader(http.StatusNotFound)
					_, _ = w.Write([]byte(notFound))
					return
				}
				_, _ = w.Write([]byte(body))
			})
			rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts", http.StatusOK, `{"appAttempts":{"appAttempt":[]}}`)
			yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice", Getenv: func(string) string { return "" },
				Retry: yarn.RetryPolicy{MaxAttempts: 1}})
			require.NoError(t, err)
			var logs bytes.Buffer
			c, err := New(Options{YARN: yc, PollPeriod: 5 * time.Millisecond, RecoveryWait: tc.wait,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			app, err := c.Follow(context.Background(), "application_1_0001", nil)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.ErrorIs(t, err, tc.is)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, records.AppFinished, app.State)
			assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "one warning: %s", logs.String())
			assert.Contains(t, logs.String(), "answers for the application again")
		})
	}
}
