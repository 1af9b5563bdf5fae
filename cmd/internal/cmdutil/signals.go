package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
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
// for SIGTERM), writing one line to errOut. A command that handles the signal itself (submit's
// "kill or detach?" prompt) takes the signals with TakeSignals: meanwhile neither the grace nor
// a further signal ends the process, and the grace starts again once it gives them back. stop
// ends the watch; call it once the command has returned.
func WatchSignals(parent context.Context, sigs <-chan os.Signal, grace time.Duration, exit func(int), errOut io.Writer) (ctx context.Context, stop func()) {
	take := &signalTake{released: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, signalTakeKey{}, take))
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
		for {
			select {
			case s := <-sigs:
				if take.taken() {
					continue // the command reads it itself
				}
				fmt.Fprintf(errOut, "yarn-er: %s again (%s): exiting now\n", first.Name, signalError(s).Name)
			case <-timer.C:
				if take.taken() {
					timer.Reset(grace)
					continue
				}
				fmt.Fprintf(errOut, "yarn-er: %s: still busy after %s, exiting\n", first.Name, grace)
			case <-take.released:
				timer.Reset(grace)
				continue
			case <-done:
				return
			}
			exit(first.Code)
			return
		}
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

type signalTakeKey struct{}

// signalTake counts the commands' holds on the signals (TakeSignals).
type signalTake struct {
	mu       sync.Mutex
	n        int
	ever     bool
	released chan struct{}
}

func (t *signalTake) taken() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n > 0
}

// SignalHandled reports whether a command took the signals (TakeSignals) under ctx's watch: it
// handled the interrupt itself, and its own outcome (e.g. KILLED, exit 7) stands.
func SignalHandled(ctx context.Context) bool {
	t, _ := ctx.Value(signalTakeKey{}).(*signalTake)
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ever
}

// TakeSignals tells the watch of WatchSignals behind ctx that the command handles SIGINT and
// SIGTERM itself until it calls give: an interactive prompt that reads Ctrl-C as an answer, or
// the work that answer asks for. Meanwhile the grace period does not end the process and
// further signals are the command's (it listens with signal.Notify); after give, the grace starts
// again. Without a watch in ctx, TakeSignals does nothing.
func TakeSignals(ctx context.Context) (give func()) {
	t, _ := ctx.Value(signalTakeKey{}).(*signalTake)
	if t == nil {
		return func() {}
	}
	t.mu.Lock()
	t.n++
	t.ever = true
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			t.n--
			t.mu.Unlock()
			select {
			case t.released <- struct{}{}:
			default:
			}
		})
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
