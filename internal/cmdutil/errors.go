package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/yarn"
)

// Exit codes, a public contract (see `yarn-er help exit-codes`).
const (
	ExitOK          = 0   // success
	ExitError       = 1   // any other error
	ExitUsage       = 2   // bad flags or arguments
	ExitFindings    = 3   // validation found problems
	ExitAuth        = 4   // authentication or authorization failed
	ExitNoDevices   = 5   // not enough devices, or devices held by others
	ExitAppFailed   = 6   // the YARN application ended FAILED (submit, app wait)
	ExitAppKilled   = 7   // the YARN application was KILLED (submit, app wait)
	ExitInterrupted = 130 // SIGINT: 128 + 2
	ExitTerminated  = 143 // SIGTERM: 128 + 15
)

// UsageError is a problem with the command line: the command's usage is worth showing.
type UsageError struct {
	// Err is the problem, named with the flag or argument.
	Err error
}

// Error returns the problem's text.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the problem.
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError formatted as fmt.Errorf does (%w wraps).
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// FindingsError says that a check found problems; the findings themselves were already printed.
type FindingsError struct {
	// Summary is the one line printed after the findings, e.g. "preflight: 2 failed, 1 warnings".
	Summary string
}

// Error returns the summary.
func (e *FindingsError) Error() string { return e.Summary }

// SilentError carries an exit code for a failure whose explanation was already written (to stderr,
// or in the command's output, as preflight's verdict).
type SilentError struct {
	// Code is the exit code.
	Code int
}

// Error says the exit status; it is not printed.
func (e *SilentError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// SignalError says that the command ended because the process received a signal; its exit code is
// 128 plus the signal number (130 for SIGINT, 143 for SIGTERM).
type SignalError struct {
	// Code is the exit code: ExitInterrupted or ExitTerminated.
	Code int
	// Name is the signal's name, e.g. "terminated".
	Name string
}

// Error is the signal's name, what yarn-er prints on its way out.
func (e *SignalError) Error() string { return e.Name }

// ExitCode maps an error to the process exit code. It is the one place that does so.
func ExitCode(err error) int {
	var (
		usage    *UsageError
		findings *FindingsError
		silent   *SilentError
		sig      *SignalError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &silent):
		return silent.Code
	case errors.As(err, &sig):
		return sig.Code
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &findings):
		return ExitFindings
	case errors.Is(err, submit.ErrAppKilled):
		return ExitAppKilled
	case errors.Is(err, submit.ErrAppFailed):
		return ExitAppFailed
	case errors.Is(err, submit.ErrPreflight):
		return ExitFindings
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case yarn.IsAuthError(err):
		return ExitAuth
	case errors.Is(err, discovery.ErrInsufficientDevices), errors.Is(err, discovery.ErrNoDevices),
		errors.Is(err, discovery.ErrLockTimeout):
		return ExitNoDevices
	}
	return ExitError
}
