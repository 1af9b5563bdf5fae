package tabletest

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that records failures instead of failing the test; FailNow ends the
// goroutine that calls it, as testing.T's does.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true; runtime.Goexit() }

// run calls WantErr on its own goroutine; stopped reports that a require ended it.
func run(t *testing.T, err error, want string, targets ...error) (r *recorder, done, stopped bool) {
	r = &recorder{TB: t}
	stopped = true
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		done = WantErr(r, err, want, targets...)
		stopped = false
	}()
	<-ended
	return r, done, stopped
}

func TestWantErr(t *testing.T) {
	errSentinel := errors.New("sentinel")
	for _, tc := range []struct {
		name    string
		err     error
		want    string
		targets []error
		// done is what WantErr returns; stopped: it ended the case through FailNow instead.
		done, stopped, failed bool
	}{
		{name: "no error wanted, none"},
		{name: "no error wanted, one", err: errors.New("boom"), stopped: true, failed: true},
		{name: "error wanted, none", want: "boom", stopped: true, failed: true},
		{name: "error wanted, matching", err: errors.New("a boom here"), want: "boom", done: true},
		{name: "error wanted, other message", err: errors.New("bang"), want: "boom", done: true, failed: true},
		{name: "error wanted, wrapping the target", err: fmt.Errorf("x: %w: boom", errSentinel), want: "boom",
			targets: []error{errSentinel}, done: true},
		{name: "error wanted, not the target", err: errors.New("boom"), want: "boom",
			targets: []error{errSentinel}, done: true, failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, done, stopped := run(t, tc.err, tc.want, tc.targets...)
			assert.Equal(t, tc.stopped, stopped, "stopped")
			assert.Equal(t, tc.done, done, "returned")
			assert.Equal(t, tc.failed, r.failed, "failed")
		})
	}
}
