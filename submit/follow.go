package submit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/records"

	"github.com/yarn-er/yarn-er/internal/ctxsleep"
	"github.com/yarn-er/yarn-er/yarn"
)

// Event is one observation of a followed application, sent when something changed.
//
// Everything comes from the ResourceManager: the application report (state, final status,
// progress, diagnostics, running containers, allocated resources) and the live containers of the
// current attempt (GET .../appattempts/{attempt}/containers). The AM reports progress as the
// share of ranks that finished, and its diagnostics name failed ranks; the RM lists live
// containers only, so the counts of completed and failed containers are the AM's to tell
// (through progress and diagnostics), not the client's.
type Event struct {
	// Time is when the observation was made.
	Time time.Time
	// App is the application report.
	App *yarn.App
	// Workers are the live containers other than the AM's (nil when the RM did not list them).
	Workers []yarn.AppContainer
	// Running is the number of workers RUNNING, Allocated the number of workers the RM has given
	// the AM (running or not yet started).
	Running, Allocated int
	// Changed says what is new: "state", "progress", "containers", "diagnostics" (all of them on
	// the first event).
	Changed []string
}

// GPUs returns the yarn.io/gpu the workers hold.
func (e Event) GPUs() int64 {
	var n int64
	for _, w := range e.Workers {
		n += w.Resource.Value(records.GPU)
	}
	return n
}

// DefaultRecoveryWait is the default of Options.RecoveryWait.
const DefaultRecoveryWait = 3 * time.Minute

// Follow polls the application every PollPeriod until it reaches a terminal state, calling fn
// (may be nil) for each change, and returns the final report. It returns early with ctx's error,
// or when the RM cannot be asked at first (the yarn client has retried already). Once the
// application was seen, an RM that no longer knows it (404: a restarted RM, or one taking over,
// answers before it has recovered its applications) or that cannot be reached or answers with a
// server error for longer than the client's retries last (an RM restarting or failing over,
// which can take longer than --rm-timeout on a loaded cluster) is waited for up to
// RecoveryWait, with one warning: the application runs on without its client.
func (c *Client) Follow(ctx context.Context, appID string, fn func(Event)) (*yarn.App, error) {
	var prev *Event
	var lost time.Time // since when the RM no longer knows, or answers for, the application it knew
	for {
		app, err := c.opts.YARN.App(ctx, appID)
		if err != nil {
			if prev == nil || !recoverable(err) || ctx.Err() != nil {
				return nil, err
			}
			if lost.IsZero() {
				lost = time.Now()
				if errors.Is(err, yarn.ErrNotFound) {
					c.log.Warn("the ResourceManager does not know the application (any more): restarting or failing over? waiting for it to recover the application",
						"app", appID, "upTo", c.opts.RecoveryWait)
				} else {
					c.log.Warn("the ResourceManager does not answer: restarting or failing over? waiting for it (the application runs on)",
						"app", appID, "upTo", c.opts.RecoveryWait, "err", err)
				}
			}
			if time.Since(lost) >= c.opts.RecoveryWait {
				if errors.Is(err, yarn.ErrNotFound) {
					return nil, fmt.Errorf("%w: the ResourceManager has not known the application for %s, though it did before", err, c.opts.RecoveryWait)
				}
				return nil, fmt.Errorf("%w: no ResourceManager has answered for the application for %s", err, c.opts.RecoveryWait)
			}
			if err := ctxsleep.Sleep(ctx, c.opts.PollPeriod); err != nil {
				return prev.App, err
			}
			continue
		}
		if !lost.IsZero() {
			c.log.Info("the ResourceManager answers for the application again", "app", appID, "after", time.Since(lost).Round(time.Millisecond))
			lost = time.Time{}
		}
		ev := Event{Time: time.Now(), App: app}
		if app.State == records.AppRunning {
			ev.Workers = c.workers(ctx, app)
			for _, w := range ev.Workers {
				ev.Allocated++
				if w.State == "RUNNING" {
					ev.Running++
				}
			}
		}
		ev.Changed = changes(prev, &ev)
		if len(ev.Changed) > 0 && fn != nil {
			fn(ev)
		}
		prev = &ev
		if app.State.Terminal() {
			return app, nil
		}
		if err := ctxsleep.Sleep(ctx, c.opts.PollPeriod); err != nil {
			return app, err
		}
	}
}

// workers lists the current attempt's live containers but the AM's; nil when that fails (the
// follow goes on with the application report alone).
func (c *Client) workers(ctx context.Context, app *yarn.App) []yarn.AppContainer {
	atts, err := c.opts.YARN.AppAttempts(ctx, app.ID)
	if err != nil || len(atts) == 0 {
		c.log.Debug("no attempts", "app", app.ID, "err", err)
		return nil
	}
	cur := atts[len(atts)-1]
	if cur.AppAttemptID == "" {
		return nil
	}
	cs, err := c.opts.YARN.AttemptContainers(ctx, app.ID, cur.AppAttemptID)
	if err != nil {
		c.log.Debug("no containers", "app", app.ID, "err", err)
		return nil
	}
	out := make([]yarn.AppContainer, 0, len(cs))
	for _, ct := range cs {
		if ct.ID != cur.ContainerID {
			out = append(out, ct)
		}
	}
	slices.SortFunc(out, func(a, b yarn.AppContainer) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func changes(prev, cur *Event) []string {
	if prev == nil {
		return []string{"state", "progress", "containers", "diagnostics"}
	}
	var out []string
	if prev.App.State != cur.App.State || prev.App.FinalStatus != cur.App.FinalStatus {
		out = append(out, "state")
	}
	if prev.App.Progress != cur.App.Progress {
		out = append(out, "progress")
	}
	if prev.Running != cur.Running || prev.Allocated != cur.Allocated {
		out = append(out, "containers")
	}
	if prev.App.Diagnostics != cur.App.Diagnostics {
		out = append(out, "diagnostics")
	}
	return out
}

// Kill asks the RM to kill the application, waits until it has ended, and removes the staging
// directory the AM may have had no time to remove. It returns the final report.
func (c *Client) Kill(ctx context.Context, appID string) (*yarn.App, error) {
	if _, _, err := c.opts.YARN.KillApplication(ctx, appID); err != nil {
		return nil, fmt.Errorf("kill %s: %w", appID, err)
	}
	app, err := c.opts.YARN.WaitApp(ctx, appID, c.opts.PollPeriod, nil)
	if err != nil {
		return app, err
	}
	if _, err := c.Cleanup(ctx, appID); err != nil && !errors.Is(err, context.Canceled) {
		c.log.Warn("could not remove the staging directory", "app", appID, "err", err)
	}
	return app, nil
}

// Status is an application with its current attempt's containers.
type Status struct {
	App *yarn.App
	// Attempt is the current attempt (nil before the first).
	Attempt *yarn.AppAttempt
	// Containers are the attempt's live containers, the AM's included.
	Containers []yarn.AppContainer
}

// Status reads an application, its latest attempt and that attempt's live containers (only
// while the application runs: the RM lists no containers of an ended attempt).
func (c *Client) Status(ctx context.Context, appID string) (*Status, error) {
	app, err := c.opts.YARN.App(ctx, appID)
	if err != nil {
		return nil, err
	}
	st := &Status{App: app}
	atts, err := c.opts.YARN.AppAttempts(ctx, appID)
	if err != nil {
		return nil, err
	}
	if len(atts) > 0 {
		st.Attempt = &atts[len(atts)-1]
	}
	if st.Attempt != nil && st.Attempt.AppAttemptID != "" && !app.State.Terminal() {
		cs, err := c.opts.YARN.AttemptContainers(ctx, appID, st.Attempt.AppAttemptID)
		if err != nil && !errors.Is(err, yarn.ErrNotFound) {
			return nil, err
		}
		slices.SortFunc(cs, func(a, b yarn.AppContainer) int { return strings.Compare(a.ID, b.ID) })
		st.Containers = cs
	}
	return st, nil
}

// recoverable reports whether Follow waits out an error of an application it has seen: the RM no
// longer knows it (404), none can be reached, none is active, a request timed out, or the RM
// failed (5xx). Authentication and request errors are not waited out.
func recoverable(err error) bool {
	for _, e := range []error{yarn.ErrNotFound, yarn.ErrUnreachable, yarn.ErrNoActiveRM, yarn.ErrTimeout, yarn.ErrServer} {
		if errors.Is(err, e) {
			return !errors.Is(err, yarn.ErrAuthentication) && !errors.Is(err, yarn.ErrUnauthorized)
		}
	}
	return false
}
