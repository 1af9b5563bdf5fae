package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/yarn"
)

func newAppCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "app",
		Short: "List, inspect, wait for and kill YARN applications (those of yarn-er submit and any other)",
		Args:  cobra.ArbitraryArgs,
		RunE:  helpOrUnknownCommand,
	}
	cmd.AddCommand(newAppListCmd(a), newAppStatusCmd(a), newAppLogsCmd(a), newAppKillCmd(a), newAppWaitCmd(a))
	return cmd
}

// activeStates are the states `app list` shows by default, as `yarn application -list` does.
var activeStates = []string{yarn.StateNew, yarn.StateNewSaving, yarn.StateSubmitted, yarn.StateAccepted, yarn.StateRunning}

// appInfoOut is one application in app list and app status (-o json): a public shape.
type appInfoOut struct {
	ID                string      `json:"id"`
	Name              string      `json:"name"`
	Type              string      `json:"type"`
	User              string      `json:"user"`
	Queue             string      `json:"queue"`
	State             string      `json:"state"`
	FinalStatus       string      `json:"finalStatus"`
	Progress          float64     `json:"progress"`
	Tags              []string    `json:"tags"`
	StartedTime       *time.Time  `json:"startedTime"`
	LaunchTime        *time.Time  `json:"launchTime"`
	FinishedTime      *time.Time  `json:"finishedTime"`
	ElapsedMillis     int64       `json:"elapsedMillis"`
	RunningContainers int64       `json:"runningContainers"`
	Allocated         resourceMap `json:"allocated"`
	GPUs              int64       `json:"gpus"`
	Diagnostics       string      `json:"diagnostics"`
	TrackingURL       string      `json:"trackingUrl"`
	AMContainerLogs   string      `json:"amContainerLogs"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func toAppInfoOut(x *yarn.App) appInfoOut {
	tags := x.ApplicationTags
	if tags == nil {
		tags = []string{}
	}
	return appInfoOut{
		ID: x.ID, Name: x.Name, Type: x.ApplicationType, User: x.User, Queue: x.Queue, State: x.State,
		FinalStatus: x.FinalStatus, Progress: x.Progress, Tags: tags,
		StartedTime: optTime(x.StartedTime), LaunchTime: optTime(x.LaunchTime), FinishedTime: optTime(x.FinishedTime),
		ElapsedMillis: x.ElapsedTime.Milliseconds(), RunningContainers: x.RunningContainers,
		Allocated: resourceMap(x.Allocated), GPUs: x.Allocated[yarn.GPU].Value,
		Diagnostics: x.Diagnostics, TrackingURL: x.TrackingURL, AMContainerLogs: x.AMContainerLogs,
	}
}

func newAppListCmd(a *app) *cobra.Command {
	var (
		cc     clusterConn
		all    bool
		states []string
		user   string
		queue  string
		types  []string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Applications, newest first: active ones by default (--all for every state)",
		Example: `  yarn-er app list
  yarn-er app list --all --type YARN-ER -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cc.client(a)
			if err != nil {
				return err
			}
			q := yarn.AppsQuery{States: states, User: user, Queue: queue, ApplicationTypes: types, Limit: limit}
			if len(q.States) == 0 && !all {
				q.States = activeStates
			}
			apps, err := c.Apps(cmd.Context(), q)
			if err != nil {
				return err
			}
			slices.SortStableFunc(apps, func(x, y yarn.App) int { return y.StartedTime.Compare(x.StartedTime) })
			out := make([]appInfoOut, 0, len(apps))
			for i := range apps {
				out = append(out, toAppInfoOut(&apps[i]))
			}
			return a.render(out, func(w io.Writer) error { return writeAppTable(w, out) })
		},
	}
	cc.register(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&all, "all", false, "every state, ended applications included")
	fl.StringSliceVar(&states, "state", nil, "only these states (NEW, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED)")
	fl.StringVar(&user, "app-user", "", "only this user's applications")
	fl.StringVar(&queue, "queue", "", "only this queue's applications")
	fl.StringSliceVar(&types, "type", nil, "only these application types (e.g. YARN-ER, MAPREDUCE, Apache Flink)")
	fl.IntVar(&limit, "limit", 0, "at most this many (0: no limit)")
	return cmd
}

func writeAppTable(w io.Writer, apps []appInfoOut) error {
	tw := newTable(w)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d%%\t%s\t%d\t%s\n", x.ID, dash(name), dash(x.Type), dash(x.User), dash(x.Queue),
			x.State, dash(x.FinalStatus), int(x.Progress), running, x.GPUs, started)
	}
	return tw.Flush()
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// statusOut is app status's -o json shape.
type statusOut struct {
	appInfoOut
	Attempt    *attemptOut    `json:"attempt"`
	Containers []containerOut `json:"containers"`
}

type attemptOut struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	ContainerID string `json:"amContainerId"`
	Node        string `json:"node"`
	LogsLink    string `json:"logsLink"`
	Diagnostics string `json:"diagnostics"`
}

type containerOut struct {
	ID         string      `json:"id"`
	State      string      `json:"state"`
	Node       string      `json:"node"`
	NodeHTTP   string      `json:"nodeHttpAddress"`
	Resource   resourceMap `json:"resource"`
	GPUs       int64       `json:"gpus"`
	ExitStatus int64       `json:"exitStatus"`
	LogURL     string      `json:"logUrl"`
	AM         bool        `json:"am"`
}

func newAppStatusCmd(a *app) *cobra.Command {
	var cc clusterConn
	cmd := &cobra.Command{
		Use:   "status APP_ID",
		Short: "One application: state, final status, progress, queue, user, times, diagnostics and its containers",
		Long: `status shows an application and, while it runs, the live containers of its current attempt with
their node and resources (the ResourceManager lists no containers of an ended attempt).`,
		Example: `  yarn-er app status application_1700000000000_0001 -o json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := submitClient(a, &cc, false)
			if err != nil {
				return err
			}
			st, err := sc.Status(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			out := statusOut{appInfoOut: toAppInfoOut(st.App), Containers: []containerOut{}}
			if at := st.Attempt; at != nil {
				out.Attempt = &attemptOut{ID: at.AppAttemptID, State: at.State, ContainerID: at.ContainerID,
					Node: at.NodeID, LogsLink: at.LogsLink, Diagnostics: at.Diagnostics}
			}
			for _, c := range st.Containers {
				out.Containers = append(out.Containers, containerOut{ID: c.ID, State: c.State, Node: c.NodeID,
					NodeHTTP: c.NodeHTTPAddress, Resource: resourceMap(c.Resource), GPUs: c.Resource[yarn.GPU].Value,
					ExitStatus: c.ExitStatus, LogURL: c.LogURL, AM: out.Attempt != nil && c.ID == out.Attempt.ContainerID})
			}
			return a.render(out, func(w io.Writer) error { return writeStatus(w, out) })
		},
	}
	cc.register(cmd)
	return cmd
}

func writeStatus(w io.Writer, s statusOut) error {
	ew := &errWriter{w: w}
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	ew.printf("Application:  %s\n", s.ID)
	ew.printf("Name:         %s\n", s.Name)
	ew.printf("Type:         %s\n", s.Type)
	ew.printf("User:         %s\n", s.User)
	ew.printf("Queue:        %s\n", s.Queue)
	ew.printf("State:        %s\n", s.State)
	ew.printf("Final status: %s\n", s.FinalStatus)
	ew.printf("Progress:     %d%%\n", int(s.Progress))
	ew.printf("Started:      %s\n", when(s.StartedTime))
	ew.printf("Finished:     %s\n", when(s.FinishedTime))
	ew.printf("Elapsed:      %v\n", (time.Duration(s.ElapsedMillis) * time.Millisecond).Round(time.Second))
	if len(s.Tags) > 0 {
		ew.printf("Tags:         %s\n", strings.Join(s.Tags, ","))
	}
	if s.TrackingURL != "" {
		ew.printf("Tracking URL: %s\n", s.TrackingURL)
	}
	if d := strings.TrimSpace(s.Diagnostics); d != "" {
		ew.printf("Diagnostics:  %s\n", strings.ReplaceAll(d, "\n", "\n              "))
	}
	if s.Attempt != nil {
		ew.printf("Attempt:      %s %s on %s (AM container %s)\n", s.Attempt.ID, s.Attempt.State, s.Attempt.Node, s.Attempt.ContainerID)
	}
	if ew.err != nil || len(s.Containers) == 0 {
		return ew.err
	}
	ew.printf("\n")
	tw := newTable(ew)
	fmt.Fprintln(tw, "CONTAINER\tSTATE\tNODE\tMEMORY-MB\tVCORES\tGPUS\tRESOURCES")
	for _, c := range s.Containers {
		id := c.ID
		if c.AM {
			id += " (AM)"
		}
		var other []string
		for _, name := range slices.Sorted(maps.Keys(c.Resource)) {
			if name == yarn.Memory || name == yarn.VCores || name == yarn.GPU || c.Resource[name].Value == 0 {
				continue
			}
			other = append(other, fmt.Sprintf("%s=%s", name, c.Resource[name]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", id, c.State, c.Node, c.Resource[yarn.Memory].Value,
			c.Resource[yarn.VCores].Value, c.GPUs, strings.Join(other, ","))
	}
	return tw.Flush()
}

func newAppKillCmd(a *app) *cobra.Command {
	var cc clusterConn
	cmd := &cobra.Command{
		Use:   "kill APP_ID",
		Short: "Kill an application and wait until it is KILLED",
		Long: `kill asks the ResourceManager to kill the application, waits until it has ended, and removes the
application's HDFS staging directory if it is still there. It exits 0 once the application is KILLED,
or when it had already ended (saying how).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := submitClient(a, &cc, false)
			if err != nil {
				return err
			}
			app, err := sc.Kill(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if app.State != yarn.StateKilled {
				fmt.Fprintf(a.streams.Err, "%s had already ended: %s/%s\n", app.ID, app.State, app.FinalStatus)
			}
			out := toAppInfoOut(app)
			return a.render(out, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s %s/%s\n", app.ID, app.State, app.FinalStatus)
				return err
			})
		},
	}
	cc.register(cmd)
	return cmd
}

func newAppWaitCmd(a *app) *cobra.Command {
	var (
		cc    clusterConn
		quiet bool
	)
	cmd := &cobra.Command{
		Use:   "wait APP_ID",
		Short: "Wait until an application ends; exit as submit does (0 SUCCEEDED, 6 FAILED, 7 KILLED)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := submitClient(a, &cc, false)
			if err != nil {
				return err
			}
			pr := newProgress(a, "auto")
			pr.none = quiet
			app, err := sc.Follow(cmd.Context(), args[0], func(e submit.Event) {
				pr.live(submit.FormatEvent(e, 0), yarn.Terminal(e.App.State))
			})
			pr.end()
			if err != nil {
				return err
			}
			out := toAppInfoOut(app)
			if err := a.render(out, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s %s/%s\n", app.ID, app.State, app.FinalStatus)
				return err
			}); err != nil {
				return err
			}
			return submit.Outcome(app)
		},
	}
	cc.register(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func newAppLogsCmd(a *app) *cobra.Command {
	var (
		cc clusterConn
		o  submit.LogsOptions
	)
	cmd := &cobra.Command{
		Use:   "logs APP_ID",
		Short: "The stdout and stderr of an application's containers, from their NodeManagers",
		Long: `logs prints the log files (default stdout and stderr) of the application's containers, read from
the NodeManagers that run them: while the application runs, every live container of its current
attempt (the ApplicationMaster's included); once it has ended, the ApplicationMaster's container
while its NodeManager still has its logs. Aggregated logs on HDFS are not read yet: use
'yarn logs -applicationId APP_ID' for them.`,
		Example: `  yarn-er app logs application_1700000000000_0001
  yarn-er app logs application_1700000000000_0001 --container container_1700000000000_0001_01_000002 --file stderr`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := submitClient(a, &cc, false)
			if err != nil {
				return err
			}
			return sc.Logs(cmd.Context(), args[0], o, a.streams.Out)
		},
	}
	cc.register(cmd)
	cmd.Flags().StringVar(&o.Container, "container", "", "only this container")
	cmd.Flags().StringSliceVar(&o.Files, "file", nil, "log files to print (default stdout,stderr)")
	return cmd
}
