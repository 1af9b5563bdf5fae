package shared

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

// Progress writes the progress of submit and app wait to stderr: one live line on a terminal
// (mode auto), plain lines otherwise, nothing with mode none. Every status and message is one
// line, escaped with cmdutil.Printable: they quote the application's state and diagnostics, and
// the cluster's answers, which any YARN user can fill with terminal controls.
type Progress struct {
	w    io.Writer
	tty  bool
	none bool
	mu   sync.Mutex
	open bool   // a live line is on screen
	last string // the last plain line, not to repeat it
	at   time.Time
}

// NewProgress returns the progress writer on f's stderr for mode auto, plain or none.
func NewProgress(f *cmdutil.Factory, mode string) *Progress {
	return &Progress{w: f.IO.ErrOut, tty: mode == "auto" && f.IO.IsErrTerminal(), none: mode == "none"}
}

// Live shows a status that replaces the previous one; final marks the last of a series. Without
// a terminal, only every final status and at most one status every 2 seconds are printed.
func (p *Progress) Live(s string, final bool) {
	s = cmdutil.Printable(s)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.none:
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s", s)
		p.open = true
		if final {
			fmt.Fprintln(p.w)
			p.open = false
		}
	case s != p.last && (final || time.Since(p.at) >= 2*time.Second || !strings.HasPrefix(s, "staging")):
		fmt.Fprintf(p.w, "%s yarn-er: %s\n", time.Now().Format("15:04:05"), s)
		p.last, p.at = s, time.Now()
	}
}

// Line prints a message on a line of its own.
func (p *Progress) Line(s string) {
	s = cmdutil.Printable(s)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.none {
		return
	}
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
	if p.tty {
		fmt.Fprintln(p.w, s)
		return
	}
	fmt.Fprintf(p.w, "%s yarn-er: %s\n", time.Now().Format("15:04:05"), s)
}

// End finishes a live line.
func (p *Progress) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}
