package cmdutil

import (
	"bytes"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// IOStreams are the standard streams a command reads and writes. Tests inject buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// IsOutTerminal reports whether Out is a terminal.
func (s *IOStreams) IsOutTerminal() bool { return isTerminal(s.Out) }

// IsErrTerminal reports whether ErrOut is a terminal.
func (s *IOStreams) IsErrTerminal() bool { return isTerminal(s.ErrOut) }

// IsInTerminal reports whether In is a terminal.
func (s *IOStreams) IsInTerminal() bool {
	f, ok := s.In.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TestStreams returns streams on buffers: empty stdin, and the buffers stdout and stderr go to.
func TestStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &out, &errOut
}
