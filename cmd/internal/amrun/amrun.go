// Package amrun is the process around package am: what `yarn-er am` and the small yarn-er-am
// binary both run in the ApplicationMaster container. It reads the job spec and the AM's identity
// and tokens from the container's environment, trims the process's memory, runs the
// application, logs the outcome with the AM's memory figures, and classifies the failures into
// the documented exit codes (ExitCode).
package amrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// The exit codes of `yarn-er am` (the same numbers as the CLI's: help exit-codes).
const (
	// ExitOK: the application SUCCEEDED.
	ExitOK = 0
	// ExitFailed: the application FAILED, or the attempt could not run.
	ExitFailed = 1
	// ExitSpec: the job spec is missing, unreadable or invalid.
	ExitSpec = 3
	// ExitAuth: no token file, or the ResourceManager refused the token.
	ExitAuth = 4
	// ExitKilled: stopped by a signal before the application ended (128 + SIGINT's number; the
	// process exits with 128 + the signal's number).
	ExitKilled = 130
)

// GCPercent is the AM's GOGC unless $GOGC says otherwise: its live heap is a few MiB, so a
// collection costs little, and with Go's default of 100 the heap grows to twice that before one.
const GCPercent = 25

// MaxProcs is the AM's GOMAXPROCS unless $GOMAXPROCS says otherwise: the AM waits on the network
// almost all the time (its CPU time is a few milliseconds per container), and every further
// processor costs memory (its allocation cache and the garbage collector's worker): a second one
// 0.1–0.3 MiB, and on a NodeManager with 32 cores the default would add about 1.5 MiB; the wall
// time is the same with one or two (docs/benchmarks.md).
const MaxProcs = 1

// Config is what Run takes from its process.
type Config struct {
	// Getenv reads the container's environment.
	Getenv func(string) string
	// Logger receives the AM's log; nil logs at info level as text to Stderr, which YARN keeps
	// as the AM's log.
	Logger *slog.Logger
	// Stderr is where the default logger writes.
	Stderr io.Writer
	// Tokens makes the TokenRefresher of a job that asks for fresh HDFS tokens (spec.Tokens:
	// submit --ship-keytab). The full yarn-er binary supplies it; nil (the small AM binary, which
	// carries no Kerberos library) refuses such a job (am.ErrNoTokenRefresher).
	Tokens func(spec *jobspec.Spec, logger *slog.Logger) (am.TokenRefresher, error)
}

// SpecError says that the job spec is missing, unreadable or invalid (ExitSpec).
type SpecError struct{ Err error }

// Error is the spec's problem, naming the file.
func (e *SpecError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *SpecError) Unwrap() error { return e.Err }

// AuthError says that the AM has no usable token, or that the ResourceManager refused it
// (ExitAuth).
type AuthError struct{ Err error }

// Error is the token problem.
func (e *AuthError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// Run runs the ApplicationMaster of the job spec in ./job.json (or $YARN_ER_SPEC) until the
// application ends or ctx ends. It returns nil when the application SUCCEEDED, a *SpecError or
// *AuthError as above, an error wrapping am.ErrKilled when ctx ended first, and other errors
// (the application FAILED: *am.RankError; or the attempt could not run).
func Run(ctx context.Context, cfg Config) error {
	// The AM's memory: drop the pages of the binary that start-up mapped and the AM does not
	// use again, and collect the (small) heap more often than Go's default (docs/benchmarks.md
	// has the figures).
	released := releaseBinaryPages()
	if cfg.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if cfg.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > MaxProcs {
		runtime.GOMAXPROCS(MaxProcs)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	path := cfg.Getenv(jobspec.EnvSpecFile)
	if path == "" {
		path = jobspec.FileName
	}
	spec, err := readSpec(path)
	if err != nil {
		return &SpecError{Err: err}
	}
	amOpts, err := am.FromEnv(cfg.Getenv)
	if err != nil {
		if errors.Is(err, amrm.ErrNoToken) || errors.Is(err, records.ErrBadTokenFile) || errors.Is(err, os.ErrNotExist) {
			return &AuthError{Err: err}
		}
		return err
	}
	amOpts.Logger = logger
	if spec.Tokens != nil && cfg.Tokens != nil {
		if amOpts.Tokens, err = cfg.Tokens(spec, logger); err != nil {
			return &AuthError{Err: err}
		}
	}
	id := amOpts.Identity
	attrs := []any{"app", id.AppID, "attempt", id.Attempt, "maxAttempts", max(id.MaxAttempts, spec.MaxAttempts),
		"name", spec.Name, "containers", spec.Containers}
	if len(spec.Roles) == 0 {
		attrs = append(attrs, "command", strings.Join(spec.Command, " "))
	} else {
		roles := make([]string, len(spec.Roles))
		for i, r := range spec.Roles {
			roles[i] = fmt.Sprintf("%s×%d", r.Name, r.Containers)
		}
		attrs = append(attrs, "roles", strings.Join(roles, ","))
	}
	logger.Info("yarn-er am: starting", attrs...)
	res, err := am.Run(ctx, spec, amOpts)
	if res != nil {
		mem := procStatusKiB()
		logger.Info("yarn-er am: done", "status", res.Status.String(), "restarts", res.Restarts, "heartbeats", res.Heartbeats,
			"registeredAfter", res.Registered, "allAllocatedAfter", res.AllAllocated,
			"stagingRemoved", res.StagingRemoved, "startupPagesReleasedKiB", released, "peakRSSKiB", mem["VmHWM"],
			"rssAnonKiB", mem["RssAnon"], "rssFileKiB", mem["RssFile"])
	}
	if errors.Is(err, amrm.ErrInvalidToken) || errors.Is(err, amrm.ErrAccessDenied) || errors.Is(err, amrm.ErrAuthentication) {
		return &AuthError{Err: err}
	}
	return err
}

// ExitCode is the exit code of Run's error.
func ExitCode(err error) int {
	var (
		spec *SpecError
		auth *AuthError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &spec):
		return ExitSpec
	case errors.As(err, &auth):
		return ExitAuth
	case errors.Is(err, am.ErrKilled):
		return ExitKilled
	}
	return ExitFailed
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
