package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProgressTTYAndPlain(t *testing.T) {
	var tty bytes.Buffer
	p := &progress{w: &tty, tty: true}
	p.line("submitted application_1_0001")
	p.live("staging 1.0 MiB/2.0 MiB", false)
	p.live("staging 2.0 MiB/2.0 MiB", false)
	p.line("staged 2.0 MiB")
	p.live("application_1_0001 RUNNING", false)
	p.live("application_1_0001 FINISHED/SUCCEEDED", true)
	p.end()
	assert.Equal(t, "submitted application_1_0001\n"+
		"\r\x1b[Kstaging 1.0 MiB/2.0 MiB\r\x1b[Kstaging 2.0 MiB/2.0 MiB\n"+
		"staged 2.0 MiB\n"+
		"\r\x1b[Kapplication_1_0001 RUNNING\r\x1b[Kapplication_1_0001 FINISHED/SUCCEEDED\n", tty.String())

	var plain bytes.Buffer
	p = &progress{w: &plain}
	p.live("staging 1.0 MiB/2.0 MiB", false)
	p.live("staging 1.5 MiB/2.0 MiB", false) // throttled: less than 2 s after the last
	p.live("staging 2.0 MiB/2.0 MiB", true)
	p.live("application_1_0001 RUNNING", false)
	p.live("application_1_0001 RUNNING", false) // unchanged: not repeated
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	assert.Len(t, lines, 3, plain.String())
	for _, l := range lines {
		assert.Contains(t, l, " yarn-er: ")
		assert.NotContains(t, l, "\x1b")
	}

	var none bytes.Buffer
	p = &progress{w: &none, none: true}
	p.line("x")
	p.live("y", true)
	assert.Empty(t, none.String())
}
