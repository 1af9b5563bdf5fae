package cluster

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

func infoRun(opts *InfoOptions) error {
	c, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	ctx := opts.Ctx
	info, err := c.ClusterInfo(ctx)
	if err != nil {
		return err
	}
	var rms []yarn.RMStatus
	if len(c.Addresses()) > 1 {
		rms = c.RMs(ctx)
	}
	m, err := c.Metrics(ctx)
	if err != nil {
		opts.F.Logger().Warn("cluster metrics unavailable", "error", err)
		m = nil
	}
	out := view.ClusterInfoOf(info, rms, m)
	return opts.F.Render(out, func(w io.Writer) error { return writeInfo(w, out) })
}

func writeInfo(w io.Writer, out view.ClusterInfo) error {
	tw := cmdutil.NewTable(w)
	// Every value from the RM (and the error of one that did not answer) is escaped.
	p := cmdutil.Printable
	fmt.Fprintf(tw, "ResourceManager:\t%s (%s)\n", p(out.ResourceManager), p(out.HAState))
	for _, r := range out.ResourceManagers {
		state := r.HAState
		if r.Error != "" {
			state = "error: " + r.Error
		}
		label := r.Address
		if r.ID != "" {
			label = r.ID + " " + r.Address
		}
		fmt.Fprintf(tw, "  %s\t%s\n", p(label), p(state))
	}
	fmt.Fprintf(tw, "State:\t%s\n", p(out.State))
	fmt.Fprintf(tw, "Hadoop version:\t%s\n", p(out.HadoopVersion))
	fmt.Fprintf(tw, "RM version:\t%s\n", p(out.ResourceManagerVersion))
	fmt.Fprintf(tw, "Cluster id:\t%d\n", out.ClusterID)
	if out.StartedOn != nil {
		fmt.Fprintf(tw, "Started:\t%s\n", out.StartedOn.UTC().Format(time.RFC3339))
	}
	if m := out.Metrics; m != nil {
		fmt.Fprintf(tw, "Nodes:\t%d active, %d unhealthy, %d lost\n", m.ActiveNodes, m.UnhealthyNodes, m.LostNodes)
		fmt.Fprintf(tw, "Applications:\t%d running, %d pending, %d submitted\n", m.AppsRunning, m.AppsPending, m.AppsSubmitted)
		names := m.Total.Names()
		parts := make([]string, 0, len(names))
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %s/%s", n, m.Used.Quantity(n).String(), m.Total.Quantity(n).String()))
		}
		fmt.Fprintf(tw, "Resources (used/total):\t%s\n", p(strings.Join(parts, ", ")))
	}
	return tw.Flush()
}
