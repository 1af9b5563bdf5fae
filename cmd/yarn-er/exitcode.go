package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/yarn"
)

// Exit codes, a public contract (see `yarn-er help exit-codes`).
const (
	exitOK          = 0 // success
	exitError       = 1 // any other error
	exitUsage       = 2 // bad flags or arguments
	exitFindings    = 3 // validation found problems
	exitAuth        = 4 // authentication or authorization failed
	exitNoDevices   = 5 // not enough devices, or devices held by others
	exitAppFailed   = 6 // the YARN application ended FAILED
	exitAppKilled   = 7 // the YARN application was KILLED
	exitInterrupted = 130
)

// usageError is a problem with the command line: the command's usage is worth showing.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// findingsError says that a check found problems; the findings themselves were already printed.
type findingsError struct{ summary string }

func (e *findingsError) Error() string { return e.summary }

// silentError carries an exit code for a failure whose explanation was already written to stderr.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitCode maps an error to the process exit code. It is the one place that does so.
func exitCode(err error) int {
	var (
		usage    *usageError
		findings *findingsError
		silent   *silentError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &silent):
		return silent.code
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &findings):
		return exitFindings
	case errors.Is(err, submit.ErrAppKilled):
		return exitAppKilled
	case errors.Is(err, submit.ErrAppFailed):
		return exitAppFailed
	case errors.Is(err, submit.ErrPreflight):
		return exitFindings
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case yarn.IsAuthError(err):
		return exitAuth
	case errors.Is(err, discovery.ErrInsufficientDevices), errors.Is(err, discovery.ErrNoDevices),
		errors.Is(err, discovery.ErrLockTimeout):
		return exitNoDevices
	}
	return exitError
}

// reportError prints err to stderr the way its kind asks for and returns the exit code.
func (a *app) reportError(root *cobra.Command, err error) int {
	code := exitCode(err)
	var silent *silentError
	if errors.As(err, &silent) {
		return code
	}
	fmt.Fprintf(a.streams.Err, "yarn-er: %v\n", err)
	if code == exitUsage {
		cmd, _, findErr := root.Find(a.args)
		if findErr != nil || cmd == nil {
			cmd = root
		}
		fmt.Fprintf(a.streams.Err, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

func newExitCodesHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "What yarn-er's exit codes mean",
		Long: `yarn-er exits with:
  0  success
  1  an error (a file that cannot be read, a cluster that cannot be reached, ...)
  2  usage: a bad flag or argument
  3  validation findings: a check (preflight, lint) found problems
  4  authentication or authorization failed (Kerberos, HTTP 401/403, bad token)
  5  not enough devices, or the devices asked for are held by other processes
  6  the YARN application ended FAILED (submit, app wait)
  7  the YARN application was KILLED (submit, app wait)
130  interrupted`,
	}
}
