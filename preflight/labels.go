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
