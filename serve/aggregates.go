package serve

import (
	"github.com/yarn-er/yarn-er/records"
)

// triple is total, used and available of a group of nodes.
type triple struct {
	Total, Used, Available records.Resources
}

func (t *triple) add(total, used, available records.Resources) {
	t.Total = addKeep(t.Total, total)
	t.Used = addKeep(t.Used, used)
	t.Available = addKeep(t.Available, available)
}

// addKeep is a + b (saturating), or a when b has an amount in a unit Hadoop does not know.
func addKeep(a, b records.Resources) records.Resources {
	if s, err := a.Add(b); err == nil {
		return s
	}
	return a
}

// appAsk is an application's outstanding asks (what it still asks for anywhere).
type appAsk struct {
	ID, Queue, User, State string
	Pending                records.Resources
}

// aggregates are what /metrics and the GPU map derive from a snapshot, computed once per
// snapshot: sums by rack and partition, node counts by state, pending asks by queue and
// application.
type aggregates struct {
	racks      map[string]*triple
	partitions map[string]*triple
	nodeStates map[string]int
	queueAsks  map[string]records.Resources
	appAsks    []appAsk
}

// partitionOf is a node's partition: its (single) node label, "" for the default partition.
func partitionOf(labels []string) string {
	if len(labels) > 0 {
		return labels[0]
	}
	return ""
}

// aggregates returns the snapshot's aggregates, computing them on first use.
func (s *Snapshot) aggregates() *aggregates {
	s.aggOnce.Do(func() {
		a := &aggregates{racks: map[string]*triple{}, partitions: map[string]*triple{}, nodeStates: map[string]int{},
			queueAsks: map[string]records.Resources{}}
		t := s.Nodes
		_, unique := s.nodeIndex()
		for _, i32 := range unique {
			i := int(i32)
			state := t.State(i)
			a.nodeStates[state]++
			if state != "RUNNING" {
				// Only RUNNING nodes offer resources; the others' totals would count GPUs no one gets.
				continue
			}
			total, used, avail := t.Total(i), t.Used(i), t.Available(i)
			for _, group := range []struct {
				m   map[string]*triple
				key string
			}{{a.racks, t.Rack(i)}, {a.partitions, partitionOf(t.Labels(i))}} {
				tr := group.m[group.key]
				if tr == nil {
					tr = &triple{}
					group.m[group.key] = tr
				}
				tr.add(total, used, avail)
			}
		}
		for i := range s.Apps {
			ap := &s.Apps[i]
			if ap.State.Terminal() {
				continue
			}
			p, err := ap.PendingAny()
			if err != nil || p.Len() == 0 {
				continue
			}
			a.appAsks = append(a.appAsks, appAsk{ID: ap.ID, Queue: ap.Queue, User: ap.User, State: string(ap.State), Pending: p})
			a.queueAsks[ap.Queue] = addKeep(a.queueAsks[ap.Queue], p)
		}
		s.agg = a
	})
	return s.agg
}
