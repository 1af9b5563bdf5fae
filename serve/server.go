package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/internal/redact"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// AppDetails is the part of the ResourceManager client /api/v1/apps/{id} reads besides the watch:
// the application's attempts and its current attempt's containers.
type AppDetails interface {
	AppAttempts(ctx context.Context, id string) ([]yarn.AppAttempt, error)
	AttemptContainers(ctx context.Context, appID, attemptID string) ([]yarn.AppContainer, error)
}

// Options configure the HTTP handler.
type Options struct {
	// Watcher is the shared watch of the ResourceManager.
	Watcher *Watcher
	// Details reads an application's attempts and containers for /api/v1/apps/{id} (at most once
	// per application and poll, whatever the number of clients); nil answers without them.
	Details AppDetails
	// EncodeJSON writes a view as the CLI's -o json does (cmdutil.WriteJSON); nil writes indented
	// JSON.
	EncodeJSON func(w io.Writer, v any) error
	// Token, when set, is the bearer token every request but /healthz, /readyz and the GPU map's
	// static page must carry (Authorization: Bearer <token>).
	Token string
	// Commands runs translate and preflight for the POST endpoints; nil answers them 501.
	Commands CommandRunner
	// MaxBodyBytes bounds a POST body; 0 means 1 MiB.
	MaxBodyBytes int64
	// Logger logs requests that fail on the server's side; nil discards.
	Logger *slog.Logger
}

// Handler is serve's HTTP handler.
type Handler struct {
	opts Options
	mux  *http.ServeMux
	live *liveMetrics
	// sem bounds the POST endpoints' concurrent command runs.
	sem chan struct{}
}

// routes lists every route the handler serves, as "METHOD /path" (path patterns as the OpenAPI
// document writes them); TestOpenAPIListsEveryRoute checks the document against it.
var routes = []string{
	"GET /healthz", "GET /readyz", "GET /metrics", "GET /",
	"GET /api/v1/openapi.json",
	"GET /api/v1/cluster/info", "GET /api/v1/cluster/nodes", "GET /api/v1/cluster/queues", "GET /api/v1/cluster/apps",
	"GET /api/v1/apps/{id}", "GET /api/v1/apps/{id}/why", "GET /api/v1/gpumap",
	"POST /api/v1/translate", "POST /api/v1/preflight",
}

// NewHandler returns the handler on opts.
func NewHandler(opts Options) (*Handler, error) {
	if opts.Watcher == nil {
		return nil, errors.New("serve: Options.Watcher is nil")
	}
	if opts.EncodeJSON == nil {
		opts.EncodeJSON = func(w io.Writer, v any) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(v)
		}
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opts: opts, mux: http.NewServeMux(), live: newLiveMetrics(opts.Watcher), sem: make(chan struct{}, 4)}
	m := h.mux
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, "ok\n") })
	m.HandleFunc("GET /readyz", h.readyz)
	m.HandleFunc("GET /metrics", h.auth(h.metrics))
	m.HandleFunc("GET /{$}", h.page)
	m.HandleFunc("GET /assets/{file}", h.asset)
	m.HandleFunc("GET /api/v1/openapi.json", h.auth(h.openapi))
	m.HandleFunc("GET /api/v1/cluster/info", h.auth(h.snapshotJSON(h.clusterInfo)))
	m.HandleFunc("GET /api/v1/cluster/nodes", h.auth(h.snapshotJSON(h.clusterNodes)))
	m.HandleFunc("GET /api/v1/cluster/queues", h.auth(h.snapshotJSON(h.clusterQueues)))
	m.HandleFunc("GET /api/v1/cluster/apps", h.auth(h.snapshotJSON(h.clusterApps)))
	m.HandleFunc("GET /api/v1/apps/{id}", h.auth(h.snapshotJSON(h.appStatus)))
	m.HandleFunc("GET /api/v1/apps/{id}/why", h.auth(h.snapshotJSON(h.appWhy)))
	m.HandleFunc("GET /api/v1/gpumap", h.auth(h.snapshotJSON(h.gpuMap)))
	m.HandleFunc("POST /api/v1/translate", h.auth(h.command("translate")))
	m.HandleFunc("POST /api/v1/preflight", h.auth(h.command("preflight")))
	for _, p := range []string{"/api/v1/translate", "/api/v1/preflight"} {
		m.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", http.MethodPost)
			h.writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: use POST with the Flink configuration as the body", r.Method, r.URL.Path))
		})
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s: see /api/v1/openapi.json", r.Method, r.URL.Path))
	})
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// errText is an error's message for an answer: passed through the redaction every yarn-er
// message passes (URLs with passwords, tokens in query strings), as the CLI prints it.
func errText(err error) string { return redact.Text(err.Error()) }

// ErrorBody is every error answer: {"error": "..."}, the message the CLI prints for the same
// failure (without its "yarn-er: " prefix), and for the POST endpoints the CLI's exit code.
type ErrorBody struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode,omitempty"`
}

func (h *Handler) writeError(w http.ResponseWriter, status int, msg string) {
	h.writeErrorBody(w, status, ErrorBody{Error: msg})
}

func (h *Handler) writeErrorBody(w http.ResponseWriter, status int, e ErrorBody) {
	var buf bytes.Buffer
	if err := h.opts.EncodeJSON(&buf, e); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func writeText(w http.ResponseWriter, status int, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, s)
}

// auth checks the bearer token when one is set.
func (h *Handler) auth(next http.HandlerFunc) http.HandlerFunc {
	if h.opts.Token == "" {
		return next
	}
	want := []byte("Bearer " + h.opts.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="yarn-er"`)
			h.writeError(w, http.StatusUnauthorized, "missing or wrong bearer token: send Authorization: Bearer <the token of serve's --token-file>")
			return
		}
		next(w, r)
	}
}

func (h *Handler) readyz(w http.ResponseWriter, _ *http.Request) {
	st := h.opts.Watcher.Status()
	if st.Snapshot == nil {
		msg := "not ready: the first poll of the ResourceManager has not succeeded yet"
		if st.LastErr != nil {
			msg += ": " + errText(st.LastErr)
		}
		writeText(w, http.StatusServiceUnavailable, msg+"\n")
		return
	}
	writeText(w, http.StatusOK, "ready\n")
}

// setAge sets the headers saying how old the data is: Age (whole seconds, RFC 9111) and
// X-Yarner-Data-Time (when the poll ended, RFC 3339).
func (h *Handler) setAge(w http.ResponseWriter, s *Snapshot) {
	age := max(h.opts.Watcher.Now().Sub(s.Time), 0)
	w.Header().Set("Age", strconv.FormatInt(int64(age/time.Second), 10))
	w.Header().Set("X-Yarner-Data-Time", s.Time.UTC().Format(time.RFC3339Nano))
	w.Header().Set("Cache-Control", "no-store")
}

// httpError is an answer other than 200 from a view function.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// snapshotJSON serves the view f builds from the newest snapshot (503 before the first poll).
// The key f returns, when not empty, caches the encoded body for the snapshot's lifetime.
func (h *Handler) snapshotJSON(f func(r *http.Request, s *Snapshot) (key string, v func() any, err error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st := h.opts.Watcher.Status()
		s := st.Snapshot
		if s == nil {
			msg := "no data yet: the first poll of the ResourceManager has not succeeded"
			if st.LastErr != nil {
				msg += ": " + errText(st.LastErr)
			}
			h.writeError(w, http.StatusServiceUnavailable, msg)
			return
		}
		key, v, err := f(r, s)
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				h.writeError(w, he.status, he.msg)
				return
			}
			h.opts.Logger.Warn("request failed", "path", r.URL.Path, "error", err)
			h.writeError(w, http.StatusBadGateway, errText(err))
			return
		}
		write := func(w io.Writer) error {
			val := v()
			if bw, ok := val.(bodyWriter); ok {
				return bw(w)
			}
			return h.opts.EncodeJSON(w, val)
		}
		var body *encodedBody
		if key != "" {
			// Encoded once per snapshot and route, whatever the number of clients.
			c, _ := s.bodies.LoadOrStore("body/"+key, &encodedBody{})
			body = c.(*encodedBody)
			body.once.Do(func() { body.encode(write) })
		} else {
			body = &encodedBody{}
			body.encode(write)
		}
		if body.err != nil {
			h.writeError(w, http.StatusInternalServerError, "encode: "+body.err.Error())
			return
		}
		h.setAge(w, s)
		w.Header().Set("Content-Type", "application/json")
		body.serve(w, r)
	}
}

// bodyWriter is a view that writes its own JSON (the node list, written one node at a time).
type bodyWriter func(w io.Writer) error

// gzipAbove is the size above which a body encoded once per snapshot is kept compressed only.
const gzipAbove = 64 << 10

// encode writes the body with write: kept as it is when small, else compressed as it is written
// (a 50,000-node list is some 40 MB of JSON, 2 MB compressed).
func (e *encodedBody) encode(write func(io.Writer) error) {
	sw := &spillWriter{}
	if e.err = write(sw); e.err == nil {
		e.err = sw.close()
	}
	e.plain, e.gz = sw.plain.Bytes(), sw.gz.Bytes()
	if sw.zw == nil {
		e.gz = nil
	} else {
		e.plain = nil
	}
}

// serve writes the body: compressed to a client that takes gzip when it is kept compressed,
// else decompressed as it is sent.
func (e *encodedBody) serve(w http.ResponseWriter, r *http.Request) {
	if e.gz == nil {
		_, _ = w.Write(e.plain)
		return
	}
	w.Header().Set("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(e.gz)
		return
	}
	if zr, err := gzip.NewReader(bytes.NewReader(e.gz)); err == nil {
		_, _ = io.Copy(w, zr)
	}
}

// spillWriter keeps what is written as it is up to gzipAbove bytes, then compresses it all.
type spillWriter struct {
	plain, gz bytes.Buffer
	zw        *gzip.Writer
	bw        *bufio.Writer
}

func (s *spillWriter) Write(p []byte) (int, error) {
	if s.zw == nil && s.plain.Len()+len(p) <= gzipAbove {
		return s.plain.Write(p)
	}
	if s.zw == nil {
		s.zw, _ = gzip.NewWriterLevel(&s.gz, gzip.BestSpeed)
		s.bw = bufio.NewWriterSize(s.zw, 32<<10)
		if _, err := s.bw.Write(s.plain.Bytes()); err != nil {
			return 0, err
		}
		s.plain = bytes.Buffer{}
	}
	return s.bw.Write(p)
}

func (s *spillWriter) close() error {
	if s.zw == nil {
		return nil
	}
	if err := s.bw.Flush(); err != nil {
		return err
	}
	return s.zw.Close()
}

// encodedBody is a view encoded once per snapshot.
type encodedBody struct {
	once sync.Once
	// plain is the body; gz the body compressed (one gzip member) when it is kept so, and then
	// plain is nil.
	plain, gz []byte
	err       error
}

func (h *Handler) clusterInfo(_ *http.Request, s *Snapshot) (string, func() any, error) {
	return "info", func() any { return view.ClusterInfoOf(s.Info, s.RMs, s.Metrics) }, nil
}

func (h *Handler) clusterNodes(r *http.Request, s *Snapshot) (string, func() any, error) {
	q := r.URL.Query()
	resource := q.Get("resource")
	states, err := upperList(q["state"], nodeStates, "state")
	if err != nil {
		return "", nil, err
	}
	t := s.Nodes
	if len(states) > 0 {
		var nodes []yarn.Node
		for i := range t.Len() {
			if states[t.State(i)] {
				nodes = append(nodes, t.Node(i))
			}
		}
		return "", func() any { return view.NodesOf(nodes, resource) }, nil
	}
	key := ""
	if resource == "" {
		key = "nodes"
	}
	// Written one node at a time: never the whole list of views, nor of records.
	return key, func() any {
		return bodyWriter(func(w io.Writer) error { return view.WriteNodesJSON(w, h.opts.EncodeJSON, t, resource) })
	}, nil
}

// upperList parses a repeatable, comma-separated query parameter of names from allowed.
func upperList(vals []string, allowed []string, param string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, v := range vals {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.ToUpper(strings.TrimSpace(item))
			if item == "" {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || a == item
			}
			if !ok {
				return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("%s %q: want one of %s", param, item, strings.Join(allowed, ", "))}
			}
			out[item] = true
		}
	}
	return out, nil
}

func (h *Handler) clusterQueues(_ *http.Request, s *Snapshot) (string, func() any, error) {
	return "queues", func() any {
		out, _ := view.QueuesOf(s.Scheduler)
		return out
	}, nil
}

var appStates = []string{"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED"}

func (h *Handler) clusterApps(r *http.Request, s *Snapshot) (string, func() any, error) {
	q := r.URL.Query()
	states, err := upperList(q["state"], appStates, "state")
	if err != nil {
		return "", nil, err
	}
	limit := 0
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 0 {
			return "", nil, &httpError{http.StatusBadRequest, fmt.Sprintf("limit %q: want 0 (no limit) or more", l)}
		}
	}
	queue, user := q.Get("queue"), q.Get("user")
	types := map[string]bool{}
	for _, t := range q["type"] {
		for item := range strings.SplitSeq(t, ",") {
			if item = strings.TrimSpace(item); item != "" {
				types[strings.ToLower(item)] = true
			}
		}
	}
	if len(states) == 0 && queue == "" && user == "" && len(types) == 0 && limit == 0 {
		return "apps", func() any { return view.AppsOf(s.Apps) }, nil
	}
	var apps []yarn.App
	for _, ap := range s.Apps {
		if (len(states) > 0 && !states[string(ap.State)]) || (queue != "" && ap.Queue != queue && !strings.HasSuffix(ap.Queue, "."+queue)) ||
			(user != "" && ap.User != user) || (len(types) > 0 && !types[strings.ToLower(ap.ApplicationType)]) {
			continue
		}
		apps = append(apps, ap)
		if limit > 0 && len(apps) == limit {
			break
		}
	}
	return "", func() any { return view.AppsOf(apps) }, nil
}

// appFrom returns the application the path names, or a 400/404 httpError.
func appFrom(r *http.Request, s *Snapshot) (*yarn.App, error) {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "application_") || len(id) > 128 {
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("%q is not an application id: want application_<cluster timestamp>_<sequence>", id)}
	}
	ap := s.App(id)
	if ap == nil {
		return nil, &httpError{http.StatusNotFound, fmt.Sprintf("application %s: the ResourceManager does not list it (as of %s)", id, s.Time.UTC().Format(time.RFC3339))}
	}
	return ap, nil
}

// maxDetailsPerPoll bounds the applications whose attempts and containers one snapshot reads
// for /api/v1/apps/{id}.
const maxDetailsPerPoll = 64

// detail is one application's attempts and containers, read once per snapshot.
type detail struct {
	once sync.Once
	v    view.AppStatus
	err  error
}

func (h *Handler) appStatus(r *http.Request, s *Snapshot) (string, func() any, error) {
	ap, err := appFrom(r, s)
	if err != nil {
		return "", nil, err
	}
	if h.opts.Details == nil {
		return "", func() any { return view.AppStatusOf(ap, nil, nil) }, nil
	}
	v, loaded := s.bodies.LoadOrStore("detail/"+ap.ID, &detail{})
	if !loaded && s.details.Add(1) > maxDetailsPerPoll {
		// Each application's attempts and containers cost the RM two requests: at most
		// maxDetailsPerPoll applications per poll, whatever the clients ask.
		s.bodies.Delete("detail/" + ap.ID)
		return "", nil, &httpError{http.StatusTooManyRequests, fmt.Sprintf(
			"more than %d applications' details asked for since the last poll: retry after the next poll (in %s)", maxDetailsPerPoll, h.opts.Watcher.Interval())}
	}
	d := v.(*detail)
	d.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
		defer cancel()
		d.v, d.err = appDetail(ctx, h.opts.Details, ap)
	})
	return "", func() any { return d.v }, d.err
}

// appDetail is `app status`: the application, its last attempt and that attempt's live
// containers (none once the application ended), sorted by id.
func appDetail(ctx context.Context, c AppDetails, ap *yarn.App) (view.AppStatus, error) {
	atts, err := c.AppAttempts(ctx, ap.ID)
	if err != nil {
		return view.AppStatus{}, fmt.Errorf("application %s attempts: %w", ap.ID, err)
	}
	var at *yarn.AppAttempt
	if len(atts) > 0 {
		at = &atts[len(atts)-1]
	}
	var cs []yarn.AppContainer
	if at != nil && at.AppAttemptID != "" && !ap.State.Terminal() {
		cs, err = c.AttemptContainers(ctx, ap.ID, at.AppAttemptID)
		if err != nil && !errors.Is(err, yarn.ErrNotFound) {
			return view.AppStatus{}, fmt.Errorf("application %s containers: %w", ap.ID, err)
		}
		sortContainers(cs)
	}
	return view.AppStatusOf(ap, at, cs), nil
}

func (h *Handler) metrics(w http.ResponseWriter, r *http.Request) {
	live, err := h.live.encoded(h.opts.Watcher.Now())
	if err != nil {
		h.writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var cluster *encodedMetrics
	if s := h.opts.Watcher.Status().Snapshot; s != nil {
		if cluster = s.clusterMetricsText(); cluster.err != nil {
			h.opts.Logger.Warn("cluster metrics", "error", cluster.err)
			h.writeError(w, http.StatusInternalServerError, cluster.err.Error())
			return
		}
	}
	w.Header().Set("Content-Type", string(textFormat))
	w.Header().Set("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		// Two gzip members, each compressed once: the process's own metrics (at most once a
		// second) and the cluster's (once per poll). A gzip stream may hold several (RFC 1952).
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(live.gz)
		if cluster != nil {
			_, _ = w.Write(cluster.gz)
		}
		return
	}
	_, _ = w.Write(live.plain)
	if cluster != nil {
		zr, err := gzip.NewReader(bytes.NewReader(cluster.gz))
		if err == nil {
			_, _ = io.Copy(w, zr)
		}
	}
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func (h *Handler) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIDoc)
}
