package doctor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/yarn-er/yarn-er/view"
)

// ReportMarker starts the one line of a probe's stdout that holds its report (JSON follows on
// the same line). The logs of the probe containers are read back as `yarn-er app logs` reads
// them, header lines and all: the marker finds the reports among them.
const ReportMarker = "yarn-er-doctor-report: "

// Bounds of what ParseReports accepts: a report is a few KiB; these stop garbage early.
const (
	maxReportLine = 1 << 20
	maxReports    = 10_000
	maxDevices    = 1024
	maxText       = 4096
	maxItems      = 256
)

// ErrBadReport matches every report ParseReports refuses.
var ErrBadReport = errors.New("bad probe report")

// ReportError is a report line that cannot be used: Line is its line number in the logs read.
type ReportError struct {
	Line int
	Msg  string
}

// Error names the line and what is wrong with it.
func (e *ReportError) Error() string {
	return fmt.Sprintf("probe report on line %d: %s", e.Line, e.Msg)
}

// Is makes errors.Is(err, ErrBadReport) true.
func (e *ReportError) Is(target error) bool { return target == ErrBadReport }

// WriteReport writes p as one marker line.
func WriteReport(w io.Writer, p *view.DoctorProbe) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", ReportMarker, b)
	return err
}

// ParseReports finds the probe reports in logs (the probes' stdout, as the log reader prints
// it). Every line starting with ReportMarker must hold a valid report; the bad ones come back
// as *ReportError values joined in the error, next to the good ones. Lines without the marker
// are ignored. A line longer than 1 MiB is an error (and what follows it is not read).
func ParseReports(logs io.Reader) ([]view.DoctorProbe, error) {
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 0, 64<<10), maxReportLine)
	var (
		out  []view.DoctorProbe
		errs []error
		line int
	)
	for sc.Scan() {
		line++
		text := sc.Bytes()
		i := bytes.Index(text, []byte(ReportMarker))
		if i < 0 {
			continue
		}
		if len(out) >= maxReports {
			errs = append(errs, &ReportError{Line: line, Msg: fmt.Sprintf("more than %d reports: the rest are ignored", maxReports)})
			break
		}
		p, err := parseReport(text[i+len(ReportMarker):])
		if err != nil {
			errs = append(errs, &ReportError{Line: line, Msg: err.Error()})
			continue
		}
		out = append(out, *p)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &ReportError{Line: line + 1, Msg: fmt.Sprintf("unreadable: %v", err)})
	}
	return out, errors.Join(errs...)
}

// parseReport decodes and checks one report's JSON.
func parseReport(b []byte) (*view.DoctorProbe, error) {
	var p view.DoctorProbe
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not a JSON report: %v", err)
	}
	if dec.More() {
		return nil, errors.New("text after the report's JSON")
	}
	if p.Version != view.DoctorProbeVersion {
		return nil, fmt.Errorf("version %d, this yarn-er reads version %d: run doctor with the yarn-er the probes ran (--yarn-er-binary)", p.Version, view.DoctorProbeVersion)
	}
	if p.Node == "" {
		return nil, errors.New("names no node")
	}
	if p.Granted < 0 {
		return nil, fmt.Errorf("granted %d GPUs: must not be negative", p.Granted)
	}
	if len(p.Listed) > maxDevices || len(p.NodeManager.Minors) > maxDevices || len(p.Driver.NVML) > maxDevices ||
		len(p.Driver.Procfs) > maxDevices {
		return nil, fmt.Errorf("more than %d devices", maxDevices)
	}
	if len(p.Env) > maxItems || len(p.Cgroup.Rules) > maxItems || len(p.Errors) > maxItems || len(p.Coordination.Held) > maxItems {
		return nil, fmt.Errorf("more than %d variables, rules or errors", maxItems)
	}
	texts := []string{p.Node, p.NodeHTTP, p.Container, p.Backend, p.NodeManager.State, p.NodeManager.Detail,
		p.Cgroup.Version, p.Cgroup.Path, p.Cgroup.Detail, p.Driver.Version, p.Driver.NVMLDetail, p.Driver.ProcfsDetail,
		p.Driver.Agree, p.Executor.Class, p.Executor.Plugins, p.Executor.CgroupsMount, p.Executor.Source,
		p.Coordination.File, p.Coordination.Detail}
	for _, h := range p.Coordination.Held {
		texts = append(texts, h.Key)
	}
	for k, v := range p.Env {
		texts = append(texts, k, v)
	}
	for _, d := range p.Listed {
		texts = append(texts, d.ID, d.Error)
		if d.Minor < -1 {
			return nil, fmt.Errorf("device %q has minor number %d", d.ID, d.Minor)
		}
	}
	for _, m := range p.NodeManager.Minors {
		if m < 0 {
			return nil, fmt.Errorf("the NodeManager's assignment has minor number %d", m)
		}
	}
	texts = append(texts, p.Cgroup.Rules...)
	texts = append(texts, p.Errors...)
	texts = append(texts, p.Driver.NVML...)
	texts = append(texts, p.Driver.Procfs...)
	// encoding/json has replaced any byte that is not UTF-8 already.
	for _, t := range texts {
		if len(t) > maxText {
			return nil, fmt.Errorf("a text of %d bytes (at most %d)", len(t), maxText)
		}
	}
	switch p.NodeManager.State {
	case AssignAssigned, AssignNone, AssignNoPlugin, AssignUnreachable:
	default:
		return nil, fmt.Errorf("nodeManager.state %q: want %s", p.NodeManager.State,
			strings.Join([]string{AssignAssigned, AssignNone, AssignNoPlugin, AssignUnreachable}, ", "))
	}
	return &p, nil
}

// The states of view.DoctorAssignment.
const (
	AssignAssigned    = "assigned"
	AssignNone        = "no-assignments"
	AssignNoPlugin    = "no-plugin"
	AssignUnreachable = "unreachable"
)
