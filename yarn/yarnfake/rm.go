package yarnfake

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// TB is the part of testing.TB that New uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Request is one request the fake RM received.
type Request struct {
	// Method and Path are the request's; Path has no query.
	Method, Path string
	// Query is the parsed query, user.name included.
	Query url.Values
	// Header is a copy of the request's headers.
	Header http.Header
	// Body is the request's body.
	Body []byte
	// At is when the request arrived.
	At time.Time
}

// Route is the request's "METHOD /path".
func (r Request) Route() string { return r.Method + " " + r.Path }

// RM is a fake ResourceManager: an httptest server on loopback. Its methods are safe for
// concurrent use, also while requests are served.
type RM struct {
	srv *httptest.Server
	// closing is closed by Close: hung requests return.
	closing chan struct{}
	once    sync.Once

	mu       sync.Mutex
	set      *Set
	replay   bool // answer from the captures when no route matches
	shape    Shape
	nodes    []byte // synthesised /ws/v1/cluster/nodes, if any
	handlers map[string]http.HandlerFunc
	faults   map[string][]*faultState
	standby  *standby
	reqs     []Request
}

type standby struct{ active string }

type config struct {
	version, variant string
	shape            Shape
	nodes            *synth
	restDisabled     bool
	routesOnly       bool
	idleTimeout      time.Duration
}

type synth struct {
	n    int
	spec NodeSpec
}

// Option configures an RM.
type Option func(*config)

// WithVersion replays the captures of Hadoop version v (default DefaultVersion); "3.1" is the
// hand-derived 3.1 set. Versions lists the recorded ones.
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

// WithMisconfigured replays the misconfigured variant of the version's captures (the cluster of
// docker/conf-misconfigured: no GPU or FPGA types).
func WithMisconfigured() Option { return func(c *config) { c.variant = Misconfigured } }

// WithShape rewrites every JSON answer into another serializer's shape (see Shape).
func WithShape(s Shape) Option { return func(c *config) { c.shape = s } }

// WithNodes answers GET /ws/v1/cluster/nodes with n synthesised nodes (see SynthNodes).
func WithNodes(n int, spec NodeSpec) Option {
	return func(c *config) { c.nodes = &synth{n: n, spec: spec} }
}

// WithRESTSubmissionDisabled answers new-application and submission as an RM with
// yarn.webapp.enable-rest-app-submissions=false does: 403 with the plain-text message
// "App submission via REST is disabled." under a JSON content type.
func WithRESTSubmissionDisabled() Option { return func(c *config) { c.restDisabled = true } }

// WithRoutesOnly answers only the routes a test sets (Handle, Reply, ReplyJSON, ReplyCapture) and
// the synthesised nodes; any other request gets the RM's 404 NotFoundException instead of a
// capture, so a test sees every request its code makes.
func WithRoutesOnly() Option { return func(c *config) { c.routesOnly = true } }

// WithIdleTimeout closes keep-alive connections idle for d, as Hadoop 3.2's web server does
// after 1 s (hadoop.http.idle_timeout.ms); by default they stay open.
func WithIdleTimeout(d time.Duration) Option { return func(c *config) { c.idleTimeout = d } }

// RESTSubmissionDisabledMessage is the body of the RM's 403 when REST submission is off.
const RESTSubmissionDisabledMessage = "App submission via REST is disabled."

// New starts a fake RM for a test and closes it when the test ends; a bad option (an unknown
// version) fails the test.
func New(tb TB, opts ...Option) *RM {
	tb.Helper()
	rm, err := NewServer(opts...)
	if err != nil {
		tb.Fatalf("%v", err)
		return nil
	}
	tb.Cleanup(rm.Close)
	return rm
}

// NewServer starts a fake RM; the caller closes it.
func NewServer(opts ...Option) (*RM, error) {
	cfg := config{version: DefaultVersion}
	for _, o := range opts {
		o(&cfg)
	}
	set, err := LoadSet(cfg.version, cfg.variant)
	if err != nil {
		return nil, err
	}
	rm := &RM{set: set, replay: !cfg.routesOnly, shape: cfg.shape, closing: make(chan struct{}),
		handlers: map[string]http.HandlerFunc{}, faults: map[string][]*faultState{}}
	if cfg.nodes != nil {
		if rm.nodes, err = SynthNodes(cfg.nodes.n, cfg.nodes.spec); err != nil {
			return nil, err
		}
	}
	if cfg.restDisabled {
		for _, route := range []string{"POST /ws/v1/cluster/apps/new-application", "POST /ws/v1/cluster/apps"} {
			rm.handlers[route] = restDisabled
		}
	}
	rm.srv = httptest.NewUnstartedServer(http.HandlerFunc(rm.serve))
	rm.srv.Config.IdleTimeout = cfg.idleTimeout
	rm.srv.Start()
	return rm, nil
}

func restDisabled(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, RESTSubmissionDisabledMessage)
}

// URL is the RM's base URL, e.g. "http://127.0.0.1:41234".
func (rm *RM) URL() string { return rm.srv.URL }

// Version is the Hadoop version whose captures the RM replays.
func (rm *RM) Version() string { return rm.set.Version }

// Close stops the server; requests held by a Hang fault return first.
func (rm *RM) Close() {
	rm.once.Do(func() {
		close(rm.closing)
		rm.srv.CloseClientConnections()
		rm.srv.Close()
	})
}

// Handle routes "METHOD /path" (query ignored) to h, ahead of the captures.
func (rm *RM) Handle(route string, h http.HandlerFunc) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.handlers[route] = h
}

// Reply routes "METHOD /path" to a fixed answer.
func (rm *RM) Reply(route string, status int, contentType string, body []byte) {
	rm.Handle(route, func(w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// ReplyJSON routes "METHOD /path" to a JSON answer.
func (rm *RM) ReplyJSON(route string, status int, body string) {
	rm.Reply(route, status, "application/json", []byte(body))
}

// ReplyCapture routes "METHOD /path" to the capture called name of the RM's set, with its
// recorded status and content type.
func (rm *RM) ReplyCapture(route, name string) error {
	c, err := rm.set.Get(name)
	if err != nil {
		return err
	}
	rm.Reply(route, c.Status, c.ContentType, c.Body)
	return nil
}

// Standby makes the RM a standby, as RMWebAppFilter does: /ws/v1/cluster/info answers with
// haState STANDBY, every other request gets a 307 to active (the same URI on that base URL).
// With active "" no active RM is known: 307 without Location, a Refresh header and "There is no
// active RM right now.". Active(true) undoes it.
func (rm *RM) Standby(active string) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.standby = &standby{active: strings.TrimRight(active, "/")}
}

// Active makes a standby RM active again.
func (rm *RM) Active() {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.standby = nil
}

// Requests returns every request received so far, oldest first.
func (rm *RM) Requests() []Request {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return append([]Request(nil), rm.reqs...)
}

// Count returns how many requests hit route ("METHOD /path").
func (rm *RM) Count(route string) int {
	n := 0
	for _, r := range rm.Requests() {
		if r.Route() == route {
			n++
		}
	}
	return n
}

// Reset forgets the recorded requests.
func (rm *RM) Reset() {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.reqs = nil
}

func (rm *RM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	route := r.Method + " " + r.URL.Path
	rm.mu.Lock()
	rm.reqs = append(rm.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
		Header: r.Header.Clone(), Body: body, At: time.Now()})
	f := rm.takeFault(route)
	sb := rm.standby
	h := rm.handlers[route]
	rm.mu.Unlock()

	if f != nil {
		if done := rm.applyFault(w, r, f); done {
			return
		}
	}
	if sb != nil && rm.serveStandby(w, r, sb) {
		return
	}
	if f != nil && f.Malformed {
		rec := httptest.NewRecorder()
		rm.answer(rec, r, h)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		b := rec.Body.Bytes()
		_, _ = w.Write(b[:len(b)/2])
		return
	}
	rm.answer(w, r, h)
}

// answer serves a request from a handler, the synthesised nodes or the captures.
func (rm *RM) answer(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if h != nil {
		h(w, r)
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/ws/v1/cluster/nodes" && rm.nodes != nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(rm.shape.apply(rm.nodes))
		return
	}
	c, ok := rm.match(r)
	if !ok || !rm.replay {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `{"RemoteException":{"exception":"NotFoundException","message":"yarnfake: no capture for %s %s in hadoop-%s","javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}`,
			r.Method, r.URL.Path, rm.set.Version)
		return
	}
	if c.ContentType != "" {
		w.Header().Set("Content-Type", c.ContentType)
	}
	w.WriteHeader(c.Status)
	body := c.Body
	if strings.HasSuffix(c.ContentType, "json") {
		body = rm.shape.apply(body)
	}
	_, _ = w.Write(body)
}

// match finds the capture for a request: same method and path, and the same query (user.name
// aside) if one was recorded with it, else the first recorded for the method and path.
func (rm *RM) match(r *http.Request) (Capture, bool) {
	q := r.URL.Query()
	q.Del("user.name")
	want := q.Encode()
	var first *Capture
	for i := range rm.set.Captures {
		c := &rm.set.Captures[i]
		if c.Method != r.Method || c.Path != r.URL.Path {
			continue
		}
		if c.Query.Encode() == want {
			return *c, true
		}
		if first == nil {
			first = c
		}
	}
	if first == nil {
		return Capture{}, false
	}
	return *first, true
}

func (rm *RM) serveStandby(w http.ResponseWriter, r *http.Request, sb *standby) bool {
	if r.URL.Path == "/ws/v1/cluster/info" || r.URL.Path == "/ws/v1/cluster" {
		c, ok := rm.match(r)
		if !ok {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(bytes.Replace(c.Body, []byte(`"haState":"ACTIVE"`), []byte(`"haState":"STANDBY"`), 1))
		return true
	}
	w.Header().Set("Content-Type", "text/plain")
	if sb.active == "" {
		w.Header().Set("Refresh", "3;url="+r.URL.String())
		w.WriteHeader(http.StatusTemporaryRedirect)
		_, _ = io.WriteString(w, "There is no active RM right now.\nHA Zookeeper Connection State: CONNECTED")
		return true
	}
	target := sb.active + r.URL.RequestURI()
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusTemporaryRedirect)
	_, _ = io.WriteString(w, "This is standby RM. The redirect url is: "+target)
	return true
}

// wait blocks for d (forever if d < 0) unless the request's context ends or the RM closes;
// it reports whether the request is still wanted.
func (rm *RM) wait(ctx context.Context, d time.Duration) bool {
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return true
	case <-ctx.Done():
		return false
	case <-rm.closing:
		return false
	}
}
