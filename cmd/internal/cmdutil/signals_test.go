package cmdutil_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

// exitRecorder records the code WatchSignals exits with.
type exitRecorder struct {
	mu    sync.Mutex
	codes []int
	done  chan struct{}
}

func newExitRecorder() *exitRecorder { return &exitRecorder{done: make(chan struct{})} }

func (r *exitRecorder) exit(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.codes = append(r.codes, code)
	if len(r.codes) == 1 {
		close(r.done)
	}
}

// got returns the codes recorded so far.
func (r *exitRecorder) got() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.codes)
}

// watch is WatchSignals on a channel of its own, with its exits recorded and its messages kept.
type watch struct {
	sigs   chan os.Signal
	rec    *exitRecorder
	errOut *bytes.Buffer // written before exit is called, read after: no race
	ctx    context.Context
	stop   func()
}

// newWatch starts a watch with the grace period grace; it is stopped when the test ends.
func newWatch(t *testing.T, grace time.Duration) *watch {
	w := &watch{sigs: make(chan os.Signal, 2), rec: newExitRecorder(), errOut: &bytes.Buffer{}}
	w.ctx, w.stop = cmdutil.WatchSignals(context.Background(), w.sigs, grace, w.rec.exit, w.errOut)
	t.Cleanup(w.stop)
	return w
}

func TestWatchSignalsCancelsWithTheSignal(t *testing.T) {
	for _, tc := range []struct {
		sig  os.Signal
		code int
	}{{os.Interrupt, cmdutil.ExitInterrupted}, {syscall.SIGTERM, cmdutil.ExitTerminated}} {
		w := newWatch(t, time.Hour)
		assert.Nil(t, cmdutil.SignalCause(w.ctx))
		w.sigs <- tc.sig
		<-w.ctx.Done()
		sig := cmdutil.SignalCause(w.ctx)
		require.NotNil(t, sig)
		assert.Equal(t, tc.code, sig.Code)
		assert.Equal(t, tc.code, cmdutil.ExitCode(sig))
		w.stop() // the command returned within the grace period: no forced exit
		w.stop()
		assert.Empty(t, w.rec.got())
	}
}

// TestWatchSignalsEndsTheProcess: with an hour of grace, a second signal still ends the process,
// with the first signal's code; a command that does not return after the grace period is ended.
func TestWatchSignalsEndsTheProcess(t *testing.T) {
	for _, tc := range []struct {
		name    string
		grace   time.Duration
		signals []os.Signal // each after the watch has cancelled on the first
		code    int
		message string
	}{
		{"second signal exits at once", time.Hour, []os.Signal{syscall.SIGTERM, os.Interrupt}, cmdutil.ExitTerminated, "terminated again"},
		{"grace expires", time.Millisecond, []os.Signal{os.Interrupt}, cmdutil.ExitInterrupted, "interrupted: still busy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatch(t, tc.grace)
			w.sigs <- tc.signals[0]
			for _, sig := range tc.signals[1:] {
				<-w.ctx.Done()
				w.sigs <- sig
			}
			<-w.rec.done
			assert.Equal(t, []int{tc.code}, w.rec.got())
			assert.Contains(t, w.errOut.String(), tc.message)
		})
	}
}

func TestWatchSignalsStopWithoutSignal(t *testing.T) {
	w := newWatch(t, time.Millisecond)
	w.stop()
	<-w.ctx.Done()
	assert.Nil(t, cmdutil.SignalCause(w.ctx))
}

// TestTakeSignals: while a command holds the signals (a prompt), neither the grace nor another
// signal ends the process; once it gives them back, the grace runs again and ends it.
func TestTakeSignals(t *testing.T) {
	w := newWatch(t, 300*time.Millisecond)
	w.sigs <- os.Interrupt
	<-w.ctx.Done()
	assert.False(t, cmdutil.SignalHandled(w.ctx))
	give := cmdutil.TakeSignals(w.ctx)
	w.sigs <- os.Interrupt // the prompt's own answer: not the watch's
	// Several grace periods pass; nothing ends the process while the signals are taken.
	time.Sleep(time.Second)
	assert.True(t, cmdutil.SignalHandled(w.ctx))
	assert.Empty(t, w.rec.got())
	give()
	give() // once only
	<-w.rec.done
	assert.Equal(t, []int{cmdutil.ExitInterrupted}, w.rec.got())

	// Without a watch, TakeSignals does nothing.
	cmdutil.TakeSignals(context.Background())()
}
