package yarn

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileAlloc is what one call against a hostile RM may allocate in all (runtime.MemStats.TotalAlloc,
// the fake RM's own allocations included), well inside the 256 MB a command may use.
const hostileAlloc = 256 << 20

// repeatReader yields prefix, then fill repeated n times, then suffix, without holding it in memory.
func repeatReader(prefix string, fill []byte, n int, suffix string) io.Reader {
	readers := []io.Reader{strings.NewReader(prefix)}
	for i := 0; i < n; i++ {
		readers = append(readers, bytes.NewReader(fill))
	}
	return io.MultiReader(append(readers, strings.NewReader(suffix))...)
}

func gzipOf(t *testing.T, r io.Reader) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	require.NoError(t, err)
	_, err = io.Copy(zw, r)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func nodesCall(ctx context.Context, c *Client) error {
	_, err := c.Nodes(ctx, NodesQuery{})
	return err
}

// TestHostileRM runs the client against a ResourceManager that answers what no real one does. Each
// call must end with a clear error naming the request and the limit, within the context's deadline
// (a hang fails the test), allocating a bounded amount.
func TestHostileRM(t *testing.T) {
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	bombSpaces := gzipOf(t, repeatReader(`{"clusterInfo":`, spaces, 256, `}`))
	bombString := gzipOf(t, repeatReader(`{"nodes":{"node":[{"id":"`, bytes.Repeat([]byte("a"), 1<<20), 64, `"}]}}`))
	bombList := gzipOf(t, repeatReader(`{"nodes":{"node":[`, bytes.Repeat([]byte(`{"id":"h:1"},`), 1<<16), 64, `{}]}}`))
	emptyObjects := gzipOf(t, repeatReader(`{"nodes":{"node":[`, bytes.Repeat([]byte(`{},`), 1<<16), 4, `{}]}}`))
	t.Logf("gzip bombs: %d, %d, %d, %d bytes", len(bombSpaces), len(bombString), len(bombList), len(emptyObjects))

	stream := func(contentType, encoding string, body func() io.Reader) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			if encoding != "" {
				w.Header().Set("Content-Encoding", encoding)
			}
			_, _ = io.Copy(w, body())
		}
	}
	cases := []struct {
		name    string
		route   string
		handler http.HandlerFunc
		call    func(ctx context.Context, c *Client) error
		is      error
		want    string
		timeout time.Duration // the client's per-request timeout; 10 s when 0
	}{
		{name: "1 GiB answer to cluster info", route: "GET " + pathInfo,
			handler: stream("application/json", "", func() io.Reader { return repeatReader(`{"clusterInfo":`, spaces, 1024, `}`) }),
			is:      ErrResponseTooLarge, want: "GET /ws/v1/cluster/info: the answer's body exceeds 4194304 bytes (the limit of single-object answers"},
		{name: "one huge JSON string", route: "GET " + pathScheduler,
			handler: stream("application/json", "", func() io.Reader {
				return repeatReader(`{"scheduler":{"schedulerInfo":{"type":"`, bytes.Repeat([]byte("a"), 1<<20), 8, `"}}}`)
			}),
			call: func(ctx context.Context, c *Client) error { _, err := c.Scheduler(ctx); return err },
			is:   ErrResponseTooLarge, want: "GET /ws/v1/cluster/scheduler: the answer's JSON string exceeds 4194304 bytes"},
		{name: "one huge node", route: "GET " + pathNodes,
			handler: stream("application/json", "", func() io.Reader {
				return repeatReader(`{"nodes":{"node":[{"id":"`, bytes.Repeat([]byte("a"), 1<<20), 8, `"}]}}`)
			}),
			call: nodesCall, is: ErrResponseTooLarge, want: "GET /ws/v1/cluster/nodes: the answer's list record exceeds 1048576 bytes"},
		{name: "gzip bomb of white space", route: "GET " + pathInfo,
			handler: stream("application/json", "gzip", func() io.Reader { return bytes.NewReader(bombSpaces) }),
			is:      ErrResponseTooLarge, want: "the answer's decompressed body exceeds 4194304 bytes"},
		{name: "gzip bomb of one string", route: "GET " + pathNodes,
			handler: stream("application/json", "gzip", func() io.Reader { return bytes.NewReader(bombString) }),
			call:    nodesCall, is: ErrResponseTooLarge, want: "decompressed list record exceeds 1048576 bytes"},
		{name: "gzip bomb of nodes", route: "GET " + pathNodes,
			handler: stream("application/json", "gzip", func() io.Reader { return bytes.NewReader(bombList) }),
			call:    nodesCall, is: ErrResponseTooLarge, want: "more than 100000 elements"},
		{name: "a quarter million empty nodes", route: "GET " + pathNodes,
			handler: stream("application/json", "gzip", func() io.Reader { return bytes.NewReader(emptyObjects) }),
			call:    nodesCall, is: ErrResponseTooLarge, want: "more than 100000 elements"},
		{name: "deep JSON", route: "GET " + pathInfo,
			handler: stream("application/json", "", func() io.Reader {
				return repeatReader(`{"clusterInfo":`, bytes.Repeat([]byte("["), 1<<16), 16, ``)
			}),
			is: ErrResponseTooLarge, want: "the answer's JSON nesting exceeds 256 levels"},
		{name: "a number of a million digits", route: "GET " + pathInfo,
			handler: stream("application/json", "", func() io.Reader {
				return repeatReader(`{"clusterInfo":{"id":`, bytes.Repeat([]byte("9"), 1<<20), 1, `}}`)
			}),
			is: ErrResponseTooLarge, want: "JSON number exceeds 512 bytes"},
		{name: "garbage", route: "GET " + pathInfo,
			handler: stream("application/json", "", func() io.Reader { return bytes.NewReader([]byte("\x00\xff<html>garbage")) }),
			is:      ErrUnexpectedResponse, want: "invalid character"},
		{name: "a broken gzip body", route: "GET " + pathInfo,
			handler: stream("application/json", "gzip", func() io.Reader { return strings.NewReader("not gzip at all") }),
			is:      ErrUnexpectedResponse, want: "GET /ws/v1/cluster/info: the gzip-encoded answer cannot be decompressed: gzip: invalid header"},
		{name: "an encoding not asked for", route: "GET " + pathInfo,
			handler: stream("application/json", "br", func() io.Reader { return strings.NewReader("xx") }),
			is:      ErrUnexpectedResponse, want: `Content-Encoding "br", which yarn-er did not ask for`},
		{name: "redirect loop", route: "GET " + pathInfo,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", r.URL.String())
				w.WriteHeader(http.StatusTemporaryRedirect)
			},
			is: ErrNoActiveRM, want: "no active"},
		{name: "slow: a byte a second", route: "GET " + pathInfo,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				for i := 0; i < 60; i++ {
					if _, err := w.Write([]byte(" ")); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-time.After(time.Second):
					}
				}
			},
			is: ErrTimeout, want: "timed out", timeout: 300 * time.Millisecond},
		{name: "hung: never answers", route: "GET " + pathInfo,
			handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			is:      ErrTimeout, want: "timed out", timeout: 300 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t)
			rm.Handle(tc.route, tc.handler)
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			c := testClient(t, Options{Timeout: timeout, Retry: RetryPolicy{MaxAttempts: 2, FailoverTimeout: 200 * time.Millisecond}}, rm.URL())
			call := tc.call
			if call == nil {
				call = func(ctx context.Context, c *Client) error { _, err := c.ClusterInfo(ctx); return err }
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := call(ctx, c)
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			require.NoError(t, ctx.Err(), "the client's own limits end the call, not the test's deadline: %v", err)
			assert.True(t, errors.Is(err, tc.is), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d KiB: %v", alloc>>10, err)
			assert.Less(t, alloc, uint64(hostileAlloc))
		})
	}
}

// TestLargeLegalAnswersPass: a 10,000-node /nodes (about 26 MB) is read whole.
func TestLargeLegalAnswersPass(t *testing.T) {
	node := []byte(`{"id":"host-x:45454","rack":"/default-rack","state":"RUNNING","nodeHostName":"host-x","nodeHTTPAddress":"host-x:8042","lastHealthUpdate":1700000000000,"version":"3.5.0","healthReport":"","numContainers":0,"usedMemoryMB":0,"availMemoryMB":65536,"usedVirtualCores":0,"availableVirtualCores":32,` +
		`"totalResource":{"memory":65536,"vCores":32,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","value":65536,"units":"Mi","resourceType":"COUNTABLE","minimumAllocation":0,"maximumAllocation":9223372036854775807},{"name":"vcores","value":32,"units":"","resourceType":"COUNTABLE","minimumAllocation":0,"maximumAllocation":9223372036854775807},{"name":"yarn.io/gpu","value":8,"units":"","resourceType":"COUNTABLE","minimumAllocation":0,"maximumAllocation":9223372036854775807}]}},` +
		`"usedResource":{"memory":0,"vCores":0},"availableResource":{"memory":65536,"vCores":32}` + strings.Repeat(" ", 1700) + `},`)
	rm := newFakeRM(t)
	rm.Handle("GET "+pathNodes, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, repeatReader(`{"nodes":{"node":[`, node, 9999, strings.TrimSuffix(string(node), ",")+`]}}`))
	})
	c := testClient(t, Options{}, rm.URL())
	nodes, err := c.Nodes(context.Background(), NodesQuery{})
	require.NoError(t, err)
	assert.Len(t, nodes, 10000)
	assert.Greater(t, len(node)*10000, 25_000_000, "the answer is the size of a 10,000-node cluster's")
}

func TestBodyLimitClasses(t *testing.T) {
	for path, want := range map[string]int64{
		"/ws/v1/cluster/nodes":                               MaxListBody,
		"/ws/v1/cluster/apps/":                               MaxListBody,
		"/gateway/default/resourcemanager/v1/cluster/apps":   MaxListBody,
		"/ws/v1/cluster/apps/application_1_0001/appattempts": MaxListBody,
		"/ws/v1/cluster/scheduler":                           MaxListBody,
		"/conf":                                              MaxConfBody,
		"/ws/v1/cluster/info":                                MaxObjectBody,
		"/ws/v1/cluster/apps/application_1_0001":             MaxObjectBody,
		"/ws/v1/cluster/apps/new-application":                MaxObjectBody,
		"":                                                   MaxObjectBody,
	} {
		got, class := bodyLimit(path)
		assert.Equal(t, want, got, path)
		assert.NotEmpty(t, class)
	}
}

// TestJSONGuardFollowsStrings: brackets and quotes inside strings (escaped or not) never count as
// nesting, and a read split anywhere gives the same verdict.
func TestJSONGuardFollowsStrings(t *testing.T) {
	deep := strings.Repeat("[", maxJSONDepth+1)
	cases := []struct {
		in   string
		want string // "" = passes
	}{
		{`{"a":"` + deep + `"}`, ""},
		{`{"a":"x\"` + deep + `"}`, ""},
		{`{"a":"x\\"` + deep, "JSON nesting"},
		{`["\\\"[[["]`, ""},
		{deep, "JSON nesting"},
		{`{"n":` + strings.Repeat("1", maxJSONNumber+1) + `}`, "JSON number"},
		{`{"s":"` + strings.Repeat("x", maxJSONString+1) + `"}`, "JSON string"},
		{`{"s":"` + strings.Repeat(`\"`, maxJSONString/2+1) + `"}`, "JSON string"},
	}
	for i, tc := range cases {
		for _, chunk := range []int{1, 7, 1 << 20} {
			g := newJSONGuard(&chunkReader{data: []byte(tc.in), n: chunk}, "GET /x")
			_, err := io.Copy(io.Discard, g)
			if tc.want == "" {
				assert.NoError(t, err, "case %d, chunks of %d", i, chunk)
				continue
			}
			var le *ResponseLimitError
			require.ErrorAs(t, err, &le, "case %d, chunks of %d", i, chunk)
			assert.Equal(t, tc.want, le.What)
		}
	}
}

// chunkReader returns data n bytes at a time.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}
