package yarn

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// captureVersion is the Hadoop version whose captures the fake RMs replay.
const captureVersion = "3.5.0"

// capturesDir holds the captures of captureVersion (package yarnfake embeds the same files).
var capturesDir = filepath.Join("yarnfake", "captures", "hadoop-"+captureVersion)

// captured is one answer recorded from the real mini-YARN by yarnfake/capture.sh.
type captured struct {
	status      int
	contentType string
	body        []byte
}

// loadCapture returns the capture called name of captureVersion with its recorded status and
// content type (package yarnfake embeds them and parses their index.txt).
func loadCapture(t testing.TB, name string) captured {
	t.Helper()
	c, err := yarnfake.LoadCapture(captureVersion, "", name)
	require.NoError(t, err)
	return captured{status: c.Status, contentType: c.ContentType, body: c.Body}
}

// recorded is a request the fake RM received.
type recorded struct {
	Method string
	Path   string
	Query  map[string][]string
	Header http.Header
	Body   []byte
}

// fakeRM is an httptest ResourceManager that answers from routes ("METHOD /path", query ignored)
// and records every request.
type fakeRM struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	reqs   []recorded
}

func newFakeRM(t testing.TB) *fakeRM {
	f := &fakeRM{t: t, routes: map[string]http.HandlerFunc{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRM) URL() string { return f.srv.URL }

func (f *fakeRM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	h := f.routes[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if h == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"RemoteException":{"exception":"NotFoundException","message":"no route in the fake RM","javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}`)
		return
	}
	h(w, r)
}

// handle routes "METHOD /path" to h.
func (f *fakeRM) handle(route string, h http.HandlerFunc) {
	f.mu.Lock()
	f.routes[route] = h
	f.mu.Unlock()
}

// capture routes "METHOD /path" to a recorded answer.
func (f *fakeRM) capture(route, name string) {
	c := loadCapture(f.t, name)
	f.reply(route, c.status, c.contentType, c.body)
}

// reply routes "METHOD /path" to a fixed answer.
func (f *fakeRM) reply(route string, status int, contentType string, body []byte) {
	f.handle(route, func(w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// json routes "METHOD /path" to a JSON answer.
func (f *fakeRM) json(route string, status int, body string) {
	f.reply(route, status, "application/json", []byte(body))
}

// requests returns the requests received so far.
func (f *fakeRM) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// count returns how many requests hit "METHOD /path".
func (f *fakeRM) count(route string) int {
	n := 0
	for _, r := range f.requests() {
		if r.Method+" "+r.Path == route {
			n++
		}
	}
	return n
}

// activeInfo is a /ws/v1/cluster/info body with the given haState.
func infoBody(haState string) string {
	return `{"clusterInfo":{"id":1,"startedOn":1700000000000,"state":"STARTED","haState":"` + haState +
		`","resourceManagerVersion":"3.5.0","hadoopVersion":"3.5.0"}}`
}

// testClient builds a client for addrs with fast retries and the user "yarner".
func testClient(t testing.TB, opts Options, addrs ...string) *Client {
	t.Helper()
	opts.Addresses = addrs
	if opts.User == "" && opts.Auth != AuthKerberos {
		opts.User = "yarner"
	}
	if opts.Retry.InitialBackoff == 0 {
		opts.Retry.InitialBackoff = 2 * time.Millisecond
	}
	if opts.Retry.MaxBackoff == 0 {
		opts.Retry.MaxBackoff = 10 * time.Millisecond
	}
	c, err := NewClient(opts)
	require.NoError(t, err)
	return c
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// newDebugLogger logs everything as text into w.
func newDebugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
