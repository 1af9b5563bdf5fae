package ctxsleep

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSleep(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"waits the duration out", live, time.Millisecond, nil},
		{"no wait for zero", live, 0, nil},
		{"no wait for a negative duration", live, -time.Second, nil},
		{"an ended context ends a long wait", ended, time.Hour, context.Canceled},
		{"an ended context with no wait", ended, 0, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, Sleep(tt.ctx, tt.d), tt.want)
		})
	}
}
