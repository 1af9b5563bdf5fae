package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/jobspec"
)

func newAMCmd(a *app) *cobra.Command {
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runAM(cmd, a) },
	}
}

func runAM(cmd *cobra.Command, a *app) error {
	logger := a.logger
	if !cmd.Flags().Changed("log-level") && !a.verbose && a.getenv(envName("log-level")) == "" {
		logger = slog.New(slog.NewTextHandler(a.streams.Err, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	path := a.getenv(jobspec.EnvSpecFile)
	if path == "" {
		path = jobspec.FileName
	}
	spec, err := readSpec(path)
	if err != nil {
		return &findingsError{summary: err.Error()}
	}
	opts, err := am.FromEnv(a.getenv)
	if err != nil {
		if errors.Is(err, amrm.ErrNoToken) || errors.Is(err, amrm.ErrBadTokenFile) || errors.Is(err, os.ErrNotExist) {
			return authFailure(a, err)
		}
		return err
	}
	opts.Logger = logger
	id := opts.Identity
	logger.Info("yarn-er am: starting", "app", id.AppID, "attempt", id.Attempt, "maxAttempts", max(id.MaxAttempts, spec.MaxAttempts),
		"name", spec.Name, "containers", spec.Containers, "command", strings.Join(spec.Command, " "))
	res, err := am.Run(cmd.Context(), spec, opts)
	if res != nil {
		logger.Info("yarn-er am: done", "status", res.Status.String(), "restarts", res.Restarts, "heartbeats", res.Heartbeats,
			"registeredAfter", res.Registered, "allAllocatedAfter", res.AllAllocated,
			"stagingRemoved", res.StagingRemoved, "peakRSSKiB", procStatusKiB("VmHWM"),
			"rssAnonKiB", procStatusKiB("RssAnon"), "rssFileKiB", procStatusKiB("RssFile"))
	}
	switch {
	case errors.Is(err, am.ErrKilled):
		return &silentError{code: exitInterrupted}
	case errors.Is(err, amrm.ErrInvalidToken), errors.Is(err, amrm.ErrAccessDenied), errors.Is(err, amrm.ErrAuthentication):
		return authFailure(a, err)
	}
	return err
}

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
func authFailure(a *app, err error) error {
	fmt.Fprintf(a.streams.Err, "yarn-er: %v\n", err)
	return &silentError{code: exitAuth}
}

// procStatusKiB is a KiB field of /proc/self/status (VmHWM: the peak resident set), 0 when unknown.
func procStatusKiB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}
