package yarn

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func TestSubmissionContextJSON(t *testing.T) {
	prio := int32(5)
	cancel := false
	s := ApplicationSubmissionContext{
		ApplicationID: "application_1700000000000_0007", ApplicationName: "flink", Queue: "gpu", Priority: &prio,
		MaxAppAttempts: 2, AttemptFailuresValidityInterval: 60000, ApplicationType: "Apache Flink",
		KeepContainersAcrossApplicationAttempts: true, ApplicationTags: []string{"a", "b"},
		AMContainerNodeLabelExpression: "gpu",
		Resource:                       records.NewResources(2048, 2),
		LogAggregationContext:          &LogAggregationContext{LogIncludePattern: ".*"},
		AMBlackListingRequests:         &AMBlackListingRequests{Enabled: true, DisableFailureThreshold: 0.5},
		CancelTokensWhenComplete:       &cancel,
		AMContainerSpec: ContainerLaunchContext{
			LocalResources: map[string]records.LocalResource{"flink.jar": {
				URL: "hdfs://nn:8020/user/flink/flink.jar", Type: "FILE", Visibility: "APPLICATION",
				Size: 43004, Timestamp: 1405452071209,
			}},
			Environment: map[string]string{"CLASSPATH": "{{CLASSPATH}}<CPS>./*"},
			Commands:    []string{"{{JAVA_HOME}}/bin/java -Xmx1g Main 1><LOG_DIR>/AM.stdout 2><LOG_DIR>/AM.stderr"},
			ServiceData: map[string][]byte{"svc": []byte("hello")},
			Credentials: &records.Credentials{
				Tokens: map[string]records.Token{"hdfs": {Identifier: []byte("kerb"), Password: []byte("pw"),
					Kind: "HDFS_DELEGATION_TOKEN", Service: "10.0.0.1:8020"}},
				Secrets: map[string][]byte{"key": []byte("secret")}},
			ApplicationACLs: map[string]string{"VIEW_APP": "alice bob", "MODIFY_APP": "alice"},
		},
	}
	got, err := json.Marshal(s)
	require.NoError(t, err)
	want := `{"application-id":"application_1700000000000_0007","application-name":"flink","queue":"gpu","priority":5,
	 "am-container-spec":{
	   "local-resources":{"entry":[{"key":"flink.jar","value":{"resource":"hdfs://nn:8020/user/flink/flink.jar","type":"FILE","visibility":"APPLICATION","size":43004,"timestamp":1405452071209}}]},
	   "environment":{"entry":[{"key":"CLASSPATH","value":"{{CLASSPATH}}<CPS>./*"}]},
	   "commands":{"command":["{{JAVA_HOME}}/bin/java -Xmx1g Main 1><LOG_DIR>/AM.stdout 2><LOG_DIR>/AM.stderr"]},
	   "service-data":{"entry":[{"key":"svc","value":"aGVsbG8="}]},
	   "credentials":{"tokens":{"entry":[{"key":"hdfs","value":"BGtlcmICcHcVSERGU19ERUxFR0FUSU9OX1RPS0VODTEwLjAuMC4xOjgwMjA"}]},"secrets":{"entry":[{"key":"key","value":"c2VjcmV0"}]}},
	   "application-acls":{"entry":[{"key":"MODIFY_APP","value":"alice"},{"key":"VIEW_APP","value":"alice bob"}]}},
	 "unmanaged-AM":false,"max-app-attempts":2,"resource":{"memory":2048,"vCores":2},"application-type":"Apache Flink",
	 "keep-containers-across-application-attempts":true,"application-tags":{"tag":["a","b"]},
	 "am-container-node-label-expression":"gpu","log-aggregation-context":{"log-include-pattern":".*"},
	 "attempt-failures-validity-interval":60000,
	 "am-black-listing-requests":{"am-black-listing-enabled":true,"disable-failure-threshold":0.5},
	 "cancel-tokens-when-complete":false}`
	assert.JSONEq(t, want, string(got))

	minimal, err := json.Marshal(ApplicationSubmissionContext{ApplicationID: "application_1_0001",
		AMContainerSpec: ContainerLaunchContext{Commands: []string{"true"}}, Resource: records.NewResources(128, 1)})
	require.NoError(t, err)
	assert.JSONEq(t, `{"application-id":"application_1_0001","am-container-spec":{"commands":{"command":["true"]}},
	 "unmanaged-AM":false,"resource":{"memory":128,"vCores":1},"keep-containers-across-application-attempts":false}`, string(minimal))
}

func TestSubmissionValidation(t *testing.T) {
	rm := newFakeRM(t)
	c := testClient(t, Options{}, rm.URL())
	for _, tc := range []struct {
		s    ApplicationSubmissionContext
		want string
	}{
		{ApplicationSubmissionContext{ApplicationID: "app_1"}, "want application_<cluster timestamp>_<sequence>"},
		{ApplicationSubmissionContext{ApplicationID: "application_1_0001"}, "no command"},
		{ApplicationSubmissionContext{ApplicationID: "application_1_0001", AMContainerSpec: ContainerLaunchContext{Commands: []string{"x"}},
			Resource: records.NewResources(-1, 0)}, "negative AM resource"},
		{ApplicationSubmissionContext{ApplicationID: "application_1_0001", AMContainerSpec: ContainerLaunchContext{Commands: []string{"x"}},
			Resource: records.NewResources(1, 1<<31)}, "do not fit a Java int"},
		{ApplicationSubmissionContext{ApplicationID: "application_1_0001", AMContainerSpec: ContainerLaunchContext{Commands: []string{"x"}},
			Resource: func() records.Resources {
				var r records.Resources
				r.Set(records.MemoryMB, records.Quantity{Value: 1, Units: "bogus"})
				return r
			}()}, "Unknown unit 'bogus'"},
		{ApplicationSubmissionContext{ApplicationID: "application_1_0001", AMContainerSpec: ContainerLaunchContext{Commands: []string{"x"},
			LocalResources: map[string]records.LocalResource{"f": {}}}}, `local resource "f" has no URL`},
	} {
		err := c.SubmitApplication(context.Background(), tc.s)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.Empty(t, rm.Requests(), "invalid submissions never reach the RM")
	_, _, err := c.KillApplication(context.Background(), "nope")
	assert.Error(t, err)
	_, err = c.AppState(context.Background(), "nope")
	assert.Error(t, err)
	_, err = c.AppAttempts(context.Background(), "nope")
	assert.Error(t, err)
	_, err = c.Node(context.Background(), " ")
	assert.Error(t, err)
	assert.Empty(t, rm.Requests())
}

func TestWaitApp(t *testing.T) {
	rm := newFakeRM(t)
	const id = "application_1796033172368_0002"
	sleeping := loadCapture(t, "app-sleep.json").body
	killed := loadCapture(t, "app-killed.json").body
	var polls atomic.Int32
	rm.Handle("GET /ws/v1/cluster/apps/"+id, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if polls.Add(1) < 3 {
			_, _ = w.Write(sleeping)
			return
		}
		_, _ = w.Write(killed)
	})
	c := testClient(t, Options{}, rm.URL())
	app, err := c.WaitApp(context.Background(), id, time.Millisecond, nil)
	require.NoError(t, err)
	assert.Equal(t, records.AppKilled, app.State)
	assert.Equal(t, records.FinalKilled, app.FinalStatus)
	assert.Equal(t, int32(3), polls.Load())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.WaitApp(ctx, id, time.Millisecond, func(*App) bool { return false })
	assert.ErrorIs(t, err, context.Canceled)

	assert.True(t, records.ApplicationState("finished").Terminal())
	assert.False(t, records.AppRunning.Terminal())
}

func TestAppsQueryValues(t *testing.T) {
	q := AppsQuery{States: []string{"running"}, Queue: "q", User: "u", ApplicationTypes: []string{"Apache Flink", "MAPREDUCE"},
		ApplicationTags: []string{"t1", "t2"}, Limit: 3, StartedTimeBegin: time.UnixMilli(1700000000000)}
	assert.Equal(t, map[string][]string{
		"states": {"RUNNING"}, "queue": {"q"}, "user": {"u"}, "applicationTypes": {"Apache Flink,MAPREDUCE"},
		"applicationTags": {"t1,t2"}, "limit": {"3"}, "startedTimeBegin": {"1700000000000"},
	}, map[string][]string(q.values()))
	assert.Empty(t, AppsQuery{}.values())
}

// TestSubmitResendsAfterALostAnswer: a submission whose answer is lost (the connection dropped
// after the RM read it, a 5xx, as in a failover) is sent again with the same application id, which
// the RM takes as the same application: one application, never two. A refusal (4xx) is not sent
// again; a new-application POST (each consumes an id) is never resent.
func TestSubmitResendsAfterALostAnswer(t *testing.T) {
	sub := ApplicationSubmissionContext{
		ApplicationID: "application_1796117006310_0007", ApplicationName: "x", Queue: "default",
		AMContainerSpec: ContainerLaunchContext{Commands: []string{"true"}},
		Resource:        records.NewResources(128, 1), MaxAppAttempts: 1,
	}
	for _, tc := range []struct {
		name    string
		first   func(w http.ResponseWriter)
		posts   int
		wantErr error
	}{
		{"connection dropped after the RM read the submission", func(w http.ResponseWriter) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, 2, nil},
		{"5xx", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"RemoteException":{"exception":"WebApplicationException","message":"failing over"}}`)
		}, 2, nil},
		{"refused", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"RemoteException":{"exception":"BadRequestException","message":"Requested more memory than configured max"}}`)
		}, 1, ErrBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t)
			var mu sync.Mutex
			var bodies []string
			// Fault injection: a dropped connection mid-request, which the fake's faults do not model.
			rm.Handle("POST /ws/v1/cluster/apps", func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, string(b))
				n := len(bodies)
				mu.Unlock()
				if n == 1 {
					tc.first(w)
					return
				}
				w.WriteHeader(http.StatusAccepted)
			})
			err := testClient(t, Options{}, rm.URL()).SubmitApplication(context.Background(), sub)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, bodies, tc.posts)
			for _, b := range bodies {
				assert.Equal(t, bodies[0], b, "the same submission, the same application id")
				assert.Contains(t, b, sub.ApplicationID)
			}
		})
	}

	t.Run("new-application is not resent", func(t *testing.T) {
		rm := newFakeRM(t)
		var n atomic.Int32
		// Fault injection: a dropped connection mid-request.
		rm.Handle("POST /ws/v1/cluster/apps/new-application", func(w http.ResponseWriter, _ *http.Request) {
			n.Add(1)
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
		})
		_, err := testClient(t, Options{}, rm.URL()).NewApplication(context.Background())
		require.Error(t, err)
		assert.Equal(t, int32(1), n.Load(), "each new-application uses up an id")
	})
}
