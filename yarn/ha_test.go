package yarn

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

const nodesRoute = "GET /ws/v1/cluster/nodes"
const newAppRoute = "POST /ws/v1/cluster/apps/new-application"

func TestHAPicksActiveRM(t *testing.T) {
	rm1, rm2 := newFakeRM(t), newFakeRM(t)
	rm1.Standby(rm2.URL())
	rm2.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("ACTIVE"))
	replyCapture(t, rm2, nodesRoute, "nodes.json")
	c := testClient(t, Options{}, rm1.URL(), rm2.URL())

	nodes, err := c.Nodes(context.Background(), NodesQuery{})
	require.NoError(t, err)
	assert.Len(t, nodes, 2)
	assert.Equal(t, 0, rm1.Count(nodesRoute), "the standby found by the probe gets no request")
	assert.Equal(t, 1, rm2.Count(nodesRoute))

	active, err := c.ActiveRM(context.Background())
	require.NoError(t, err)
	assert.Equal(t, rm2.URL(), active)
	_, err = c.Nodes(context.Background(), NodesQuery{})
	require.NoError(t, err)
	assert.Equal(t, 1, rm1.Count("GET /ws/v1/cluster/info"), "the active RM is cached")

	st := c.RMs(context.Background())
	require.Len(t, st, 2)
	assert.Equal(t, "STANDBY", st[0].HAState)
	assert.Equal(t, "ACTIVE", st[1].HAState)
	assert.Equal(t, rm2.URL(), st[1].Address)
}

func TestHAFailoverResendsPOSTOnlyAfter307(t *testing.T) {
	rm1, rm2 := newFakeRM(t), newFakeRM(t)
	// rm1 starts active, rm2 standby.
	rm1.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("ACTIVE"))
	replyCapture(t, rm1, newAppRoute, "new-application.json")
	rm2.Standby(rm1.URL())
	c := testClient(t, Options{}, rm1.URL(), rm2.URL())
	_, err := c.NewApplication(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, rm1.Count(newAppRoute))

	// Failover: rm1 becomes standby (redirecting to rm2), rm2 active.
	rm1.Standby(rm2.URL())
	rm2.Active()
	rm2.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("ACTIVE"))
	replyCapture(t, rm2, newAppRoute, "new-application-2.json")

	na, err := c.NewApplication(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "application_1796117006310_0002", na.ID)
	assert.Equal(t, 2, rm1.Count(newAppRoute), "one accepted before the failover, one refused with 307")
	assert.Equal(t, 1, rm2.Count(newAppRoute), "the POST reaches the new active RM exactly once")
}

func TestHAStandbyRedirectToUnlistedRM(t *testing.T) {
	standby, active := newFakeRM(t), newFakeRM(t)
	standby.Standby(active.URL())
	active.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("ACTIVE"))
	replyCapture(t, active, nodesRoute, "nodes.json")
	c := testClient(t, Options{}, standby.URL()) // only the standby is known

	nodes, err := c.Nodes(context.Background(), NodesQuery{})
	require.NoError(t, err)
	assert.Len(t, nodes, 2)
	assert.Equal(t, 1, standby.Count(nodesRoute))
	assert.Equal(t, 1, active.Count("GET /ws/v1/cluster/info"), "the redirect target is probed, not followed blindly")
	assert.Equal(t, 1, active.Count(nodesRoute))
}

func TestHANoActiveRM(t *testing.T) {
	rm1, rm2 := newFakeRM(t), newFakeRM(t)
	rm1.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("STANDBY"))
	rm2.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("STANDBY"))
	c := testClient(t, Options{Retry: RetryPolicy{FailoverTimeout: 30 * time.Millisecond}}, rm1.URL(), rm2.URL())

	_, err := c.NewApplication(context.Background())
	require.ErrorIs(t, err, ErrNoActiveRM)
	assert.Contains(t, err.Error(), "is STANDBY")
	assert.Greater(t, rm1.Count("GET /ws/v1/cluster/info"), 1, "looked again after a backoff")
	assert.Equal(t, 0, rm1.Count(newAppRoute)+rm2.Count(newAppRoute), "nothing is POSTed to a standby")
}

func TestHANoActiveRMRightNowThenRecovers(t *testing.T) {
	rm := newFakeRM(t)
	var calls atomic.Int32
	rm.Handle(nodesRoute, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.Header().Set("Refresh", "1;url="+r.URL.String())
			w.WriteHeader(http.StatusTemporaryRedirect)
			_, _ = w.Write([]byte("There is no active RM right now."))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(loadCapture(t, "nodes.json").body)
	})
	c := testClient(t, Options{}, rm.URL())
	nodes, err := c.Nodes(context.Background(), NodesQuery{})
	require.NoError(t, err)
	assert.Len(t, nodes, 2)
	assert.Equal(t, int32(3), calls.Load())

	// Never recovering: a clear error after FailoverTimeout.
	rm.Standby("")
	c = testClient(t, Options{Retry: RetryPolicy{FailoverTimeout: 20 * time.Millisecond}}, rm.URL())
	_, err = c.Nodes(context.Background(), NodesQuery{})
	require.ErrorIs(t, err, ErrNoActiveRM)
	assert.Contains(t, err.Error(), "There is no active RM right now.")
	assert.Contains(t, err.Error(), "Refresh: 3")

	// A negative FailoverTimeout fails at once.
	before := rm.Count(nodesRoute)
	c = testClient(t, Options{Retry: RetryPolicy{FailoverTimeout: -1}}, rm.URL())
	_, err = c.Nodes(context.Background(), NodesQuery{})
	require.ErrorIs(t, err, ErrNoActiveRM)
	assert.Equal(t, before+1, rm.Count(nodesRoute))
}

// deadAddress returns a URL nothing listens on.
func deadAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

func TestConnectionRefused(t *testing.T) {
	dead := deadAddress(t)
	rm := newFakeRM(t)
	rm.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("ACTIVE"))
	replyCapture(t, rm, newAppRoute, "new-application.json")

	c := testClient(t, Options{}, dead, rm.URL())
	_, err := c.NewApplication(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, rm.Count(newAppRoute))

	// Only dead RMs: ErrUnreachable after MaxAttempts.
	c = testClient(t, Options{Retry: RetryPolicy{MaxAttempts: 2}}, dead, deadAddress(t))
	_, err = c.NewApplication(context.Background())
	require.ErrorIs(t, err, ErrUnreachable)
	assert.ErrorContains(t, err, "connection refused")

	// A single dead RM: a RequestError naming it, after MaxAttempts.
	c = testClient(t, Options{Retry: RetryPolicy{MaxAttempts: 2}}, dead)
	_, err = c.ClusterInfo(context.Background())
	var reqErr *RequestError
	require.ErrorAs(t, err, &reqErr)
	assert.Equal(t, http.MethodGet, reqErr.Method)
	assert.Contains(t, reqErr.URL, dead)
	assert.ErrorIs(t, err, ErrUnreachable, "one dead RM is as unreachable as several")
	assert.ErrorContains(t, err, "connection refused")
}

func TestRetryOnlyIdempotent(t *testing.T) {
	rm := newFakeRM(t)
	rm.ReplyJSON(nodesRoute, 503, `{"RemoteException":{"exception":"WebApplicationException","message":"busy","javaClassName":"javax.ws.rs.WebApplicationException"}}`)
	rm.ReplyJSON(newAppRoute, 500, `{"RemoteException":{"exception":"YarnRuntimeException","message":"boom","javaClassName":"org.apache.hadoop.yarn.exceptions.YarnRuntimeException"}}`)
	rm.ReplyJSON("PUT /ws/v1/cluster/apps/application_1_0001/state", 500, `{}`)
	c := testClient(t, Options{Retry: RetryPolicy{MaxAttempts: 3}}, rm.URL())

	_, err := c.Nodes(context.Background(), NodesQuery{})
	require.ErrorIs(t, err, ErrServer)
	assert.Equal(t, 3, rm.Count(nodesRoute), "GET retried on 5xx")

	_, err = c.NewApplication(context.Background())
	require.ErrorIs(t, err, ErrServer)
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "boom", re.Message)
	assert.Equal(t, 1, rm.Count(newAppRoute), "POST never retried on 5xx")

	_, _, err = c.KillApplication(context.Background(), "application_1_0001")
	require.ErrorIs(t, err, ErrServer)
	assert.Equal(t, 1, rm.Count("PUT /ws/v1/cluster/apps/application_1_0001/state"), "PUT never retried on 5xx")
}

// resetServer closes every connection right after reading the request: fault injection at the
// connection level, below what yarnfake answers.
func resetServer(t *testing.T) (string, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		hj, ok := w.(http.Hijacker)
		require.True(t, ok)
		conn, _, err := hj.Hijack()
		require.NoError(t, err)
		_ = conn.Close()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func TestConnectionResetAfterSend(t *testing.T) {
	url, n := resetServer(t)
	c := testClient(t, Options{Retry: RetryPolicy{MaxAttempts: 3}}, url)
	_, err := c.Metrics(context.Background())
	var reqErr *RequestError
	require.ErrorAs(t, err, &reqErr)
	assert.Equal(t, int32(3), n.Load(), "GET retried")

	n.Store(0)
	_, err = c.NewApplication(context.Background())
	require.Error(t, err)
	assert.Equal(t, int32(1), n.Load(), "a POST that may have reached the RM is not sent again")
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	rm := newFakeRM(t)
	rm.Handle(nodesRoute, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	c := testClient(t, Options{Timeout: 20 * time.Millisecond, Retry: RetryPolicy{MaxAttempts: 2}}, rm.URL())
	_, err := c.Nodes(context.Background(), NodesQuery{})
	require.ErrorIs(t, err, ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 2, rm.Count(nodesRoute))

	// The caller's own cancellation is not a timeout and is not retried.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Nodes(ctx, NodesQuery{})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.Is(err, ErrTimeout))
}

func TestProbeTimeout(t *testing.T) {
	release := make(chan struct{})
	slow, active := newFakeRM(t), newFakeRM(t)
	slow.Handle("GET /ws/v1/cluster/info", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	active.ReplyJSON("GET /ws/v1/cluster/info", 200, infoBody("ACTIVE"))
	c := testClient(t, Options{ProbeTimeout: 20 * time.Millisecond}, slow.URL(), active.URL())
	got, err := c.ActiveRM(context.Background())
	require.NoError(t, err)
	assert.Equal(t, active.URL(), got)
	st := c.RMs(context.Background())
	require.ErrorIs(t, st[0].Err, ErrTimeout)
	assert.Nil(t, st[0].Info)
}
