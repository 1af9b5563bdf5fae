package submit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/internal/ctxsleep"
	"github.com/yarn-er/yarn-er/logagg"
	"github.com/yarn-er/yarn-er/yarn"
)

// ErrNoLogs: no container of the application has logs yarn-er can read, from a NodeManager or
// from the aggregated logs.
var ErrNoLogs = errors.New("no container logs available")

// defaultAggregationWait is how long Logs waits for the log aggregation of an ended application.
const defaultAggregationWait = 2 * time.Minute

// LogsOptions select what Logs copies.
type LogsOptions struct {
	// Container keeps one container ("" for all).
	Container string
	// Rank, when set, keeps the containers of that rank (YARN_ER_RANK), restarts included: the
	// ApplicationMaster's log names the container of each rank start.
	Rank *int
	// Role, when set, keeps the containers of that role (YARN_ER_ROLE; with Rank, of that rank
	// of it). Without it, Rank keeps that rank of every role.
	Role string
	// Files are the log files per container (default stdout and stderr).
	Files []string
	// Follow prints what the containers write while the application runs, until it ends (then
	// the rest, from the aggregated logs).
	Follow bool
}

// Logs copies the log files of an application's containers to w, each under a header line
// "==> <container> [(rank N)] on <node>: <file> <==".
//
// While the application runs they come from the NodeManagers' REST API
// (/ws/v1/node/containers/{id}/logs/{file}), for the live containers of the current attempt (the
// AM's included); a file a NodeManager does not serve is noted in the output and skipped. Once it
// has ended they come from the aggregated logs on HDFS (Hadoop's TFile format, see package
// logagg) when the cluster aggregates logs, after waiting for the aggregation to finish; without
// log aggregation, only the AM container of the last attempt is known, read from its NodeManager
// while it still has its logs.
//
// With Follow, Logs polls the live containers' logs every PollPeriod and prints what is new
// (each poll reads the whole file from the NodeManager), then, once the application has ended,
// what the aggregated logs hold beyond that. Where the NodeManagers serve no logs, nothing shows
// until the application ends. Follow ends with ctx's error when ctx ends first.
func (c *Client) Logs(ctx context.Context, appID string, o LogsOptions, w io.Writer) error {
	st, err := c.Status(ctx, appID)
	if err != nil {
		return err
	}
	p := &logPrinter{w: w, printed: map[string]int64{}, always: !o.Follow}
	if !st.App.State.Terminal() {
		if o.Follow {
			if st, err = c.followLive(ctx, st, o, p); err != nil {
				return err
			}
		} else {
			return c.liveLogs(ctx, st, o, p)
		}
	}
	return c.endedLogs(ctx, st, o, p)
}

func (o *LogsOptions) files() []string {
	if len(o.Files) == 0 {
		return []string{"stdout", "stderr"}
	}
	return o.Files
}

// selected reports whether container id is one o asks for.
func (o *LogsOptions) selected(id string, ranks rankTable) bool {
	if o.Container != "" && id != o.Container {
		return false
	}
	if o.Rank == nil && o.Role == "" {
		return true
	}
	r, ok := ranks[id]
	return ok && (o.Rank == nil || r.Rank == *o.Rank) && (o.Role == "" || r.RoleName() == o.Role)
}

// logPrinter writes log files under their headers, remembering how much of each it printed.
type logPrinter struct {
	w       io.Writer
	printed map[string]int64 // container/file → bytes printed
	last    string           // the file the last header named
	always  bool             // a header for every file, new bytes or not (not following)
}

// header is a file's header line.
func header(container string, ranks rankTable, node, file string) string {
	mark := ""
	if r, ok := ranks[container]; ok {
		mark = fmt.Sprintf(" (rank %d)", r.Rank)
		if r.Role != "" {
			mark = fmt.Sprintf(" (%s rank %d)", r.Role, r.Rank)
		}
	}
	return fmt.Sprintf("==> %s%s on %s: %s <==\n", container, mark, node, file)
}

// copyNew copies r, a log file from its start, skipping what was printed of it before.
func (p *logPrinter) copyNew(key, head string, r io.Reader) error {
	if p.always && p.last != key {
		if _, err := io.WriteString(p.w, head); err != nil {
			return err
		}
		p.last = key
	}
	if skip := p.printed[key]; skip > 0 {
		if _, err := io.CopyN(io.Discard, r, skip); err != nil {
			// Shorter than what was printed (rotated, or the read failed): nothing new.
			_, _ = io.Copy(io.Discard, r)
			return nil
		}
	}
	n, err := io.Copy(&headedWriter{p: p, key: key, head: head}, r)
	p.printed[key] += n
	return err
}

// note writes a line about a file (not available, ...) under its header.
func (p *logPrinter) note(key, head, msg string) error {
	if p.last != key {
		if _, err := io.WriteString(p.w, head); err != nil {
			return err
		}
		p.last = key
	}
	_, err := fmt.Fprintf(p.w, "(%s)\n", msg)
	return err
}

// headedWriter writes its file's header before the first new byte when another file was
// printed last.
type headedWriter struct {
	p         *logPrinter
	key, head string
}

func (h *headedWriter) Write(b []byte) (int, error) {
	if len(b) > 0 && h.p.last != h.key {
		if _, err := io.WriteString(h.p.w, h.head); err != nil {
			return 0, err
		}
		h.p.last = h.key
	}
	return h.p.w.Write(b)
}

// targets are the containers whose logs the NodeManagers may serve: the live ones, or the last
// attempt's AM container once the RM lists none.
func targets(st *Status) []yarn.AppContainer {
	ts := st.Containers
	if len(ts) == 0 && st.Attempt != nil && st.Attempt.ContainerID != "" {
		ts = []yarn.AppContainer{{ID: st.Attempt.ContainerID, NodeID: st.Attempt.NodeID, NodeHTTPAddress: st.Attempt.NodeHTTPAddress}}
	}
	return ts
}

// liveRanks reads the rank table from the current AM's stderr on its NodeManager; the error
// says why it could not.
func (c *Client) liveRanks(ctx context.Context, st *Status) (rankTable, error) {
	t := rankTable{}
	for _, ct := range targets(st) {
		if !isAMContainer(ct.ID) {
			continue
		}
		var buf bytes.Buffer
		if _, err := c.opts.YARN.ContainerLog(ctx, ct.NodeHTTPAddress, ct.ID, "stderr", &capWriter{w: &buf, left: maxAMLogScan}); err != nil {
			return t, fmt.Errorf("the ApplicationMaster's log (%s) is not available from its NodeManager: %w", ct.ID, err)
		}
		return t, t.addAMLog(&buf)
	}
	return t, errors.New("the RM names no ApplicationMaster container")
}

// capWriter keeps the first left bytes and drops the rest.
type capWriter struct {
	w    io.Writer
	left int64
}

func (c *capWriter) Write(b []byte) (int, error) {
	n := len(b)
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	c.left -= int64(len(b))
	if _, err := c.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

// rankNeeded is the error for --rank or --role without a rank table.
func rankNeeded(o LogsOptions, appID string, why error) error {
	return fmt.Errorf("%w: no rank → container table for %s of %s: %v", ErrNoLogs, o.what(), appID, why)
}

// byRank says the options select by rank or role (which needs the rank table).
func (o *LogsOptions) byRank() bool { return o.Rank != nil || o.Role != "" }

// what names the ranks the options select: "rank 2", "role worker", "rank 2 of role worker".
func (o *LogsOptions) what() string {
	switch {
	case o.Rank != nil && o.Role != "":
		return fmt.Sprintf("rank %d of role %s", *o.Rank, o.Role)
	case o.Rank != nil:
		return fmt.Sprintf("rank %d", *o.Rank)
	}
	return "role " + o.Role
}

// liveLogs prints the live containers' logs once, from their NodeManagers.
func (c *Client) liveLogs(ctx context.Context, st *Status, o LogsOptions, p *logPrinter) error {
	ranks, rerr := c.liveRanks(ctx, st)
	if o.byRank() && rerr != nil {
		return rankNeeded(o, st.App.ID, rerr)
	}
	found := 0
	for _, ct := range targets(st) {
		if !o.selected(ct.ID, ranks) {
			continue
		}
		found++
		for _, f := range o.files() {
			key, head := ct.ID+"/"+f, header(ct.ID, ranks, ct.NodeID, f)
			if err := c.nodeLog(ctx, ct, f, key, head, p); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if !p.always {
					continue // following: the end of a follow notes nothing
				}
				if werr := p.note(key, head, "not available: "+err.Error()); werr != nil {
					return werr
				}
			}
		}
	}
	if found == 0 && !o.Follow {
		return noneSelected(st, o)
	}
	return nil
}

func noneSelected(st *Status, o LogsOptions) error {
	id := st.App.ID
	switch {
	case o.byRank():
		return fmt.Errorf("%w: no container of %s in %s (%s)", ErrNoLogs, o.what(), id, st.App.State)
	case o.Container != "":
		return fmt.Errorf("%w: %s is not a container of %s (%s) with logs; `yarn-er app status %s` lists the live ones", ErrNoLogs, o.Container, id, st.App.State, id)
	}
	return fmt.Errorf("%w: %s is %s and the ResourceManager names no container", ErrNoLogs, id, st.App.State)
}

// nodeLog copies one log file from the container's NodeManager through p.
func (c *Client) nodeLog(ctx context.Context, ct yarn.AppContainer, file, key, head string, p *logPrinter) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := p.copyNew(key, head, pr)
		pr.CloseWithError(err) // a failed write ends the transfer
		done <- err
	}()
	_, err := c.opts.YARN.ContainerLog(ctx, ct.NodeHTTPAddress, ct.ID, file, pw)
	pw.CloseWithError(err)
	perr := <-done
	if err != nil {
		return err
	}
	return perr
}

// followLive prints what the live containers write until the application ends, and returns its
// final status.
func (c *Client) followLive(ctx context.Context, st *Status, o LogsOptions, p *logPrinter) (*Status, error) {
	warned := false
	for {
		var ranks rankTable
		if o.byRank() {
			ranks, _ = c.liveRanks(ctx, st) // until the AM's log can be read, no rank is shown
		}
		for _, ct := range st.Containers {
			if !o.selected(ct.ID, ranks) {
				continue
			}
			for _, f := range o.files() {
				key, head := ct.ID+"/"+f, header(ct.ID, ranks, ct.NodeID, f)
				if err := c.nodeLog(ctx, ct, f, key, head, p); err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					if !warned {
						warned = true
						c.log.Warn("a running container's log is not available from its NodeManager; the logs are shown once the application has ended and they are aggregated",
							"container", ct.ID, "file", f, "err", err)
					}
				}
			}
		}
		if err := ctxsleep.Sleep(ctx, c.opts.PollPeriod); err != nil {
			return nil, err
		}
		next, err := c.Status(ctx, st.App.ID)
		if err != nil {
			return nil, err
		}
		st = next
		if st.App.State.Terminal() {
			return st, nil
		}
	}
}

// aggregationPending: the RM's logAggregationStatus says the NodeManagers are still uploading.
func aggregationPending(s string) bool { return s == "NOT_START" || s == "RUNNING" }

// endedLogs prints an ended application's logs: the aggregated ones, else what the AM's
// NodeManager still has.
func (c *Client) endedLogs(ctx context.Context, st *Status, o LogsOptions, p *logPrinter) error {
	app := st.App
	wait := c.opts.AggregationWait
	if wait <= 0 {
		wait = defaultAggregationWait
	}
	for deadline := time.Now().Add(wait); aggregationPending(app.LogAggregationStatus) && time.Now().Before(deadline); {
		c.log.Debug("waiting for log aggregation", "app", app.ID, "status", app.LogAggregationStatus)
		if err := ctxsleep.Sleep(ctx, c.opts.PollPeriod); err != nil {
			return err
		}
		a, err := c.opts.YARN.App(ctx, app.ID)
		if err != nil {
			return err
		}
		app = a
	}
	noAggregation := app.LogAggregationStatus == "DISABLED" ||
		app.LogAggregationStatus == "" && c.opts.Hadoop == nil && c.opts.LogFS == nil // not reported, no HDFS known
	if noAggregation {
		if o.byRank() {
			return rankNeeded(o, app.ID, errors.New("the application has ended and the cluster does not aggregate logs"))
		}
		return c.liveLogs(ctx, st, o, p)
	}
	fs, err := c.openLogFS(ctx)
	if err != nil {
		return fmt.Errorf("aggregated logs of %s: %w", app.ID, err)
	}
	defer fs.Close()
	files, dir, err := findAggregated(fs, c.opts.Hadoop, app.User, app.ID)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		status := app.LogAggregationStatus
		if status == "" {
			status = "not reported"
		}
		tdirs, _ := remoteLogDirs(c.opts.Hadoop, app.User, app.ID)
		return fmt.Errorf("%w: %s has ended and no aggregated logs are in %s (log aggregation: %s)", ErrNoLogs, app.ID, strings.Join(tdirs, ", "), status)
	}
	c.log.Debug("reading aggregated logs", "dir", dir, "files", len(files))
	ranks, err := aggregatedRanks(fs, files)
	if err != nil {
		return err
	}
	if o.byRank() && len(ranks) == 0 {
		return rankNeeded(o, app.ID, errors.New("the ApplicationMaster's aggregated log has no rank starts (not a yarn-er application?)"))
	}
	want := o.files()
	found := 0
	for _, nf := range files {
		err := withFile(fs, nf, func(rd *logagg.Reader) error {
			return rd.Logs(func(l logagg.Log) error {
				if !o.selected(l.Container, ranks) || !slices.Contains(want, l.Name) {
					return nil
				}
				found++
				return p.copyNew(l.Container+"/"+l.Name, header(l.Container, ranks, nf.node, l.Name), l.Body)
			})
		})
		if err != nil {
			return err
		}
	}
	if found == 0 && !o.Follow {
		return noneSelected(st, o)
	}
	return nil
}
