// Package am is the hidden `yarn-er am`: the ApplicationMaster that `yarn-er submit` starts inside
// YARN.
package am

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/am/amkerberos"
	"github.com/yarn-er/yarn-er/cmd/internal/amrun"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/jobspec"
)

// Options are am's: it has no flags of its own; the job spec and the AM's identity come from the
// container's environment.
type Options struct {
	cmdutil.Base
	// LogLevelSet says whether -v, --log-level or YARN_ER_LOG_LEVEL chose the logging; without
	// them the AM logs at info to stderr, which YARN keeps as the AM's log.
	LogLevelSet bool
}

// NewCmdAM returns `yarn-er am`; runF (nil: amRun) runs it.
func NewCmdAM(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Base: cmdutil.Base{F: f}}
	run := cmdutil.RunE(opts, runF, amRun)
	return &cobra.Command{
		Use:    "am",
		Hidden: true,
		Short:  "The ApplicationMaster of yarn-er submit (runs inside YARN; not for starting by hand)",
		Long: `am runs in the ApplicationMaster container that 'yarn-er submit' starts. It reads the job spec
from ./` + jobspec.FileName + ` (or the file named by $` + jobspec.EnvSpecFile + `) and its AMRMToken from
$HADOOP_TOKEN_FILE_LOCATION, registers with the ResourceManager, runs every rank under
'yarn-er exec', restarts failed ranks as the spec allows, unregisters with the final status and
removes the staging directory. It logs to stderr, which YARN keeps as the AM's log and shows as the
attempt's diagnostics when the AM fails.

Exit codes:
  0    the application SUCCEEDED (every rank exited 0)
  1    the application FAILED (a rank used up its restarts; unregistered FAILED with a diagnostic
       naming the rank, container, node and exit status), or the attempt could not run
       (ResourceManager unreachable, registration refused)
  3    the job spec is missing, unreadable or invalid
  4    no token file, or the ResourceManager refused the token
  130  stopped by a signal before the application ended (killed)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.LogLevelSet = cmd.Flags().Changed("log-level") || f.Verbose || f.Env.Getenv(cmdutil.EnvName("log-level")) != ""
			return run(cmd, args)
		},
	}
}

func amRun(opts *Options) error {
	f := opts.F
	cfg := amrun.Config{Getenv: f.Env.Getenv, Stderr: f.IO.ErrOut,
		Tokens: func(spec *jobspec.Spec, logger *slog.Logger) (am.TokenRefresher, error) {
			return amkerberos.New(spec, amkerberos.Options{Getenv: f.Env.Getenv, Logger: logger})
		}}
	if opts.LogLevelSet {
		cfg.Logger = f.Logger()
	}
	err := amrun.Run(opts.Ctx, cfg)
	var (
		spec *amrun.SpecError
		auth *amrun.AuthError
	)
	switch {
	case errors.As(err, &spec):
		return &cmdutil.FindingsError{Summary: spec.Error()}
	case errors.As(err, &auth):
		fmt.Fprintf(f.IO.ErrOut, "yarn-er: %v\n", auth)
		return &cmdutil.SilentError{Code: cmdutil.ExitAuth}
	case errors.Is(err, am.ErrKilled):
		return &cmdutil.SilentError{Code: cmdutil.ExitInterrupted}
	}
	return err
}
