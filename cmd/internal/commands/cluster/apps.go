package cluster

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// AppsOptions are `cluster apps`' flags.
type AppsOptions struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
	// States is --state, Queue --queue, Owner --owner, Types --type.
	States []string
	Queue  string
	Owner  string
	Types  []string
	// Limit is --limit: at most this many applications, the newest; 0 for all.
	Limit int
}

// NewCmdApps returns `yarn-er cluster apps`; runF (nil: appsRun) runs it.
func NewCmdApps(f *cmdutil.Factory, runF func(*AppsOptions) error) *cobra.Command {
	opts := &AppsOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "apps",
		Short: "Applications, with their state and allocated resources",
		Example: `  yarn-er cluster apps --state RUNNING,ACCEPTED
  yarn-er cluster apps --queue default --limit 20 -o json`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(opts, runF, appsRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.States, "state", nil,
		"only applications in these states (comma-separated): "+strings.Join(appStates, ", "))
	fl.StringVar(&opts.Queue, "queue", "", "only applications in this queue")
	fl.StringVar(&opts.Owner, "owner", "", "only applications of this user")
	fl.StringSliceVar(&opts.Types, "type", nil, "only applications of these types, e.g. \"Apache Flink\"")
	fl.IntVar(&opts.Limit, "limit", 0, "at most this many applications, the newest (0: no limit)")
	_ = cmd.RegisterFlagCompletionFunc("state", cmdutil.FixedCompletion(appStates...))
	return cmd
}

func appsRun(opts *AppsOptions) error {
	if opts.Limit < 0 {
		return cmdutil.Usagef("--limit %d: want 0 (no limit) or more", opts.Limit)
	}
	if err := checkStates(opts.States, appStates); err != nil {
		return err
	}
	c, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	apps, err := shared.ListApps(opts.Ctx, c, yarn.AppsQuery{States: opts.States, Queue: opts.Queue, User: opts.Owner,
		ApplicationTypes: opts.Types}, opts.Limit)
	if err != nil {
		return err
	}
	out := view.AppsOf(apps)
	return opts.F.Render(out, func(w io.Writer) error { return writeAppsTable(w, out) })
}

func writeAppsTable(w io.Writer, out view.Apps) error {
	tw := cmdutil.NewTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tUSER\tQUEUE\tSTATE\tFINAL\tPROGRESS\tSTARTED")
	for _, ap := range out.Apps {
		started := "-"
		if ap.StartedTime != nil {
			started = ap.StartedTime.UTC().Format(time.RFC3339)
		}
		// Every cell from the RM is escaped: any YARN user names an application.
		p := cmdutil.Printable
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p(ap.ID), p(ap.Name), p(ap.User), p(ap.Queue), p(ap.State), p(ap.FinalStatus),
			strconv.FormatFloat(ap.Progress, 'f', 0, 64)+"%", started)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(out.Apps) == 0 {
		_, err := fmt.Fprintln(w, "(no applications)")
		return err
	}
	return nil
}
