// Package submit is `yarn-er submit`: run a program on YARN in N containers with their GPUs/FPGAs
// through yarn-er's own ApplicationMaster, and follow it.
package submit

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

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// Options are submit's flags. Req holds the flags that map one to one onto the request; the
// others are turned into it by buildRequest.
type Options struct {
	cmdutil.Base
	Conn  *cmdutil.ClusterConn
	Flink cmdutil.FlinkFlags
	// Req is --gpus, --fpgas, --resource, --memory, --vcores, --profile, --containers, --queue, --name,
	// --tags, --node-label, --am-vcores, --max-attempts, --restarts, --yarn-er-binary, --am-binary,
	// --keep-staging, --ship-keytab and --force.
	Req submit.Request
	// AMMemory is --am-memory as given (e.g. 512m).
	AMMemory string
	// Priority is --priority; PrioritySet says whether it was given.
	Priority    int32
	PrioritySet bool
	// Env is --env K=V, Files --file, Archives --archive, as given.
	Env      []string
	Files    []string
	Archives []string
	// Detach is --detach; Progress is --progress (auto, plain, none).
	Detach   bool
	Progress string
	// Spec is --spec (a job file); DryRun is --dry-run.
	Spec   string
	DryRun bool
	// Docker is --image, --docker-network, --docker-run-privileged and
	// --docker-coordination-dir; DockerMounts is --docker-mount as given.
	Docker       submit.DockerRequest
	DockerMounts []string

	// changed reports whether a flag was given (nil: none was).
	changed func(name string) bool
}

// NewCmdSubmit returns `yarn-er submit`; runF (nil: submitRun) runs it.
func NewCmdSubmit(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Base: cmdutil.Base{F: f}}
	run := cmdutil.RunE(opts, runF, submitRun)
	cmd := &cobra.Command{
		Use:   "submit [flags] (-- COMMAND [ARGS...] | --spec JOB.yaml)",
		Short: "Run a program on YARN in N containers with their GPUs/FPGAs, and follow it",
		Long: `submit launches COMMAND in --containers containers, each with the resources asked for
(--gpus, --fpgas, --resource TYPE=AMOUNT[UNIT], --memory, --vcores, or the TaskManager container of
--flink-conf), through yarn-er's own ApplicationMaster. Each container runs the program under
'yarn-er exec', so it sees only its own devices, with YARN_ER_APP_ID, YARN_ER_CONTAINER_ID,
YARN_ER_RANK (0..N-1) and YARN_ER_WORLD_SIZE set.

Before anything is staged, the live preflight of that container runs (declared types, calculator,
maximum allocation, a node that fits, capacity for N, the ResourceManager's caps of --max-attempts
and --priority); its failures abort with exit status 3 unless --force, its warnings are printed and
the submission goes on. Then the yarn-er binary, the job spec and the --file/--archive files are staged on HDFS
(fs.defaultFS) in /user/<user>/.yarn-er/<application id>/, and the ApplicationMaster is submitted
over the ResourceManager's REST API. A failed submission leaves nothing on HDFS; the AM removes the
staging directory when the application ends (unless --keep-staging).

submit then follows the application until it ends (--detach: returns once it is ACCEPTED), with
one live line on a terminal and plain lines otherwise, all on stderr; stdout gets the application
id (with -o json|yaml: only the final report, which names it). Ctrl-C on a terminal asks whether to
kill (exit 7 once KILLED) or detach (exit 130); without a terminal it detaches and says how to kill.

--spec JOB.yaml gives the job as a file (YAML or JSON; docs/jobs.md, JSON Schema in
jobfile/schema.json): its roles, each with a count, resources, command, restarts, env, placement,
depends_on, gang and framework. Flags given beside it override the file: --name, --queue, --tags,
--priority, --node-label and the AM's settings always; --env and --file/--archive add to it;
--containers, --gpus, --fpgas, --resource, --memory, --vcores, --restarts and a command after --
when the file has one role. Every rank gets the rendezvous variables (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK, MASTER_ADDR, MASTER_PORT, YARN_ER_ROLE, YARN_ER_PEERS;
TF_CONFIG for tensorflow roles). --dry-run prints the resolved job and submits nothing.

--image IMAGE runs the ranks in Docker containers of the NodeManagers' Docker runtime
(YARN_CONTAINER_RUNTIME_TYPE=docker; LinuxContainerExecutor with docker allowed), yarn-er exec inside
them (the yarn-er binary is static and reaches the container with its working directory); the
ApplicationMaster stays a plain container. Ranks that lock devices get --docker-coordination-dir
mounted for their coordination file. The preflight's yarn.docker-runtime checks the NodeManagers'
configuration for it. A resource type per MIG profile (--resource nvidia.com/mig-1g.10gb=1) makes
yarn-er exec lock that many MIG slices of the profile and hand their MIG- UUIDs to the program.

Exit status: 0 SUCCEEDED, 6 FAILED, 7 KILLED, 3 refused by the preflight, 2 bad flags, 4 refused
credentials, 1 any other error, 130 interrupted (detached).`,
		Example: `  yarn-er submit --gpus 1 --containers 8 -- python train.py --epochs 3
  yarn-er submit --gpus 1 --image registry.example.com:5000/ml/torch:2.4 -- python train.py
  yarn-er submit --resource nvidia.com/mig-1g.10gb=1 --containers 7 -- python infer.py
  yarn-er submit --resource nvidia.com/gpu=2 --memory 16g --vcores 8 --queue gpu -- ./infer.sh
  yarn-er submit --flink-conf conf/flink-conf.yaml --containers 4 -- nvidia-smi
  yarn-er submit --spec job.yaml --dry-run
  yarn-er submit --spec job.yaml --queue gpu
  yarn-er submit --gpus 1 --file data.csv#input.csv --archive venv.tgz#venv --env MODE=test --detach -- venv/bin/python job.py`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.PrioritySet = cmd.Flags().Changed("priority")
			opts.changed = cmd.Flags().Changed
			return run(cmd, args)
		},
	}
	opts.Conn = f.NewClusterConn(cmd)
	opts.Conn.LongRunning = true // it follows the application: --rm-timeout bounds each request
	cmdutil.AddFlinkFlags(cmd, &opts.Flink)
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	r := &opts.Req
	fl.Int64Var(&r.GPUs, "gpus", 0, "yarn.io/gpu per container")
	fl.Int64Var(&r.FPGAs, "fpgas", 0, "yarn.io/fpga per container")
	fl.StringArrayVar(&r.Resources, "resource", nil, "TYPE=AMOUNT[UNIT] per container, any resource type (repeatable), e.g. nvidia.com/gpu=1")
	fl.StringVar(&r.Memory, "memory", "", fmt.Sprintf("memory per container, e.g. 4g, 512m, 4096 (MiB) (default %dm)", submit.DefaultMemoryMB))
	fl.Int64Var(&r.VCores, "vcores", 0, fmt.Sprintf("vcores per container (default %d)", submit.DefaultVCores))
	fl.StringVar(&r.Profile, "profile", "", "ask by this YARN resource profile (the ResourceManager's resource-profiles.json) instead of --gpus, --memory, --vcores...")
	fl.IntVar(&r.Containers, "containers", 1, "number of containers (ranks 0..N-1)")
	fl.StringVar(&r.Queue, "queue", "", "YARN queue (default: the ResourceManager's)")
	fl.StringVar(&r.Name, "name", "", `application name (default "yarn-er: COMMAND")`)
	fl.StringSliceVar(&r.Tags, "tags", nil, "application tags, comma-separated")
	fl.Int32Var(&opts.Priority, "priority", 0, "application priority (default: the queue's)")
	fl.StringVar(&r.NodeLabel, "node-label", "", "node label of the containers (one label: YARN takes no && or || expression)")
	fl.StringVar(&opts.AMMemory, "am-memory", "", fmt.Sprintf("ApplicationMaster memory (default %dm)", submit.DefaultAMMemoryMB))
	fl.Int32Var(&r.AMVCores, "am-vcores", 0, fmt.Sprintf("ApplicationMaster vcores (default %d)", submit.DefaultAMVCores))
	fl.DurationVar(&r.AttemptFailuresValidity, "attempt-failures-validity", submit.DefaultAttemptFailuresValidity,
		"only ApplicationMaster failures within this window count against --max-attempts (a negative value: every failure counts)")
	fl.Int32Var(&r.MaxAttempts, "max-attempts", 0, fmt.Sprintf("ApplicationMaster attempts (default %d; the RM caps it at yarn.resourcemanager.am.max-attempts)", submit.DefaultMaxAttempts))
	fl.IntVar(&r.Restarts, "restarts", 0, "restarts of one failed container (rank) before the application fails")
	fl.StringArrayVar(&opts.Env, "env", nil, "K=V added to every container's environment (repeatable)")
	fl.StringArrayVar(&opts.Files, "file", nil, "LOCAL[#NAME] localized into every container's working directory (repeatable)")
	fl.StringArrayVar(&opts.Archives, "archive", nil, "LOCAL[#NAME] archive (.tar.gz, .tgz, .zip, .jar) unpacked into NAME in every container (repeatable)")
	fl.StringVar(&r.Binary, "yarn-er-binary", "", "yarn-er binary to ship to the containers (default: this one; give one for another OS/arch)")
	fl.StringVar(&r.AMBinary, "am-binary", "", "yarn-er-am binary of the same build to run the ApplicationMaster with (default: the yarn-er-am beside the yarn-er binary, if any; else the yarn-er binary runs it)")
	fl.BoolVar(&r.KeepStaging, "keep-staging", false, "keep the HDFS staging directory after the application ended")
	fl.BoolVar(&r.ShipKeytab, "ship-keytab", false, "ship the login's keytab (--keytab) to the ApplicationMaster alone, which then keeps the HDFS delegation tokens fresh for jobs longer than their maximum lifetime (docs/kerberos.md)")
	fl.BoolVar(&r.Force, "force", false, "submit even when the preflight finds problems (it is then not run)")
	fl.BoolVar(&opts.Detach, "detach", false, "return once the application is ACCEPTED, printing its id")
	fl.StringVar(&opts.Spec, "spec", "", "job file (YAML or JSON) with the job's roles (docs/jobs.md); flags given beside it override it")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the resolved job and submit nothing")
	fl.StringVar(&opts.Docker.Image, "image", "", "run the ranks in Docker containers of this image (the NodeManagers' Docker runtime; the ApplicationMaster stays a plain container)")
	fl.StringVar(&opts.Docker.Network, "docker-network", "", "Docker network of the ranks' containers (default: the NodeManagers' default network)")
	fl.BoolVar(&opts.Docker.Privileged, "docker-run-privileged", false, "run the ranks in privileged Docker containers (refused unless the NodeManagers allow it)")
	fl.StringArrayVar(&opts.DockerMounts, "docker-mount", nil, "SRC:DST[:ro|rw] bind mount into the ranks' Docker containers (repeatable; allowed by container-executor.cfg)")
	fl.StringVar(&opts.Docker.CoordinationDir, "docker-coordination-dir", "", fmt.Sprintf("host directory mounted into the Docker containers for yarn-er exec's coordination file (default %s; none: no mount)", submit.DefaultDockerCoordinationDir))
	_ = cmd.MarkFlagFilename("spec", "yaml", "yml", "json")
	fl.StringVar(&opts.Progress, "progress", "auto", "progress on stderr: auto (a live line on a terminal), plain (log lines) or none")
	_ = cmd.RegisterFlagCompletionFunc("progress", cmdutil.FixedCompletion("auto", "plain", "none"))
	_ = cmd.MarkFlagFilename("yarn-er-binary")
	_ = cmd.MarkFlagFilename("am-binary")
	return cmd
}

// buildRequest turns the flags (and the job file of --spec) into a submit.Request.
func buildRequest(opts *Options) (submit.Request, error) {
	r := opts.Req
	args := opts.Args
	r.Command = args
	if opts.Spec != "" {
		var err error
		if r, err = specRequest(opts); err != nil {
			return r, err
		}
	} else if len(args) == 0 {
		return r, cmdutil.Usagef("no command: give it after --, e.g. yarn-er submit --gpus 1 -- nvidia-smi (or give a job file with --spec)")
	}
	if r.Containers < 1 && len(r.Roles) == 0 {
		return r, cmdutil.Usagef("--containers %d: must be 1 or more", r.Containers)
	}
	// The request takes 0 for "the default"; given on the command line, 0 is a mistake that
	// must not silently become the default.
	for _, z := range []struct {
		flag string
		zero bool
		def  int
	}{{"vcores", r.VCores == 0, submit.DefaultVCores}, {"am-vcores", r.AMVCores == 0, submit.DefaultAMVCores},
		{"max-attempts", r.MaxAttempts == 0, submit.DefaultMaxAttempts}} {
		if z.zero && opts.changed != nil && opts.changed(z.flag) {
			return r, cmdutil.Usagef("--%s 0: must be 1 or more (leave it out for the default, %d)", z.flag, z.def)
		}
	}
	if opts.PrioritySet {
		p := opts.Priority
		r.Priority = &p
	}
	if opts.AMMemory != "" {
		mb, err := submit.ParseMemoryMB(opts.AMMemory)
		switch {
		case err != nil:
			return r, cmdutil.Usagef("--am-memory: %v", err)
		case mb <= 0:
			return r, cmdutil.Usagef("--am-memory %q: must be more than 0, e.g. 256m or 1g", opts.AMMemory)
		}
		r.AMMemoryMB = mb
	}
	if len(opts.Env) > 0 {
		given := map[string]string{}
		if r.Env == nil {
			r.Env = map[string]string{}
		}
		for _, kv := range opts.Env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return r, cmdutil.Usagef("--env %q: want K=V", kv)
			}
			if prev, dup := given[k]; dup {
				return r, cmdutil.Usagef("--env %s is given twice (%s=%s and %s): give it once", k, k, prev, kv)
			}
			given[k] = v
			r.Env[k] = v // over the job file's
		}
	}
	for _, f := range opts.Files {
		it, err := stage.ParseItem(f, records.LocalFile)
		if err != nil {
			return r, cmdutil.Usagef("%v", err)
		}
		r.Files = append(r.Files, it)
	}
	for _, f := range opts.Archives {
		it, err := stage.ParseItem(f, records.LocalArchive)
		if err != nil {
			return r, cmdutil.Usagef("%v", err)
		}
		r.Archives = append(r.Archives, it)
	}
	if err := dockerRequest(opts, &r); err != nil {
		return r, err
	}
	if (opts.Flink.Path != "" || len(opts.Flink.Dynamic) > 0) && opts.Spec == "" {
		fc, err := opts.F.LoadFlink(&opts.Flink)
		if err != nil {
			return r, err
		}
		r.Flink = fc
	}
	switch opts.Progress {
	case "auto", "plain", "none":
	default:
		return r, cmdutil.Usagef("--progress %q: want auto, plain or none", opts.Progress)
	}
	return r, nil
}

func submitRun(opts *Options) error {
	f := opts.F
	req, err := buildRequest(opts)
	if err != nil {
		return err
	}
	if opts.DryRun {
		return dryRun(opts, req)
	}
	sc, err := shared.NewSubmitClient(f, opts.Conn, true)
	if err != nil {
		return err
	}
	pr := shared.NewProgress(f, opts.Progress)
	ctx := opts.Ctx
	sub, err := sc.Submit(ctx, req, func(s submit.Step) {
		if s.Upload != nil {
			pr.Live(submit.FormatUpload(*s.Upload), s.Upload.Done && s.Upload.Files == s.Upload.FileCount)
			return
		}
		pr.Line(s.Message)
	})
	pr.End()
	if err != nil {
		return shared.SubmitError(f.IO.ErrOut, "submit", err)
	}
	if f.Output == cmdutil.OutputTable {
		// The id first, so that scripts have it while the application runs; -o json/yaml keep
		// stdout one document (the final report, which names it).
		fmt.Fprintln(f.IO.Out, sub.AppID)
	}
	res := view.Submit{ApplicationID: sub.AppID, StagingDir: sub.StagingDir, Containers: sub.Spec.Containers}
	for _, q := range sub.Spec.Resource {
		res.Resource = append(res.Resource, fmt.Sprintf("%s=%d%s", q.Name, q.Value, q.Units))
	}
	staged := fmt.Sprintf("staged %s in %v", submit.FormatBytes(sub.Staged), sub.StageTime.Round(time.Millisecond))
	if sub.AMBinary != "" {
		staged += "; the ApplicationMaster runs " + submit.AMBinaryName
	}
	pr.Line(staged)

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
		pr.End()
		kill := false
		if f.IO.IsErrTerminal() && f.IO.IsInTerminal() {
			// The prompt and the kill it may ask for handle the signals themselves: the grace
			// period of the signal watch does not end them, and the outcome (KILLED: exit 7)
			// stands.
			give := cmdutil.TakeSignals(ctx)
			defer give()
			fmt.Fprintf(f.IO.ErrOut, "\nkill %s or detach? [k/D] (Ctrl-C again: detach) ", sub.AppID)
			kill = askKill(f.IO.In)
		}
		if kill {
			fmt.Fprintf(f.IO.ErrOut, "killing %s ... (Ctrl-C: stop waiting and detach)\n", sub.AppID)
			if err := killUntilSignal(ctx, sc, sub.AppID); err != nil {
				fmt.Fprintf(f.IO.ErrOut, "yarn-er: kill %s: %s\n", sub.AppID, cmdutil.ErrorText(err))
			} else {
				return // Follow sees KILLED
			}
		}
		mu.Lock()
		detached = true
		mu.Unlock()
		stopFollow()
	}()
	var app *yarn.App
	if opts.Detach {
		app, err = yarnWaitAccepted(follow, sc, sub.AppID)
		if app != nil {
			res.State, res.FinalStatus = string(app.State), app.FinalStatus.String()
			pr.Line(fmt.Sprintf("%s is %s; follow it with: yarn-er app wait %s; kill it with: yarn-er app kill %s", sub.AppID, app.State, sub.AppID, sub.AppID))
			res.Detached = true
			return renderSubmit(f, res)
		}
	} else {
		app, err = sc.Follow(follow, sub.AppID, func(e submit.Event) {
			pr.Live(submit.FormatEvent(e, sub.Spec.Containers), e.App.State.Terminal())
		})
	}
	pr.End()
	mu.Lock()
	wasDetached := detached
	mu.Unlock()
	if wasDetached || (opts.Detach && app == nil && errors.Is(err, context.Canceled)) {
		fmt.Fprintf(f.IO.ErrOut, "detached from %s (it keeps running); follow it with: yarn-er app wait %s; kill it with: yarn-er app kill %s\n",
			sub.AppID, sub.AppID, sub.AppID)
		res.Detached = true
		if app != nil {
			res.State, res.FinalStatus = string(app.State), app.FinalStatus.String()
		}
		if err := renderSubmit(f, res); err != nil {
			return err
		}
		return &cmdutil.SilentError{Code: cmdutil.ExitInterrupted}
	}
	if err != nil {
		return fmt.Errorf("following %s: %w", sub.AppID, err)
	}
	if !req.KeepStaging {
		if removed, err := sc.Cleanup(context.WithoutCancel(ctx), sub.AppID); err != nil {
			f.Logger().Warn("could not check the staging directory", "app", sub.AppID, "err", err)
		} else if removed {
			pr.Line("removed the staging directory the application left behind")
		}
	}
	res.State, res.FinalStatus, res.Diagnostics, res.TrackingURL = string(app.State), app.FinalStatus.String(), app.Diagnostics, app.TrackingURL
	if err := renderSubmit(f, res); err != nil {
		return err
	}
	return submit.Outcome(app)
}

// killUntilSignal kills the application and waits until it is KILLED, or until another SIGINT
// or SIGTERM.
func killUntilSignal(ctx context.Context, sc *submit.Client, id string) error {
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	go func() {
		select {
		case <-again:
			cancel()
		case <-kctx.Done():
		}
	}()
	_, err := sc.Kill(kctx, id)
	return err
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
func renderSubmit(f *cmdutil.Factory, res view.Submit) error {
	if f.Output == cmdutil.OutputTable {
		return nil
	}
	return f.Render(res, nil)
}

// yarnWaitAccepted waits until the application is past SUBMITTED (ACCEPTED, RUNNING or ended).
func yarnWaitAccepted(ctx context.Context, sc *submit.Client, id string) (*yarn.App, error) {
	var last *yarn.App
	wait, stop := context.WithCancel(ctx)
	defer stop()
	_, err := sc.Follow(wait, id, func(e submit.Event) {
		switch e.App.State {
		case records.AppNew, records.AppNewSaving, records.AppSubmitted:
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

// dockerRequest applies the Docker flags to r: over the job file's image, and to every role.
func dockerRequest(opts *Options, r *submit.Request) error {
	d := opts.Docker
	for _, m := range opts.DockerMounts {
		dm, err := records.ParseDockerMount(m)
		if err != nil {
			return cmdutil.Usagef("--docker-mount: %v", err)
		}
		d.Mounts = append(d.Mounts, dm)
	}
	if d.Image == "" && r.Docker != nil {
		d.Image = r.Docker.Image // the job file's image:
	}
	if d.Image == "" && d.Network == "" && !d.Privileged && len(d.Mounts) == 0 && d.CoordinationDir == "" {
		return nil
	}
	r.Docker = &d
	return nil
}
