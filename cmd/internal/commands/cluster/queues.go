package cluster

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/view"
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
	out, depths := view.QueuesOf(s)
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
