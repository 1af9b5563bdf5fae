// Package doctor is `yarn-er doctor`: one short probe container per GPU NodeManager, through
// yarn-er's own ApplicationMaster, each reporting from inside what YARN gave it and what it can
// really open; a verdict per node, with the fix. `yarn-er doctor probe` (hidden) is the probe.
package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// Defaults of the flags.
const (
	DefaultTimeout = 3 * time.Minute
	DefaultMemory  = "128m"
	// maxLogBytes bounds the probes' logs read back (a report is a few KiB per node).
	maxLogBytes = 64 << 20
	// probeRole is the role of the probe containers.
	probeRole = "probe"
)

// Options are doctor's flags.
type Options struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
	// Nodes is --nodes: NodeManager ids (host:port) or hosts; empty: every GPU NodeManager.
	Nodes []string
	// GPUs is --gpus, the yarn.io/gpu of each probe container.
	GPUs int64
	// Timeout is --timeout: how long each node's probe may take (they run side by side).
	Timeout time.Duration
	// Memory is --memory of each probe container; Queue is --queue.
	Memory string
	Queue  string
	// Binary and AMBinary are --yarn-er-binary and --am-binary, as submit's.
	Binary   string
	AMBinary string
	// Progress is --progress (auto, plain, none).
	Progress string
}

// NewCmdDoctor returns `yarn-er doctor` (with its hidden `probe`); runF (nil: doctorRun) runs it.
func NewCmdDoctor(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "doctor [--nodes NODE,...]",
		Short: "Check from inside a container on each GPU node that YARN isolates the GPUs",
		Long: `doctor runs one short probe container on each NodeManager that offers yarn.io/gpu (or on
--nodes), through yarn-er's own ApplicationMaster, each asking for --gpus GPUs. Inside its container
the probe ('yarn-er doctor probe') finds which GPUs the driver lists and which of their device nodes
it can open, the CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES it was given, the devices cgroup
(v1: devices.list; v2: only the opens tell), what NVML and the driver's procfs each list, the
NodeManager's own assignment (its GPU plugin's /ws/v1/node/resources/yarn.io%2Fgpu) and container
executor (its /conf), and writes a report to its stdout. doctor reads the reports back from the
application's logs (aggregated when the cluster aggregates logs) and gives each node a verdict:

  ok            the container can open exactly the GPUs it was given
  leak          it can open GPUs it was not given: another container's GPUs are not safe
  no-gpus       it can open fewer than it was given (none, mostly)
  probe-failed  its container ended without a report
  timeout       no report within --timeout (no container allocated, or a slow one)

with the fix for each (LinuxContainerExecutor, yarn.nodemanager.resource-plugins, the [gpu] module
of container-executor.cfg, the devices cgroup). CUDA_VISIBLE_DEVICES does not count as isolation:
a program can unset it.

Exit status: 3 when a node leaks, 0 otherwise (also for no-gpus, probe-failed and timeout, which
the output names), 2 bad flags, 1 any other error.`,
		Example: `  yarn-er doctor
  yarn-er doctor --nodes gpu-07.example.com,gpu-08.example.com:8041 -o json
  yarn-er doctor --gpus 2 --timeout 5m --queue gpu`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(opts, runF, doctorRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	opts.Conn.LongRunning = true // it follows the probes' application
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Nodes, "nodes", nil, "NodeManagers to probe: ids (host:port) or hosts, comma-separated (default: every RUNNING NodeManager with yarn.io/gpu)")
	fl.Int64Var(&opts.GPUs, "gpus", 1, "yarn.io/gpu of each probe container")
	fl.DurationVar(&opts.Timeout, "timeout", DefaultTimeout, "how long each node's probe may take, allocation included (the probes run side by side)")
	fl.StringVar(&opts.Memory, "memory", DefaultMemory, "memory of each probe container")
	fl.StringVar(&opts.Queue, "queue", "", "YARN queue of the probes (default: the ResourceManager's)")
	fl.StringVar(&opts.Binary, "yarn-er-binary", "", "yarn-er binary to ship to the probe containers (default: this one)")
	fl.StringVar(&opts.AMBinary, "am-binary", "", "yarn-er-am binary of the same build for the ApplicationMaster (default: the one beside the yarn-er binary, if any)")
	fl.StringVar(&opts.Progress, "progress", "auto", "progress on stderr: auto, plain or none")
	_ = cmd.RegisterFlagCompletionFunc("progress", cmdutil.FixedCompletion("auto", "plain", "none"))
	cmd.AddCommand(NewCmdProbe(f, nil))
	return cmd
}

func (opts *Options) validate() error {
	switch {
	case opts.GPUs < 1:
		return cmdutil.Usagef("--gpus %d: must be 1 or more", opts.GPUs)
	case opts.Timeout <= 0:
		return cmdutil.Usagef("--timeout %s: must be positive", opts.Timeout)
	}
	switch opts.Progress {
	case "auto", "plain", "none":
	default:
		return cmdutil.Usagef("--progress %q: want auto, plain or none", opts.Progress)
	}
	for _, n := range opts.Nodes {
		if strings.TrimSpace(n) == "" {
			return cmdutil.Usagef("--nodes: an empty name: give NodeManager ids or hosts, comma-separated")
		}
	}
	return nil
}

// ChooseNodes returns the ids of the NodeManagers to probe: the RUNNING ones with yarn.io/gpu,
// restricted to names (ids or hosts) when given. A name no GPU NodeManager answers to is a usage
// error that lists the ones there are.
func ChooseNodes(nodes []yarn.Node, names []string) ([]string, error) {
	var gpu []yarn.Node
	for _, n := range nodes {
		if v, ok := n.Total.Get(records.GPU); ok && v > 0 && n.State == "RUNNING" {
			gpu = append(gpu, n)
		}
	}
	ids := func(ns []yarn.Node) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = n.ID
		}
		slices.Sort(out)
		return out
	}
	if len(gpu) == 0 {
		return nil, errors.New("no RUNNING NodeManager offers " + records.GPU + ": nothing to probe (yarn-er cluster nodes lists them)")
	}
	if len(names) == 0 {
		return ids(gpu), nil
	}
	chosen := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		found := false
		for _, n := range gpu {
			if n.ID == name || n.Host == name {
				chosen[n.ID], found = true, true
			}
		}
		if !found {
			return nil, cmdutil.Usagef("--nodes %s: no RUNNING NodeManager with %s has that id or host (they are: %s)",
				cmdutil.Printable(name), records.GPU, cmdutil.Printable(strings.Join(ids(gpu), ", ")))
		}
	}
	return slices.Sorted(maps.Keys(chosen)), nil
}

// Request is the probes' application: one role of one rank per node, spread one per node and
// kept on the chosen nodes by the ApplicationMaster, each running `yarn-er doctor probe` as YARN
// starts the container (not under `yarn-er exec`, which would hide what the container is given).
func (opts *Options) Request(nodes []string) submit.Request {
	return submit.Request{
		Name:        "yarn-er doctor",
		Queue:       opts.Queue,
		Tags:        []string{"yarn-er-doctor"},
		MaxAttempts: 1,
		Binary:      opts.Binary,
		AMBinary:    opts.AMBinary,
		Roles: []submit.RoleRequest{{
			Name:       probeRole,
			Containers: len(nodes),
			GPUs:       opts.GPUs,
			Memory:     opts.Memory,
			Command: []string{"./" + jobspec.BinaryName, "doctor", "probe",
				"--granted", strconv.FormatInt(opts.GPUs, 10)},
			Placement:    &jobspec.Placement{Spread: "node", Nodes: nodes},
			NoDeviceLock: true,
		}},
	}
}

func doctorRun(opts *Options) error {
	if err := opts.validate(); err != nil {
		return err
	}
	f, ctx := opts.F, opts.Ctx
	yc, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	all, err := yc.Nodes(ctx, yarn.NodesQuery{States: []string{"RUNNING"}})
	if err != nil {
		return fmt.Errorf("listing the NodeManagers: %w", err)
	}
	nodes, err := ChooseNodes(all, opts.Nodes)
	if err != nil {
		return err
	}
	sc, err := shared.NewSubmitClient(f, opts.Conn, true)
	if err != nil {
		return err
	}
	pr := shared.NewProgress(f, opts.Progress)
	sub, err := sc.Submit(ctx, opts.Request(nodes), func(s submit.Step) {
		if s.Upload == nil {
			pr.Line(s.Message)
		}
	})
	pr.End()
	if err != nil {
		return shared.SubmitError(f.IO.ErrOut, "doctor: the probes cannot be submitted", err)
	}
	appID := sub.AppID
	pr.Line(fmt.Sprintf("probing %d node(s) in %s (up to %s)", len(nodes), appID, opts.Timeout))

	wait, cancel := context.WithTimeout(ctx, opts.Timeout)
	app, ferr := sc.Follow(wait, appID, func(e submit.Event) {
		pr.Live(submit.FormatEvent(e, sub.Spec.Containers), e.App.State.Terminal())
	})
	waited := wait.Err() // DeadlineExceeded: --timeout passed (not a request's own timeout)
	cancel()
	pr.End()
	timedOut := false
	switch {
	case ferr == nil:
	case ctx.Err() != nil:
		_, _ = sc.Kill(context.WithoutCancel(ctx), appID)
		return ctx.Err()
	case errors.Is(waited, context.DeadlineExceeded):
		timedOut = true
		pr.Line(fmt.Sprintf("--timeout %s passed: killing %s; the nodes without a report time out", opts.Timeout, appID))
		if app, err = sc.Kill(ctx, appID); err != nil {
			f.Logger().Warn("could not kill the probes", "app", appID, "err", err)
		}
	default:
		return fmt.Errorf("following the probes (%s): %w", appID, ferr)
	}
	pr.Line("reading the probes' reports from the application's logs")
	var logs bytes.Buffer
	lerr := sc.Logs(ctx, appID, submit.LogsOptions{Files: []string{"stdout"}}, &capped{w: &logs, n: maxLogBytes})
	if lerr != nil {
		f.Logger().Warn("could not read every probe's log", "app", appID, "err", lerr)
	}
	reports, perr := ParseReports(&logs)
	if perr != nil {
		f.Logger().Warn("bad probe reports", "app", appID, "err", perr)
	}
	res := Assemble(nodes, reports, timedOut, missingReason(opts, appID, app, timedOut, lerr))
	res.ApplicationID, res.GPUs = appID, opts.GPUs
	if err := f.Render(res, func(w io.Writer) error { return WriteTable(w, res) }); err != nil {
		return err
	}
	if res.Leaks > 0 {
		return &cmdutil.FindingsError{Summary: fmt.Sprintf("doctor: %d of %d node(s) let a container open GPUs it was not given", res.Leaks, len(res.Nodes))}
	}
	return nil
}

// missingReason says why a node has no report.
func missingReason(opts *Options, appID string, app *yarn.App, timedOut bool, logErr error) string {
	switch {
	case timedOut:
		return fmt.Sprintf("no report within --timeout %s: the node's probe container was not allocated or did not finish", opts.Timeout)
	case logErr != nil:
		return fmt.Sprintf("the probe's log could not be read (%s): %s", appID, cmdutil.Printable(logErr.Error()))
	case app != nil && app.FinalStatus != records.FinalSucceeded:
		return fmt.Sprintf("the probes' application %s ended %s: %s", appID, app.FinalStatus, cmdutil.Printable(app.Diagnostics))
	}
	return fmt.Sprintf("the probe's container left no report in its stdout (yarn-er app logs %s)", appID)
}

// Assemble gives every chosen node its verdict: from its probe's report (the last one, should
// a probe have run twice), else timeout or probe-failed with why.
func Assemble(nodes []string, reports []view.DoctorProbe, timedOut bool, why string) view.Doctor {
	byNode := map[string]*view.DoctorProbe{}
	for i := range reports {
		byNode[reports[i].Node] = &reports[i]
	}
	res := view.Doctor{Nodes: []view.DoctorNode{}}
	for _, n := range nodes {
		var v view.DoctorNode
		if p, ok := byNode[n]; ok {
			v = Judge(p)
		} else {
			v = Missing(n, timedOut, why)
		}
		if v.Verdict == view.VerdictLeak {
			res.Leaks++
		}
		res.Nodes = append(res.Nodes, v)
	}
	return res
}

// WriteTable writes the verdicts: one row per node, then each node's reason, fixes and notes.
func WriteTable(w io.Writer, d view.Doctor) error {
	p := cmdutil.Printable
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	ew := &cmdutil.ErrWriter{W: tw}
	ew.Printf("NODE\tVERDICT\tGIVEN\tLISTED\tOPEN\tNODEMANAGER\tCGROUP\tEXECUTOR\n")
	for _, n := range d.Nodes {
		if pr := n.Probe; pr != nil {
			open := 0
			for _, dv := range pr.Listed {
				if dv.Opens {
					open++
				}
			}
			ew.Printf("%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", p(n.Node), n.Verdict, pr.Granted, len(pr.Listed), open,
				p(pr.NodeManager.State), p(pr.Cgroup.Version), p(shortClass(pr.Executor.Class)))
		} else {
			ew.Printf("%s\t%s\t-\t-\t-\t-\t-\t-\n", p(n.Node), n.Verdict)
		}
	}
	if ew.Err != nil {
		return ew.Err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew = &cmdutil.ErrWriter{W: w}
	for _, n := range d.Nodes {
		ew.Printf("\n%s: %s: %s\n", p(n.Node), n.Verdict, p(n.Reason))
		for _, fx := range n.Fix {
			ew.Printf("  fix: %s\n", p(fx))
		}
		for _, nt := range n.Notes {
			ew.Printf("  note: %s\n", p(nt))
		}
	}
	return ew.Err
}

// shortClass is a Java class name without its package ("unknown" for none).
func shortClass(c string) string {
	if c == "" {
		return "unknown"
	}
	return c[strings.LastIndex(c, ".")+1:]
}

// capped writes at most n bytes to w and drops the rest.
type capped struct {
	w io.Writer
	n int
}

func (c *capped) Write(b []byte) (int, error) {
	keep := min(len(b), c.n)
	if keep > 0 {
		if _, err := c.w.Write(b[:keep]); err != nil {
			return 0, err
		}
		c.n -= keep
	}
	return len(b), nil
}

// ProbeOptions are `yarn-er doctor probe`'s flags.
type ProbeOptions struct {
	cmdutil.Base
	// Granted is --granted: the yarn.io/gpu the container was allocated.
	Granted int64
	// HostRoot is --host-root (YARN_ER_HOST_ROOT): where the host's /proc and /dev are read.
	HostRoot string
	// NVMLLibrary is --nvml-library; ToolTimeout --command-timeout; HTTPTimeout --http-timeout.
	NVMLLibrary string
	ToolTimeout time.Duration
	HTTPTimeout time.Duration
}

// NewCmdProbe returns the hidden `yarn-er doctor probe`; runF (nil: probeRun) runs it.
func NewCmdProbe(f *cmdutil.Factory, runF func(*ProbeOptions) error) *cobra.Command {
	opts := &ProbeOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:    "probe",
		Short:  "The probe that yarn-er doctor runs in each container (writes its report to stdout)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   cmdutil.RunE(opts, runF, probeRun),
	}
	fl := cmd.Flags()
	fl.Int64Var(&opts.Granted, "granted", 0, "yarn.io/gpu the container was allocated")
	fl.StringVar(&opts.HostRoot, "host-root", "/", "directory holding the host's /proc and /dev")
	fl.StringVar(&opts.NVMLLibrary, "nvml-library", "", "NVML library to load (default: libnvidia-ml.so.1)")
	fl.DurationVar(&opts.ToolTimeout, "command-timeout", 5*time.Second, "time limit for nvidia-smi")
	fl.DurationVar(&opts.HTTPTimeout, "http-timeout", 10*time.Second, "time limit for each question to the NodeManager")
	return cmd
}

func probeRun(opts *ProbeOptions) error {
	if opts.Granted < 0 {
		return cmdutil.Usagef("--granted %d: must not be negative", opts.Granted)
	}
	if opts.ToolTimeout <= 0 || opts.HTTPTimeout <= 0 {
		return cmdutil.Usagef("--command-timeout and --http-timeout must be positive")
	}
	pr := &prober{
		root:       discovery.NewRoot(opts.HostRoot),
		lookup:     opts.F.Env.Lookup,
		selfCgroup: "/proc/self/cgroup",
		// The AM runs exec with the default, or the variable the NodeManager passes.
		coordinationDefault: shared.DefaultCoordinationFile,
		uid:                 os.Getuid(),
		cgroupFS:            "/sys/fs/cgroup",
		nvmlLibrary:         opts.NVMLLibrary,
		toolTimeout:         opts.ToolTimeout,
		httpTimeout:         opts.HTTPTimeout,
		logger:              opts.F.Logger(),
	}
	rep := pr.run(opts.Ctx, opts.Granted)
	fmt.Fprintln(opts.F.IO.ErrOut, cmdutil.Printable(summary(rep)))
	return WriteReport(opts.F.IO.Out, rep)
}
