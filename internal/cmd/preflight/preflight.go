// Package preflight is `yarn-er preflight`: every reason TaskManagers would not get their GPUs.
package preflight

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/cmd/discover"
	"github.com/yarn-er/yarn-er/internal/cmdutil"
	"github.com/yarn-er/yarn-er/preflight"
)

// Options are preflight's flags. The Hadoop and ResourceManager flags are the cluster commands'
// (cmdutil.ClusterConn: --hadoop-conf, --rm, --user, authentication, TLS, timeouts).
type Options struct {
	cmdutil.Base
	Flink      cmdutil.FlinkFlags
	Conn       *cmdutil.ClusterConn
	Containers int
	Queue      string
	Strict     bool
}

// NewCmdPreflight returns `yarn-er preflight`; runF (nil: preflightRun) runs it.
func NewCmdPreflight(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Check that TaskManagers will get their GPUs and FPGAs before a job is submitted",
		Long: `preflight finds every reason the TaskManagers of a Flink job would not get their external
resources (GPUs, FPGAs, custom YARN resource types) on YARN, before the job is submitted:

  Flink configuration   typos, missing or bad amounts, no yarn.config-key, two resources on one
                        type, no driver factory, a missing or non-executable discovery script,
                        discovery-script arguments that turn coordination silently off
  Hadoop configuration  bad resource types, a requested type that is not declared, a scheduler that
                        ignores GPUs (DefaultResourceCalculator, a FairScheduler queue without
                        drf), requests above the maximum allocation (the RM's effective one when
                        it reports it, Hadoop 3.4+), NodeManagers that do not offer the type or do
                        not isolate it
  Live cluster          (when a ResourceManager is known: --rm, or the Hadoop configuration; else
                        skipped) the RM answers and runs Hadoop 3.1+, knows the requested types, has
                        a RUNNING node that fits one TaskManager, how many fit now and on an empty
                        cluster (--containers), and the queue's maximum allocation (--queue)

Every check has a stable id (docs/preflight.md explains each: what it means, why it matters, how
to fix it). The table groups them and ends with a verdict; -o json prints
{"ok": ..., "checks": [{"id", "status", "message", "fix", "source"}]} with status pass, warn, fail
or skip, and source file:line, -D key or the RM URL.

Relative discovery-script paths are resolved against $FLINK_HOME (or, when it is unset, the Flink
installation --flink-conf lies in).

Exit codes: 0 nothing failed (with --strict: nothing failed or warned), 3 findings, 4 the
ResourceManager refused the credentials, 1 the preflight could not run (e.g. a malformed file).`,
		Example: `  yarn-er preflight --flink-conf conf/flink-conf.yaml --hadoop-conf /etc/hadoop/conf
  yarn-er preflight --flink-conf conf/ --rm http://rm1:8088,http://rm2:8088 --containers 8 --queue root.gpu
  yarn-er preflight -D external-resource.gpu.amount=4 --strict -o json`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o, runF, preflightRun),
	}
	cmdutil.AddFlinkFlags(cmd, &o.Flink)
	o.Conn = f.NewClusterConn(cmd)
	fl := cmd.Flags()
	fl.IntVar(&o.Containers, "containers", 0, "TaskManager containers the job needs: cluster.capacity warns when fewer fit now")
	fl.StringVar(&o.Queue, "queue", "", "YARN queue to check (default Flink's yarn.application.queue, else default)")
	fl.BoolVar(&o.Strict, "strict", false, "exit 3 on warnings too")
	return cmd
}

func preflightRun(o *Options) error {
	f := o.F
	if o.Containers < 0 {
		return cmdutil.Usagef("--containers %d: must be 0 or more", o.Containers)
	}
	fc, err := f.LoadFlink(&o.Flink)
	if err != nil {
		return err
	}
	version, err := o.Flink.FlinkVersion(fc)
	if err != nil {
		return err
	}
	hc, err := o.Conn.HadoopConfig()
	if err != nil {
		return err
	}
	// Without a ResourceManager the live checks are skipped, with the reason.
	client, err := o.Conn.OptionalRMClient()
	noClient := ""
	if errors.Is(err, cmdutil.ErrNoRM) {
		noClient, err = err.Error(), nil
	}
	if err != nil {
		return err
	}
	home, homeOrigin := flinkHome(f.Env, fc)
	in := preflight.Input{
		Flink:           fc,
		Hadoop:          hc,
		Client:          client,
		NoClientReason:  noClient,
		Containers:      o.Containers,
		Queue:           strings.TrimSpace(o.Queue),
		Strict:          o.Strict,
		FlinkVersion:    version,
		FlinkHome:       home,
		FlinkHomeOrigin: homeOrigin,
		Discover:        discoverCommand(),
		Getenv:          f.Env.Getenv,
		Logger:          f.Logger().With("component", "preflight"),
	}
	rep, err := preflight.Run(o.Ctx, in)
	if err != nil {
		return err
	}
	color := f.IO.IsOutTerminal() && f.Env.Getenv("NO_COLOR") == ""
	if err := f.Render(rep, func(w io.Writer) error { return WriteTable(w, rep, color) }); err != nil {
		return err
	}
	if rep.OK {
		return nil
	}
	if authErr := rep.AuthError(); authErr != nil {
		// exitCode maps the yarn authentication errors to exitAuth.
		return fmt.Errorf("preflight: the ResourceManager refused the credentials: %w", authErr)
	}
	// The table ends with the verdict: printing it again on stderr would say it twice. JSON and
	// YAML carry no verdict line, so there the summary goes to stderr.
	if f.Output == cmdutil.OutputTable {
		return &cmdutil.SilentError{Code: cmdutil.ExitFindings}
	}
	c := rep.Counts()
	summary := fmt.Sprintf("preflight: %d failed, %d warnings", c.Fail, c.Warn)
	if rep.Strict() && c.Fail == 0 {
		summary += " (--strict)"
	}
	return &cmdutil.FindingsError{Summary: summary}
}

// flinkHome returns Flink's installation directory: $FLINK_HOME, else the directory above the conf/
// directory --flink-conf reads from when it is a Flink installation (it has lib/).
func flinkHome(env cmdutil.Env, fc *conf.FlinkConfig) (dir, origin string) {
	if h := env.Getenv("FLINK_HOME"); h != "" {
		return h, "$FLINK_HOME"
	}
	for _, f := range fc.Files() {
		confDir := filepath.Dir(f)
		if filepath.Base(confDir) != "conf" {
			continue
		}
		home := filepath.Dir(confDir)
		if fi, err := os.Stat(filepath.Join(home, "lib")); err == nil && fi.IsDir() {
			return home, "the installation of " + f
		}
	}
	return "", ""
}

// discoverCommand tells preflight how to recognise yarn-er as a discovery script and how discover
// parses the arguments Flink passes.
func discoverCommand() preflight.DiscoverCommand {
	exe, _ := os.Executable()
	return preflight.DiscoverCommand{
		Executable:   exe,
		Names:        append([]string(nil), discover.Argv0Names...),
		ValidateArgs: validateDiscoverArgs,
	}
}

// validateDiscoverArgs parses args (what Flink passes after AMOUNT) with discover's own flags, as
// `yarn-er discover 1 ARGS...` would, and checks what is left with discover's argument rules.
func validateDiscoverArgs(args []string) error {
	quiet := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, cmdutil.Env{})
	parent := &cobra.Command{Use: "yarn-er"} // the global flags (-v, --log-level, ...) are discover's too
	quiet.AddGlobalFlags(parent)
	disc := discover.NewCmdDiscover(quiet, nil)
	parent.AddCommand(disc)
	if err := disc.ParseFlags(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errors.New("--help prints the help instead of discovering devices")
		}
		return discover.FlagError(disc, err)
	}
	release, _ := disc.Flags().GetBool("release")
	_, err := discover.ParseAmount(append([]string{"1"}, disc.Flags().Args()...), release)
	return err
}

// statusStyles are the table's symbol and ANSI colour of each status; skip (and anything else)
// is "-", dimmed.
var statusStyles = map[preflight.Status]struct{ mark, color string }{
	preflight.StatusPass: {"✓", "\x1b[32m"},
	preflight.StatusWarn: {"!", "\x1b[33m"},
	preflight.StatusFail: {"✗", "\x1b[31m"},
}

// statusMark is the table's symbol of a status.
func statusMark(s preflight.Status) string {
	if st, ok := statusStyles[s]; ok {
		return st.mark
	}
	return "-"
}

// statusColor is the ANSI colour of a status.
func statusColor(s preflight.Status) string {
	if st, ok := statusStyles[s]; ok {
		return st.color
	}
	return "\x1b[2m"
}

const ansiReset = "\x1b[0m"

// tableLegend opens the table. Many ids name the problem their check looks for
// (flink.no-yarn-config-key), so a passing line alone would read like a finding.
const tableLegend = `✓ passed, ! warning, ✗ failed, - skipped. A check id such as flink.no-yarn-config-key
names the problem the check looks for: ✓ in front of it means that problem was not found.`

// WriteTable writes a preflight report in its human form: the legend, then the checks grouped by area, each with its status
// mark, id and message, the fix and source under findings, and the verdict last. The checks' text
// is escaped (cmdutil.Printable); with color, the marks and the verdict are painted with ANSI colours.
func WriteTable(w io.Writer, rep *preflight.Report, color bool) error {
	ew := &cmdutil.ErrWriter{W: w}
	width := 0
	for _, c := range rep.Checks {
		width = max(width, len(c.ID))
	}
	paint := func(s preflight.Status, text string) string {
		if !color {
			return text
		}
		return statusColor(s) + text + ansiReset
	}
	indent := strings.Repeat(" ", 4+width+2)
	ew.Printf("%s\n\n", tableLegend)
	area := preflight.Area("")
	for _, c := range rep.Checks {
		if a := preflight.AreaOf(c.ID); a != area {
			if area != "" {
				ew.Printf("\n")
			}
			area = a
			title := a.Title()
			if color {
				title = "\x1b[1m" + title + ansiReset
			}
			ew.Printf("%s\n", title)
		}
		// The messages quote the cluster and the configurations (an HA state, a queue, a node
		// label, a key): escaped, unlike the table's own colours.
		ew.Printf("  %s %-*s  %s\n", paint(c.Status, statusMark(c.Status)), width, cmdutil.Printable(c.ID), cmdutil.Printable(c.Message))
		if c.Status == preflight.StatusWarn || c.Status == preflight.StatusFail {
			if c.Fix != "" {
				ew.Printf("%sfix: %s\n", indent, cmdutil.Printable(c.Fix))
			}
			if c.Source != "" {
				ew.Printf("%sat:  %s\n", indent, cmdutil.Printable(c.Source))
			}
		}
	}
	verdict := rep.Verdict()
	if color {
		st := preflight.StatusPass
		switch c := rep.Counts(); {
		case c.Fail > 0 || !rep.OK:
			st = preflight.StatusFail
		case c.Warn > 0:
			st = preflight.StatusWarn
		}
		verdict = paint(st, verdict)
	}
	ew.Printf("\n%s\n", verdict)
	return ew.Err
}
