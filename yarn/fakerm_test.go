package yarn

import (
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// captureVersion is the Hadoop version whose captures the fake RMs replay.
const captureVersion = "3.5.0"

// capturesDir holds the captures of captureVersion (package yarnfake embeds the same files).
var capturesDir = filepath.Join("yarnfake", "captures", "hadoop-"+captureVersion)

// captured is one answer recorded from the real mini-YARN by yarnfake/capture.sh.
type captured struct {
	status      int
	contentType string
	body        []byte
}

// loadCapture returns the capture called name of captureVersion with its recorded status and
// content type (package yarnfake embeds them and parses their index.txt).
func loadCapture(t testing.TB, name string) captured {
	t.Helper()
	c, err := yarnfake.LoadCapture(captureVersion, "", name)
	require.NoError(t, err)
	return captured{status: c.Status, contentType: c.ContentType, body: c.Body}
}

// newFakeRM is package yarnfake's fake RM answering only the routes a test sets (every other
// request gets the RM's 404), recording every request.
func newFakeRM(t testing.TB) *yarnfake.RM { return yarnfake.New(t, yarnfake.WithRoutesOnly()) }

// replyCapture routes "METHOD /path" of rm to the recorded answer called name.
func replyCapture(t testing.TB, rm *yarnfake.RM, route, name string) {
	t.Helper()
	require.NoError(t, rm.ReplyCapture(route, name))
}

// activeInfo is a /ws/v1/cluster/info body with the given haState.
func infoBody(haState string) string {
	return `{"clusterInfo":{"id":1,"startedOn":1700000000000,"state":"STARTED","haState":"` + haState +
		`","resourceManagerVersion":"3.5.0","hadoopVersion":"3.5.0"}}`
}

// testClient builds a client for addrs with fast retries and the user "yarner".
func testClient(t testing.TB, opts Options, addrs ...string) *Client {
	t.Helper()
	opts.Addresses = addrs
	if opts.User == "" && opts.Auth != AuthKerberos {
		opts.User = "yarner"
	}
	if opts.Retry.InitialBackoff == 0 {
		opts.Retry.InitialBackoff = 2 * time.Millisecond
	}
	if opts.Retry.MaxBackoff == 0 {
		opts.Retry.MaxBackoff = 10 * time.Millisecond
	}
	c, err := NewClient(opts)
	require.NoError(t, err)
	return c
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// newDebugLogger logs everything as text into w.
func newDebugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// replayRM is a fake RM answering route with the capture called name (a test may route more with
// replyCapture) and a test client for it.
func replayRM(t testing.TB, route, name string) (*yarnfake.RM, *Client) {
	t.Helper()
	rm := newFakeRM(t)
	replyCapture(t, rm, route, name)
	return rm, testClient(t, Options{}, rm.URL())
}
