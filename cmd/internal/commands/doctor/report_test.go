package doctor

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReportParsesBack(t *testing.T) {
	p := probeOf(1, 4, 2)
	p.Env = map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-c"}
	p.Driver.NVML = []string{"GPU-a"}
	var buf bytes.Buffer
	require.NoError(t, WriteReport(&buf, p))
	assert.True(t, strings.HasPrefix(buf.String(), ReportMarker))
	assert.Equal(t, 1, strings.Count(buf.String(), "\n"), "one line")
	logs := "==> container_1_0001_01_000002 (probe rank 0) on gpu-1:8041: stdout <==\n" + buf.String() + "trailing text\n"
	got, err := ParseReports(strings.NewReader(logs))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, *p, got[0])
}

func TestParseReportsRefusesBadReports(t *testing.T) {
	good := `{"version":1,"node":"n:1","granted":1,"listed":[],"nodeManager":{"state":"no-plugin"}}`
	for _, tc := range []struct {
		name, line, msg string
	}{
		{name: "not JSON", line: `{"version":`, msg: "not a JSON report"},
		{name: "trailing text", line: good + ` {}`, msg: "text after the report"},
		{name: "newer version", line: `{"version":2,"node":"n:1","nodeManager":{"state":"no-plugin"}}`, msg: "version 2, this yarn-er reads version 1"},
		{name: "no node", line: `{"version":1,"nodeManager":{"state":"no-plugin"}}`, msg: "names no node"},
		{name: "negative grant", line: `{"version":1,"node":"n:1","granted":-1,"nodeManager":{"state":"no-plugin"}}`, msg: "must not be negative"},
		{name: "unknown assignment state", line: `{"version":1,"node":"n:1","nodeManager":{"state":"maybe"}}`, msg: `nodeManager.state "maybe"`},
		{name: "bad minor", line: `{"version":1,"node":"n:1","listed":[{"id":"g","minor":-5}],"nodeManager":{"state":"no-plugin"}}`, msg: "minor number -5"},
		{name: "negative assigned minor", line: `{"version":1,"node":"n:1","nodeManager":{"state":"assigned","minors":[-1]}}`, msg: "minor number -1"},
		{name: "huge text", line: `{"version":1,"node":"` + strings.Repeat("x", maxText+1) + `","nodeManager":{"state":"no-plugin"}}`, msg: "a text of 4097 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := ReportMarker + good + "\n" + "x " + ReportMarker + tc.line + "\n"
			got, err := ParseReports(strings.NewReader(logs))
			require.Len(t, got, 1, "the good report is kept")
			assert.ErrorIs(t, err, ErrBadReport)
			var re *ReportError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 2, re.Line)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestParseReportsBounds(t *testing.T) {
	long := ReportMarker + strings.Repeat("x", maxReportLine+1) + "\n"
	got, err := ParseReports(strings.NewReader(long))
	assert.Empty(t, got)
	assert.ErrorIs(t, err, ErrBadReport)
	assert.Contains(t, err.Error(), "unreadable")

	var b strings.Builder
	for range maxReports + 1 {
		b.WriteString(ReportMarker + `{"version":1,"node":"n:1","nodeManager":{"state":"no-plugin"}}` + "\n")
	}
	got, err = ParseReports(strings.NewReader(b.String()))
	assert.Len(t, got, maxReports)
	assert.ErrorContains(t, err, "more than 10000 reports")
}

// FuzzParseReports: any log text gives reports and errors, never a panic, and every report
// returned passes the checks again once written back.
func FuzzParseReports(f *testing.F) {
	for _, name := range []string{"logs-isolate-3.5.0.txt", "logs-gpu-plugin-3.5.0.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(ReportMarker + `{"version":1,"node":"n:1","granted":2,"listed":[{"id":"g","minor":0,"opens":true}],"nodeManager":{"state":"assigned","minors":[0]}}` + "\n"))
	f.Add([]byte(ReportMarker + "{}\n" + ReportMarker + "[1,2]\nplain line\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseReports(bytes.NewReader(data))
		if err != nil && !errors.Is(err, ErrBadReport) {
			t.Fatalf("an error that is not ErrBadReport: %v", err)
		}
		for i := range got {
			var buf bytes.Buffer
			require.NoError(t, WriteReport(&buf, &got[i]))
			again, err := ParseReports(&buf)
			require.NoError(t, err)
			require.Len(t, again, 1)
			_ = Judge(&again[0]) // decides without a panic
		}
	})
}
