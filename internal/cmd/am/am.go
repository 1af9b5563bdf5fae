// Package am is the hidden `yarn-er am`: the ApplicationMaster that `yarn-er submit` starts inside
// YARN.
package am

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/internal/cmdutil"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
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
	// The AM's memory: drop the pages of the binary that start-up mapped and the AM does not
	// use again, and collect the (small) heap more often than Go's default, unless $GOGC says
	// otherwise (docs/benchmarks.md has the figures).
	released := releaseBinaryPages()
	if f.Env.Getenv("GOGC") == "" {
		debug.SetGCPercent(amGCPercent)
	}
	logger := f.Logger()
	if !opts.LogLevelSet {
		logger = slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	path := f.Env.Getenv(jobspec.EnvSpecFile)
	if path == "" {
		path = jobspec.FileName
	}
	spec, err := readSpec(path)
	if err != nil {
		return &cmdutil.FindingsError{Summary: err.Error()}
	}
	amOpts, err := am.FromEnv(f.Env.Getenv)
	if err != nil {
		if errors.Is(err, amrm.ErrNoToken) || errors.Is(err, records.ErrBadTokenFile) || errors.Is(err, os.ErrNotExist) {
			return authFailure(f, err)
		}
		return err
	}
	amOpts.Logger = logger
	id := amOpts.Identity
	logger.Info("yarn-er am: starting", "app", id.AppID, "attempt", id.Attempt, "maxAttempts", max(id.MaxAttempts, spec.MaxAttempts),
		"name", spec.Name, "containers", spec.Containers, "command", strings.Join(spec.Command, " "))
	res, err := am.Run(opts.Ctx, spec, amOpts)
	if res != nil {
		mem := procStatusKiB()
		logger.Info("yarn-er am: done", "status", res.Status.String(), "restarts", res.Restarts, "heartbeats", res.Heartbeats,
			"registeredAfter", res.Registered, "allAllocatedAfter", res.AllAllocated,
			"stagingRemoved", res.StagingRemoved, "startupPagesReleasedKiB", released, "peakRSSKiB", mem["VmHWM"],
			"rssAnonKiB", mem["RssAnon"], "rssFileKiB", mem["RssFile"])
	}
	switch {
	case errors.Is(err, am.ErrKilled):
		return &cmdutil.SilentError{Code: cmdutil.ExitInterrupted}
	case errors.Is(err, amrm.ErrInvalidToken), errors.Is(err, amrm.ErrAccessDenied), errors.Is(err, amrm.ErrAuthentication):
		return authFailure(f, err)
	}
	return err
}

// amGCPercent is the AM's GOGC: its live heap is a few MiB, so a collection costs little, and
// with Go's default of 100 the heap grows to twice that before one.
const amGCPercent = 25

// readSpec reads and validates the job spec, refusing oversized files. (The NodeManager localizes
// it as a symbolic link into its private cache, so links are followed.)
func readSpec(path string) (*jobspec.Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("job spec %s: %w (yarn-er submit stages it as %s)", path, err, jobspec.FileName)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, jobspec.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("job spec %s: %w", path, err)
	}
	spec, err := jobspec.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

// authFailure reports a token problem of the AM (exit 4).
func authFailure(f *cmdutil.Factory, err error) error {
	fmt.Fprintf(f.IO.ErrOut, "yarn-er: %v\n", err)
	return &cmdutil.SilentError{Code: cmdutil.ExitAuth}
}

// procStatusKiB returns the KiB fields of /proc/self/status (VmHWM: the peak resident set;
// RssAnon, RssFile), read once; a field is 0 when unknown.
func procStatusKiB() map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		rest = strings.TrimSpace(rest)
		if !ok || !strings.HasSuffix(rest, " kB") {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSuffix(rest, " kB"), 10, 64); err == nil {
			out[name] = v
		}
	}
	return out
}
