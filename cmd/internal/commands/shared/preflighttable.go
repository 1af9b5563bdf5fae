package shared

import (
	"io"
	"strings"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/preflight"
)

// statusStyles are the table's symbol and ANSI colour of each status; skip (and anything else)
// is "-", dimmed.
var statusStyles = map[preflight.Status]struct{ mark, color string }{
	preflight.StatusPass: {"✓", "\x1b[32m"},
	preflight.StatusWarn: {"!", "\x1b[33m"},
	preflight.StatusFail: {"✗", "\x1b[31m"},
}

// statusMark is the table's symbol of a status.
func statusMark(s preflight.Status) string {
	if st, ok := statusStyles[s]; ok {
		return st.mark
	}
	return "-"
}

// statusColor is the ANSI colour of a status.
func statusColor(s preflight.Status) string {
	if st, ok := statusStyles[s]; ok {
		return st.color
	}
	return "\x1b[2m"
}

const ansiReset = "\x1b[0m"

// tableLegend opens the table. Many ids name the problem their check looks for
// (flink.no-yarn-config-key), so a passing line alone would read like a finding.
const tableLegend = `✓ passed, ! warning, ✗ failed, - skipped. A check id such as flink.no-yarn-config-key
names the problem the check looks for: ✓ in front of it means that problem was not found.`

// WritePreflightTable writes a preflight report in its human form (preflight's, and submit's when
// its live preflight fails): the legend, then the checks grouped by area, each with its status mark, id and message, the fix and source under findings, and the verdict last. The checks' text
// is escaped (cmdutil.Printable); with color, the marks and the verdict are painted with ANSI colours.
func WritePreflightTable(w io.Writer, rep *preflight.Report, color bool) error {
	ew := &cmdutil.ErrWriter{W: w}
	width := 0
	for _, c := range rep.Checks {
		width = max(width, len(c.ID))
	}
	paint := func(s preflight.Status, text string) string {
		if !color {
			return text
		}
		return statusColor(s) + text + ansiReset
	}
	indent := strings.Repeat(" ", 4+width+2)
	ew.Printf("%s\n\n", tableLegend)
	area := preflight.Area("")
	for _, c := range rep.Checks {
		if a := preflight.AreaOf(c.ID); a != area {
			if area != "" {
				ew.Printf("\n")
			}
			area = a
			title := a.Title()
			if color {
				title = "\x1b[1m" + title + ansiReset
			}
			ew.Printf("%s\n", title)
		}
		// The messages quote the cluster and the configurations (an HA state, a queue, a node
		// label, a key): escaped, unlike the table's own colours.
		ew.Printf("  %s %-*s  %s\n", paint(c.Status, statusMark(c.Status)), width, cmdutil.Printable(c.ID), cmdutil.Printable(c.Message))
		if c.Status == preflight.StatusWarn || c.Status == preflight.StatusFail {
			if c.Fix != "" {
				ew.Printf("%sfix: %s\n", indent, cmdutil.Printable(c.Fix))
			}
			if c.Source != "" {
				ew.Printf("%sat:  %s\n", indent, cmdutil.Printable(c.Source))
			}
		}
	}
	verdict := rep.Verdict()
	if color {
		st := preflight.StatusPass
		switch c := rep.Counts(); {
		case c.Fail > 0 || !rep.OK:
			st = preflight.StatusFail
		case c.Warn > 0:
			st = preflight.StatusWarn
		}
		verdict = paint(st, verdict)
	}
	ew.Printf("\n%s\n", verdict)
	return ew.Err
}
