package shared

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

func TestProgressTTYAndPlain(t *testing.T) {
	var tty bytes.Buffer
	p := &Progress{w: &tty, tty: true}
	p.Line("submitted application_1_0001")
	p.Live("staging 1.0 MiB/2.0 MiB", false)
	p.Live("staging 2.0 MiB/2.0 MiB", false)
	p.Line("staged 2.0 MiB")
	p.Live("application_1_0001 RUNNING", false)
	p.Live("application_1_0001 FINISHED/SUCCEEDED", true)
	p.End()
	assert.Equal(t, "submitted application_1_0001\n"+
		"\r\x1b[Kstaging 1.0 MiB/2.0 MiB\r\x1b[Kstaging 2.0 MiB/2.0 MiB\n"+
		"staged 2.0 MiB\n"+
		"\r\x1b[Kapplication_1_0001 RUNNING\r\x1b[Kapplication_1_0001 FINISHED/SUCCEEDED\n", tty.String())

	var plain bytes.Buffer
	p = &Progress{w: &plain}
	p.Live("staging 1.0 MiB/2.0 MiB", false)
	p.Live("staging 1.5 MiB/2.0 MiB", false) // throttled: less than 2 s after the last
	p.Live("staging 2.0 MiB/2.0 MiB", true)
	p.Live("application_1_0001 RUNNING", false)
	p.Live("application_1_0001 RUNNING", false) // unchanged: not repeated
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	assert.Len(t, lines, 3, plain.String())
	for _, l := range lines {
		assert.Contains(t, l, " yarn-er: ")
		assert.NotContains(t, l, "\x1b")
	}

	var none bytes.Buffer
	p = &Progress{w: &none, none: true}
	p.Line("x")
	p.Live("y", true)
	assert.Empty(t, none.String())
}

// TestProgressEscapesWhatTheClusterSays: a status or message quoting the cluster (an
// application's diagnostics) stays on its line with its controls visible, on a terminal and
// without one; the live line's own carriage return and erase stay.
func TestProgressEscapesWhatTheClusterSays(t *testing.T) {
	var tty bytes.Buffer
	p := &Progress{w: &tty, tty: true}
	p.Live("application_1_0001 ACCEPTED — "+cmdtest.Hostile, false)
	p.Line("preflight warning: " + cmdtest.Hostile)
	assert.Equal(t, "\r\x1b[Kapplication_1_0001 ACCEPTED — "+cmdtest.HostileEscaped+"\n"+
		"preflight warning: "+cmdtest.HostileEscaped+"\n", tty.String())

	var plain bytes.Buffer
	p = &Progress{w: &plain}
	p.Live("application_1_0001 FAILED/FAILED — "+cmdtest.Hostile, true)
	p.Line(cmdtest.Hostile)
	cmdtest.AssertTerminalSafe(t, plain.String())
	assert.Equal(t, 2, strings.Count(plain.String(), cmdtest.HostileEscaped))
	assert.Len(t, strings.Split(strings.TrimSpace(plain.String()), "\n"), 2)
}
