package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/internal/redact"
	"github.com/yarn-er/yarn-er/internal/webhdfs"
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
	case yarn.IsAuthError(err), errors.Is(err, submit.ErrProxyUser), errors.Is(err, webhdfs.ErrCertificate):
		return ExitAuth
	case errors.Is(err, discovery.ErrInsufficientDevices), errors.Is(err, discovery.ErrNoDevices),
		errors.Is(err, discovery.ErrLockTimeout):
		return ExitNoDevices
	}
	return ExitError
}

// ErrorText is err's message as yarn-er prints it: redacted (redact.Text, which also replaces runs
// of binary bytes) and escaped (Printable), so that a message quoting the cluster (a
// RemoteException, an application's diagnostics) cannot carry terminal controls, a bidi override
// or a line of its own. The message of one error is one line: the only newlines kept are those
// errors.Join puts between the errors it joins (at any depth of wrapping), each joined error on a
// line of its own; every other newline is escaped as \n.
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	lines := errorLines(err)
	for i, l := range lines {
		lines[i] = Printable(redact.Text(l))
	}
	return strings.Join(lines, "\n")
}

// errorLines splits err's message at the newlines errors.Join put between errors, and nowhere
// else: a wrapper's own text and a leaf's message stay whole, newlines included.
func errorLines(err error) []string {
	msg := err.Error()
	if !strings.Contains(msg, "\n") {
		return []string{msg}
	}
	var kids []error
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		kids = u.Unwrap()
		if joined(msg, kids) {
			var lines []string
			for _, k := range kids {
				lines = append(lines, errorLines(k)...)
			}
			return lines
		}
	case interface{ Unwrap() error }:
		if k := u.Unwrap(); k != nil {
			kids = []error{k}
		}
	}
	// A wrapper (fmt.Errorf's %w): its own text around its errors' messages. Where a wrapped
	// error's message holds a joined error's lines, they stay lines; the rest is text.
	lines := []string{""}
	rest := msg
	for _, k := range kids {
		if k == nil {
			continue
		}
		km := k.Error()
		i := strings.Index(rest, km)
		if i < 0 || !strings.Contains(km, "\n") {
			continue
		}
		kl := errorLines(k)
		if len(kl) == 1 {
			continue
		}
		lines[len(lines)-1] += rest[:i] + kl[0]
		lines = append(lines, kl[1:]...)
		rest = rest[i+len(km):]
	}
	lines[len(lines)-1] += rest
	return lines
}

// joined reports whether msg is the messages of errs one per line, as errors.Join writes them.
func joined(msg string, errs []error) bool {
	if len(errs) < 2 {
		return false
	}
	var b strings.Builder
	for i, e := range errs {
		if e == nil {
			return false
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String() == msg
}
