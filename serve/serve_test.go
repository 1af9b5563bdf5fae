package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// setup is a fake RM (captured Hadoop 3.3.6 answers), a client of it, a watcher and the handler.
type setup struct {
	rm     *yarnfake.RM
	client *yarn.Client
	w      *Watcher
	h      *Handler
}

func newSetup(t *testing.T, hopts Options, rmOpts ...yarnfake.Option) *setup {
	t.Helper()
	rm := yarnfake.New(t, append([]yarnfake.Option{yarnfake.WithVersion("3.3.6")}, rmOpts...)...)
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "yarner", Timeout: 5 * time.Second,
		Retry: yarn.RetryPolicy{MaxAttempts: 1}})
	require.NoError(t, err)
	w, err := NewWatcher(WatchOptions{Client: c, Interval: time.Hour})
	require.NoError(t, err)
	hopts.Watcher = w
	if hopts.Details == nil {
		hopts.Details = c
	}
	h, err := NewHandler(hopts)
	require.NoError(t, err)
	return &setup{rm: rm, client: c, w: w, h: h}
}

func (s *setup) get(t *testing.T, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return rec
}

func encode(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return b.String()
}

func TestReadyzAndNoDataBeforeFirstPoll(t *testing.T) {
	s := newSetup(t, Options{})
	assert.Equal(t, http.StatusOK, s.get(t, "/healthz").Code)
	rec := s.get(t, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	rec = s.get(t, "/api/v1/cluster/nodes")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "first poll")

	require.NoError(t, s.w.PollOnce(context.Background()))
	assert.Equal(t, http.StatusOK, s.get(t, "/readyz").Code)
	select {
	case <-s.w.Ready():
	default:
		t.Fatal("Ready not closed after a successful poll")
	}
}

// The API returns the views the CLI builds from the same RM answers, byte for byte.
func TestAPIBodiesAreTheCLIViews(t *testing.T) {
	s := newSetup(t, Options{})
	require.NoError(t, s.w.PollOnce(context.Background()))
	ctx := context.Background()
	nodes, err := s.client.Nodes(ctx, yarn.NodesQuery{})
	require.NoError(t, err)
	sched, err := s.client.Scheduler(ctx)
	require.NoError(t, err)
	apps, err := s.client.Apps(ctx, yarn.AppsQuery{})
	require.NoError(t, err)
	sort.SliceStable(apps, func(i, j int) bool { return view.CompareAppIDs(apps[j].ID, apps[i].ID) < 0 })
	info, err := s.client.ClusterInfo(ctx)
	require.NoError(t, err)
	m, err := s.client.Metrics(ctx)
	require.NoError(t, err)
	queues, _ := view.QueuesOf(sched)
	for _, tc := range []struct {
		path string
		want any
	}{
		{"/api/v1/cluster/nodes", view.NodesOf(nodes, "")},
		{"/api/v1/cluster/nodes?resource=yarn.io/gpu", view.NodesOf(nodes, "yarn.io/gpu")},
		{"/api/v1/cluster/queues", queues},
		{"/api/v1/cluster/apps", view.AppsOf(apps)},
		{"/api/v1/cluster/info", view.ClusterInfoOf(info, nil, m)},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := s.get(t, tc.path)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Equal(t, encode(t, tc.want), rec.Body.String())
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			assert.NotEmpty(t, rec.Header().Get("Age"), "the data's age")
			_, err := time.Parse(time.RFC3339Nano, rec.Header().Get("X-Yarner-Data-Time"))
			assert.NoError(t, err)
		})
	}
	assert.Contains(t, s.get(t, "/api/v1/cluster/nodes").Body.String(), `"yarn.io/gpu": 4`)
}

// A node list larger than gzipAbove is kept compressed: a client taking gzip gets it compressed,
// one that does not gets it as it is; both are the CLI's view, as are the filtered lists.
func TestLargeNodeListCompressed(t *testing.T) {
	spec := yarnfake.NodeSpec{Racks: 3, Used: func(i int) []yarnfake.Resource {
		if i%4 != 0 {
			return nil
		}
		return []yarnfake.Resource{{Name: "yarn.io/gpu", Value: 1}}
	}}
	s := newSetup(t, Options{}, yarnfake.WithNodes(400, spec))
	require.NoError(t, s.w.PollOnce(context.Background()))
	nodes, err := s.client.Nodes(context.Background(), yarn.NodesQuery{})
	require.NoError(t, err)
	require.Len(t, nodes, 400)
	for _, tc := range []struct {
		path string
		want any
	}{
		{"/api/v1/cluster/nodes", view.NodesOf(nodes, "")},
		{"/api/v1/cluster/nodes?resource=yarn.io/gpu", view.NodesOf(nodes, "yarn.io/gpu")},
		{"/api/v1/cluster/nodes?state=RUNNING", view.NodesOf(nodes, "")},
		{"/api/v1/cluster/nodes?state=LOST", view.NodesOf(nil, "")},
	} {
		t.Run(tc.path, func(t *testing.T) {
			want := encode(t, tc.want)
			plain := s.get(t, tc.path)
			require.Equal(t, http.StatusOK, plain.Code)
			assert.Empty(t, plain.Header().Get("Content-Encoding"))
			assert.Equal(t, want, plain.Body.String())
			gz := s.get(t, tc.path, "Accept-Encoding", "gzip")
			require.Equal(t, http.StatusOK, gz.Code)
			if len(want) <= gzipAbove {
				assert.Equal(t, want, gz.Body.String())
				return
			}
			assert.Equal(t, "gzip", gz.Header().Get("Content-Encoding"))
			assert.Less(t, gz.Body.Len(), len(want)/4)
			zr, err := gzip.NewReader(gz.Body)
			require.NoError(t, err)
			got, err := io.ReadAll(zr)
			require.NoError(t, err)
			assert.Equal(t, want, string(got))
		})
	}
}

func TestQueryErrors(t *testing.T) {
	s := newSetup(t, Options{})
	require.NoError(t, s.w.PollOnce(context.Background()))
	for _, tc := range []struct {
		path, want string
		code       int
	}{
		{"/api/v1/cluster/nodes?state=BOGUS", `state \"BOGUS\": want one of`, 400},
		{"/api/v1/cluster/apps?limit=-1", `limit \"-1\"`, 400},
		{"/api/v1/apps/nope", "is not an application id", 400},
		{"/api/v1/apps/application_1_0099", "does not list it", 404},
		{"/api/v1/apps/application_1_0099/why", "does not list it", 404},
		{"/no/such/route", "no route GET /no/such/route", 404},
	} {
		rec := s.get(t, tc.path)
		assert.Equal(t, tc.code, rec.Code, tc.path)
		assert.Contains(t, rec.Body.String(), tc.want, tc.path)
		var e ErrorBody
		assert.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "errors are JSON: %s", tc.path)
	}
}

// However many clients ask, the RM sees the watch's polls only.
func TestClientsDoNotMultiplyRMRequests(t *testing.T) {
	s := newSetup(t, Options{})
	require.NoError(t, s.w.PollOnce(context.Background()))
	before := s.rm.Count("GET /ws/v1/cluster/nodes")
	require.Equal(t, 1, before)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			path := []string{"/api/v1/cluster/nodes", "/metrics", "/api/v1/cluster/queues", "/api/v1/gpumap", "/api/v1/cluster/apps"}[i%5]
			rec := s.get(t, path)
			assert.Equal(t, http.StatusOK, rec.Code, path)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, s.rm.Count("GET /ws/v1/cluster/nodes"))
	assert.Equal(t, 1, s.rm.Count("GET /ws/v1/cluster/scheduler"))
	assert.Equal(t, 1, s.rm.Count("GET /ws/v1/cluster/apps"))
}

// A failed poll keeps the last snapshot, says the RM is down, and Run backs off.
func TestFailedPollKeepsDataAndBacksOff(t *testing.T) {
	s := newSetup(t, Options{})
	require.NoError(t, s.w.PollOnce(context.Background()))
	first := s.w.Status().Snapshot
	s.rm.Fault("GET /ws/v1/cluster/nodes", yarnfake.Fault{Status: 500, Body: `{"RemoteException":{"message":"boom"}}`})
	err := s.w.PollOnce(context.Background())
	require.Error(t, err)
	st := s.w.Status()
	assert.False(t, st.Up)
	assert.Same(t, first, st.Snapshot, "the last good data stays")
	assert.Equal(t, int64(1), st.Failures)
	rec := s.get(t, "/metrics")
	assert.Contains(t, rec.Body.String(), "yarner_rm_up 0")
	assert.Equal(t, http.StatusOK, s.get(t, "/api/v1/cluster/nodes").Code, "still served from the last poll")

	// Run: with the RM failing, polls are Interval, 2×, 4× ... apart (counted on a fake clock
	// would need a clock in Run's timer; here: a short interval and a count after a while).
	w, err := NewWatcher(WatchOptions{Client: s.client, Interval: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	s.rm.Reset()
	assert.ErrorIs(t, w.Run(ctx), context.DeadlineExceeded)
	polls := s.rm.Count("GET /ws/v1/cluster/nodes")
	assert.Positive(t, polls)
	assert.Less(t, polls, 400/20, "backing off: fewer polls than one per interval")
}

func TestBearerToken(t *testing.T) {
	s := newSetup(t, Options{Token: "s3cret"})
	require.NoError(t, s.w.PollOnce(context.Background()))
	for _, path := range []string{"/api/v1/cluster/nodes", "/metrics", "/api/v1/openapi.json", "/api/v1/gpumap"} {
		rec := s.get(t, path)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, path)
		assert.NotContains(t, rec.Body.String(), "s3cret", "the token is never echoed")
		assert.Equal(t, http.StatusUnauthorized, s.get(t, path, "Authorization", "Bearer wrong").Code, path)
		assert.Equal(t, http.StatusOK, s.get(t, path, "Authorization", "Bearer s3cret").Code, path)
	}
	for _, path := range []string{"/healthz", "/readyz", "/", "/assets/app.js"} {
		assert.Equal(t, http.StatusOK, s.get(t, path).Code, "%s needs no token", path)
	}
}

// Every route the handler serves is in the OpenAPI document, and the document lists no other.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(openAPIDoc, &doc))
	assert.Equal(t, "3.0.3", doc.OpenAPI)
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	assert.ElementsMatch(t, routes, documented)
	// And each route really answers (not the catch-all 404).
	s := newSetup(t, Options{})
	require.NoError(t, s.w.PollOnce(context.Background()))
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		path = strings.ReplaceAll(path, "{id}", "application_1796118660659_0001")
		req := httptest.NewRequest(method, path, strings.NewReader("{}"))
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		assert.NotContains(t, rec.Body.String(), "no route", r)
	}
}

func TestMetricsLintAndSeries(t *testing.T) {
	s := newSetup(t, Options{})
	require.NoError(t, s.w.PollOnce(context.Background()))
	rec := s.get(t, "/metrics")
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems, "promtool check metrics' lint")
	nodes, err := s.client.Nodes(context.Background(), yarn.NodesQuery{})
	require.NoError(t, err)
	require.NotEmpty(t, nodes)
	for _, n := range nodes {
		assert.Contains(t, body, fmt.Sprintf(`yarner_node_total_resource{node=%q,rack=%q,resource="yarn.io/gpu"} 4`, n.ID, n.Rack))
		assert.Contains(t, body, fmt.Sprintf(`yarner_node_state{node=%q,state="RUNNING"} 1`, n.ID))
	}
	for _, want := range []string{`yarner_rack_total_resource{rack="/default-rack",resource="yarn.io/gpu"} 8`,
		`yarner_partition_total_resource{partition="",resource="yarn.io/gpu"} 8`, "yarner_rm_up 1",
		"yarner_data_age_seconds", "yarner_poll_duration_seconds_count 1", `yarner_queue_used_resource{queue="root.default",resource="memory-mb"}`} {
		assert.Contains(t, body, want)
	}
}

// The synthesised 3-node cluster with labelled and lost nodes: partitions and states.
func TestMetricsPartitionsAndStates(t *testing.T) {
	gpu := []yarnfake.Resource{{Name: "memory-mb", Value: 8192}, {Name: "vcores", Value: 8}, {Name: "yarn.io/gpu", Value: 2}}
	body, err := yarnfake.Nodes([]yarnfake.Node{
		{ID: "a:1", Rack: "/r1", Total: gpu, Labels: []string{"gpu"}},
		{ID: "b:1", Rack: "/r1", Total: gpu, Used: []yarnfake.Resource{{Name: "yarn.io/gpu", Value: 1}}},
		{ID: "c:1", Rack: "/r2", Total: gpu, State: "LOST"},
		{ID: "evil\"}\n\\x:1", Rack: "/r1\xff", Total: gpu},
		{ID: "a:1", Rack: "/dup", Total: gpu},
	})
	require.NoError(t, err)
	s := newSetup(t, Options{})
	s.rm.Reply("GET /ws/v1/cluster/nodes", 200, "application/json", body)
	require.NoError(t, s.w.PollOnce(context.Background()))
	m := s.get(t, "/metrics").Body.String()
	for _, want := range []string{
		`yarner_partition_total_resource{partition="gpu",resource="yarn.io/gpu"} 2`,
		`yarner_partition_used_resource{partition="",resource="yarn.io/gpu"} 1`,
		`yarner_rack_available_resource{rack="/r1",resource="yarn.io/gpu"} 3`,
		`yarner_node_state{node="c:1",state="LOST"} 1`,
		`yarner_nodes{state="LOST"} 1`,
	} {
		assert.Contains(t, m, want)
	}
	assert.NotContains(t, m, `yarner_rack_total_resource{rack="/r2"`, "a LOST node's resources count in no rack")
	assert.Contains(t, m, `yarner_node_state{node="evil\"}\n\\x:1",state="RUNNING"} 1`, "label values escaped")
	assert.NotContains(t, m, `rack="/dup"`, "a repeated node id is written once")
	problems, err := promlint.New(strings.NewReader(m)).Lint()
	require.NoError(t, err, "the text parses")
	assert.Empty(t, problems)
}

func TestPageIsSelfContained(t *testing.T) {
	s := newSetup(t, Options{})
	rec := s.get(t, "/")
	require.Equal(t, http.StatusOK, rec.Code)
	html := rec.Body.String()
	assert.Contains(t, html, `src="/assets/app.js"`)
	assert.NotContains(t, html, "http://")
	assert.NotContains(t, html, "https://", "no CDN")
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'")
	js := s.get(t, "/assets/app.js").Body.String()
	assert.Contains(t, js, "/api/v1/gpumap")
	assert.NotContains(t, js, "innerHTML", "cluster text goes in as text only")
	assert.NotEqual(t, http.StatusOK, s.get(t, "/assets/../serve.go").Code)
	assert.Equal(t, http.StatusNotFound, s.get(t, "/assets/serve.go").Code)
}

func TestAppStatusReadOncePerPoll(t *testing.T) {
	s := newSetup(t, Options{})
	s.rm.ReplyCapture("GET /ws/v1/cluster/apps", "apps.json")
	require.NoError(t, s.w.PollOnce(context.Background()))
	snap := s.w.Status().Snapshot
	require.NotEmpty(t, snap.Apps)
	id := snap.Apps[len(snap.Apps)-1].ID
	s.rm.Reset()
	for range 5 {
		rec := s.get(t, "/api/v1/apps/"+id)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var st view.AppStatus
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
		assert.Equal(t, id, st.ID)
	}
	assert.LessOrEqual(t, s.rm.Count("GET /ws/v1/cluster/apps/"+id+"/appattempts"), 1)
}

// A fake runner: the POST endpoints' parsing, limits and answers (the real commands run in
// cmd/internal/commands/serve's and the integration tests).
func TestCommandEndpoints(t *testing.T) {
	var got [][]string
	var mu sync.Mutex
	runner := func(_ context.Context, args []string) CommandResult {
		mu.Lock()
		got = append(got, args)
		mu.Unlock()
		switch {
		case strings.Contains(strings.Join(args, " "), "bad=1"):
			return CommandResult{Stderr: "yarn-er: -D bad=1: unknown\nRun 'yarn-er translate --help' for usage.\n", ExitCode: 2}
		case args[0] == "preflight":
			return CommandResult{Stdout: []byte("{\"ok\": false}\n"), ExitCode: 3}
		}
		return CommandResult{Stdout: []byte("{\"resource\": {}}\n")}
	}
	s := newSetup(t, Options{Commands: runner, MaxBodyBytes: 4096})
	post := func(path, ct, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		name, path, ct, body string
		code                 int
		want                 string
	}{
		{"json", "/api/v1/translate", "application/json", `{"flinkConf":"a: 1\n"}`, 200, `"resource"`},
		{"yaml", "/api/v1/translate", "application/yaml", "a: 1\n", 200, `"resource"`},
		{"curl default", "/api/v1/translate", "application/x-www-form-urlencoded", `{"flinkConf":"a: 1"}`, 200, `"resource"`},
		{"preflight findings are 200", "/api/v1/preflight", "", `{"flinkConf":"a: 1","containers":2}`, 200, `"ok": false`},
		{"usage error", "/api/v1/translate", "", `{"dynamic":["bad=1"]}`, 400, `"error": "-D bad=1: unknown"`},
		{"unknown field", "/api/v1/translate", "", `{"flinkConfig":"x"}`, 400, `unknown field`},
		{"two documents", "/api/v1/translate", "application/json", `{} {}`, 400, `more than one JSON document`},
		{"not json", "/api/v1/translate", "application/json", `[1,2`, 400, `request body`},
		{"too large", "/api/v1/translate", "", strings.Repeat("a", 5000), 413, `larger than 4096 bytes`},
		{"bad file name", "/api/v1/translate", "", `{"hadoopConf":{"../yarn-site.xml":"x"}}`, 400, `plain file name`},
		{"bad conf name", "/api/v1/translate", "", `{"flinkConfFile":"/etc/passwd"}`, 400, `want flink-conf.yaml or config.yaml`},
		{"negative containers", "/api/v1/preflight", "", `{"containers":-1}`, 400, `must be 0 or more`},
		{"wrong type", "/api/v1/translate", "image/png", `x`, 415, `Content-Type`},
		{"GET", "/api/v1/translate", "", "", 405, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec *httptest.ResponseRecorder
			if tc.name == "GET" {
				rec = s.get(t, tc.path)
			} else {
				rec = post(tc.path, tc.ct, tc.body)
			}
			assert.Equal(t, tc.code, rec.Code, rec.Body.String())
			assert.Contains(t, rec.Body.String(), tc.want)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	for _, args := range got {
		assert.Contains(t, args, "--output=json")
		if args[0] == "preflight" {
			assert.Contains(t, args, "--rm="+s.rm.URL(), "preflight asks serve's RM")
			assert.Contains(t, args, "--containers=2")
		}
	}
}

func TestRunStopsWithContext(t *testing.T) {
	s := newSetup(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.w.Run(ctx) }()
	<-s.w.Ready()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	_, err := io.ReadAll(strings.NewReader(""))
	assert.NoError(t, err)
}

// With Accept-Encoding: gzip, /metrics is the same text as two gzip members (the process's
// metrics compressed per scrape, the cluster's once per poll).
func TestMetricsGzip(t *testing.T) {
	s := newSetup(t, Options{})
	require.NoError(t, s.w.PollOnce(context.Background()))
	rec := s.get(t, "/metrics", "Accept-Encoding", "gzip")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
	zr, err := gzip.NewReader(rec.Body)
	require.NoError(t, err)
	text, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Contains(t, string(text), "yarner_rm_up 1")
	assert.Contains(t, string(text), `resource="yarn.io/gpu"} 4`)
	plain := s.get(t, "/metrics").Body.String()
	cut := func(s string) string { return s[strings.Index(s, "# HELP yarner_node_available_resource"):] }
	assert.Equal(t, cut(plain), cut(string(text)), "the cluster's part is the same")
	assert.Empty(t, s.get(t, "/metrics", "Accept-Encoding", "gzip;q=0").Header().Get("Content-Encoding"))
}

// With two RMs, the watch follows the active one across a failover, and cluster/info lists both
// RMs' states, as `cluster info` does.
func TestWatchFollowsTheActiveRM(t *testing.T) {
	rm1 := yarnfake.New(t, yarnfake.WithVersion("3.3.6"))
	rm2 := yarnfake.New(t, yarnfake.WithVersion("3.3.6"))
	rm2.Standby(rm1.URL())
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{rm1.URL(), rm2.URL()}, User: "yarner", Timeout: 5 * time.Second,
		Retry: yarn.RetryPolicy{FailoverTimeout: 2 * time.Second}})
	require.NoError(t, err)
	w, err := NewWatcher(WatchOptions{Client: c, Interval: time.Hour})
	require.NoError(t, err)
	h, err := NewHandler(Options{Watcher: w})
	require.NoError(t, err)
	require.NoError(t, w.PollOnce(context.Background()))
	assert.Equal(t, 1, rm1.Count("GET /ws/v1/cluster/nodes"))
	assert.Zero(t, rm2.Count("GET /ws/v1/cluster/nodes"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/cluster/info", nil))
	var info view.ClusterInfo
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &info))
	assert.Len(t, info.ResourceManagers, 2)

	// Failover: rm1 becomes standby, rm2 active.
	rm2.Active()
	rm1.Standby(rm2.URL())
	require.NoError(t, w.PollOnce(context.Background()))
	assert.Equal(t, 1, rm2.Count("GET /ws/v1/cluster/nodes"), "the next poll reads the new active RM")
	assert.True(t, w.Status().Up)
}

// The applications' details a snapshot reads from the RM are bounded, whatever the clients ask.
func TestAppDetailsBoundedPerPoll(t *testing.T) {
	var apps []string
	for i := range maxDetailsPerPoll + 5 {
		apps = append(apps, fmt.Sprintf(`{"id":"application_1_%04d","state":"RUNNING","finalStatus":"UNDEFINED"}`, i+1))
	}
	s := newSetup(t, Options{})
	s.rm.ReplyJSON("GET /ws/v1/cluster/apps", 200, `{"apps":{"app":[`+strings.Join(apps, ",")+`]}}`)
	require.NoError(t, s.w.PollOnce(context.Background()))
	var ok, limited int
	for i := range maxDetailsPerPoll + 5 {
		rec := s.get(t, fmt.Sprintf("/api/v1/apps/application_1_%04d", i+1))
		switch rec.Code {
		case http.StatusTooManyRequests:
			limited++
			assert.Contains(t, rec.Body.String(), "retry after the next poll")
		default:
			ok++
		}
	}
	assert.Equal(t, maxDetailsPerPoll, ok)
	assert.Equal(t, 5, limited)
	require.NoError(t, s.w.PollOnce(context.Background()))
	assert.NotEqual(t, http.StatusTooManyRequests, s.get(t, "/api/v1/apps/application_1_0069").Code, "a new poll, a new budget")
}
