package cluster

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

func queuesRun(opts *QueuesOptions) error {
	c, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	s, err := c.Scheduler(opts.Ctx)
	if err != nil {
		return err
	}
	out := view.Queues{Scheduler: s.Type, MaximumAllocation: view.ResourceMap(s.MaximumAllocation), Queues: []view.Queue{}}
	var depths []int // each queue's depth below root, for the table's indentation
	var walk func(q *yarn.Queue, depth int)
	walk = func(q *yarn.Queue, depth int) {
		out.Queues = append(out.Queues, view.Queue{
			Path: q.Path, Name: q.Name, State: q.State, Leaf: q.Leaf,
			Capacity: q.Capacity, MaxCapacity: q.MaxCapacity, UsedCapacity: q.UsedCapacity,
			AbsoluteCapacity: q.AbsoluteCapacity, AbsoluteMaxCapacity: q.AbsoluteMaxCapacity,
			AbsoluteUsedCapacity: q.AbsoluteUsedCapacity, NumApplications: q.NumApplications,
			SchedulingPolicy:  q.SchedulingPolicy,
			MaximumAllocation: view.ResourceMap(q.MaximumAllocation), Used: view.ResourceMap(q.Used),
			MinEffectiveCapacity: view.ResourceMap(q.MinEffectiveCapacity), MaxEffectiveCapacity: view.ResourceMap(q.MaxEffectiveCapacity),
			MinResources: view.ResourceMap(q.MinResources), MaxResources: view.ResourceMap(q.MaxResources),
		})
		depths = append(depths, depth)
		for _, ch := range q.Children {
			walk(ch, depth+1)
		}
	}
	if s.Root != nil {
		walk(s.Root, 0)
	}
	return opts.F.Render(out, func(w io.Writer) error { return writeQueuesTable(w, out, depths) })
}

func writeQueuesTable(w io.Writer, out view.Queues, depths []int) error {
	// Every cell from the RM is escaped: queue names and resource names are the cluster's.
	p := cmdutil.Printable
	fmt.Fprintf(w, "Scheduler: %s\n", p(out.Scheduler))
	tw := cmdutil.NewTable(w)
	fmt.Fprintln(tw, "QUEUE\tSTATE\tCAPACITY\tMAX\tUSED\tAPPS\tMAX ALLOCATION")
	for i, q := range out.Queues {
		maxAlloc := q.MaximumAllocation
		if maxAlloc.IsZero() {
			maxAlloc = q.MaxResources
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%d\t%s\n", strings.Repeat("  ", depths[i]), p(q.Name), p(q.State),
			percent(q.Capacity), percent(q.MaxCapacity), percent(q.UsedCapacity), q.NumApplications, p(resourcesText(maxAlloc)))
	}
	return tw.Flush()
}

func percent(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }

// resourcesText renders "memory-mb=16384Mi vcores=32 yarn.io/gpu=unbounded".
func resourcesText(r view.ResourceMap) string {
	if r.IsZero() {
		return "-"
	}
	names := r.Names()
	parts := make([]string, 0, len(names))
	for _, n := range names {
		v := r.Quantity(n).String()
		if r.Quantity(n).Value == 1<<63-1 {
			v = "unbounded"
		}
		parts = append(parts, n+"="+v)
	}
	return strings.Join(parts, " ")
}
