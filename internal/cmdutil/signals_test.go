package cmdutil_test

import (
	"bytes"
	"context"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
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

func TestWatchSignalsCancelsWithTheSignal(t *testing.T) {
	for _, tc := range []struct {
		sig  os.Signal
		code int
	}{{os.Interrupt, cmdutil.ExitInterrupted}, {syscall.SIGTERM, cmdutil.ExitTerminated}} {
		sigs := make(chan os.Signal, 2)
		rec := newExitRecorder()
		var errOut bytes.Buffer
		ctx, stop := cmdutil.WatchSignals(context.Background(), sigs, time.Hour, rec.exit, &errOut)
		assert.Nil(t, cmdutil.SignalCause(ctx))
		sigs <- tc.sig
		<-ctx.Done()
		sig := cmdutil.SignalCause(ctx)
		require.NotNil(t, sig)
		assert.Equal(t, tc.code, sig.Code)
		assert.Equal(t, tc.code, cmdutil.ExitCode(sig))
		stop() // the command returned within the grace period: no forced exit
		stop()
		rec.mu.Lock()
		assert.Empty(t, rec.codes)
		rec.mu.Unlock()
	}
}

// TestWatchSignalsSecondSignalExitsAtOnce: with an hour of grace, a second signal still ends the
// process, with the first signal's code.
func TestWatchSignalsSecondSignalExitsAtOnce(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	rec := newExitRecorder()
	var errOut bytes.Buffer // written before exit is called, read after: no race
	ctx, stop := cmdutil.WatchSignals(context.Background(), sigs, time.Hour, rec.exit, &errOut)
	defer stop()
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	sigs <- os.Interrupt
	<-rec.done
	rec.mu.Lock()
	assert.Equal(t, []int{cmdutil.ExitTerminated}, rec.codes)
	rec.mu.Unlock()
	assert.Contains(t, errOut.String(), "terminated again")
}

// TestWatchSignalsGraceExpires: a command that does not return after the grace period is ended.
func TestWatchSignalsGraceExpires(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	rec := newExitRecorder()
	var errOut bytes.Buffer // written before exit is called, read after: no race
	_, stop := cmdutil.WatchSignals(context.Background(), sigs, time.Millisecond, rec.exit, &errOut)
	defer stop()
	sigs <- os.Interrupt
	<-rec.done
	rec.mu.Lock()
	assert.Equal(t, []int{cmdutil.ExitInterrupted}, rec.codes)
	rec.mu.Unlock()
	assert.Contains(t, errOut.String(), "interrupted: still busy")
}

func TestWatchSignalsStopWithoutSignal(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	rec := newExitRecorder()
	ctx, stop := cmdutil.WatchSignals(context.Background(), sigs, time.Millisecond, rec.exit, &bytes.Buffer{})
	stop()
	<-ctx.Done()
	assert.Nil(t, cmdutil.SignalCause(ctx))
}

// TestTakeSignals: while a command holds the signals (a prompt), neither the grace nor another
// signal ends the process; once it gives them back, the grace runs again and ends it.
func TestTakeSignals(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	rec := newExitRecorder()
	var errOut bytes.Buffer
	ctx, stop := cmdutil.WatchSignals(context.Background(), sigs, 300*time.Millisecond, rec.exit, &errOut)
	defer stop()
	sigs <- os.Interrupt
	<-ctx.Done()
	assert.False(t, cmdutil.SignalHandled(ctx))
	give := cmdutil.TakeSignals(ctx)
	sigs <- os.Interrupt // the prompt's own answer: not the watch's
	// Several grace periods pass; nothing ends the process while the signals are taken.
	time.Sleep(time.Second)
	assert.True(t, cmdutil.SignalHandled(ctx))
	rec.mu.Lock()
	assert.Empty(t, rec.codes)
	rec.mu.Unlock()
	give()
	give() // once only
	<-rec.done
	rec.mu.Lock()
	assert.Equal(t, []int{cmdutil.ExitInterrupted}, rec.codes)
	rec.mu.Unlock()

	// Without a watch, TakeSignals does nothing.
	cmdutil.TakeSignals(context.Background())()
}
