package submit

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/yarn-er/yarn-er/yarn"
)

// ErrNoLogs: no container of the application has logs yarn-er can read from a NodeManager.
var ErrNoLogs = errors.New("no container logs available")

// LogsOptions select what Logs copies.
type LogsOptions struct {
	// Container keeps one container ("" for all).
	Container string
	// Files are the log files per container (default stdout and stderr).
	Files []string
}

// Logs copies the log files of an application's containers from their NodeManagers to w, each
// under a header line "==> <container> on <node>: <file> <==". While the application runs these
// are the current attempt's live containers (the AM's included); once it has ended, only the AM
// container of the last attempt is known to the RM, and its NodeManager serves its logs until
// log aggregation or the retention removes them (then read the aggregated logs with
// `yarn logs -applicationId <id>`). A file a NodeManager does not have is noted in the output and
// skipped.
func (c *Client) Logs(ctx context.Context, appID string, o LogsOptions, w io.Writer) error {
	st, err := c.Status(ctx, appID)
	if err != nil {
		return err
	}
	files := o.Files
	if len(files) == 0 {
		files = []string{"stdout", "stderr"}
	}
	targets := st.Containers
	if len(targets) == 0 && st.Attempt != nil && st.Attempt.ContainerID != "" {
		targets = []yarn.AppContainer{{ID: st.Attempt.ContainerID, NodeID: st.Attempt.NodeID, NodeHTTPAddress: st.Attempt.NodeHTTPAddress}}
	}
	found := 0
	for _, ct := range targets {
		if o.Container != "" && ct.ID != o.Container {
			continue
		}
		found++
		for _, f := range files {
			if _, err := fmt.Fprintf(w, "==> %s on %s: %s <==\n", ct.ID, ct.NodeID, f); err != nil {
				return err
			}
			if _, err := c.opts.YARN.ContainerLog(ctx, ct.NodeHTTPAddress, ct.ID, f, w); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if _, werr := fmt.Fprintf(w, "(not available: %v)\n", err); werr != nil {
					return werr
				}
			}
		}
	}
	if found == 0 {
		if o.Container != "" {
			return fmt.Errorf("%w: %s is not a live container of %s (%s); `yarn-er app status %s` lists them", ErrNoLogs, o.Container, appID, st.App.State, appID)
		}
		return fmt.Errorf("%w: %s is %s and the ResourceManager names no container; read the aggregated logs with `yarn logs -applicationId %s`", ErrNoLogs, appID, st.App.State, appID)
	}
	return nil
}
