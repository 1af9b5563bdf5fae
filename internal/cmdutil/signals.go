package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// SignalGrace is how long a command has, after the first SIGINT or SIGTERM, to end by itself (its
// context is cancelled at once) before the process exits anyway.
const SignalGrace = 3 * time.Second

// WatchSignals returns a context that the first signal from sigs cancels with a *SignalError as
// its cause (context.Cause): commands blocked on the network return at once. A command blocked
// where no context reaches (the open or read of a FIFO, a system call) does not: after grace, or
// at a second signal, WatchSignals calls exit with the first signal's code (130 for SIGINT, 143
// for SIGTERM), writing one line to errOut. stop ends the watch; call it once the command has
// returned.
func WatchSignals(parent context.Context, sigs <-chan os.Signal, grace time.Duration, exit func(int), errOut io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		var first *SignalError
		select {
		case s := <-sigs:
			first = signalError(s)
		case <-done:
			return
		}
		cancel(first)
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case s := <-sigs:
			fmt.Fprintf(errOut, "yarn-er: %s again (%s): exiting now\n", first.Name, signalError(s).Name)
		case <-timer.C:
			fmt.Fprintf(errOut, "yarn-er: %s: still busy after %s, exiting\n", first.Name, grace)
		case <-done:
			return
		}
		exit(first.Code)
	}()
	var once bool
	return ctx, func() {
		if !once {
			once = true
			close(done)
			cancel(nil)
		}
	}
}

// signalError is the SignalError of s: 128 + the signal number.
func signalError(s os.Signal) *SignalError {
	switch s {
	case os.Interrupt:
		return &SignalError{Code: ExitInterrupted, Name: "interrupted"}
	case syscall.SIGTERM:
		return &SignalError{Code: ExitTerminated, Name: "terminated"}
	}
	if n, ok := s.(syscall.Signal); ok {
		return &SignalError{Code: 128 + int(n), Name: n.String()}
	}
	return &SignalError{Code: ExitError, Name: s.String()}
}

// SignalCause returns the *SignalError that cancelled ctx (see WatchSignals), or nil.
func SignalCause(ctx context.Context) *SignalError {
	se, _ := context.Cause(ctx).(*SignalError)
	return se
}
