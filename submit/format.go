package submit

import (
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/records"

	"github.com/yarn-er/yarn-er/stage"
)

// FormatBytes renders a byte count with a binary unit: "512 B", "3.2 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// FormatUpload renders a staging progress report as one line: "staging 3.0 MiB/12.0 MiB (25%)
// at 40.1 MiB/s, file 1/3 yarn-er".
func FormatUpload(p stage.Progress) string {
	pct := 100
	if p.Total > 0 {
		pct = int(p.Bytes * 100 / p.Total)
	}
	file := min(p.Files+1, p.FileCount)
	if p.Done {
		file = p.Files
	}
	return fmt.Sprintf("staging %s/%s (%d%%) at %s/s, file %d/%d %s",
		FormatBytes(p.Bytes), FormatBytes(p.Total), pct, FormatBytes(int64(p.Rate())), file, p.FileCount, p.Name)
}

// maxDiagnostics is how much of the diagnostics one progress line shows.
const maxDiagnostics = 160

// FormatEvent renders a followed application's state as one line: "application_1_0001 RUNNING:
// 8 containers allocated, 8 running, 8 GPUs, 2/8 ranks done" (want is the number of ranks, 0
// when unknown: the AM's progress is shown instead).
func FormatEvent(e Event, want int) string {
	a := e.App
	var b strings.Builder
	b.WriteString(a.ID + " " + string(a.State))
	if a.State.Terminal() {
		b.WriteString("/" + a.FinalStatus.String())
	}
	if a.State == records.AppRunning {
		fmt.Fprintf(&b, ": %d containers allocated, %d running", e.Allocated, e.Running)
		if g := e.GPUs(); g > 0 {
			fmt.Fprintf(&b, ", %d GPUs", g)
		}
		if want > 0 {
			// The AM's progress is the share of ranks that exited 0.
			done := min(int(a.Progress*float64(want)/100+0.5), want)
			fmt.Fprintf(&b, ", %d/%d ranks done", done, want)
		} else {
			fmt.Fprintf(&b, ", progress %d%%", int(a.Progress))
		}
	}
	if d := strings.TrimSpace(a.Diagnostics); d != "" && (a.State.Terminal() || a.State == records.AppAccepted) {
		if i := strings.IndexByte(d, '\n'); i >= 0 {
			d = d[:i] + " …"
		}
		if r := []rune(d); len(r) > maxDiagnostics {
			d = string(r[:maxDiagnostics]) + " …"
		}
		b.WriteString(" — " + d)
	}
	return b.String()
}
