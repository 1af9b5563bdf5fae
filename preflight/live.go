package preflight

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// liveData is what the ResourceManager said.
type liveData struct {
	rm      string // base URL of the RM that answered (or the first configured one)
	info    *yarn.ClusterInfo
	infoErr error

	// nodeCount is how many nodes the RM lists (all states but DECOMMISSIONED); only the
	// RUNNING ones are kept (runningNodes).
	nodeCount int
	nodesErr  error
	sched     *yarn.Scheduler
	schedErr  error
	rmConf    *yarn.RMConf
	confErr   error
	// overview is /ws/v1/cluster/scheduler-overview (Hadoop 3.4+); nil when the RM does not serve
	// it (404 before 3.4) or it failed (overviewErr).
	overview    *yarn.SchedulerOverview
	overviewErr error
	// labels are the cluster's node labels with their exclusivity (get-node-labels); nil when
	// the RM did not answer (labelsErr).
	labels    []yarn.NodeLabel
	labelsErr error

	// known are the resource types the RM knows, and where that was learnt; nil when unknown.
	known     map[string]bool
	knownFrom string
	knownErr  error

	// runningNodes are the RUNNING nodes the RM lists, in its order: several checks ask, and on
	// a large cluster each copy of the list would cost megabytes. Nothing may change them.
	runningNodes []node
}

// node is a RUNNING node as the checks read it: its place in the RM's node table, from which its
// labels and resources are read when asked.
type node struct {
	t *yarn.NodeTable
	i int
}

// labels are the node's labels (shared: not to be changed).
func (n node) labels() []string { return n.t.Labels(n.i) }

// rack is the node's rack.
func (n node) rack() string { return n.t.Rack(n.i) }

// total is the node's total resource.
func (n node) total() records.Resources { return n.t.Total(n.i) }

// available is the node's available resource.
func (n node) available() records.Resources { return n.t.Available(n.i) }

// gatherLive asks the RM for everything the live checks need: /info first (reachability and the
// active RM), then /nodes, /scheduler, /scheduler-overview and /conf in parallel.
func gatherLive(ctx context.Context, c *yarn.Client, log *slog.Logger, allowNewApp bool) *liveData {
	d := &liveData{}
	if addrs := c.Addresses(); len(addrs) > 0 {
		d.rm = addrs[0]
	}
	d.info, d.infoErr = c.ClusterInfo(ctx)
	if d.infoErr != nil {
		log.Debug("cluster info failed", "err", d.infoErr)
		return d
	}
	if d.info.RMAddress != "" {
		d.rm = d.info.RMAddress
	}
	var wg sync.WaitGroup
	var nodes *yarn.NodeTable
	wg.Go(func() { nodes, d.nodesErr = c.NodeTable(ctx, yarn.NodesQuery{}, 0) })
	wg.Go(func() { d.sched, d.schedErr = c.Scheduler(ctx) })
	wg.Go(func() { d.rmConf, d.confErr = c.Conf(ctx) })
	wg.Go(func() { d.overview, d.overviewErr = c.SchedulerOverview(ctx) })
	wg.Go(func() { d.labels, d.labelsErr = c.NodeLabels(ctx) })
	wg.Wait()
	d.nodeCount = nodes.Len()
	log.Debug("cluster read", "nodes", nodes.Len(), "nodesErr", d.nodesErr, "schedErr", d.schedErr, "confErr", d.confErr,
		"overview", d.overview != nil, "overviewErr", d.overviewErr)
	d.learnTypes(ctx, c, allowNewApp, nodes)
	// The list is read into a compact table as it streams; the checks read the RUNNING nodes'
	// labels and resources from it (no list of records is built: 50,000 of them are some 40 MB).
	running := 0
	for i := range nodes.Len() {
		if nodes.State(i) == "RUNNING" {
			running++
		}
	}
	if running > 0 {
		d.runningNodes = make([]node, 0, running)
		for i := range nodes.Len() {
			if nodes.State(i) == "RUNNING" {
				d.runningNodes = append(d.runningNodes, node{nodes, i})
			}
		}
	}
	return d
}

// learnTypes finds the resource types the RM knows: every ResourceInfo lists all of them (a
// GPU-less node shows yarn.io/gpu with value 0), so the nodes' totals, the scheduler's maximum
// allocation and the scheduler overview tell; new-application's maximum-resource-capability is the
// last resort (it uses up an application id).
func (d *liveData) learnTypes(ctx context.Context, c *yarn.Client, allowNewApp bool, nodes *yarn.NodeTable) {
	known := map[string]bool{}
	var from []string
	var entries []records.Resource
	for i := range nodes.Len() {
		entries = nodes.Total(i).AppendTo(entries[:0])
		for _, e := range entries {
			known[e.Name] = true
		}
	}
	if len(known) > 0 {
		from = append(from, "/ws/v1/cluster/nodes")
	}
	if d.sched != nil && d.sched.MaximumAllocation.Len() > 0 {
		for _, e := range d.sched.MaximumAllocation.All() {
			known[e.Name] = true
		}
		from = append(from, "/ws/v1/cluster/scheduler")
	}
	if d.overview != nil && (d.overview.MaximumAllocation.Len() > 0 || len(d.overview.ResourceTypes) > 0) {
		for _, e := range d.overview.MaximumAllocation.All() {
			known[e.Name] = true
		}
		for _, name := range d.overview.ResourceTypes {
			known[name] = true
		}
		from = append(from, pathOverview)
	}
	if len(known) == 0 && allowNewApp {
		app, err := c.NewApplication(ctx)
		if err != nil {
			d.knownErr = err
			return
		}
		for _, e := range app.MaximumResourceCapability.All() {
			known[e.Name] = true
		}
		from = append(from, "new-application (used up "+app.ID+")")
	}
	if len(known) == 0 {
		d.knownErr = errors.Join(d.nodesErr, d.schedErr)
		return
	}
	d.known, d.knownFrom = known, strings.Join(from, " and ")
}

// pathOverview is the RM endpoint of the effective allocations, for messages.
const pathOverview = "/ws/v1/cluster/scheduler-overview"

// effectiveMax returns the scheduler's effective maximum allocation (the configured maximum capped
// by the largest NodeManager), which the RM checks container requests against; nil when the RM
// does not report it (before Hadoop 3.4): the empty vector.
func (d *liveData) effectiveMax() records.Resources {
	if d.usable() == nil || d.overview == nil {
		return records.Resources{}
	}
	return d.overview.MaximumAllocation
}

// usable returns d when the RM answered, else nil.
func (d *liveData) usable() *liveData {
	if d == nil || d.infoErr != nil {
		return nil
	}
	return d
}

// knownTypes returns the types the RM knows, nil when that is not known.
func (d *liveData) knownTypes() map[string]bool {
	if d.usable() == nil {
		return nil
	}
	return d.known
}

// running returns the RUNNING nodes.
func (d *liveData) running() []node { return d.runningNodes }

// nodesOffering counts the RUNNING nodes whose total has more than 0 of t.
func (d *liveData) nodesOffering(t string) int {
	if d.usable() == nil {
		return 0
	}
	n := 0
	for _, nd := range d.running() {
		if nd.total().Value(t) > 0 {
			n++
		}
	}
	return n
}

// reachableCheck reports cluster.reachable: the ResourceManager answers /ws/v1/cluster/info.
func (f *facts) reachableCheck(_ context.Context, out *results) {
	live := f.live
	if live == nil {
		out.skip("%s", f.liveSkipReason())
		return
	}
	if live.infoErr != nil {
		out.fail(live.rm, reachFix(live.infoErr), "the ResourceManager did not answer: %v", live.infoErr)
		return
	}
	info := live.info
	out.pass(live.rm, "ResourceManager %s answers (state %s, HA state %s)", live.rm, orUnknown(info.State), orUnknown(info.HAState))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// reachFix says how to repair a failed connection to the RM.
func reachFix(err error) string {
	switch {
	case errors.Is(err, yarn.ErrUnauthorized), errors.Is(err, yarn.ErrForbidden):
		return "authenticate: pass --user (simple authentication) or kinit / --keytab (Kerberos), as the cluster requires"
	case errors.Is(err, yarn.ErrAuthentication):
		return "fix the credentials: a user name for simple authentication, or a valid Kerberos ticket or keytab"
	case errors.Is(err, yarn.ErrNoActiveRM):
		return "wait for a ResourceManager to become active, or check the HA setup (yarn rmadmin -getAllServiceState)"
	case errors.Is(err, yarn.ErrTimeout):
		return "check the network path to the ResourceManager, or raise the timeout"
	}
	return "check --rm (or yarn.resourcemanager.webapp.address in the Hadoop configuration) and that the ResourceManager runs"
}

// versionCheck reports cluster.version: Hadoop 3.1 is the first with GPU and FPGA support.
func (f *facts) versionCheck(_ context.Context, out *results) {
	if !f.needsLive(out) {
		return
	}
	live := f.live
	raw := live.info.HadoopVersion
	if raw == "" {
		raw = live.info.ResourceManagerVersion
	}
	v, err := ParseHadoopVersion(raw)
	if err != nil {
		out.warn(live.rm, "check that the cluster runs Hadoop 3.1 or later", "cannot tell the Hadoop version: %v", err)
		return
	}
	if v.Less(HadoopVersion{Major: 3, Minor: 1}) {
		out.fail(live.rm, "upgrade the cluster to Hadoop 3.1 or later",
			"the cluster runs Hadoop %s: resource types need 3.0 and YARN's GPU/FPGA support 3.1, so Flink skips its external resources (\"The underlying Yarn version does not support external resources.\") or fails", raw)
		return
	}
	out.pass(live.rm, "Hadoop %s", raw)
}

// typeUnknownCheck reports cluster.type-unknown for each requested type the RM does not know.
func (f *facts) typeUnknownCheck(_ context.Context, out *results) {
	if !f.needsLive(out) {
		return
	}
	live := f.live
	ext := f.extendedRequest()
	if len(ext) == 0 {
		out.pass(live.rm, "no resource type besides memory-mb and vcores is requested")
		return
	}
	if live.known == nil {
		out.skip("cannot tell the ResourceManager's resource types: %v", orNone(live.knownErr))
		return
	}
	knownList := slices.Sorted(maps.Keys(live.known))
	var fine []string
	for _, res := range ext {
		if live.known[res.Name] {
			fine = append(fine, res.Name)
			continue
		}
		fix := fmt.Sprintf("declare %s in yarn.resource-types (resource-types.xml) on the ResourceManager and the NodeManagers, restart them, and offer it on the NodeManagers", res.Name)
		if f.in.Container != nil {
			// yarn-er's ApplicationMaster sends the request as it is: the RM drops the type.
			out.fail(live.rm, fix,
				"the ResourceManager at %s does not know resource type '%s' (it knows %s, from %s): it drops the type from requests (\"Got unknown resource type: %s; skipping\"), so %s get no %s",
				live.rm, res.Name, strings.Join(knownList, ", "), live.knownFrom, res.Name, f.subj.many, f.resourceName(res.Name))
			continue
		}
		// Flink's resource manager compares the request with the maximum the RM reports at
		// registration and refuses it (TaskExecutorProcessSpecContainerResourcePriorityAdapter).
		out.fail(live.rm, fix,
			"the ResourceManager at %s does not know resource type '%s' (it knows %s, from %s): Flink's resource manager refuses to request TaskManagers (\"External resource %s is not supported by the Yarn cluster.\"), so no TaskManager starts and the job fails for want of slots (NoResourceAvailableException)",
			live.rm, res.Name, strings.Join(knownList, ", "), live.knownFrom, res.Name)
	}
	if len(fine) > 0 {
		out.pass(live.rm, "the ResourceManager knows %s (from %s)", strings.Join(fine, ", "), live.knownFrom)
	}
}

func orNone(err error) string {
	if err == nil {
		return "no node and no scheduler lists them"
	}
	return err.Error()
}

// request returns the TaskManager container as the RM will see it: only the types it knows (it
// drops the others, which cluster.type-unknown reports), memory and vcores rounded up to multiples
// of the CapacityScheduler's minimum allocation when the Hadoop configuration gives it. The note
// says what was changed.
func (f *facts) request() (req []records.Resource, note string) {
	var dropped, rounded []string
	for _, res := range f.tr.Resource.All() {
		if known := f.live.knownTypes(); known != nil && !known[res.Name] {
			dropped = append(dropped, res.Name)
			continue
		}
		if res.Value <= 0 {
			continue
		}
		if f.types != nil && (res.Name == records.MemoryMB || res.Name == records.VCores) && f.capacityScheduler() {
			if rt, ok := f.types.Lookup(res.Name); ok && rt.Minimum > 0 && res.Value%rt.Minimum != 0 {
				v := (res.Value/rt.Minimum + 1) * rt.Minimum
				rounded = append(rounded, fmt.Sprintf("%s %d → %d (a multiple of the minimum allocation %d)", res.Name, res.Value, v, rt.Minimum))
				res.Value = v
			}
		}
		req = append(req, res)
	}
	var notes []string
	if len(rounded) > 0 {
		notes = append(notes, "normalized "+strings.Join(rounded, ", "))
	}
	if len(dropped) > 0 {
		notes = append(notes, "without "+strings.Join(dropped, ", ")+", which the ResourceManager does not know: see cluster.type-unknown")
	}
	return req, strings.Join(notes, "; ")
}

// capacityScheduler reports whether the RM runs the CapacityScheduler (live, else from the files,
// else Hadoop 3's default).
func (f *facts) capacityScheduler() bool {
	if l := f.live.usable(); l != nil && l.sched != nil && kindOfType(l.sched.Type) != "" {
		return kindOfType(l.sched.Type) == schedCapacity
	}
	if f.in.Hadoop != nil {
		if p, ok := f.in.Hadoop.Lookup(keySchedulerClass); ok {
			return kindOfClass(p.Value) == schedCapacity
		}
	}
	return true
}

// formatRequest renders a request like a Hadoop Resource: <memory-mb:4096, vcores:4, ...>.
func formatRequest(req []records.Resource) string {
	var v records.Resources
	for _, r := range req {
		v.Set(r.Name, r.Quantity())
	}
	return v.String()
}

// fitFacts are the TaskManager container as the scheduler sees it and the RUNNING nodes of its
// partition, packed once for cluster.no-node-fits and cluster.capacity.
type fitFacts struct {
	// req is the request (normalized); empty when the container could not be computed.
	req []records.Resource
	// shown renders req for messages, with its note and partition scope.
	shown   string
	tmLabel labelChoice
	running []node
	// fit is running packed with req (when running is not empty).
	fit packing
}

// tmFit packs the RUNNING nodes of the TaskManagers' partition on first use.
func (f *facts) tmFit() *fitFacts {
	if f.fit != nil {
		return f.fit
	}
	ff := &fitFacts{}
	f.fit = ff
	req, note := f.request()
	if len(req) == 0 {
		return ff
	}
	ff.req = req
	ff.shown = formatRequest(req)
	if note != "" {
		ff.shown += " (" + note + ")"
	}
	ff.tmLabel = f.tmLabel()
	var scope string
	ff.running, scope = f.partitionNodes(ff.tmLabel.label)
	if scope != "" {
		ff.shown += " " + scope
	}
	if len(ff.running) > 0 {
		ff.fit = packCluster(ff.running, req)
	}
	return ff
}

// fitCheckable starts cluster.no-node-fits and cluster.capacity: it skips when the nodes or the
// container are not known, and returns the packing otherwise.
func (f *facts) fitCheckable(out *results) (*fitFacts, bool) {
	if !f.needsLive(out) {
		return nil, false
	}
	if f.live.nodesErr != nil {
		out.skip("cannot list the nodes: %v", f.live.nodesErr)
		return nil, false
	}
	ff := f.tmFit()
	if len(ff.req) == 0 {
		out.skip("the %s could not be computed", f.subj.container)
		return nil, false
	}
	return ff, true
}

// noNodeFitsCheck reports cluster.no-node-fits: some RUNNING node can hold one TaskManager
// container, all resources at once.
func (f *facts) noNodeFitsCheck(_ context.Context, out *results) {
	ff, ok := f.fitCheckable(out)
	if !ok {
		return
	}
	live, req, shown, tmLabel, running, fit := f.live, ff.req, ff.shown, ff.tmLabel, ff.running, ff.fit
	switch {
	case tmLabel.label != "" && len(running) == 0:
		msg := fmt.Sprintf("%s = %s: no RUNNING node carries the label (see %s)", tmLabel.key, tmLabel.label, IDNodeLabel)
		fix := fmt.Sprintf("label NodeManagers with %s (yarn rmadmin -replaceLabelsOnNode), or change %s", tmLabel.label, tmLabel.key)
		out.fail(tmLabel.src, fix, "%s: no %s can start", msg, f.subj.container)
	case len(running) == 0 && len(live.running()) > 0:
		fix := fmt.Sprintf("ask for a node label (%s) the queue may use, or make the labels non-exclusive (yarn rmadmin -addToClusterNodeLabels \"<label>(exclusive=false)\")", keyTMNodeLabel)
		out.fail(live.rm, fix, "every RUNNING node carries an exclusive node label, and the %s %s asks for none: it can go to no node (see %s)", f.subj.container, formatRequest(req), IDNodeLabel)
	case len(running) == 0:
		fix := "start NodeManagers, or check why they are not RUNNING (yarn node -list -all)"
		out.fail(live.rm, fix, "no RUNNING NodeManager (%d nodes in other states): no container can start", live.nodeCount)
	case fit.nodesFitting == 0:
		out.fail(live.rm, noFitFix(f.subj, req, fit),
			"no RUNNING node can hold one %s %s, all resources at once (%d RUNNING nodes; largest per resource: %s)",
			f.subj.container, shown, len(running), fit.largest(req))
	default:
		out.pass(live.rm, "%d of %d RUNNING nodes can hold a %s %s", fit.nodesFitting, len(running), f.subj.container, shown)
	}
}

// capacityCheck reports cluster.capacity: how many TaskManager containers fit now and on an empty
// cluster, beside the JobManager's.
func (f *facts) capacityCheck(_ context.Context, out *results) {
	ff, ok := f.fitCheckable(out)
	if !ok {
		return
	}
	live, req, shown, tmLabel, running, fit := f.live, ff.req, ff.shown, ff.tmLabel, ff.running, ff.fit
	switch {
	case tmLabel.label != "" && len(running) == 0:
		msg := fmt.Sprintf("%s = %s: no RUNNING node carries the label (see %s)", tmLabel.key, tmLabel.label, IDNodeLabel)
		fix := fmt.Sprintf("label NodeManagers with %s (yarn rmadmin -replaceLabelsOnNode), or change %s", tmLabel.label, tmLabel.key)
		out.fail(tmLabel.src, fix, "%s: 0 %s %s fit", msg, f.subj.containers, formatRequest(req))
		return
	case len(running) == 0 && len(live.running()) > 0:
		fix := fmt.Sprintf("ask for a node label (%s) the queue may use, or make the labels non-exclusive (yarn rmadmin -addToClusterNodeLabels \"<label>(exclusive=false)\")", keyTMNodeLabel)
		out.fail(live.rm, fix, "0 %s %s fit: every RUNNING node carries an exclusive node label", f.subj.containers, formatRequest(req))
		return
	case len(running) == 0:
		fix := "start NodeManagers, or check why they are not RUNNING (yarn node -list -all)"
		out.fail(live.rm, fix, "no RUNNING NodeManager: 0 %s %s fit", f.subj.containers, shown)
		return
	}

	want := f.in.Containers
	// The JobManager (Flink's ApplicationMaster) needs a container of its own on the same cluster.
	besides := ""
	if f.jm != nil {
		jmReq := f.normalized(f.jm.Request())
		jmShown := formatRequest(jmReq)
		wj := packWithJobManager(running, req, jmReq)
		if jmLabel := f.jmLabel(); jmLabel.label != tmLabel.label {
			// The JobManager goes to another partition: it takes nothing from the TaskManagers'.
			jmNodes, _ := f.partitionNodes(jmLabel.label)
			wj = withJobManager{now: -1, empty: -1}
			for _, n := range jmNodes {
				if _, ok := minus(n.total(), jmReq); ok {
					wj.empty = fit.empty
				}
				if _, ok := minus(n.available(), jmReq); ok && n.available().Len() > 0 {
					wj.now = fit.now
				}
			}
		}
		switch {
		case wj.empty < 0:
			out.fail(live.rm, fmt.Sprintf("give the JobManager less memory (%s) or vcores (%s), or add larger NodeManagers", profile.KeyJMProcessSize, profile.KeyAppMasterVCores),
				"the JobManager container %s fits on no RUNNING node, not even an empty one: the application never starts", jmShown)
			return
		case wj.now < 0:
			out.fail(live.rm, "wait for running applications to finish, or free resources on the nodes",
				"the JobManager container %s fits on no RUNNING node now (%d %s %s fit beside it on an empty cluster)", jmShown, wj.empty, f.subj.containers, shown)
			return
		}
		fit.now, fit.empty = wj.now, wj.empty
		besides = " besides the JobManager container " + jmShown
	} else if f.jmRefusal != nil {
		// Counted without it; the entry says why (and fails where the TaskManagers alone do not fit).
		besides = fmt.Sprintf(" (the JobManager container is not counted: Flink's client refuses its memory: %s)", f.jmRefusal.FlinkMessage)
		if fit.now > 0 && (want == 0 || fit.now >= int64(want)) {
			out.warn(sourceOfKeys(f.in, f.jmRefusal.Keys), f.jmRefusal.Fix,
				"%d %s %s fit now, %d on an empty cluster (packed per node)%s", fit.now, f.subj.containers, shown, fit.empty, besides)
			return
		}
	}
	switch {
	case fit.now == 0:
		msg := fmt.Sprintf("no %s %s fits now%s", f.subj.container, shown, besides)
		fix := "wait for running applications to finish, or free resources on the nodes"
		if fit.empty == 0 {
			msg += ", nor on an empty cluster"
			fix = noFitFix(f.subj, req, fit)
		} else {
			msg += fmt.Sprintf(" (%s on an empty cluster)", plural(int(min(fit.empty, 1<<31)), "fits", "fit"))
		}
		out.fail(live.rm, fix, "%s", msg)
	case want > 0 && fit.now < int64(want):
		fix := fmt.Sprintf("wait for resources, ask for fewer %s, or make each smaller; %d fit on an empty cluster", f.subj.many, fit.empty)
		if fit.empty < int64(want) {
			fix = fmt.Sprintf("even an empty cluster holds only %d: add NodeManagers, or ask for fewer or smaller %s", fit.empty, f.subj.many)
			if f.in.RequireCapacity {
				out.fail(live.rm, fmt.Sprintf("ask for at most %d containers, or smaller ones, or add NodeManagers", fit.empty),
					"%d containers %s wanted, but even an empty cluster holds only %d (packed per node; %d fit now)%s: the rest would wait forever",
					want, shown, fit.empty, fit.now, besides)
				return
			}
		}
		out.warn(live.rm, fix, "%d of the %d %s %s fit now%s, %d on an empty cluster (packed per node)",
			fit.now, want, f.subj.containers, shown, besides, fit.empty)
	default:
		wanted := ""
		if want > 0 {
			wanted = fmt.Sprintf(", %d wanted", want)
		}
		out.pass(live.rm, "%d %s %s fit now%s, %d on an empty cluster (packed per node%s)", fit.now, f.subj.containers, shown, besides, fit.empty, wanted)
	}
}

// normalized is a request as the scheduler sees it: resources the ResourceManager does not know
// dropped, and (CapacityScheduler) memory-mb and vcores rounded up to multiples of their minimum
// allocation.
func (f *facts) normalized(v records.Resources) []records.Resource {
	var req []records.Resource
	for _, res := range v.All() {
		if known := f.live.knownTypes(); known != nil && !known[res.Name] {
			continue
		}
		if res.Value <= 0 {
			continue
		}
		if f.types != nil && (res.Name == records.MemoryMB || res.Name == records.VCores) && f.capacityScheduler() {
			if rt, ok := f.types.Lookup(res.Name); ok && rt.Minimum > 0 && res.Value%rt.Minimum != 0 {
				res.Value = (res.Value/rt.Minimum + 1) * rt.Minimum
			}
		}
		req = append(req, res)
	}
	return req
}

// sourceOfKeys returns the file:line of the first of keys that Flink's configuration sets.
func sourceOfKeys(in Input, keys []string) string {
	for _, k := range keys {
		if v, ok := in.Flink.Lookup(k); ok {
			return v.Source.String()
		}
	}
	return ""
}

// noFitFix names the resources no node has enough of.
func noFitFix(subj subject, req []records.Resource, fit packing) string {
	var short []string
	for _, res := range req {
		if !fit.someNodeHas[res.Name] {
			short = append(short, res.Name)
		}
	}
	if len(short) == 0 {
		return "no node has all resources at once: make the " + subj.one + " smaller (memory, vcores or devices) or add larger NodeManagers"
	}
	return "ask for less " + strings.Join(short, ", ") + " per " + subj.one + ", or add NodeManagers that have more"
}

// targetQueue returns the queue the job goes to and where that comes from: --queue, else Flink's
// yarn.application.queue, else default.
func (f *facts) targetQueue() (name, from string) {
	if f.in.Queue != "" {
		return f.in.Queue, "--queue"
	}
	if v, ok := f.in.Flink.Lookup("yarn.application.queue"); ok && strings.TrimSpace(v.Value) != "" {
		return strings.TrimSpace(v.Value), v.Source.String()
	}
	return "default", "the default queue"
}

// findTargetQueue returns the queue the application goes to (nil when the scheduler has no queue of
// that name), its name and where the name comes from.
func (f *facts) findTargetQueue() (q *yarn.Queue, name, from string) {
	name, from = f.targetQueue()
	return findQueue(f.live.sched, name), name, from
}

// schedulerTarget is findTargetQueue for the check out, which it skips (ok false) when the scheduler
// could not be read.
func (f *facts) schedulerTarget(out *results) (q *yarn.Queue, name, from string, ok bool) {
	if err := f.live.schedErr; err != nil {
		out.skip("cannot read the scheduler: %v", err)
		return nil, "", "", false
	}
	q, name, from = f.findTargetQueue()
	return q, name, from, true
}

// queueLimit is the largest amount of one resource a container in a queue may have, and whether
// the scheduler's effective maximum (rather than the queue's own limit) sets it.
type queueLimit struct {
	records.Quantity
	effective bool
}

// queueLimits returns, per resource type, what the RM checks a container of queue q against: the
// component-wise minimum of the queue's maximum allocation and the scheduler's effective maximum
// allocation (Hadoop's CapacityScheduler and FairScheduler getMaximumResourceCapability(queue)).
// Either may be empty.
func queueLimits(queueMax, effective records.Resources) map[string]queueLimit {
	out := make(map[string]queueLimit, max(queueMax.Len(), effective.Len()))
	for _, q := range queueMax.All() {
		out[q.Name] = queueLimit{Quantity: q.Quantity()}
	}
	for _, r := range effective.All() {
		e := r.Quantity()
		cur, ok := out[r.Name]
		if !ok {
			out[r.Name] = queueLimit{Quantity: e, effective: true}
			continue
		}
		if c, err := e.Cmp(cur.Quantity); err == nil && c < 0 {
			out[r.Name] = queueLimit{Quantity: e, effective: true}
		}
	}
	return out
}

// queueCheck reports cluster.queue-max-allocation: the queue (--queue, else Flink's
// yarn.application.queue, else default) must exist, take applications, and allow the container:
// within the queue's maximum allocation and, where the RM reports it (Hadoop 3.4+), the
// scheduler's effective maximum allocation.
func (f *facts) queueCheck(_ context.Context, out *results) {
	if !f.needsLive(out) {
		return
	}
	live := f.live
	q, name, from, ok := f.schedulerTarget(out)
	if !ok {
		return
	}
	if q == nil {
		var leaves []string
		for _, lq := range live.sched.Queues() {
			if lq.Leaf {
				leaves = append(leaves, lq.Path)
			}
		}
		out.fail(live.rm, "submit to one of the leaf queues: "+strings.Join(leaves, ", "),
			"queue %q (from %s) does not exist: the submission fails", name, from)
		return
	}
	if !q.Leaf {
		out.fail(live.rm, "submit to a leaf queue below "+q.Path,
			"queue %s (from %s) is a parent queue, which takes no applications", q.Path, from)
		return
	}
	effective := live.effectiveMax()
	if q.MaximumAllocation.Len() == 0 && effective.Len() == 0 {
		out.skip("queue %s reports no maximum allocation (%s)", q.Path, orUnknown(live.sched.Type))
		return
	}
	limits := queueLimits(q.MaximumAllocation, effective)
	req, _ := f.request()
	var within []string
	bad := false
	for _, res := range req {
		limit, ok := limits[res.Name]
		if !ok {
			continue
		}
		asked := records.Quantity{Value: res.Value, Units: requestUnit(res.Name)}
		cmp, err := asked.Cmp(limit.Quantity)
		if err != nil {
			out.warn(live.rm, "check the queue's maximum allocation", "queue %s: cannot compare %s: %v", q.Path, res.Name, err)
			continue
		}
		shownLimit := fmtAmount(limit.Value, limit.Units)
		if cmp > 0 {
			bad = true
			if limit.effective {
				out.fail(live.rm,
					fmt.Sprintf("ask for at most %s of %s per %s, or add NodeManagers with more %s", shownLimit, res.Name, f.subj.one, res.Name),
					"queue %s (from %s): the ResourceManager allows at most %s of %s per container (its effective maximum allocation, %s: the configured maximum capped by the largest NodeManager), the %s asks for %s: YARN rejects the request",
					q.Path, from, shownLimit, res.Name, pathOverview, f.subj.one, fmtAmount(asked.Value, asked.Units))
				continue
			}
			out.fail(live.rm,
				fmt.Sprintf("ask for at most %s of %s, use another queue, or %s", shownLimit, res.Name, raiseQueueMaximum(live.sched.Type, q.Path)),
				"queue %s (from %s) allows at most %s of %s per container, the %s asks for %s: YARN rejects the request",
				q.Path, from, shownLimit, res.Name, f.subj.one, fmtAmount(asked.Value, asked.Units))
			continue
		}
		if limit.effective {
			shownLimit += " (effective maximum)"
		}
		within = append(within, fmt.Sprintf("%s %s ≤ %s", res.Name, fmtAmount(asked.Value, asked.Units), shownLimit))
	}
	if !bad {
		out.pass(live.rm, "queue %s (from %s) allows the container: %s", q.Path, from, strings.Join(within, ", "))
	}
}

// raiseQueueMaximum says where a queue's maximum allocation is configured.
func raiseQueueMaximum(schedulerType, path string) string {
	if kindOfType(schedulerType) == schedFair {
		return fmt.Sprintf("raise <maxContainerAllocation> of queue %s in the FairScheduler's allocation file", path)
	}
	return fmt.Sprintf("raise yarn.scheduler.capacity.%s.maximum-allocation-* on the ResourceManager", path)
}

// findQueue finds a queue by path (root.a.b), by path without root (a.b), or by leaf name.
func findQueue(s *yarn.Scheduler, name string) *yarn.Queue {
	if s == nil {
		return nil
	}
	if q := s.Queue(name); q != nil {
		return q
	}
	if !strings.HasPrefix(name, "root.") {
		if q := s.Queue("root." + name); q != nil {
			return q
		}
	}
	// a.b given for root.x.a.b
	var match *yarn.Queue
	for _, q := range s.Queues() {
		if strings.HasSuffix(q.Path, "."+name) {
			if match != nil {
				return nil // ambiguous
			}
			match = q
		}
	}
	return match
}
