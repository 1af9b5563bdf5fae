package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/yarn"
)

// submitOptions are submit's flags besides the cluster connection.
type submitOptions struct {
	conn     clusterConn
	flink    flinkFlags
	req      submit.Request
	amMemory string
	priority int32
	env      []string
	files    []string
	archives []string
	detach   bool
	progress string
}

func newSubmitCmd(a *app) *cobra.Command {
	o := &submitOptions{}
	cmd := &cobra.Command{
		Use:   "submit [flags] -- COMMAND [ARGS...]",
		Short: "Run a program on YARN in N containers with their GPUs/FPGAs, and follow it",
		Long: `submit launches COMMAND in --containers containers, each with the resources asked for
(--gpus, --fpgas, --resource TYPE=AMOUNT[UNIT], --memory, --vcores, or the TaskManager container of
--flink-conf), through yarn-er's own ApplicationMaster. Each container runs the program under
'yarn-er exec', so it sees only its own devices, with YARN_ER_APP_ID, YARN_ER_CONTAINER_ID,
YARN_ER_RANK (0..N-1) and YARN_ER_WORLD_SIZE set.

Before anything is staged, the live preflight of that container runs (declared types, calculator,
maximum allocation, a node that fits, capacity for N); its failures abort with exit status 3 unless
--force. Then the yarn-er binary, the job spec and the --file/--archive files are staged on HDFS
(fs.defaultFS) in /user/<user>/.yarn-er/<application id>/, and the ApplicationMaster is submitted
over the ResourceManager's REST API. A failed submission leaves nothing on HDFS; the AM removes the
staging directory when the application ends (unless --keep-staging).

submit then follows the application until it ends (--detach: returns once it is ACCEPTED), with
one live line on a terminal and plain lines otherwise, all on stderr; stdout gets the application
id (with -o json|yaml: only the final report, which names it). Ctrl-C asks whether to kill or detach (without a terminal:
detaches and says how to kill).

Exit status: 0 SUCCEEDED, 6 FAILED, 7 KILLED, 3 refused by the preflight, 2 bad flags, 4 refused
credentials, 1 any other error, 130 interrupted (detached).`,
		Example: `  yarn-er submit --gpus 1 --containers 8 -- python train.py --epochs 3
  yarn-er submit --resource nvidia.com/gpu=2 --memory 16g --vcores 8 --queue gpu -- ./infer.sh
  yarn-er submit --flink-conf conf/flink-conf.yaml --containers 4 -- nvidia-smi
  yarn-er submit --gpus 1 --file data.csv#input.csv --archive venv.tgz#venv --env MODE=test --detach -- venv/bin/python job.py`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSubmit(cmd, a, o, args)
		},
	}
	o.conn.register(cmd)
	addFlinkFlags(cmd, &o.flink)
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	r := &o.req
	fl.Int64Var(&r.GPUs, "gpus", 0, "yarn.io/gpu per container")
	fl.Int64Var(&r.FPGAs, "fpgas", 0, "yarn.io/fpga per container")
	fl.StringArrayVar(&r.Resources, "resource", nil, "TYPE=AMOUNT[UNIT] per container, any resource type (repeatable), e.g. nvidia.com/gpu=1")
	fl.StringVar(&r.Memory, "memory", "", fmt.Sprintf("memory per container, e.g. 4g, 512m, 4096 (MiB) (default %dm)", submit.DefaultMemoryMB))
	fl.Int64Var(&r.VCores, "vcores", 0, fmt.Sprintf("vcores per container (default %d)", submit.DefaultVCores))
	fl.IntVar(&r.Containers, "containers", 1, "number of containers (ranks 0..N-1)")
	fl.StringVar(&r.Queue, "queue", "", "YARN queue (default: the ResourceManager's)")
	fl.StringVar(&r.Name, "name", "", `application name (default "yarn-er: COMMAND")`)
	fl.StringSliceVar(&r.Tags, "tags", nil, "application tags, comma-separated")
	fl.Int32Var(&o.priority, "priority", 0, "application priority (default: the queue's)")
	fl.StringVar(&r.NodeLabel, "node-label", "", "node-label expression of the containers")
	fl.StringVar(&o.amMemory, "am-memory", "", fmt.Sprintf("ApplicationMaster memory (default %dm)", submit.DefaultAMMemoryMB))
	fl.Int32Var(&r.AMVCores, "am-vcores", 0, fmt.Sprintf("ApplicationMaster vcores (default %d)", submit.DefaultAMVCores))
	fl.Int32Var(&r.MaxAttempts, "max-attempts", 0, fmt.Sprintf("ApplicationMaster attempts (default %d; the RM caps it at yarn.resourcemanager.am.max-attempts)", submit.DefaultMaxAttempts))
	fl.IntVar(&r.Restarts, "restarts", 0, "restarts of one failed container (rank) before the application fails")
	fl.StringArrayVar(&o.env, "env", nil, "K=V added to every container's environment (repeatable)")
	fl.StringArrayVar(&o.files, "file", nil, "LOCAL[#NAME] localized into every container's working directory (repeatable)")
	fl.StringArrayVar(&o.archives, "archive", nil, "LOCAL[#NAME] archive (.tar.gz, .tgz, .zip, .jar) unpacked into NAME in every container (repeatable)")
	fl.StringVar(&r.Binary, "yarn-er-binary", "", "yarn-er binary to ship to the containers (default: this one; give one for another OS/arch)")
	fl.BoolVar(&r.KeepStaging, "keep-staging", false, "keep the HDFS staging directory after the application ended")
	fl.BoolVar(&r.Force, "force", false, "submit even when the preflight finds problems (it is then not run)")
	fl.BoolVar(&o.detach, "detach", false, "return once the application is ACCEPTED, printing its id")
	fl.StringVar(&o.progress, "progress", "auto", "progress on stderr: auto (a live line on a terminal), plain (log lines) or none")
	_ = cmd.RegisterFlagCompletionFunc("progress", fixedCompletion("auto", "plain", "none"))
	_ = cmd.MarkFlagFilename("yarn-er-binary")
	return cmd
}

// buildRequest turns the flags into a submit.Request.
func (o *submitOptions) buildRequest(cmd *cobra.Command, a *app, args []string) (submit.Request, error) {
	r := o.req
	r.Command = args
	if len(args) == 0 {
		return r, usageErrorf("no command: give it after --, e.g. yarn-er submit --gpus 1 -- nvidia-smi")
	}
	if r.Containers < 1 {
		return r, usageErrorf("--containers %d: must be 1 or more", r.Containers)
	}
	if cmd.Flags().Changed("priority") {
		p := o.priority
		r.Priority = &p
	}
	if o.amMemory != "" {
		mb, err := submit.ParseMemoryMB(o.amMemory)
		if err != nil || mb <= 0 {
			return r, usageErrorf("--am-memory %q: want a size such as 256m or 1g", o.amMemory)
		}
		r.AMMemoryMB = mb
	}
	if len(o.env) > 0 {
		r.Env = map[string]string{}
		for _, kv := range o.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return r, usageErrorf("--env %q: want K=V", kv)
			}
			r.Env[k] = v
		}
	}
	for _, f := range o.files {
		it, err := stage.ParseItem(f, jobspec.TypeFile)
		if err != nil {
			return r, usageErrorf("%v", err)
		}
		r.Files = append(r.Files, it)
	}
	for _, f := range o.archives {
		it, err := stage.ParseItem(f, jobspec.TypeArchive)
		if err != nil {
			return r, usageErrorf("%v", err)
		}
		r.Archives = append(r.Archives, it)
	}
	if o.flink.path != "" || len(o.flink.dynamic) > 0 {
		fc, err := o.flink.load(a)
		if err != nil {
			return r, err
		}
		r.Flink = fc
	}
	switch o.progress {
	case "auto", "plain", "none":
	default:
		return r, usageErrorf("--progress %q: want auto, plain or none", o.progress)
	}
	return r, nil
}

// submitClient builds the submit client from the cluster flags; needHadoop makes a missing Hadoop
// configuration a usage error (submitting needs it, following does not).
func submitClient(a *app, conn *clusterConn, needHadoop bool) (*submit.Client, error) {
	hc, err := conn.hadoop.load(a)
	if err != nil {
		return nil, err
	}
	if hc == nil && needHadoop {
		return nil, usageErrorf("no Hadoop configuration: submit needs the cluster's (fs.defaultFS, the scheduler address): give --hadoop-conf DIR or set HADOOP_CONF_DIR")
	}
	yc, err := conn.rm.client(a, hc)
	if err != nil {
		return nil, err
	}
	return submit.New(submit.Options{YARN: yc, Hadoop: hc, Logger: a.logger})
}

// submitResult is submit's -o json/yaml output.
type submitResult struct {
	ApplicationID string   `json:"applicationId"`
	State         string   `json:"state"`
	FinalStatus   string   `json:"finalStatus"`
	Diagnostics   string   `json:"diagnostics"`
	TrackingURL   string   `json:"trackingUrl"`
	StagingDir    string   `json:"stagingDir"`
	Detached      bool     `json:"detached"`
	Containers    int      `json:"containers"`
	Resource      []string `json:"resource"`
}

func runSubmit(cmd *cobra.Command, a *app, o *submitOptions, args []string) error {
	req, err := o.buildRequest(cmd, a, args)
	if err != nil {
		return err
	}
	sc, err := submitClient(a, &o.conn, true)
	if err != nil {
		return err
	}
	pr := newProgress(a, o.progress)
	ctx := cmd.Context()
	sub, err := sc.Submit(ctx, req, func(s submit.Step) {
		if s.Upload != nil {
			pr.live(submit.FormatUpload(*s.Upload), s.Upload.Done && s.Upload.Files == s.Upload.FileCount)
			return
		}
		pr.line(s.Message)
	})
	pr.end()
	var pe *submit.PreflightError
	switch {
	case errors.As(err, &pe):
		_ = writePreflightTable(a.streams.Err, pe.Report, false)
		return &findingsError{summary: "submit: " + pe.Error()}
	case errors.Is(err, submit.ErrRequest):
		return &usageError{err: err}
	case err != nil:
		return err
	}
	if a.output == "table" {
		// The id first, so that scripts have it while the application runs; -o json/yaml keep
		// stdout one document (the final report, which names it).
		fmt.Fprintln(a.streams.Out, sub.AppID)
	}
	res := submitResult{ApplicationID: sub.AppID, StagingDir: sub.StagingDir, Containers: sub.Spec.Containers}
	for _, q := range sub.Spec.Resource {
		res.Resource = append(res.Resource, fmt.Sprintf("%s=%d%s", q.Name, q.Value, q.Units))
	}
	pr.line(fmt.Sprintf("staged %s in %v", submit.FormatBytes(sub.Staged), sub.StageTime.Round(time.Millisecond)))

	// Follow on a context of its own: Ctrl-C (the command's context) asks what to do.
	follow, stopFollow := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFollow()
	var (
		mu       sync.Mutex
		detached bool
	)
	go func() {
		select {
		case <-follow.Done():
			return
		case <-ctx.Done():
		}
		pr.end()
		kill := false
		if isTerminal(a.streams.Err) && isTerminalReader(a.streams.In) {
			fmt.Fprintf(a.streams.Err, "\nkill %s or detach? [k/D] (Ctrl-C again: detach) ", sub.AppID)
			kill = askKill(a.streams.In)
		}
		if kill {
			fmt.Fprintf(a.streams.Err, "killing %s ...\n", sub.AppID)
			if _, err := sc.Kill(context.WithoutCancel(ctx), sub.AppID); err != nil {
				fmt.Fprintf(a.streams.Err, "yarn-er: kill %s: %v\n", sub.AppID, err)
			}
			return // Follow sees KILLED
		}
		mu.Lock()
		detached = true
		mu.Unlock()
		stopFollow()
	}()
	var app *yarn.App
	if o.detach {
		app, err = yarnWaitAccepted(follow, sc, sub.AppID)
		if app != nil {
			res.State, res.FinalStatus = app.State, app.FinalStatus
			pr.line(fmt.Sprintf("%s is %s; follow it with: yarn-er app wait %s; kill it with: yarn-er app kill %s", sub.AppID, app.State, sub.AppID, sub.AppID))
			res.Detached = true
			return a.renderSubmit(res)
		}
	} else {
		app, err = sc.Follow(follow, sub.AppID, func(e submit.Event) {
			pr.live(submit.FormatEvent(e, sub.Spec.Containers), yarn.Terminal(e.App.State))
		})
	}
	pr.end()
	mu.Lock()
	wasDetached := detached
	mu.Unlock()
	if wasDetached || (o.detach && app == nil && errors.Is(err, context.Canceled)) {
		fmt.Fprintf(a.streams.Err, "detached from %s (it keeps running); follow it with: yarn-er app wait %s; kill it with: yarn-er app kill %s\n",
			sub.AppID, sub.AppID, sub.AppID)
		res.Detached = true
		if app != nil {
			res.State, res.FinalStatus = app.State, app.FinalStatus
		}
		if err := a.renderSubmit(res); err != nil {
			return err
		}
		return &silentError{code: exitInterrupted}
	}
	if err != nil {
		return fmt.Errorf("following %s: %w", sub.AppID, err)
	}
	if !req.KeepStaging {
		if removed, err := sc.Cleanup(context.WithoutCancel(ctx), sub.AppID); err != nil {
			a.logger.Warn("could not check the staging directory", "app", sub.AppID, "err", err)
		} else if removed {
			pr.line("removed the staging directory the application left behind")
		}
	}
	res.State, res.FinalStatus, res.Diagnostics, res.TrackingURL = app.State, app.FinalStatus, app.Diagnostics, app.TrackingURL
	if err := a.renderSubmit(res); err != nil {
		return err
	}
	return submit.Outcome(app)
}

// askKill reads the answer to "kill or detach?": true for an answer starting with k; a second
// interrupt, or the end of the input, is detach.
func askKill(in io.Reader) bool {
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "k")
	case <-again:
		return false
	}
}

// renderSubmit writes the -o json/yaml result; the table form is the application id already
// printed.
func (a *app) renderSubmit(res submitResult) error {
	if a.output == "table" {
		return nil
	}
	return a.render(res, nil)
}

// yarnWaitAccepted waits until the application is past SUBMITTED (ACCEPTED, RUNNING or ended).
func yarnWaitAccepted(ctx context.Context, sc *submit.Client, id string) (*yarn.App, error) {
	var last *yarn.App
	wait, stop := context.WithCancel(ctx)
	defer stop()
	_, err := sc.Follow(wait, id, func(e submit.Event) {
		switch e.App.State {
		case yarn.StateNew, yarn.StateNewSaving, yarn.StateSubmitted:
			return
		}
		last = e.App
		stop()
	})
	if last != nil {
		return last, nil
	}
	return nil, err
}

// progress writes submit's progress to stderr: one live line on a terminal (mode auto), plain
// lines otherwise, nothing with mode none.
type progress struct {
	w    io.Writer
	tty  bool
	none bool
	mu   sync.Mutex
	open bool   // a live line is on screen
	last string // the last plain line, not to repeat it
	at   time.Time
}

func newProgress(a *app, mode string) *progress {
	return &progress{w: a.streams.Err, tty: mode == "auto" && isTerminal(a.streams.Err), none: mode == "none"}
}

// live shows a status that replaces the previous one; final marks the last of a series. Without
// a terminal, only every final status and at most one status every 2 seconds are printed.
func (p *progress) live(s string, final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.none:
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s", s)
		p.open = true
		if final {
			fmt.Fprintln(p.w)
			p.open = false
		}
	case s != p.last && (final || time.Since(p.at) >= 2*time.Second || !strings.HasPrefix(s, "staging")):
		fmt.Fprintf(p.w, "%s yarn-er: %s\n", time.Now().Format("15:04:05"), s)
		p.last, p.at = s, time.Now()
	}
}

// line prints a message on a line of its own.
func (p *progress) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.none {
		return
	}
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
	if p.tty {
		fmt.Fprintln(p.w, s)
		return
	}
	fmt.Fprintf(p.w, "%s yarn-er: %s\n", time.Now().Format("15:04:05"), s)
}

// end finishes a live line.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}
