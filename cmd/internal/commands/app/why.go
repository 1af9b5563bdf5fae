package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/serve"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// NewCmdWhy returns `yarn-er app why`; runF (nil: whyRun) runs it.
func NewCmdWhy(f *cmdutil.Factory, runF func(*IDOptions) error) *cobra.Command {
	opts := &IDOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "why APP_ID",
		Short: "Why an application's GPU containers are not allocated, and what would let them in",
		Long: `why reads the scheduler's state (the queue's maximum and maximum allocation, its user and
ApplicationMaster limits, the partition), every node's free resources and the application's
outstanding requests, and says what keeps its containers out: which limit stops them, and which
running applications hold the GPUs (or other resources) it waits for. It is what yarn-er serve
answers at /api/v1/apps/{id}/why.`,
		Example: `  yarn-er app why application_1700000000000_0002
  yarn-er app why application_1700000000000_0002 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.RunE(opts, runF, whyRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	return cmd
}

func whyRun(opts *IDOptions) error {
	id := opts.Args[0]
	if _, err := records.ParseApplicationID(id); err != nil {
		return cmdutil.Usagef("%q: %v", id, err)
	}
	c, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	snap, err := serve.Poll(opts.Ctx, c, opts.Conn.RM.Timeout)
	if err != nil {
		return err
	}
	out, ok := serve.Why(snap, id)
	if !ok {
		return fmt.Errorf("application %s: %w (the ResourceManager does not list it)", id, yarn.ErrNotFound)
	}
	return opts.F.Render(out, func(w io.Writer) error { return writeWhy(w, out) })
}

func writeWhy(w io.Writer, x view.AppWhy) error {
	ew := &cmdutil.ErrWriter{W: w}
	ew.Printf("Application: %s (%s), user %s, queue %s, %s\n", p(x.ID), p(x.Name), p(x.User), p(x.Queue), p(x.State))
	ew.Printf("%s\n", p(x.Summary))
	if len(x.Asks) > 0 {
		ew.Printf("\nWaiting for:\n")
		for _, a := range x.Asks {
			part := ""
			if a.Partition != "" {
				part = " in partition " + p(a.Partition)
			}
			if a.Locations != nil {
				part += " on " + p(strings.Join(a.Locations, ", ")) + " only"
			}
			if a.PlacementConstraint != "" {
				part += " (placement constraint " + p(a.PlacementConstraint) + ")"
			}
			ew.Printf("  %d × %s%s\n", a.Containers, p(records.Resources(a.Resource).String()), part)
		}
	}
	if len(x.Reasons) > 0 {
		ew.Printf("\nReasons:\n")
		for _, r := range x.Reasons {
			ew.Printf("  [%s] %s\n      fix: %s\n", p(r.Code), p(r.Message), p(r.Fix))
		}
	}
	if len(x.Holders) > 0 {
		ew.Printf("\nHeld by:\n")
		tw := cmdutil.NewTable(ew)
		fmt.Fprintln(tw, "  APPLICATION\tNAME\tUSER\tQUEUE\tALLOCATED")
		for _, h := range x.Holders {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p(h.ID), dash(h.Name), dash(h.User), dash(h.Queue), p(records.Resources(h.Allocated).String()))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(x.NodesThatFit) > 0 {
		ew.Printf("\nNodes where one container fits once theirs end: %s\n", p(strings.Join(x.NodesThatFit, ", ")))
	}
	return ew.Err
}
