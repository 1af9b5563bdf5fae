package preflight

import (
	"fmt"
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
// yarn.application.node-label) for the TaskManager container, the application's label for the
// JobManager container. YARN leaves a request for a label no node carries pending forever.
func (r *runner) nodeLabelCheck() {
	live := r.live
	if live.nodesErr != nil {
		r.c.skip(IDNodeLabel, "cannot list the nodes: %v", live.nodesErr)
		return
	}
	appLabel, appSrc := r.flinkValue(keyAppNodeLabel)
	tmLabel, tmSrc := r.flinkValue(keyTMNodeLabel)
	tmKey := keyTMNodeLabel
	if tmLabel == "" {
		tmLabel, tmSrc, tmKey = appLabel, appSrc, keyAppNodeLabel
	}
	if tmLabel == "" && appLabel == "" {
		r.c.pass(IDNodeLabel, "", "no node label is asked for (%s, %s)", keyTMNodeLabel, keyAppNodeLabel)
		return
	}
	running := live.running()
	present := map[string]bool{}
	for _, n := range running {
		for _, l := range n.NodeLabels {
			present[l] = true
		}
	}
	known := slices.Sorted(func(yield func(string) bool) {
		for l := range present {
			if !yield(l) {
				return
			}
		}
	})
	shownKnown := "none"
	if len(known) > 0 {
		shownKnown = strings.Join(known, ", ")
	}
	// The queue must be allowed to use the label (accessible-node-labels), when the scheduler says.
	var queue *yarn.Queue
	if live.schedErr == nil {
		name, _ := r.targetQueue()
		if q := findQueue(live.sched, name); q != nil && q.Leaf && q.NodeLabels != nil {
			queue = q
		}
	}
	check := func(who, label, key, src string, req []records.Resource) {
		if label == "" {
			return
		}
		if queue != nil && !slices.Contains(queue.NodeLabels, "*") && !slices.Contains(queue.NodeLabels, label) {
			accessible := "none"
			if len(queue.NodeLabels) > 0 {
				accessible = strings.Join(queue.NodeLabels, ", ")
			}
			r.c.fail(IDNodeLabel, src, fmt.Sprintf("add %s to yarn.scheduler.capacity.%s.accessible-node-labels (capacity-scheduler.xml), or use a queue that may use it", label, queue.Path),
				"%s = %s: queue %s may not use the label (its accessible node labels: %s): YARN rejects the %s container request", key, label, queue.Path, accessible, who)
			return
		}
		var labelled []yarn.Node
		for _, n := range running {
			if slices.Contains(n.NodeLabels, label) {
				labelled = append(labelled, n)
			}
		}
		shown := formatRequest(req)
		if len(labelled) == 0 {
			r.c.fail(IDNodeLabel, src, fmt.Sprintf("set %s to a label RUNNING nodes carry (%s), or label nodes with it (yarn rmadmin -replaceLabelsOnNode)", key, shownKnown),
				"%s = %s: no RUNNING node carries the label (labels on RUNNING nodes: %s): the %s container %s stays pending forever", key, label, shownKnown, who, shown)
			return
		}
		fitting := 0
		for _, n := range labelled {
			if containersIn(n.Total, req) > 0 {
				fitting++
			}
		}
		if fitting == 0 {
			r.c.fail(IDNodeLabel, src, fmt.Sprintf("ask for a smaller %s container, or give the nodes labelled %s more resources", who, label),
				"%s = %s: none of the %d RUNNING nodes with the label can hold the %s container %s", key, label, len(labelled), who, shown)
			return
		}
		r.c.pass(IDNodeLabel, src, "%s = %s: %d of the %d RUNNING nodes with the label can hold the %s container %s", key, label, fitting, len(labelled), who, shown)
	}
	if req, _ := r.request(); len(req) > 0 {
		check("TaskManager", tmLabel, tmKey, tmSrc, req)
	}
	if r.jm != nil {
		check("JobManager", appLabel, keyAppNodeLabel, appSrc, r.normalized(r.jm.Request()))
	}
}

// flinkValue returns a trimmed Flink value and its source.
func (r *runner) flinkValue(key string) (string, string) {
	v, ok := r.in.Flink.Lookup(key)
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
func (r *runner) queueDefaultLabel(q *yarn.Queue) labelChoice {
	if q == nil {
		return labelChoice{}
	}
	key := "yarn.scheduler.capacity." + q.Path + ".default-node-label-expression"
	if q.DefaultNodeLabelExpression != "" {
		return labelChoice{q.DefaultNodeLabelExpression, key, r.live.rm + " (defaultNodeLabelExpression)"}
	}
	if v, src, ok := r.queueValue(q.Path, "default-node-label-expression"); ok {
		return labelChoice{v, key, src}
	}
	return labelChoice{}
}

// targetLeaf returns the leaf queue the application goes to, nil when unknown.
func (r *runner) targetLeaf() *yarn.Queue {
	if r.live.usable() == nil || r.live.schedErr != nil {
		return nil
	}
	name, _ := r.targetQueue()
	if q := findQueue(r.live.sched, name); q != nil && q.Leaf {
		return q
	}
	return nil
}

// tmLabel returns the label of the TaskManager containers: yarn.taskmanager.node-label, else
// yarn.application.node-label (which the RM gives every request of the application without its
// own), else the queue's default-node-label-expression; for containers given directly,
// Input.NodeLabel, else the queue's default.
func (r *runner) tmLabel() labelChoice {
	if r.in.Container != nil {
		if l := strings.TrimSpace(r.in.NodeLabel); l != "" {
			return labelChoice{l, "--node-label", "--node-label"}
		}
		return r.queueDefaultLabel(r.targetLeaf())
	}
	if l, src := r.flinkValue(keyTMNodeLabel); l != "" {
		return labelChoice{l, keyTMNodeLabel, src}
	}
	return r.jmLabel()
}

// jmLabel returns the label of the JobManager (ApplicationMaster) container:
// yarn.application.node-label, else the queue's default-node-label-expression.
func (r *runner) jmLabel() labelChoice {
	if r.in.Container == nil {
		if l, src := r.flinkValue(keyAppNodeLabel); l != "" {
			return labelChoice{l, keyAppNodeLabel, src}
		}
	}
	return r.queueDefaultLabel(r.targetLeaf())
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
func (r *runner) partitionNodes(label string) (nodes []yarn.Node, scope string) {
	running := r.live.running()
	labelled := false
	for _, n := range running {
		if len(n.NodeLabels) > 0 {
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
			if slices.Contains(n.NodeLabels, label) {
				nodes = append(nodes, n)
			}
			continue
		}
		ok := true
		for _, l := range n.NodeLabels {
			if r.live.exclusive(l) {
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
