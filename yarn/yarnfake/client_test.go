package yarnfake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// These tests drive package yarn's client against the fake, as a user of the fake would: each
// fault must reach the client the way a real RM's would.

func fastClient(t *testing.T, opts yarn.Options, rms ...*yarnfake.RM) *yarn.Client {
	t.Helper()
	for _, rm := range rms {
		opts.Addresses = append(opts.Addresses, rm.URL())
	}
	opts.User = "yarner"
	opts.Retry.InitialBackoff, opts.Retry.MaxBackoff = time.Millisecond, 5*time.Millisecond
	c, err := yarn.NewClient(opts)
	require.NoError(t, err)
	return c
}

// faultyRM is a fake RM with fault on route, and a fast client for it.
func faultyRM(t *testing.T, opts yarn.Options, route string, fault yarnfake.Fault) (*yarnfake.RM, *yarn.Client) {
	t.Helper()
	rm := yarnfake.New(t)
	rm.Fault(route, fault)
	return rm, fastClient(t, opts, rm)
}

func TestClientFindsTheActiveRMPastAStandby(t *testing.T) {
	standby, active := yarnfake.New(t), yarnfake.New(t)
	standby.Standby(active.URL())
	c := fastClient(t, yarn.Options{}, standby, active)

	nodes, err := c.Nodes(context.Background(), yarn.NodesQuery{})
	require.NoError(t, err)
	assert.Len(t, nodes, 2)
	assert.Equal(t, 0, standby.Count("GET /ws/v1/cluster/nodes"), "the probe of /info found the standby first")
	assert.Equal(t, 1, active.Count("GET /ws/v1/cluster/nodes"))
}

func TestClientRetriesA5xxGET(t *testing.T) {
	rm, c := faultyRM(t, yarn.Options{}, "GET /ws/v1/cluster/metrics", yarnfake.Fault{Status: 503, Times: 2})

	m, err := c.Metrics(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(2), m.ActiveNodes)
	assert.Equal(t, 3, rm.Count("GET /ws/v1/cluster/metrics"), "two 503s, then the answer")
}

func TestClientDoesNotRetryAPOSTAfter5xx(t *testing.T) {
	rm, c := faultyRM(t, yarn.Options{}, "POST /ws/v1/cluster/apps/new-application", yarnfake.Fault{Status: 500, Times: 1})

	_, err := c.NewApplication(context.Background())
	require.Error(t, err)
	assert.Equal(t, 1, rm.Count("POST /ws/v1/cluster/apps/new-application"), "a POST that may have acted is not re-sent")
}

func TestClientGivesUpOnAHungRM(t *testing.T) {
	rm, c := faultyRM(t, yarn.Options{Timeout: 50 * time.Millisecond, Retry: yarn.RetryPolicy{MaxAttempts: 2}}, "GET /ws/v1/cluster/nodes", yarnfake.Fault{Hang: true})

	_, err := c.Nodes(context.Background(), yarn.NodesQuery{})
	require.Error(t, err)
	assert.Equal(t, 2, rm.Count("GET /ws/v1/cluster/nodes"), "each attempt timed out")
}

func TestClientRejectsAMalformedBody(t *testing.T) {
	_, c := faultyRM(t, yarn.Options{Retry: yarn.RetryPolicy{MaxAttempts: 1}}, "GET /ws/v1/cluster/info", yarnfake.Fault{Malformed: true})

	_, err := c.ClusterInfo(context.Background())
	require.ErrorIs(t, err, yarn.ErrUnexpectedResponse)
}

func TestClientSeesRESTSubmissionDisabled(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithRESTSubmissionDisabled())
	c := fastClient(t, yarn.Options{}, rm)

	_, err := c.NewApplication(context.Background())
	require.ErrorIs(t, err, yarn.ErrRESTSubmissionDisabled)
	require.ErrorIs(t, err, yarn.ErrForbidden)
}

func TestClientReadsEveryShape(t *testing.T) {
	for name, shape := range map[string]yarnfake.Shape{
		"single objects":  yarnfake.SingleObjects,
		"null empty":      yarnfake.NullEmpty,
		"jersey 2 raw":    yarnfake.Jersey2Raw,
		"all three":       yarnfake.SingleObjects | yarnfake.NullEmpty | yarnfake.StringNumbers,
		"recorded as is":  0,
		"numbers strings": yarnfake.StringNumbers,
	} {
		t.Run(name, func(t *testing.T) {
			rm := yarnfake.New(t, yarnfake.WithShape(shape))
			c := fastClient(t, yarn.Options{}, rm)
			ctx := context.Background()

			nodes, err := c.Nodes(ctx, yarn.NodesQuery{})
			require.NoError(t, err)
			require.Len(t, nodes, 2)
			assert.Equal(t, int64(4), nodes[0].Total.Value(records.GPU))
			gone, err := c.Nodes(ctx, yarn.NodesQuery{States: []string{"DECOMMISSIONED"}})
			require.NoError(t, err)
			assert.Empty(t, gone)
			na, err := c.NewApplication(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(2), na.MaximumResourceCapability.Value(records.FPGA))
		})
	}
}

func TestClientOnTenThousandSynthesisedNodes(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithNodes(10000, yarnfake.NodeSpec{Racks: 100}))
	// The answer is several megabytes: on a loaded machine under -race, writing and decoding it
	// takes longer than the default 30 s per attempt. This test is about the result, not speed
	// (yarn.BenchmarkClientNodes10k measures that).
	c := fastClient(t, yarn.Options{Timeout: 10 * time.Minute}, rm)
	nodes, err := c.Nodes(context.Background(), yarn.NodesQuery{})
	require.NoError(t, err)
	require.Len(t, nodes, 10000)
	var gpus int64
	for _, n := range nodes {
		gpus += n.Total.Value(records.GPU)
	}
	assert.Equal(t, int64(40000), gpus)
	assert.Equal(t, "/rack-99", nodes[9999].Rack)
}
