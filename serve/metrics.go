package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// Metric names. Every resource quantity is in the resource's YARN unit (memory-mb in MiB, vcores,
// yarn.io/gpu in devices), with the resource type as the resource label: YARN's names hold "/" and
// ".", which a metric name cannot.
const (
	metricNodeTotal      = "yarner_node_total_resource"
	metricNodeUsed       = "yarner_node_used_resource"
	metricNodeAvailable  = "yarner_node_available_resource"
	metricNodeState      = "yarner_node_state"
	metricNodes          = "yarner_nodes"
	metricRackTotal      = "yarner_rack_total_resource"
	metricRackUsed       = "yarner_rack_used_resource"
	metricRackAvailable  = "yarner_rack_available_resource"
	metricPartTotal      = "yarner_partition_total_resource"
	metricPartUsed       = "yarner_partition_used_resource"
	metricPartAvailable  = "yarner_partition_available_resource"
	metricQueueUsed      = "yarner_queue_used_resource"
	metricQueueGuarantee = "yarner_queue_guaranteed_resource"
	metricQueueMax       = "yarner_queue_max_resource"
	metricQueuePending   = "yarner_queue_pending_resource"
	metricAppPending     = "yarner_app_pending_resource"
	metricAppAllocated   = "yarner_app_allocated_resource"
	metricRMUp           = "yarner_rm_up"
	metricDataAge        = "yarner_data_age_seconds"
	metricLastPoll       = "yarner_last_successful_poll_timestamp_seconds"
	metricPollDuration   = "yarner_poll_duration_seconds"
	metricPolls          = "yarner_polls_total"
	metricPollFailures   = "yarner_poll_failures_total"
)

// nodeStates are the NodeManager states (the ?state= filter of /api/v1/cluster/nodes).
var nodeStates = []string{"NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING", "DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"}

// expo writes Prometheus' text format (0.0.4) directly: a 50,000-node cluster has some 650,000
// series, which client_golang's const metrics would first build as objects.
type expo struct {
	b *bufio.Writer
	// ents and kv are resources' buffers, reused from one sample to the next.
	ents []records.Resource
	kv   []string
}

// family starts a metric family: its HELP and TYPE lines. Each name is written once.
func (e *expo) family(name, help string) {
	e.b.WriteString("# HELP ")
	e.b.WriteString(name)
	e.b.WriteByte(' ')
	e.b.WriteString(strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help))
	e.b.WriteString("\n# TYPE ")
	e.b.WriteString(name)
	e.b.WriteString(" gauge\n")
}

// labelEscaper escapes a label value: backslash, double quote and line feed.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// sample writes name{k1="v1",...} value; kv alternates label names and values.
func (e *expo) sample(name string, v int64, kv ...string) {
	e.b.WriteString(name)
	if len(kv) > 0 {
		e.b.WriteByte('{')
		for i := 0; i+1 < len(kv); i += 2 {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.b.WriteString(kv[i])
			e.b.WriteString(`="`)
			e.b.WriteString(labelEscaper.Replace(label(kv[i+1])))
			e.b.WriteByte('"')
		}
		e.b.WriteByte('}')
	}
	e.b.WriteByte(' ')
	e.b.Write(strconv.AppendInt(e.b.AvailableBuffer(), v, 10))
	e.b.WriteByte('\n')
}

// resources writes one sample per entry of r, labelled kv plus resource.
func (e *expo) resources(name string, r records.Resources, kv ...string) {
	e.ents = r.AppendTo(e.ents[:0])
	e.kv = append(append(e.kv[:0], kv...), "resource", "")
	for _, x := range e.ents {
		e.kv[len(e.kv)-1] = x.Name
		e.sample(name, x.Value, e.kv...)
	}
}

// label makes a label value valid UTF-8 (the RM's names are any YARN user's text).
func label(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// writeClusterMetrics writes the snapshot's cluster metrics. A node id repeated in the RM's
// answer is written once (a series may not repeat).
func writeClusterMetrics(e *expo, s *Snapshot) {
	t := s.Nodes
	_, unique := s.nodeIndex()
	for _, m := range []struct {
		name, help string
		pick       func(i int) records.Resources
	}{
		{metricNodeAvailable, "Amount of a resource type free on a NodeManager (availableResource).", t.Available},
		{metricNodeTotal, "Total amount of a resource type on a NodeManager (YARN totalResource), in the type's YARN unit.", t.Total},
		{metricNodeUsed, "Amount of a resource type allocated to containers on a NodeManager (usedResource).", t.Used},
	} {
		e.family(m.name, m.help)
		for _, i := range unique {
			e.resources(m.name, m.pick(int(i)), "node", t.ID(int(i)), "rack", t.Rack(int(i)))
		}
	}
	e.family(metricNodeState, "NodeManager state: one series per node, 1, labelled with its current state.")
	for _, i := range unique {
		if st := t.State(int(i)); st != "" {
			e.sample(metricNodeState, 1, "node", t.ID(int(i)), "state", st)
		}
	}
	a := s.aggregates()
	e.family(metricNodes, "Number of NodeManagers by state.")
	for _, st := range sortedKeys(a.nodeStates) {
		e.sample(metricNodes, int64(a.nodeStates[st]), "state", st)
	}
	for _, g := range []struct {
		m                  map[string]*triple
		key, what          string
		total, used, avail string
	}{
		{a.partitions, "partition", "partition's (\"\": the default partition)", metricPartTotal, metricPartUsed, metricPartAvailable},
		{a.racks, "rack", "rack's", metricRackTotal, metricRackUsed, metricRackAvailable},
	} {
		keys := sortedKeys(g.m)
		for _, f := range []struct {
			name, help string
			pick       func(t *triple) records.Resources
		}{
			{g.avail, "Amount of a resource type free on the " + g.what + " RUNNING NodeManagers.", func(t *triple) records.Resources { return t.Available }},
			{g.total, "Total amount of a resource type on the " + g.what + " RUNNING NodeManagers.", func(t *triple) records.Resources { return t.Total }},
			{g.used, "Amount of a resource type allocated on the " + g.what + " RUNNING NodeManagers.", func(t *triple) records.Resources { return t.Used }},
		} {
			e.family(f.name, f.help)
			for _, k := range keys {
				e.resources(f.name, f.pick(g.m[k]), g.key, k)
			}
		}
	}
	queues := s.Scheduler.Queues()
	for _, f := range []struct {
		name, help string
		pick       func(q *yarn.Queue) records.Resources
	}{
		{metricQueueGuarantee, "Resources guaranteed to the queue (CapacityScheduler effective minimum, FairScheduler minResources).", func(q *yarn.Queue) records.Resources {
			if q.MinEffectiveCapacity.Len() > 0 {
				return q.MinEffectiveCapacity
			}
			return q.MinResources
		}},
		{metricQueueMax, "Most resources the queue may use (CapacityScheduler effective maximum, FairScheduler maxResources).", func(q *yarn.Queue) records.Resources {
			if q.MaxEffectiveCapacity.Len() > 0 {
				return q.MaxEffectiveCapacity
			}
			return q.MaxResources
		}},
		{metricQueueUsed, "Amount of a resource type the queue's containers use.", func(q *yarn.Queue) records.Resources { return q.Used }},
	} {
		e.family(f.name, f.help)
		seen := map[string]bool{}
		for _, q := range queues {
			if !seen[q.Path] {
				seen[q.Path] = true
				e.resources(f.name, f.pick(q), "queue", q.Path)
			}
		}
	}
	e.family(metricQueuePending, "Resources the queue's applications still ask for (their off-switch requests).")
	for _, q := range sortedKeys(a.queueAsks) {
		e.resources(metricQueuePending, a.queueAsks[q], "queue", q)
	}
	e.family(metricAppAllocated, "Resources allocated to a running application's containers.")
	seen := map[string]bool{}
	for i := range s.Apps {
		ap := &s.Apps[i]
		if ap.State.Terminal() || ap.Allocated.Len() == 0 || seen[ap.ID] {
			continue
		}
		seen[ap.ID] = true
		e.resources(metricAppAllocated, ap.Allocated, "app", ap.ID, "queue", ap.Queue, "user", ap.User)
	}
	e.family(metricAppPending, "Resources an unfinished application still asks for (its off-switch requests).")
	seen = map[string]bool{}
	for _, x := range a.appAsks {
		if !seen[x.ID] {
			seen[x.ID] = true
			e.resources(metricAppPending, x.Pending, "app", x.ID, "queue", x.Queue, "user", x.User)
		}
	}
}

// encodedMetrics are metrics in Prometheus' text format as one gzip member (and, for the
// process's own, small metrics, as plain text too), encoded once whatever the number of scrapers.
type encodedMetrics struct {
	once  sync.Once
	plain []byte
	gz    []byte
	err   error
}

// clusterMetricsText returns the snapshot's cluster metrics, encoding them on first use.
func (s *Snapshot) clusterMetricsText() *encodedMetrics {
	v, _ := s.bodies.LoadOrStore("metrics", &encodedMetrics{})
	e := v.(*encodedMetrics)
	e.once.Do(func() {
		// Written straight into the compressor: only the compressed text is kept (a
		// 50,000-node cluster's metrics are 66 MB of text, 2.7 MB compressed); a client that
		// does not take gzip gets them decompressed as they are sent.
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
		x := expo{b: bufio.NewWriterSize(zw, 64<<10)}
		writeClusterMetrics(&x, s)
		if e.err = x.b.Flush(); e.err == nil {
			e.err = zw.Close()
		}
		e.gz = gz.Bytes()
	})
	return e
}

func writeFamilies(w io.Writer, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return fmt.Errorf("gather metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("encode metrics %s: %w", mf.GetName(), err)
		}
	}
	return nil
}

// liveMetrics are the metrics of the serve process itself: the watch's state and the Go runtime.
// They are gathered at most once per liveTTL, so that many scrapers cost one gathering.
type liveMetrics struct {
	reg      *prometheus.Registry
	duration prometheus.Histogram

	mu   sync.Mutex
	last *encodedMetrics
	at   time.Time
}

// liveTTL is how long the process's own metrics are served from one gathering.
const liveTTL = time.Second

// encoded returns the process's metrics, gathered anew when the last gathering is older than
// liveTTL.
func (lm *liveMetrics) encoded(now time.Time) (*encodedMetrics, error) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if lm.last != nil && now.Sub(lm.at) < liveTTL && now.Sub(lm.at) >= 0 {
		return lm.last, nil
	}
	e := &encodedMetrics{}
	var buf bytes.Buffer
	if err := writeFamilies(&buf, lm.reg); err != nil {
		return nil, err
	}
	e.plain = buf.Bytes()
	var err error
	if e.gz, err = gzipBytes(e.plain); err != nil {
		return nil, err
	}
	lm.last, lm.at = e, now
	return e, nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return gz.Bytes(), nil
}

func newLiveMetrics(w *Watcher) *liveMetrics {
	reg := prometheus.NewRegistry()
	lm := &liveMetrics{reg: reg, duration: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: metricPollDuration, Help: "How long one poll of the ResourceManager took (every request of it).",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})}
	w.setObserver(func(d time.Duration, _ error) { lm.duration.Observe(d.Seconds()) })
	reg.MustRegister(lm.duration, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricRMUp,
		Help: "1 when the last poll of the ResourceManager succeeded, else 0."}, func() float64 {
		if w.Status().Up {
			return 1
		}
		return 0
	}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricDataAge,
		Help: "Age of the data served: seconds since the last successful poll ended (-1 before the first)."}, func() float64 {
		s := w.Status().Snapshot
		if s == nil {
			return -1
		}
		return w.Now().Sub(s.Time).Seconds()
	}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricLastPoll,
		Help: "Unix time when the last successful poll ended (0 before the first)."}, func() float64 {
		s := w.Status().Snapshot
		if s == nil {
			return 0
		}
		return float64(s.Time.UnixNano()) / float64(time.Second)
	}))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: metricPolls,
		Help: "Polls of the ResourceManager since start."}, func() float64 { return float64(w.Status().Polls) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: metricPollFailures,
		Help: "Failed polls of the ResourceManager since start."}, func() float64 { return float64(w.Status().Failures) }))
	return lm
}
