package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// RM is the part of the ResourceManager client (*yarn.Client) the watch reads. The client follows
// the active ResourceManager of an HA pair itself.
type RM interface {
	ClusterInfo(ctx context.Context) (*yarn.ClusterInfo, error)
	Metrics(ctx context.Context) (*yarn.ClusterMetrics, error)
	// NodeTable reads the NodeManagers as a compact table, decoded as the answer streams; hint is
	// the number of nodes expected (the last poll's).
	NodeTable(ctx context.Context, q yarn.NodesQuery, hint int) (*yarn.NodeTable, error)
	Scheduler(ctx context.Context) (*yarn.Scheduler, error)
	Apps(ctx context.Context, q yarn.AppsQuery) ([]yarn.App, error)
	Addresses() []string
	RMs(ctx context.Context) []yarn.RMStatus
}

// Snapshot is the cluster as one poll saw it. It is never changed once published.
type Snapshot struct {
	// Time is when the poll that read it ended.
	Time time.Time
	// Info is the answering RM's cluster info.
	Info *yarn.ClusterInfo
	// RMs is every configured RM's state when the client knows several; nil otherwise.
	RMs []yarn.RMStatus
	// Metrics are the cluster metrics; nil when the RM did not give them (as `cluster info`,
	// a poll does not fail for them).
	Metrics *yarn.ClusterMetrics
	// Nodes are the NodeManagers (the RM's default states), kept compactly: a snapshot keeps
	// about 200 bytes a node, not the records (yarn.NodeTableOf makes one from records).
	Nodes *yarn.NodeTable
	// Scheduler is the scheduler and its queues.
	Scheduler *yarn.Scheduler
	// Apps are the applications the RM keeps, newest first.
	Apps []yarn.App
	// Containers are the live containers of the running applications holding GPUs, by
	// application id (for the GPU map); nil when the client cannot list them.
	Containers map[string][]yarn.AppContainer

	// bodies caches what the handler encodes from this snapshot, by route.
	bodies sync.Map
	// details counts the applications whose details this snapshot read (maxDetailsPerPoll).
	details atomic.Int64
	// agg are the aggregates /metrics and the GPU map use, computed once.
	aggOnce sync.Once
	agg     *aggregates
	// order and unique index Nodes, computed once: by id, and the first node of each id.
	indexOnce     sync.Once
	order, unique []int32
}

// nodeIndex returns the indexes of the nodes sorted by id (nodes of the same id in the RM's
// order) and, in the RM's order, those of the nodes whose id no node before them has.
func (s *Snapshot) nodeIndex() (order, unique []int32) {
	s.indexOnce.Do(func() {
		t := s.Nodes
		s.order = view.NodeOrder(t, "")
		dup := make([]bool, t.Len())
		for k := 1; k < len(s.order); k++ {
			if t.ID(int(s.order[k])) == t.ID(int(s.order[k-1])) {
				dup[s.order[k]] = true
			}
		}
		s.unique = make([]int32, 0, t.Len())
		for i := range t.Len() {
			if !dup[i] {
				s.unique = append(s.unique, int32(i))
			}
		}
	})
	return s.order, s.unique
}

// App returns the application id from the snapshot, nil when the RM does not list it.
func (s *Snapshot) App(id string) *yarn.App {
	for i := range s.Apps {
		if s.Apps[i].ID == id {
			return &s.Apps[i]
		}
	}
	return nil
}

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Client is the ResourceManager client.
	Client RM
	// Interval is the time between two polls' starts; 0 means 5s.
	Interval time.Duration
	// MaxBackoff is the longest wait after failed polls (the wait doubles from Interval with each
	// failure in a row); 0 means 60s.
	MaxBackoff time.Duration
	// PollTimeout bounds one poll; 0 means 30s.
	PollTimeout time.Duration
	// Logger logs failed polls; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AfterPoll, when set, runs after each successful poll, once the new snapshot is published
	// (the serve command returns the previous snapshot's memory to the OS there).
	AfterPoll func()
}

// Status is where the watch stands: the last snapshot, the last poll's outcome and counters.
type Status struct {
	// Snapshot is the newest complete snapshot; nil before the first successful poll.
	Snapshot *Snapshot
	// Up is whether the last poll succeeded.
	Up bool
	// LastErr is why the last poll failed (nil when it succeeded).
	LastErr error
	// LastPoll is when the last poll ended, LastDuration how long it took.
	LastPoll     time.Time
	LastDuration time.Duration
	// Polls and Failures count the polls since start.
	Polls, Failures int64
}

// Watcher polls the ResourceManager and publishes a Snapshot after each successful poll. One
// Watcher serves every client: the RM sees one poll per interval whatever their number.
type Watcher struct {
	opts   WatchOptions
	status atomic.Pointer[Status]
	ready  chan struct{}
	once   sync.Once
	// observe, when set, is told each poll's duration and outcome (the metrics' histogram).
	observe atomic.Pointer[func(d time.Duration, err error)]
}

// NewWatcher returns a Watcher on opts; Run starts it.
func NewWatcher(opts WatchOptions) (*Watcher, error) {
	if opts.Client == nil {
		return nil, errors.New("serve: WatchOptions.Client is nil")
	}
	if opts.Interval < 0 || opts.MaxBackoff < 0 || opts.PollTimeout < 0 {
		return nil, fmt.Errorf("serve: negative interval, backoff or poll timeout")
	}
	if opts.Interval == 0 {
		opts.Interval = 5 * time.Second
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 60 * time.Second
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.Interval)
	if opts.PollTimeout == 0 {
		opts.PollTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	w := &Watcher{opts: opts, ready: make(chan struct{})}
	w.status.Store(&Status{})
	return w, nil
}

// setObserver sets the function told each poll's duration and outcome.
func (w *Watcher) setObserver(f func(time.Duration, error)) { w.observe.Store(&f) }

// Status returns the watch's current status.
func (w *Watcher) Status() *Status { return w.status.Load() }

// Ready is closed once the first poll succeeded.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Interval is the poll interval.
func (w *Watcher) Interval() time.Duration { return w.opts.Interval }

// Now is the watch's clock.
func (w *Watcher) Now() time.Time { return w.opts.Now() }

// Run polls until ctx ends, then returns ctx's error. A failed poll keeps the last snapshot and
// waits longer before the next (Interval doubled per failure in a row, up to MaxBackoff).
func (w *Watcher) Run(ctx context.Context) error {
	failures := 0
	for {
		start := w.opts.Now()
		if err := w.PollOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failures++
		} else {
			failures = 0
		}
		wait := w.opts.Interval
		for i := 0; i < failures && wait < w.opts.MaxBackoff; i++ {
			wait *= 2
		}
		wait = min(wait, w.opts.MaxBackoff) - w.opts.Now().Sub(start)
		if wait <= 0 {
			wait = time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// PollOnce reads the cluster once and publishes the snapshot; on failure the last snapshot stays
// and the error is recorded in Status.
func (w *Watcher) PollOnce(ctx context.Context) error {
	start := w.opts.Now()
	prev := w.status.Load()
	snap, err := poll(ctx, w.opts.Client, w.opts.PollTimeout, prev.Snapshot.nodeCount())
	if d, ok := w.opts.Client.(AppDetails); ok && err == nil {
		// For the GPU map: which application holds which node's devices.
		cctx, cancel := context.WithTimeout(ctx, w.opts.PollTimeout)
		snap.Containers = pollContainers(cctx, d, snap.Apps, records.GPU)
		cancel()
	}
	if err == nil {
		// The cluster's metrics are encoded now, once, before the snapshot is published: no
		// scraper waits for them, and the snapshot's nodes are indexed as they are read.
		snap.clusterMetricsText()
	}
	end := w.opts.Now()
	st := &Status{Snapshot: prev.Snapshot, Up: err == nil, LastErr: err, LastPoll: end, LastDuration: end.Sub(start),
		Polls: prev.Polls + 1, Failures: prev.Failures}
	if err != nil {
		st.Failures++
		w.opts.Logger.Warn("ResourceManager poll failed; serving the last data", "error", err, "failures", st.Failures)
	} else {
		snap.Time = end
		st.Snapshot = snap
	}
	w.status.Store(st)
	if f := w.observe.Load(); f != nil {
		(*f)(st.LastDuration, err)
	}
	if err == nil {
		w.once.Do(func() { close(w.ready) })
		if w.opts.AfterPoll != nil {
			w.opts.AfterPoll()
		}
	}
	return err
}

// Poll reads the cluster once, as the CLI's commands read it: cluster info (with every RM's state
// when the client knows several), metrics (optional), nodes, scheduler and applications (newest
// first). timeout bounds the whole poll.
func Poll(ctx context.Context, c RM, timeout time.Duration) (*Snapshot, error) {
	return poll(ctx, c, timeout, 0)
}

// nodeCount is the number of nodes of the snapshot, 0 for none.
func (s *Snapshot) nodeCount() int {
	if s == nil {
		return 0
	}
	return s.Nodes.Len()
}

// poll is Poll expecting hint nodes.
func poll(ctx context.Context, c RM, timeout time.Duration, hint int) (*Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s := &Snapshot{}
	var err error
	if s.Info, err = c.ClusterInfo(ctx); err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	if len(c.Addresses()) > 1 {
		s.RMs = c.RMs(ctx)
	}
	if m, err := c.Metrics(ctx); err == nil {
		s.Metrics = m
	}
	if s.Nodes, err = c.NodeTable(ctx, yarn.NodesQuery{}, hint); err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	if s.Scheduler, err = c.Scheduler(ctx); err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	if s.Apps, err = c.Apps(ctx, yarn.AppsQuery{}); err != nil {
		return nil, fmt.Errorf("applications: %w", err)
	}
	slices.SortStableFunc(s.Apps, func(x, y yarn.App) int { return view.CompareAppIDs(y.ID, x.ID) })
	return s, nil
}
