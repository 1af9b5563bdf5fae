package main

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
	"github.com/yarn-er/yarn-er/preflight"
)

// preflightOptions are preflight's flags. The Hadoop and ResourceManager flags are the cluster
// commands' (clusterConn: --hadoop-conf, --rm, --user, authentication, TLS, timeouts).
type preflightOptions struct {
	flink      flinkFlags
	conn       clusterConn
	containers int
	queue      string
	strict     bool
}

func newPreflightCmd(a *app) *cobra.Command {
	o := &preflightOptions{}
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPreflight(cmd, a, o)
		},
	}
	addFlinkFlags(cmd, &o.flink)
	o.conn.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&o.containers, "containers", 0, "TaskManager containers the job needs: cluster.capacity warns when fewer fit now")
	fl.StringVar(&o.queue, "queue", "", "YARN queue to check (default Flink's yarn.application.queue, else default)")
	fl.BoolVar(&o.strict, "strict", false, "exit 3 on warnings too")
	return cmd
}

func runPreflight(cmd *cobra.Command, a *app, o *preflightOptions) error {
	if o.containers < 0 {
		return usageErrorf("--containers %d: must be 0 or more", o.containers)
	}
	fc, err := o.flink.load(a)
	if err != nil {
		return err
	}
	version, err := o.flink.flinkVersion(fc)
	if err != nil {
		return err
	}
	hc, err := o.conn.hadoop.load(a)
	if err != nil {
		return err
	}
	// Without a ResourceManager the live checks are skipped, with the reason.
	client, err := o.conn.rm.optionalClient(a, hc)
	noClient := ""
	if errors.Is(err, errNoRM) {
		noClient, err = err.Error(), nil
	}
	if err != nil {
		return err
	}
	home, homeOrigin := flinkHome(a, fc)
	in := preflight.Input{
		Flink:           fc,
		Hadoop:          hc,
		Client:          client,
		NoClientReason:  noClient,
		Containers:      o.containers,
		Queue:           strings.TrimSpace(o.queue),
		Strict:          o.strict,
		FlinkVersion:    version,
		FlinkHome:       home,
		FlinkHomeOrigin: homeOrigin,
		Discover:        discoverCommand(),
		Logger:          a.logger.With("component", "preflight"),
	}
	rep, err := preflight.Run(cmd.Context(), in)
	if err != nil {
		return err
	}
	color := isTerminal(a.streams.Out) && a.getenv("NO_COLOR") == ""
	if err := a.render(rep, func(w io.Writer) error { return writePreflightTable(w, rep, color) }); err != nil {
		return err
	}
	if rep.OK {
		return nil
	}
	if authErr := rep.AuthError(); authErr != nil {
		// exitCode maps the yarn authentication errors to exitAuth.
		return fmt.Errorf("preflight: the ResourceManager refused the credentials: %w", authErr)
	}
	c := rep.Counts()
	summary := fmt.Sprintf("preflight: %d failed, %d warnings", c.Fail, c.Warn)
	if rep.Strict() && c.Fail == 0 {
		summary += " (--strict)"
	}
	return &findingsError{summary: summary}
}

// flinkHome returns Flink's installation directory: $FLINK_HOME, else the directory above the conf/
// directory --flink-conf reads from when it is a Flink installation (it has lib/).
func flinkHome(a *app, fc *conf.FlinkConfig) (dir, origin string) {
	if h := a.getenv("FLINK_HOME"); h != "" {
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
		Names:        append([]string(nil), discoverArgv0...),
		ValidateArgs: validateDiscoverArgs,
	}
}

// validateDiscoverArgs parses args (what Flink passes after AMOUNT) with discover's own flags, as
// `yarn-er discover 1 ARGS...` would, and checks what is left with discover's argument rules.
func validateDiscoverArgs(args []string) error {
	quiet := newApp(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, func(string) string { return "" })
	root := newRootCmd(quiet)
	disc, _, err := root.Find([]string{"discover"})
	if err != nil {
		return err
	}
	if err := disc.ParseFlags(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errors.New("--help prints the help instead of discovering devices")
		}
		return discoverFlagError(disc, err)
	}
	release, _ := disc.Flags().GetBool("release")
	_, err = parseAmount(append([]string{"1"}, disc.Flags().Args()...), release)
	return err
}

// statusMark is the table's symbol of a status.
func statusMark(s preflight.Status) string {
	switch s {
	case preflight.StatusPass:
		return "✓"
	case preflight.StatusWarn:
		return "!"
	case preflight.StatusFail:
		return "✗"
	}
	return "-"
}

// statusColor is the ANSI colour of a status.
func statusColor(s preflight.Status) string {
	switch s {
	case preflight.StatusPass:
		return "\x1b[32m"
	case preflight.StatusWarn:
		return "\x1b[33m"
	case preflight.StatusFail:
		return "\x1b[31m"
	}
	return "\x1b[2m"
}

const ansiReset = "\x1b[0m"

// writePreflightTable writes the human form: the checks grouped by area, each with its status
// mark, id and message, the fix and source under findings, and the verdict last.
func writePreflightTable(w io.Writer, rep *preflight.Report, color bool) error {
	ew := &errWriter{w: w}
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
	area := preflight.Area("")
	for _, c := range rep.Checks {
		if a := preflight.AreaOf(c.ID); a != area {
			if area != "" {
				ew.printf("\n")
			}
			area = a
			title := a.Title()
			if color {
				title = "\x1b[1m" + title + ansiReset
			}
			ew.printf("%s\n", title)
		}
		ew.printf("  %s %-*s  %s\n", paint(c.Status, statusMark(c.Status)), width, c.ID, c.Message)
		if c.Status == preflight.StatusWarn || c.Status == preflight.StatusFail {
			if c.Fix != "" {
				ew.printf("%sfix: %s\n", indent, c.Fix)
			}
			if c.Source != "" {
				ew.printf("%sat:  %s\n", indent, c.Source)
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
	ew.printf("\n%s\n", verdict)
	return ew.err
}
