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

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/shared"
	"github.com/yarn-er/yarn-er/conf"
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
	if err := f.Render(rep, func(w io.Writer) error { return shared.WritePreflightTable(w, rep, color) }); err != nil {
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
		Names:        append([]string(nil), shared.Argv0Names...),
		ValidateArgs: shared.ValidateDiscoverArgs,
	}
}
