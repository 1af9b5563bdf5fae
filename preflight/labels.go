package preflight

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// Flink's node-label options (YarnConfigOptions): the application's label (the ApplicationMaster
// and, unless overridden, every container) and the TaskManagers' own.
const (
	keyAppNodeLabel = "yarn.application.node-label"
	keyTMNodeLabel  = "yarn.taskmanager.node-label"
)

// nodeLabelCheck reports cluster.node-label: a node label Flink asks for must be carried by RUNNING
// nodes that can hold the container: the TaskManagers' label (yarn.taskmanager.node-label, else
// yarn.application.node-label, else the queue's default-node-label-expression) for the
// TaskManager container, the application's label for the JobManager container; the queue must
// be allowed to use the label and have capacity in it. YARN leaves a request for a label no node
// carries pending forever. Without a label, the devices must be on nodes that requests without
// a label reach: nodes of an exclusive label serve only requests for it.
func (f *facts) nodeLabelCheck(_ context.Context, out *results) {
	if !f.needsLive(out) {
		return
	}
	live := f.live
	if live.nodesErr != nil {
		out.skip("cannot list the nodes: %v", live.nodesErr)
		return
	}
	tm, jm := f.tmLabel(), f.jmLabel()
	running := live.running()
	present := map[string]bool{}
	for _, n := range running {
		for _, l := range n.labels() {
			present[l] = true
		}
	}
	known := slices.Sorted(maps.Keys(present))
	shownKnown := "none"
	if len(known) > 0 {
		shownKnown = strings.Join(known, ", ")
	}
	// The queue must be allowed to use the label (accessible-node-labels), when the scheduler says.
	var queue *yarn.Queue
	if q := f.targetLeaf(); q != nil && q.NodeLabels != nil {
		queue = q
	}
	mayUse := func(label string) bool {
		return queue == nil || slices.Contains(queue.NodeLabels, "*") || slices.Contains(queue.NodeLabels, label)
	}
	accessible := func() string {
		if queue == nil || len(queue.NodeLabels) == 0 {
			return "none"
		}
		return strings.Join(queue.NodeLabels, ", ")
	}
	check := func(who string, lc labelChoice, req []records.Resource) {
		label, key, src := lc.label, lc.key, lc.src
		if label == "" {
			return
		}
		if !mayUse(label) {
			out.fail(src, fmt.Sprintf("add %s to yarn.scheduler.capacity.%s.accessible-node-labels (capacity-scheduler.xml) with a capacity (…accessible-node-labels.%s.capacity), or use a queue that may use it", label, queue.Path, label),
				"%s = %s: queue %s may not use the label (its accessible node labels: %s): YARN rejects the %s request", key, label, queue.Path, accessible(), who)
			return
		}
		if q := f.targetLeaf(); q != nil && q.Partitions != nil {
			if p := q.Partition(label); p != nil && p.EffectiveMax.Len() > 0 && allZero(p.EffectiveMax) {
				out.fail(src, fmt.Sprintf("set yarn.scheduler.capacity.%s.accessible-node-labels.%s.capacity and .maximum-capacity above 0 (capacity-scheduler.xml, and each parent's)", q.Path, label),
					"%s = %s: queue %s has no capacity in the label's partition (its effectiveMaxResource there is 0): the %s stays pending forever", key, label, q.Path, who)
				return
			}
		}
		var labelled []node
		for _, n := range running {
			if slices.Contains(n.labels(), label) {
				labelled = append(labelled, n)
			}
		}
		shown := formatRequest(req)
		if len(labelled) == 0 {
			out.fail(src, fmt.Sprintf("set %s to a label RUNNING nodes carry (%s), or label nodes with it (yarn rmadmin -replaceLabelsOnNode)", key, shownKnown),
				"%s = %s: no RUNNING node carries the label (labels on RUNNING nodes: %s): the %s %s stays pending forever", key, label, shownKnown, who, shown)
			return
		}
		fitting := 0
		for _, n := range labelled {
			if containersIn(n.total(), req) > 0 {
				fitting++
			}
		}
		if fitting == 0 {
			out.fail(src, fmt.Sprintf("ask for a smaller %s, or give the nodes labelled %s more resources", who, label),
				"%s = %s: none of the %d RUNNING nodes with the label can hold the %s %s", key, label, len(labelled), who, shown)
			return
		}
		out.pass(src, "%s = %s: %d of the %d RUNNING nodes with the label can hold the %s %s", key, label, fitting, len(labelled), who, shown)
	}
	req, _ := f.request()
	if tm.label == "" && jm.label == "" {
		f.unlabelledCheck(out, req, running, mayUse, accessible)
		return
	}
	if len(req) > 0 {
		if tm.label == "" {
			f.unlabelledCheck(out, req, running, mayUse, accessible)
		} else {
			check(f.subj.container, tm, req)
		}
	}
	if f.jm != nil {
		check("JobManager container", jm, f.normalized(f.jm.Request()))
	}
}

// unlabelledCheck reports, for containers that ask for no node label, whether the
// nodes offering their devices are reachable: nodes of an exclusive label serve only requests
// for that label, so devices only there are never given to them.
func (f *facts) unlabelledCheck(out *results, req []records.Resource, running []node, mayUse func(string) bool, accessible func() string) {
	noLabel := fmt.Sprintf("no node label is asked for (%s, %s)", keyTMNodeLabel, keyAppNodeLabel)
	key := keyTMNodeLabel
	if f.in.Container != nil {
		noLabel, key = "no node label is asked for (--node-label)", "--node-label"
	}
	reach, scope := f.partitionNodes("")
	if scope == "" {
		out.pass("", "%s", noLabel)
		return
	}
	if f.live.labelsErr != nil {
		scope += fmt.Sprintf(" (exclusivity assumed: the ResourceManager did not list its node labels: %v)", f.live.labelsErr)
	}
	for _, res := range req {
		if res.Name == records.MemoryMB || res.Name == records.VCores {
			continue
		}
		reachable := 0
		for _, n := range reach {
			if n.total().Value(res.Name) > 0 {
				reachable++
			}
		}
		if reachable > 0 {
			continue
		}
		byLabel := map[string]int{}
		for _, n := range running {
			if n.total().Value(res.Name) <= 0 {
				continue
			}
			for _, l := range n.labels() {
				byLabel[l]++
			}
		}
		if len(byLabel) == 0 {
			continue // no node has it: cluster.no-node-fits says so
		}
		labels := slices.Sorted(maps.Keys(byLabel))
		var parts []string
		for _, l := range labels {
			parts = append(parts, fmt.Sprintf("%s (%s)", l, plural(byLabel[l], "node", "nodes")))
		}
		fix := fmt.Sprintf("set %s=%s", key, labels[0])
		if !mayUse(labels[0]) {
			fix += fmt.Sprintf(" and add %s to yarn.scheduler.capacity.%s.accessible-node-labels with a capacity (capacity-scheduler.xml)", labels[0], f.targetLeaf().Path)
		}
		fix += fmt.Sprintf(", or make the label non-exclusive (yarn rmadmin -addToClusterNodeLabels \"%s(exclusive=false)\" before labelling nodes)", labels[0])
		queueNote := ""
		if q := f.targetLeaf(); q != nil && q.NodeLabels != nil && !mayUse(labels[0]) {
			queueNote = fmt.Sprintf("; queue %s may not use it either (its accessible node labels: %s)", q.Path, accessible())
		}
		out.fail(f.live.rm, fix,
			"%s, and every RUNNING node offering %s carries an exclusive node label: %s%s. Requests without a label never go to those nodes, so the %s never get %s",
			noLabel, res.Name, strings.Join(parts, ", "), queueNote, f.subj.many, f.resourceName(res.Name))
		return
	}
	out.pass("", "%s; the requested resources are offered %s", noLabel, scope)
}

// flinkValue returns a trimmed Flink value and its source.
func (f *facts) flinkValue(key string) (string, string) {
	v, ok := f.in.Flink.Lookup(key)
	if !ok {
		return "", ""
	}
	return strings.TrimSpace(v.Value), v.Source.String()
}

// labelChoice is the node-label expression a container carries and where it comes from.
type labelChoice struct {
	label, key, src string
}

// queueDefaultLabel returns the default-node-label-expression of queue q (as the RM reports it,
// else from capacity-scheduler.xml) and its source.
func (f *facts) queueDefaultLabel(q *yarn.Queue) labelChoice {
	if q == nil {
		return labelChoice{}
	}
	key := "yarn.scheduler.capacity." + q.Path + ".default-node-label-expression"
	if q.DefaultNodeLabelExpression != "" {
		return labelChoice{q.DefaultNodeLabelExpression, key, f.live.rm + " (defaultNodeLabelExpression)"}
	}
	if v, src, ok := f.queueValue(q.Path, "default-node-label-expression"); ok {
		return labelChoice{v, key, src}
	}
	return labelChoice{}
}

// targetLeaf returns the leaf queue the application goes to, nil when unknown.
func (f *facts) targetLeaf() *yarn.Queue {
	if f.live.usable() == nil || f.live.schedErr != nil {
		return nil
	}
	if q, _, _ := f.findTargetQueue(); q != nil && q.Leaf {
		return q
	}
	return nil
}

// tmLabel returns the label of the TaskManager containers: yarn.taskmanager.node-label, else
// yarn.application.node-label (which the RM gives every request of the application without its
// own), else the queue's default-node-label-expression; for containers given directly,
// Input.NodeLabel, else the queue's default.
func (f *facts) tmLabel() labelChoice {
	if f.in.Container != nil {
		if l := strings.TrimSpace(f.in.NodeLabel); l != "" {
			return labelChoice{l, "--node-label", "--node-label"}
		}
		return f.queueDefaultLabel(f.targetLeaf())
	}
	if l, src := f.flinkValue(keyTMNodeLabel); l != "" {
		return labelChoice{l, keyTMNodeLabel, src}
	}
	return f.jmLabel()
}

// jmLabel returns the label of the JobManager (ApplicationMaster) container:
// yarn.application.node-label, else the queue's default-node-label-expression.
func (f *facts) jmLabel() labelChoice {
	if f.in.Container == nil {
		if l, src := f.flinkValue(keyAppNodeLabel); l != "" {
			return labelChoice{l, keyAppNodeLabel, src}
		}
	}
	return f.queueDefaultLabel(f.targetLeaf())
}

// exclusive reports whether label is exclusive: as get-node-labels says, else Hadoop's default
// (exclusive).
func (d *liveData) exclusive(label string) bool {
	for _, l := range d.labels {
		if l.Name == label {
			return l.Exclusive
		}
	}
	return true
}

// partitionNodes returns the RUNNING nodes that serve requests for label: the nodes carrying it;
// for no label, the nodes without one and those whose labels are all non-exclusive (they lend
// idle resources to requests without a label). scope describes the choice for messages; it is
// "" when no RUNNING node carries a label, and nothing is left out.
func (f *facts) partitionNodes(label string) (nodes []node, scope string) {
	running := f.live.running()
	labelled := false
	for _, n := range running {
		if len(n.labels()) > 0 {
			labelled = true
			break
		}
	}
	if label == "" && !labelled {
		return running, ""
	}
	var excluded []string
	for _, n := range running {
		if label != "" {
			if slices.Contains(n.labels(), label) {
				nodes = append(nodes, n)
			}
			continue
		}
		ok := true
		for _, l := range n.labels() {
			if f.live.exclusive(l) {
				ok = false
				if !slices.Contains(excluded, l) {
					excluded = append(excluded, l)
				}
			}
		}
		if ok {
			nodes = append(nodes, n)
		}
	}
	if label != "" {
		return nodes, fmt.Sprintf("on the %s labelled %s", plural(len(nodes), "RUNNING node", "RUNNING nodes"), label)
	}
	if len(excluded) == 0 {
		return nodes, ""
	}
	slices.Sort(excluded)
	return nodes, fmt.Sprintf("on the %s outside the exclusive node labels %s", plural(len(nodes), "RUNNING node", "RUNNING nodes"), strings.Join(excluded, ", "))
}
