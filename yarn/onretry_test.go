package yarn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnRetryHook: the hook sees every retry with its attempt number, and its error ends the
// retries.
func TestOnRetryHook(t *testing.T) {
	rm := newFakeRM(t)
	rm.ReplyJSON(nodesRoute, 503, `{"RemoteException":{"exception":"WebApplicationException","message":"busy","javaClassName":"javax.ws.rs.WebApplicationException"}}`)
	var attempts []int
	c := testClient(t, Options{Retry: RetryPolicy{MaxAttempts: 4, OnRetry: func(attempt int, wait time.Duration, err error) error {
		attempts = append(attempts, attempt)
		assert.ErrorIs(t, err, ErrServer)
		assert.Positive(t, wait)
		return nil
	}}}, rm.URL())
	_, err := c.Nodes(context.Background(), NodesQuery{})
	require.ErrorIs(t, err, ErrServer)
	assert.Equal(t, []int{1, 2, 3}, attempts, "called before each of the three retries")
	assert.Equal(t, 4, rm.Count(nodesRoute))

	stop := errors.New("enough")
	c = testClient(t, Options{Retry: RetryPolicy{MaxAttempts: 4, OnRetry: func(int, time.Duration, error) error { return stop }}}, rm.URL())
	_, err = c.Nodes(context.Background(), NodesQuery{})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 5, rm.Count(nodesRoute), "one more request, no retry")
}
