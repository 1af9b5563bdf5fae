package serve

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// maxHolderApps bounds the applications whose containers one poll reads for the GPU map.
const maxHolderApps = 200

// pollContainers reads the live containers of the running applications that hold the resource
// (at most maxHolderApps of them), so that the GPU map can say which application holds which
// node's devices. Errors leave an application out: the map then shows its devices as "?".
func pollContainers(ctx context.Context, c AppDetails, apps []yarn.App, resource string) map[string][]yarn.AppContainer {
	out := map[string][]yarn.AppContainer{}
	for i := range apps {
		ap := &apps[i]
		if ap.State != records.AppRunning || ap.Allocated.Value(resource) <= 0 {
			continue
		}
		if len(out) == maxHolderApps || ctx.Err() != nil {
			break
		}
		atts, err := c.AppAttempts(ctx, ap.ID)
		if err != nil || len(atts) == 0 || atts[len(atts)-1].AppAttemptID == "" {
			continue
		}
		cs, err := c.AttemptContainers(ctx, ap.ID, atts[len(atts)-1].AppAttemptID)
		if err != nil {
			continue
		}
		out[ap.ID] = cs
	}
	return out
}

// GPUMapOf builds the map of resource from the snapshot.
func GPUMapOf(s *Snapshot, resource string) view.GPUMap {
	out := view.GPUMap{Resource: resource, Nodes: []view.GPUMapNode{}, Queues: []view.GPUMapQueue{}, Apps: []view.GPUMapApp{}}
	// Which application holds how many devices on which node.
	byNode := map[string][]string{}
	for _, id := range sortedKeys(s.Containers) {
		for _, c := range s.Containers[id] {
			for range c.Resource.Value(resource) {
				byNode[c.NodeID] = append(byNode[c.NodeID], id)
			}
		}
	}
	t := s.Nodes
	for i := range t.Len() {
		tot := t.Total(i)
		total := tot.Value(resource)
		if total <= 0 {
			continue
		}
		used := t.Used(i).Value(resource)
		id := t.ID(i)
		mn := view.GPUMapNode{ID: id, Rack: t.Rack(i), State: t.State(i), Partition: partitionOf(t.Labels(i)), Total: total, Used: used,
			Devices: make([]string, 0, min(total, 1024))}
		holders := byNode[id]
		for d := int64(0); d < total && d < 1024; d++ {
			switch {
			case d < int64(len(holders)):
				mn.Devices = append(mn.Devices, holders[d])
			case d < used:
				mn.Devices = append(mn.Devices, "?")
			default:
				mn.Devices = append(mn.Devices, "")
			}
		}
		out.Nodes = append(out.Nodes, mn)
	}
	slices.SortFunc(out.Nodes, func(a, b view.GPUMapNode) int { return strings.Compare(a.ID, b.ID) })
	a := s.aggregates()
	for _, q := range s.Scheduler.Queues() {
		if !q.Leaf {
			continue
		}
		maxR := q.MaxEffectiveCapacity
		if maxR.Len() == 0 {
			maxR = q.MaxResources
		}
		mq := view.GPUMapQueue{Path: q.Path, Used: q.Used.Value(resource), Max: -1, Pending: a.queueAsks[q.Path].Value(resource)}
		if v, ok := maxR.Get(resource); ok && v != math.MaxInt64 {
			mq.Max = v
		}
		if mq.Pending == 0 {
			mq.Pending = a.queueAsks[q.Name].Value(resource)
		}
		out.Queues = append(out.Queues, mq)
	}
	pending := map[string]int64{}
	for _, x := range a.appAsks {
		pending[x.ID] = x.Pending.Value(resource)
	}
	for i := range s.Apps {
		ap := &s.Apps[i]
		if ap.State.Terminal() {
			continue
		}
		held := ap.Allocated.Value(resource)
		p := pending[ap.ID]
		waiting := p > 0 || ap.State != records.AppRunning
		if held <= 0 && !waiting {
			continue
		}
		ma := view.GPUMapApp{ID: ap.ID, Name: ap.Name, User: ap.User, Queue: ap.Queue, State: string(ap.State), Held: held, Pending: p}
		if waiting {
			if w, ok := Why(s, ap.ID); ok && w.Waiting {
				ma.Why = w.Summary
			}
		}
		out.Apps = append(out.Apps, ma)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (h *Handler) gpuMap(r *http.Request, s *Snapshot) (string, func() any, error) {
	res := r.URL.Query().Get("resource")
	if res == "" {
		res = records.GPU
	}
	// Cached for the default type only: a client's arbitrary ?resource= values must not grow the
	// snapshot's cache.
	key := ""
	if res == records.GPU {
		key = "gpumap"
	}
	return key, func() any { return GPUMapOf(s, res) }, nil
}
