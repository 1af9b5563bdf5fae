package app

import (
	"context"
	"fmt"
	"io"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/view"
)

// rankViews are the ranks of a running yarn-er application by role, from its ApplicationMaster's
// log; nil when the application has ended, is no yarn-er application, or the log cannot be read
// (the status is complete without them).
func rankViews(ctx context.Context, sc *submit.Client, st *submit.Status) []view.AppRank {
	if st.App == nil || st.App.State.Terminal() || st.App.ApplicationType != submit.ApplicationType {
		return nil
	}
	ranks, err := sc.Ranks(ctx, st)
	if err != nil {
		return nil
	}
	out := make([]view.AppRank, 0, len(ranks))
	for _, r := range ranks {
		out = append(out, view.AppRank{Role: r.Role, Rank: r.Rank, Container: r.Container, Node: r.Node,
			Restarts: max(r.Launches-1, 0), Live: r.Live})
	}
	return out
}

// writeRanks writes the ranks table under the status.
func writeRanks(w io.Writer, ranks []view.AppRank) error {
	if len(ranks) == 0 {
		return nil
	}
	ew := &cmdutil.ErrWriter{W: w}
	ew.Printf("\n")
	tw := cmdutil.NewTable(ew)
	fmt.Fprintln(tw, "ROLE\tRANK\tCONTAINER\tNODE\tRESTARTS\tLIVE")
	for _, r := range ranks {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%v\n", p(r.Role), r.Rank, p(r.Container), p(r.Node), r.Restarts, r.Live)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return ew.Err
}
