package serve

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/yarn-er/yarn-er/records"
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

// nodeStates are the NodeManager states yarner_node_state reports, one series each (1 for the
// node's state, 0 for the others).
var nodeStates = []string{"NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING", "DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"}

// clusterCollector emits a snapshot's cluster metrics.
type clusterCollector struct{ s *Snapshot }

// Describe sends nothing: the collector is unchecked (its series depend on the cluster).
func (clusterCollector) Describe(chan<- *prometheus.Desc) {}

// label makes a label value valid UTF-8 (the RM's names are any YARN user's text).
func label(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func emitResources(ch chan<- prometheus.Metric, d *prometheus.Desc, r records.Resources, labels ...string) {
	for _, e := range r.All() {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(e.Value), append(labels, label(e.Name))...)
	}
}

// Collect sends every cluster series of the snapshot.
func (c clusterCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	nodeLabels := []string{"node", "rack", "resource"}
	nTotal := prometheus.NewDesc(metricNodeTotal, "Total amount of a resource type on a NodeManager (YARN totalResource), in the type's YARN unit.", nodeLabels, nil)
	nUsed := prometheus.NewDesc(metricNodeUsed, "Amount of a resource type allocated to containers on a NodeManager (usedResource).", nodeLabels, nil)
	nAvail := prometheus.NewDesc(metricNodeAvailable, "Amount of a resource type free on a NodeManager (availableResource).", nodeLabels, nil)
	nState := prometheus.NewDesc(metricNodeState, "NodeManager state: 1 for the node's current state, 0 for the others.", []string{"node", "state"}, nil)
	for i := range s.Nodes {
		n := &s.Nodes[i]
		id, rack := label(n.ID), label(n.Rack)
		emitResources(ch, nTotal, n.Total, id, rack)
		emitResources(ch, nUsed, n.Used, id, rack)
		emitResources(ch, nAvail, n.Available, id, rack)
		known := false
		for _, st := range nodeStates {
			v := 0.0
			if st == n.State {
				v, known = 1, true
			}
			ch <- prometheus.MustNewConstMetric(nState, prometheus.GaugeValue, v, id, st)
		}
		if !known && n.State != "" {
			ch <- prometheus.MustNewConstMetric(nState, prometheus.GaugeValue, 1, id, label(n.State))
		}
	}
	a := s.aggregates()
	nodes := prometheus.NewDesc(metricNodes, "Number of NodeManagers by state.", []string{"state"}, nil)
	for st, k := range a.nodeStates {
		ch <- prometheus.MustNewConstMetric(nodes, prometheus.GaugeValue, float64(k), label(st))
	}
	groups := []struct {
		m                   map[string]*triple
		key                 string
		total, used, avail  string
		totalHelp, usedHelp string
	}{
		{a.racks, "rack", metricRackTotal, metricRackUsed, metricRackAvailable, "Total amount of a resource type on the rack's RUNNING NodeManagers.", "Amount of a resource type allocated on the rack's RUNNING NodeManagers."},
		{a.partitions, "partition", metricPartTotal, metricPartUsed, metricPartAvailable, "Total amount of a resource type on the partition's RUNNING NodeManagers (partition \"\": the default partition).", "Amount of a resource type allocated on the partition's RUNNING NodeManagers."},
	}
	for _, g := range groups {
		dt := prometheus.NewDesc(g.total, g.totalHelp, []string{g.key, "resource"}, nil)
		du := prometheus.NewDesc(g.used, g.usedHelp, []string{g.key, "resource"}, nil)
		da := prometheus.NewDesc(g.avail, "Amount of a resource type free on the "+g.key+"'s RUNNING NodeManagers.", []string{g.key, "resource"}, nil)
		for k, t := range g.m {
			emitResources(ch, dt, t.Total, label(k))
			emitResources(ch, du, t.Used, label(k))
			emitResources(ch, da, t.Available, label(k))
		}
	}
	qUsed := prometheus.NewDesc(metricQueueUsed, "Amount of a resource type the queue's containers use.", []string{"queue", "resource"}, nil)
	qMin := prometheus.NewDesc(metricQueueGuarantee, "Resources guaranteed to the queue (CapacityScheduler effective minimum, FairScheduler minResources).", []string{"queue", "resource"}, nil)
	qMax := prometheus.NewDesc(metricQueueMax, "Most resources the queue may use (CapacityScheduler effective maximum, FairScheduler maxResources).", []string{"queue", "resource"}, nil)
	qPend := prometheus.NewDesc(metricQueuePending, "Resources the queue's applications still ask for (their off-switch requests).", []string{"queue", "resource"}, nil)
	for _, q := range s.Scheduler.Queues() {
		path := label(q.Path)
		emitResources(ch, qUsed, q.Used, path)
		minR, maxR := q.MinEffectiveCapacity, q.MaxEffectiveCapacity
		if minR.Len() == 0 {
			minR = q.MinResources
		}
		if maxR.Len() == 0 {
			maxR = q.MaxResources
		}
		emitResources(ch, qMin, minR, path)
		emitResources(ch, qMax, maxR, path)
	}
	for q, p := range a.queueAsks {
		emitResources(ch, qPend, p, label(q))
	}
	appLabels := []string{"app", "queue", "user", "resource"}
	aPend := prometheus.NewDesc(metricAppPending, "Resources an unfinished application still asks for (its off-switch requests).", appLabels, nil)
	for _, x := range a.appAsks {
		emitResources(ch, aPend, x.Pending, label(x.ID), label(x.Queue), label(x.User))
	}
	aAlloc := prometheus.NewDesc(metricAppAllocated, "Resources allocated to a running application's containers.", appLabels, nil)
	for i := range s.Apps {
		ap := &s.Apps[i]
		if ap.State.Terminal() || ap.Allocated.Len() == 0 {
			continue
		}
		emitResources(ch, aAlloc, ap.Allocated, label(ap.ID), label(ap.Queue), label(ap.User))
	}
}

// clusterMetricsText is the snapshot's cluster metrics in Prometheus' text format, encoded once
// per snapshot.
func (s *Snapshot) clusterMetricsText() ([]byte, error) {
	type encoded struct {
		b   []byte
		err error
	}
	if v, ok := s.bodies.Load("metrics"); ok {
		e := v.(*encoded)
		return e.b, e.err
	}
	reg := prometheus.NewRegistry()
	e := &encoded{}
	if e.err = reg.Register(clusterCollector{s}); e.err == nil {
		var buf bytes.Buffer
		e.err = writeFamilies(&buf, reg)
		e.b = buf.Bytes()
	}
	v, _ := s.bodies.LoadOrStore("metrics", e)
	e = v.(*encoded)
	return e.b, e.err
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
type liveMetrics struct {
	reg      *prometheus.Registry
	duration prometheus.Histogram
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
