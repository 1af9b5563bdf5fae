// Package ctxsleep waits for a duration unless a context ends first.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, and returns ctx.Err() in the second case. A d of 0 or less
// does not wait: it returns ctx.Err() at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
