package serve

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// Why explains, from the snapshot alone, why the application's containers are not allocated:
// the queue's limits (maximum capacity, maximum allocation, user limit, ApplicationMaster limit),
// the partition, the nodes' free resources, and which running applications hold what it needs.
// ok is false when the snapshot does not list the application.
func Why(s *Snapshot, appID string) (view.AppWhy, bool) {
	ap := s.App(appID)
	if ap == nil {
		return view.AppWhy{}, false
	}
	out := view.AppWhy{ID: ap.ID, Name: ap.Name, User: ap.User, Queue: ap.Queue, State: string(ap.State),
		Asks: []view.WhyAsk{}, Reasons: []view.WhyReason{}, Holders: []view.WhyHolder{}, NodesThatFit: []string{}}
	for _, r := range ap.ResourceRequests {
		if r.Anywhere() && r.NumContainers > 0 {
			a := view.WhyAsk{Priority: r.Priority, Containers: r.NumContainers,
				Resource: view.ResourceMap(r.Capability), Partition: r.NodeLabelExpression, PlacementConstraint: r.PlacementConstraint}
			if r.ResourceName == "*" && !r.RelaxLocality {
				a.Locations = locations(ap.ResourceRequests, r.Priority)
			}
			out.Asks = append(out.Asks, a)
		}
	}
	switch {
	case ap.State.Terminal():
		out.Summary = fmt.Sprintf("%s has ended (%s): it waits for nothing", ap.ID, ap.State)
		return out, true
	case len(out.Asks) == 0 && ap.State == records.AppRunning:
		out.Summary = fmt.Sprintf("%s runs and asks for no more containers", ap.ID)
		return out, true
	}
	out.Waiting = true
	w := &why{s: s, ap: ap, out: &out}
	w.queue = s.Scheduler.Queue(ap.Queue)
	asks := w.asks()
	for _, a := range asks {
		w.check(a)
	}
	for _, a := range out.Asks {
		w.placement(a)
	}
	w.holders(asks)
	if len(out.Reasons) == 0 {
		if ap.State != records.AppRunning && len(out.Asks) == 0 {
			out.Summary = fmt.Sprintf("%s is %s: the ResourceManager has not started its ApplicationMaster yet and reports no limit that stops it; it should start at the next scheduling round", ap.ID, ap.State)
		} else {
			out.Summary = fmt.Sprintf("%s waits for %s; no queue limit stops it and a node has room: the scheduler should allocate it at the next node heartbeat", ap.ID, asksText(out.Asks))
		}
	} else {
		out.Summary = out.Reasons[0].Message
	}
	return out, true
}

type why struct {
	s     *Snapshot
	ap    *yarn.App
	out   *view.AppWhy
	queue *yarn.Queue
	seen  map[string]bool
}

// ask is one request to explain: one container of res in partition (on locations when the
// request does not relax locality).
type ask struct {
	res       records.Resources
	n         int64
	partition string
	am        bool
	bound     bool
	locations []string
}

// locations are the racks and hosts of an application's requests at priority with containers
// still asked for, sorted: where an ask whose off-switch request does not relax locality may go.
func locations(reqs []yarn.ResourceRequest, priority int64) []string {
	out := []string{}
	for _, r := range reqs {
		if r.Priority == priority && r.ResourceName != "*" && r.ResourceName != "" && r.NumContainers > 0 && !slices.Contains(out, r.ResourceName) {
			out = append(out, r.ResourceName)
		}
	}
	slices.Sort(out)
	return out
}

// on reports whether node i of t is at one of the ask's locations (its rack, its host, or its id).
func (a ask) on(t *yarn.NodeTable, i int) bool {
	if !a.bound {
		return true
	}
	id := t.ID(i)
	host := t.Host(i)
	if host == "" {
		host, _, _ = strings.Cut(id, ":")
	}
	return slices.Contains(a.locations, t.Rack(i)) || slices.Contains(a.locations, host) || slices.Contains(a.locations, id)
}

// asks are the requests to explain: the outstanding asks, else (an application whose AM has not
// started) its ApplicationMaster, whose size the RM does not report: memory and vcores of 1.
func (w *why) asks() []ask {
	var out []ask
	for _, a := range w.out.Asks {
		p := a.Partition
		if p == "" && w.queue != nil {
			p = w.queue.DefaultNodeLabelExpression
		}
		out = append(out, ask{res: records.Resources(a.Resource), n: a.Containers, partition: p, bound: a.Locations != nil, locations: a.Locations})
	}
	if len(out) == 0 {
		out = append(out, ask{res: records.NewResources(1, 1), n: 1, am: true})
	}
	return out
}

func (w *why) reason(code, msg, fix string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[code+msg] {
		return
	}
	w.seen[code+msg] = true
	w.out.Reasons = append(w.out.Reasons, view.WhyReason{Code: code, Message: msg, Fix: fix})
}

// extended are the resource types of r beyond memory and vcores, sorted.
func extended(r records.Resources) []string {
	var out []string
	for _, e := range r.All() {
		if e.Name != records.MemoryMB && e.Name != records.VCores && e.Value > 0 {
			out = append(out, e.Name)
		}
	}
	slices.Sort(out)
	return out
}

// names are r's resource types with an amount above 0: memory and vcores first.
func names(r records.Resources) []string {
	var out []string
	for _, e := range r.All() {
		if e.Value > 0 {
			out = append(out, e.Name)
		}
	}
	return out
}

// placement explains a SchedulingRequest's wait by its placement constraint, as the ResourceManager
// writes simple ones: "notin,SCOPE,TAGS" (anti-affinity), "in,SCOPE,TAGS" (affinity), others as given.
func (w *why) placement(a view.WhyAsk) {
	pc := a.PlacementConstraint
	if pc == "" {
		return
	}
	f := strings.SplitN(pc, ",", 3)
	n := fmt.Sprintf("%d container(s) of %s", a.Containers, records.Resources(a.Resource))
	var msg, fix string
	switch {
	case len(f) == 3 && f[0] == "notin":
		msg = fmt.Sprintf("%s wait for a %s without a container tagged %s (placement constraint %s: anti-affinity, as yarn-er's placement spread: %s): the scheduler places them nowhere else, and every %s that fits has one",
			n, f[1], f[2], pc, f[1], f[1])
		fix = fmt.Sprintf("they start as containers tagged %s end or NodeManagers join; or ask for no more ranks of the role than there are %ss", f[2], f[1])
	case len(f) == 3 && f[0] == "in":
		msg = fmt.Sprintf("%s wait for a %s with a container tagged %s (placement constraint %s: affinity, as yarn-er's placement pack: %s) that has room for them",
			n, f[1], f[2], pc, f[1])
		fix = fmt.Sprintf("free room on the %s of the containers tagged %s, or ask for no more ranks than one %s holds", f[1], f[2], f[1])
	default:
		msg = fmt.Sprintf("%s wait for a node that satisfies the placement constraint %s", n, pc)
		fix = "a node that satisfies it must have room; see the application's ApplicationMaster log"
	}
	w.reason("placement-constraint", msg, fix)
}

func (w *why) check(a ask) {
	q, ap := w.queue, w.ap
	if q == nil {
		w.reason("queue-unknown", fmt.Sprintf("queue %q of %s is not in the scheduler's queues", ap.Queue, ap.ID),
			"submit to a leaf queue that `yarn-er cluster queues` lists")
		return
	}
	if q.State != "" && q.State != "RUNNING" {
		w.reason("queue-stopped", fmt.Sprintf("queue %s is %s: it starts no containers", q.Path, q.State),
			fmt.Sprintf("start the queue (yarn.scheduler.capacity.%s.state=RUNNING, then yarn rmadmin -refreshQueues)", q.Path))
	}
	// The partition: a queue reaches only its accessible node labels.
	if a.partition != "" && q.NodeLabels != nil && !slices.Contains(q.NodeLabels, "*") && !slices.Contains(q.NodeLabels, a.partition) {
		w.reason("queue-partition", fmt.Sprintf("queue %s cannot use partition %s (its accessible node labels: %s)", q.Path, a.partition, strings.Join(q.NodeLabels, ", ")),
			fmt.Sprintf("ask for a partition the queue reaches, or add %s to yarn.scheduler.capacity.%s.accessible-node-labels", a.partition, q.Path))
	}
	// The largest container the queue allows.
	for _, name := range names(a.res) {
		if limit, ok := q.MaximumAllocation.Quantity(name); ok && limit.Value < a.res.Value(name) {
			w.reason("queue-max-allocation", fmt.Sprintf("each container asks %d %s but queue %s allows at most %d per container", a.res.Value(name), name, q.Path, limit.Value),
				fmt.Sprintf("ask for at most %d %s per container, or raise the queue's maximum-allocation", limit.Value, name))
		}
	}
	// The queue's maximum: used + one more container above it.
	maxR := q.MaxEffectiveCapacity
	if maxR.Len() == 0 {
		maxR = q.MaxResources
	}
	if p := partitionMax(q, a.partition); p.Len() > 0 {
		maxR = p
	}
	for _, name := range names(a.res) {
		limit, ok := maxR.Quantity(name)
		if !ok || limit.Value == math.MaxInt64 {
			continue
		}
		used := q.Used.Value(name)
		if used+a.res.Value(name) > limit.Value {
			w.reason("queue-max", fmt.Sprintf("queue %s is full for %s: its containers use %d of its maximum %d, and one more container needs %d",
				q.Path, name, used, limit.Value, a.res.Value(name)),
				fmt.Sprintf("wait for the applications holding %s in %s to finish (see holders), or raise the queue's maximum-capacity", name, q.Path))
		}
	}
	// The user limit.
	for _, u := range q.Users {
		if u.Name != ap.User || u.Limit.Len() == 0 {
			continue
		}
		for _, name := range names(a.res) {
			limit, ok := u.Limit.Quantity(name)
			if !ok {
				continue
			}
			if u.Used.Value(name)+a.res.Value(name) > limit.Value {
				w.reason("user-limit", fmt.Sprintf("user %s is at the user limit of queue %s for %s: uses %d of %d", ap.User, q.Path, name, u.Used.Value(name), limit.Value),
					fmt.Sprintf("raise user-limit-factor or minimum-user-limit-percent of %s, or wait for the user's other applications", q.Path))
			}
		}
	}
	// The ApplicationMaster limit: an application not yet running waits for it.
	if a.am && q.AMResourceLimit.Len() > 0 && q.UsedAMResource.Value(records.MemoryMB) >= q.AMResourceLimit.Value(records.MemoryMB) {
		w.reason("am-limit", fmt.Sprintf("queue %s's ApplicationMasters use %d of their %d MiB (maximum-am-resource-percent): no new application starts",
			q.Path, q.UsedAMResource.Value(records.MemoryMB), q.AMResourceLimit.Value(records.MemoryMB)),
			fmt.Sprintf("raise yarn.scheduler.capacity.%s.maximum-am-resource-percent, or wait for running applications", q.Path))
	}
	w.nodes(a)
}

// partitionMax is the queue's effective maximum in a named partition, nil for the default one.
func partitionMax(q *yarn.Queue, partition string) records.Resources {
	if partition == "" {
		return records.Resources{}
	}
	if p := q.Partition(partition); p != nil {
		return p.EffectiveMax
	}
	return records.Resources{}
}

// fits reports whether one container of want fits in have.
func fits(want, have records.Resources) bool {
	for _, name := range names(want) {
		if have.Value(name) < want.Value(name) {
			return false
		}
	}
	return true
}

func (w *why) nodes(a ask) {
	var inPartition, offer, freeNow int
	var racks []string // the racks of the partition's RUNNING nodes
	t := w.s.Nodes
	for i := range t.Len() {
		if t.State(i) != "RUNNING" || partitionOf(t.Labels(i)) != a.partition {
			continue
		}
		if rack := t.Rack(i); !slices.Contains(racks, rack) {
			racks = append(racks, rack)
		}
		if !a.on(t, i) {
			continue
		}
		inPartition++
		if !fits(a.res, t.Total(i)) {
			continue
		}
		offer++
		if fits(a.res, t.Available(i)) {
			freeNow++
		} else if id := t.ID(i); !slices.Contains(w.out.NodesThatFit, id) {
			w.out.NodesThatFit = append(w.out.NodesThatFit, id)
		}
	}
	part := "the default partition"
	if a.partition != "" {
		part = "partition " + a.partition
	}
	if a.bound {
		slices.Sort(racks)
		where := strings.Join(a.locations, ", ")
		if inPartition == 0 {
			msg := fmt.Sprintf("%d container(s) of %s may run only on %s (the request for * has relaxLocality false, as yarn-er's placement racks asks: the scheduler places them nowhere else), and no RUNNING node of %s is there",
				a.n, a.res, where, part)
			if len(a.locations) == 0 {
				msg = fmt.Sprintf("%d container(s) of %s do not relax locality (relaxLocality false on *) but ask for no rack or host: the scheduler places them nowhere", a.n, a.res)
			}
			if len(racks) > 0 {
				msg += fmt.Sprintf("; the RUNNING nodes are on %s", strings.Join(racks, ", "))
			}
			w.reason("no-node-on-rack", msg,
				"start NodeManagers there, or kill the application (yarn-er app kill) and submit it with racks `yarn-er cluster nodes` lists")
			return
		}
		part += " on " + where
	}
	switch {
	case inPartition == 0:
		w.reason("no-node-in-partition", fmt.Sprintf("no RUNNING node is in %s", part),
			"label nodes with the partition, or ask for a partition that has nodes")
	case offer == 0:
		w.reason("no-node-offers", fmt.Sprintf("no RUNNING node of %s is large enough for one container of %s, even empty", part, a.res),
			"ask for less per container (fewer GPUs per TaskManager), or add nodes that offer it")
	case freeNow == 0:
		w.reason("no-free-node", fmt.Sprintf("no RUNNING node of %s has %s free now; %d would fit once their containers end", part, strings.Join(extendedOr(a.res), ", "), offer),
			"wait for the applications holding them to finish (see holders), or add nodes")
	}
}

// extendedOr is what an ask needs, described: its extended types with amounts, else the vector.
func extendedOr(r records.Resources) []string {
	var out []string
	for _, n := range extended(r) {
		out = append(out, fmt.Sprintf("%d %s", r.Value(n), n))
	}
	if len(out) == 0 {
		out = append(out, r.String())
	}
	return out
}

// holders lists the running applications holding what the asks need: an extended type the asks
// need (GPUs), else memory; those in the same queue first, then by amount.
func (w *why) holders(asks []ask) {
	var want []string
	for _, a := range asks {
		for _, n := range extended(a.res) {
			if !slices.Contains(want, n) {
				want = append(want, n)
			}
		}
	}
	if len(want) == 0 {
		want = []string{records.MemoryMB}
	}
	type held struct {
		h      view.WhyHolder
		amount int64
	}
	var hs []held
	for i := range w.s.Apps {
		x := &w.s.Apps[i]
		if x.ID == w.ap.ID || x.State.Terminal() || x.Allocated.Len() == 0 {
			continue
		}
		var amount int64
		for _, n := range want {
			amount += x.Allocated.Value(n)
		}
		if amount <= 0 {
			continue
		}
		hs = append(hs, held{h: view.WhyHolder{ID: x.ID, Name: x.Name, User: x.User, Queue: x.Queue,
			Allocated: view.ResourceMap(x.Allocated), SameQueue: x.Queue == w.ap.Queue}, amount: amount})
	}
	slices.SortStableFunc(hs, func(a, b held) int {
		if a.h.SameQueue != b.h.SameQueue {
			if a.h.SameQueue {
				return -1
			}
			return 1
		}
		switch {
		case a.amount > b.amount:
			return -1
		case a.amount < b.amount:
			return 1
		}
		return strings.Compare(a.h.ID, b.h.ID)
	})
	for _, x := range hs {
		w.out.Holders = append(w.out.Holders, x.h)
	}
	if len(w.out.Holders) > 0 && len(w.out.Reasons) > 0 {
		first := w.out.Holders[0]
		w.out.Reasons[0].Fix += fmt.Sprintf("; %s (%s, user %s, queue %s) holds %s", first.ID, first.Name, first.User, first.Queue, records.Resources(first.Allocated))
	}
}

// asksText describes the asks: "2 × <memory-mb=1024Mi, vcores=1, yarn.io/gpu=1>".
func asksText(asks []view.WhyAsk) string {
	var parts []string
	for _, a := range asks {
		parts = append(parts, fmt.Sprintf("%d × %s", a.Containers, records.Resources(a.Resource)))
	}
	return strings.Join(parts, ", ")
}

func (h *Handler) appWhy(r *http.Request, s *Snapshot) (string, func() any, error) {
	ap, err := appFrom(r, s)
	if err != nil {
		return "", nil, err
	}
	return "why/" + ap.ID, func() any {
		out, _ := Why(s, ap.ID)
		return out
	}, nil
}
