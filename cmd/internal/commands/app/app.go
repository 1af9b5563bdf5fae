// Package app is `yarn-er app` and its subcommands list, status, logs, kill and wait: YARN
// applications, those of yarn-er submit and any other.
package app

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// NewCmdApp returns `yarn-er app` with its subcommands.
func NewCmdApp(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.NewGroupCommand("app", "List, inspect, wait for and kill YARN applications (those of yarn-er submit and any other)", "",
		NewCmdList(f, nil), NewCmdStatus(f, nil), NewCmdLogs(f, nil), NewCmdKill(f, nil), NewCmdWait(f, nil),
		NewCmdWhy(f, nil))
}

// activeStates are the states `app list` shows by default, as `yarn application -list` does.
var activeStates = []string{string(records.AppNew), string(records.AppNewSaving), string(records.AppSubmitted),
	string(records.AppAccepted), string(records.AppRunning)}

// appInfo is an application's public view.
func appInfo(x *yarn.App) view.AppInfo { return view.AppInfoOf(x) }

// ListOptions are `app list`'s flags.
type ListOptions struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
	// All is --all; States --state; User --app-user; Queue --queue; Types --type; Limit --limit.
	All    bool
	States []string
	User   string
	Queue  string
	Types  []string
	Limit  int
}

// NewCmdList returns `yarn-er app list`; runF (nil: listRun) runs it.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Applications, newest first: active ones by default (--all for every state)",
		Example: `  yarn-er app list
  yarn-er app list --all --type YARN-ER -o json`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(opts, runF, listRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&opts.All, "all", false, "every state, ended applications included")
	fl.StringSliceVar(&opts.States, "state", nil, "only these states (NEW, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED)")
	fl.StringVar(&opts.User, "app-user", "", "only this user's applications")
	fl.StringVar(&opts.Queue, "queue", "", "only this queue's applications")
	fl.StringSliceVar(&opts.Types, "type", nil, "only these application types (e.g. YARN-ER, MAPREDUCE, Apache Flink)")
	fl.IntVar(&opts.Limit, "limit", 0, "at most this many applications, the newest (0: no limit)")
	return cmd
}

func listRun(opts *ListOptions) error {
	if opts.Limit < 0 {
		return cmdutil.Usagef("--limit %d: want 0 (no limit) or more", opts.Limit)
	}
	for _, s := range opts.States {
		if _, err := records.ParseApplicationState(s); err != nil {
			return cmdutil.Usagef("--state %s: %w", s, err)
		}
	}
	c, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	q := yarn.AppsQuery{States: opts.States, User: opts.User, Queue: opts.Queue, ApplicationTypes: opts.Types}
	if len(q.States) == 0 && !opts.All {
		q.States = activeStates
	}
	apps, err := shared.ListApps(opts.Ctx, c, q, opts.Limit)
	if err != nil {
		return err
	}
	out := make([]view.AppInfo, 0, len(apps))
	for i := range apps {
		out = append(out, appInfo(&apps[i]))
	}
	return opts.F.Render(out, func(w io.Writer) error { return writeAppTable(w, out) })
}

func writeAppTable(w io.Writer, apps []view.AppInfo) error {
	tw := cmdutil.NewTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tTYPE\tUSER\tQUEUE\tSTATE\tFINAL\tPROGRESS\tCONTAINERS\tGPUS\tSTARTED")
	for _, x := range apps {
		started := "-"
		if x.StartedTime != nil {
			started = x.StartedTime.Local().Format("2006-01-02 15:04:05")
		}
		name := x.Name
		if r := []rune(name); len(r) > 40 {
			name = string(r[:39]) + "…"
		}
		running := "-"
		if x.RunningContainers >= 0 {
			running = fmt.Sprint(x.RunningContainers)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d%%\t%s\t%d\t%s\n", p(x.ID), dash(name), dash(x.Type), dash(x.User), dash(x.Queue),
			p(x.State), dash(x.FinalStatus), int(x.Progress), running, x.GPUs, started)
	}
	return tw.Flush()
}

// dash is s from the RM for a table cell: escaped (cmdutil.Printable), "-" when blank.
func dash(s string) string { return cmdutil.OrDash(p(strings.TrimSpace(s))) }

// p escapes text from the RM for the terminal (cmdutil.Printable): any YARN user names an
// application, tags it, and gives it diagnostics.
func p(s string) string { return cmdutil.Printable(s) }

// printableLines is p for a multi-line text (diagnostics): each line escaped on its own, a CR
// before a newline dropped, and the lines after the first indented by indent, so that no line of
// the text starts where yarn-er's own lines do.
func printableLines(s, indent string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = p(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n"+indent)
}

// IDOptions are the options of the subcommands that take one application id (status, kill).
type IDOptions struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
}

// NewCmdStatus returns `yarn-er app status`; runF (nil: statusRun) runs it.
func NewCmdStatus(f *cmdutil.Factory, runF func(*IDOptions) error) *cobra.Command {
	opts := &IDOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "status APP_ID",
		Short: "One application: state, final status, progress, queue, user, times, diagnostics and its containers",
		Long: `status shows an application and, while it runs, the live containers of its current attempt with
their node and resources (the ResourceManager lists no containers of an ended attempt).`,
		Example: `  yarn-er app status application_1700000000000_0001 -o json`,
		Args:    cobra.ExactArgs(1),
		RunE:    cmdutil.RunE(opts, runF, statusRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	return cmd
}

func statusRun(opts *IDOptions) error {
	sc, err := shared.NewSubmitClient(opts.F, opts.Conn, false)
	if err != nil {
		return err
	}
	st, err := sc.Status(opts.Ctx, opts.Args[0])
	if err != nil {
		return err
	}
	out := statusView(st)
	out.Ranks = rankViews(opts.Ctx, sc, st)
	if yc, err := opts.Conn.RMClient(); err == nil {
		fillGPUDevices(opts.Ctx, yc, out.Containers)
	}
	return opts.F.Render(out, func(w io.Writer) error {
		if err := writeStatus(w, out); err != nil {
			return err
		}
		if err := writeGPUDevices(w, out.Containers); err != nil {
			return err
		}
		return writeRanks(w, out.Ranks)
	})
}

// statusView is an application's status in its public view.
func statusView(st *submit.Status) view.AppStatus {
	return view.AppStatusOf(st.App, st.Attempt, st.Containers)
}

func writeStatus(w io.Writer, s view.AppStatus) error {
	ew := &cmdutil.ErrWriter{W: w}
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	ew.Printf("Application:  %s\n", p(s.ID))
	ew.Printf("Name:         %s\n", p(s.Name))
	ew.Printf("Type:         %s\n", p(s.Type))
	ew.Printf("User:         %s\n", p(s.User))
	ew.Printf("Queue:        %s\n", p(s.Queue))
	ew.Printf("State:        %s\n", p(s.State))
	ew.Printf("Final status: %s\n", p(s.FinalStatus))
	ew.Printf("Progress:     %d%%\n", int(s.Progress))
	ew.Printf("Started:      %s\n", when(s.StartedTime))
	ew.Printf("Finished:     %s\n", when(s.FinishedTime))
	ew.Printf("Elapsed:      %v\n", (time.Duration(s.ElapsedMillis) * time.Millisecond).Round(time.Second))
	if len(s.Tags) > 0 {
		ew.Printf("Tags:         %s\n", p(strings.Join(s.Tags, ",")))
	}
	if s.TrackingURL != "" {
		ew.Printf("Tracking URL: %s\n", p(s.TrackingURL))
	}
	if d := strings.TrimSpace(s.Diagnostics); d != "" {
		// YARN's diagnostics span lines: they keep them, indented under the label.
		ew.Printf("Diagnostics:  %s\n", printableLines(d, "              "))
	}
	if s.Attempt != nil {
		ew.Printf("Attempt:      %s %s on %s (AM container %s)\n", p(s.Attempt.ID), p(s.Attempt.State), p(s.Attempt.Node), p(s.Attempt.ContainerID))
	}
	if ew.Err != nil || len(s.Containers) == 0 {
		return ew.Err
	}
	ew.Printf("\n")
	tw := cmdutil.NewTable(ew)
	fmt.Fprintln(tw, "CONTAINER\tSTATE\tNODE\tMEMORY-MB\tVCORES\tGPUS\tRESOURCES")
	for _, c := range s.Containers {
		id := c.ID
		if c.AM {
			id += " (AM)"
		}
		var other []string
		for _, name := range c.Resource.Names() {
			if name == records.MemoryMB || name == records.VCores || name == records.GPU || c.Resource.Quantity(name).Value == 0 {
				continue
			}
			other = append(other, fmt.Sprintf("%s=%s", name, c.Resource.Quantity(name)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", p(id), p(c.State), p(c.Node), c.Resource.Quantity(records.MemoryMB).Value,
			c.Resource.Quantity(records.VCores).Value, c.GPUs, p(strings.Join(other, ",")))
	}
	return tw.Flush()
}

// NewCmdKill returns `yarn-er app kill`; runF (nil: killRun) runs it.
func NewCmdKill(f *cmdutil.Factory, runF func(*IDOptions) error) *cobra.Command {
	opts := &IDOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "kill APP_ID",
		Short: "Kill an application and wait until it is KILLED",
		Long: `kill asks the ResourceManager to kill the application, waits until it has ended, and removes the
application's HDFS staging directory if it is still there. It exits 0 once the application is KILLED,
or when it had already ended (saying how).`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.RunE(opts, runF, killRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	return cmd
}

func killRun(opts *IDOptions) error {
	opts.Conn.LongRunning = true // it waits for the application: --rm-timeout bounds each request
	sc, err := shared.NewSubmitClient(opts.F, opts.Conn, false)
	if err != nil {
		return err
	}
	app, err := sc.Kill(opts.Ctx, opts.Args[0])
	if err != nil {
		return err
	}
	if app.State != records.AppKilled {
		fmt.Fprintf(opts.F.IO.ErrOut, "%s had already ended: %s/%s\n", p(app.ID), p(string(app.State)), p(app.FinalStatus.String()))
	}
	return renderEnd(opts.F, app)
}

// renderEnd writes an ended application: its view, or "ID STATE/FINAL" as a table.
func renderEnd(f *cmdutil.Factory, app *yarn.App) error {
	return f.Render(appInfo(app), func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s %s/%s\n", p(app.ID), p(string(app.State)), p(app.FinalStatus.String()))
		return err
	})
}

// WaitOptions are `app wait`'s flags.
type WaitOptions struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
	// Quiet is --quiet: no progress on stderr.
	Quiet bool
}

// NewCmdWait returns `yarn-er app wait`; runF (nil: waitRun) runs it.
func NewCmdWait(f *cmdutil.Factory, runF func(*WaitOptions) error) *cobra.Command {
	opts := &WaitOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "wait APP_ID",
		Short: "Wait until an application ends; exit as submit does (0 SUCCEEDED, 6 FAILED, 7 KILLED)",
		Args:  cobra.ExactArgs(1),
		RunE:  cmdutil.RunE(opts, runF, waitRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func waitRun(opts *WaitOptions) error {
	opts.Conn.LongRunning = true // it waits for the application: --rm-timeout bounds each request
	sc, err := shared.NewSubmitClient(opts.F, opts.Conn, false)
	if err != nil {
		return err
	}
	mode := "auto"
	if opts.Quiet {
		mode = "none"
	}
	pr := shared.NewProgress(opts.F, mode)
	app, err := sc.Follow(opts.Ctx, opts.Args[0], func(e submit.Event) {
		pr.Live(submit.FormatEvent(e, 0), e.App.State.Terminal())
	})
	pr.End()
	if err != nil {
		return err
	}
	if err := renderEnd(opts.F, app); err != nil {
		return err
	}
	return submit.Outcome(app)
}

// LogsOptions are `app logs`' flags.
type LogsOptions struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
	// Logs is --container, --rank (when RankSet), --file and --follow.
	Logs submit.LogsOptions
	// Rank is --rank; RankSet says whether it was given.
	Rank    int
	RankSet bool
}

// NewCmdLogs returns `yarn-er app logs`; runF (nil: logsRun) runs it.
func NewCmdLogs(f *cmdutil.Factory, runF func(*LogsOptions) error) *cobra.Command {
	opts := &LogsOptions{Base: cmdutil.Base{F: f}}
	run := cmdutil.RunE(opts, runF, logsRun)
	cmd := &cobra.Command{
		Use:   "logs APP_ID",
		Short: "The stdout and stderr of an application's containers: live from the NodeManagers, aggregated from HDFS",
		Long: `logs prints the log files (default stdout and stderr) of the application's containers, each under
a header "==> CONTAINER [([ROLE ]rank N)] on NODE: FILE <==".

While the application runs they are read from the NodeManagers that run its live containers (the
ApplicationMaster's included). Once it has ended they are read from the aggregated logs on HDFS
when the cluster aggregates logs (yarn.log-aggregation-enable): the NodeManagers' files in Hadoop's
TFile format under yarn.nodemanager.remote-app-log-dir (default /tmp/logs), after waiting for the
aggregation to finish; the IndexedFile format (yarn.log-aggregation.file-formats=IFile) is named but
not read. Without log aggregation, only the ApplicationMaster's container of an ended application
is known, while its NodeManager still has its logs.

--rank N keeps the containers that ran rank N (YARN_ER_RANK) of a yarn-er application, restarts
included: the ApplicationMaster's log names the container of every rank start. --role R keeps the
containers of role R (YARN_ER_ROLE) of a job with roles (yarn-er submit --spec); with --rank, rank N
of that role (without --role, --rank N keeps rank N of every role).

-f follows: it prints what the containers write while the application runs (polling their
NodeManagers every second), then, once it has ended, the rest from the aggregated logs. Where the
NodeManagers serve no logs (their web services off), nothing shows until the end. Ctrl-C ends it
(exit 130). logs bounds each ResourceManager request by --rm-timeout, not the whole command (it
waits for the aggregation, and -f for the application's end).`,
		Example: `  yarn-er app logs application_1700000000000_0001
  yarn-er app logs application_1700000000000_0001 --rank 2
  yarn-er app logs application_1700000000000_0001 --role worker --rank 1
  yarn-er app logs application_1700000000000_0001 -f --file stdout
  yarn-er app logs application_1700000000000_0001 --container container_1700000000000_0001_01_000002 --file stderr`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RankSet = cmd.Flags().Changed("rank")
			return run(cmd, args)
		},
	}
	opts.Conn = f.NewClusterConn(cmd)
	fl := cmd.Flags()
	fl.StringVar(&opts.Logs.Container, "container", "", "only this container")
	fl.IntVar(&opts.Rank, "rank", 0, "only the containers of this rank (YARN_ER_RANK, 0..N-1)")
	fl.StringVar(&opts.Logs.Role, "role", "", "only the containers of this role (YARN_ER_ROLE) of a job with roles")
	fl.StringSliceVar(&opts.Logs.Files, "file", nil, "log files to print (default stdout,stderr)")
	fl.BoolVarP(&opts.Logs.Follow, "follow", "f", false, "follow the logs until the application ends")
	return cmd
}

func logsRun(opts *LogsOptions) error {
	if c := opts.Logs.Container; c != "" {
		if _, err := records.ParseContainerID(c); err != nil {
			return cmdutil.Usagef("--container: %w", err)
		}
	}
	if r := opts.Logs.Role; r != "" && !jobspec.ValidRoleName(r) {
		return cmdutil.Usagef("--role %q: a role name is letters, digits, - and _, starting with a letter", r)
	}
	if opts.RankSet {
		if opts.Rank < 0 {
			return cmdutil.Usagef("--rank %d: want 0 or more", opts.Rank)
		}
		r := opts.Rank
		opts.Logs.Rank = &r
	}
	// It waits (for the aggregation, with -f for the application's end): each request is bounded,
	// not the command.
	opts.Conn.LongRunning = true
	sc, err := shared.NewSubmitClient(opts.F, opts.Conn, false)
	if err != nil {
		return err
	}
	return sc.Logs(opts.Ctx, opts.Args[0], opts.Logs, opts.F.IO.Out)
}
