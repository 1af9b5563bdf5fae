package yarnfake_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// get sends one request and returns the status, headers and body.
func get(t *testing.T, ctx context.Context, method, url string) (int, http.Header, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader("payload"))
	require.NoError(t, err)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b), nil
}

func mustGet(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	st, h, b, err := get(t, context.Background(), method, url)
	require.NoError(t, err)
	return st, h, b
}

func TestSetsListEveryEmbeddedCapture(t *testing.T) {
	sets := yarnfake.Sets()
	require.NotEmpty(t, sets)
	assert.Contains(t, yarnfake.Versions(), yarnfake.DefaultVersion)
	var derived bool
	for _, si := range sets {
		s, err := yarnfake.LoadSet(si.Version, si.Variant)
		require.NoError(t, err, "%+v", si)
		assert.Equal(t, si.Derived, s.Derived)
		derived = derived || s.Derived
		require.NotEmpty(t, s.Captures, "%+v", si)
		for _, c := range s.Captures {
			assert.True(t, strings.HasPrefix(c.Path, "/"), c.Name)
			assert.NotContains(t, c.Query, "user.name", "user.name is not part of a capture's query")
			if c.Status == http.StatusOK && strings.HasSuffix(c.Name, ".json") {
				assert.True(t, json.Valid(c.Body), "%s/%s is a 200 JSON capture but not JSON", si.Version, c.Name)
			}
		}
	}
	assert.True(t, derived, "the hand-derived 3.1 set is embedded")
}

func TestUnknownVersionIsAnError(t *testing.T) {
	_, err := yarnfake.NewServer(yarnfake.WithVersion("2.7.0"))
	require.ErrorIs(t, err, yarnfake.ErrNoCapture)
	assert.Contains(t, err.Error(), yarnfake.DefaultVersion, "the error lists what is embedded")

	_, err = yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "no-such.json")
	require.ErrorIs(t, err, yarnfake.ErrNoCapture)
}

func TestReplayPicksTheCaptureOfTheQuery(t *testing.T) {
	rm := yarnfake.New(t)
	dec, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "nodes-decommissioned.json")
	require.NoError(t, err)
	all, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "nodes.json")
	require.NoError(t, err)

	st, h, body := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/nodes?states=DECOMMISSIONED&user.name=x")
	assert.Equal(t, 200, st)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, string(dec.Body), body)

	_, _, body = mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/nodes?user.name=x")
	assert.Equal(t, string(all.Body), body, "no query: the capture recorded without one")

	st, _, body = mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/nope")
	assert.Equal(t, 404, st)
	assert.Contains(t, body, "NotFoundException")

	st, _, _ = mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/apps/bogus")
	assert.Equal(t, 400, st, "an error capture keeps its recorded status")
}

func TestHandlersComeBeforeCaptures(t *testing.T) {
	rm := yarnfake.New(t)
	rm.ReplyJSON("GET /ws/v1/cluster/info", 200, `{"clusterInfo":{"haState":"ACTIVE","hadoopVersion":"9.9.9"}}`)
	_, _, body := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info")
	assert.Contains(t, body, "9.9.9")

	require.NoError(t, rm.ReplyCapture("GET /ws/v1/cluster/metrics", "metrics-busy.json"))
	busy, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "metrics-busy.json")
	require.NoError(t, err)
	_, _, body = mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/metrics")
	assert.Equal(t, string(busy.Body), body)
	require.ErrorIs(t, rm.ReplyCapture("GET /x", "nope.json"), yarnfake.ErrNoCapture)
}

func TestRoutesOnlyAnswersNothingElse(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	st, _, body := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info")
	assert.Equal(t, http.StatusNotFound, st, "no capture replayed")
	assert.Contains(t, body, "NotFoundException")

	require.NoError(t, rm.ReplyCapture("GET /ws/v1/cluster/info", "info.json"))
	st, _, body = mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info")
	assert.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `"hadoopVersion"`)
	assert.Equal(t, 2, rm.Count("GET /ws/v1/cluster/info"))
}

func TestRequestsAreRecorded(t *testing.T) {
	rm := yarnfake.New(t)
	mustGet(t, "POST", rm.URL()+"/ws/v1/cluster/apps/new-application?user.name=alice")
	mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info?user.name=alice")
	mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info?user.name=alice")

	reqs := rm.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "POST /ws/v1/cluster/apps/new-application", reqs[0].Route())
	assert.Equal(t, "alice", reqs[0].Query.Get("user.name"))
	assert.Equal(t, "payload", string(reqs[0].Body))
	assert.False(t, reqs[0].At.IsZero())
	assert.Equal(t, 2, rm.Count("GET /ws/v1/cluster/info"))
	rm.Reset()
	assert.Empty(t, rm.Requests())
}

func TestFaultStatusForTimesThenNormal(t *testing.T) {
	rm := yarnfake.New(t)
	route := "GET /ws/v1/cluster/info"
	rm.Fault(route, yarnfake.Fault{Status: 503, Body: `{"RemoteException":{"exception":"X"}}`, Times: 2})
	for range 2 {
		st, h, body := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info")
		assert.Equal(t, 503, st)
		assert.Equal(t, "application/json", h.Get("Content-Type"))
		assert.Contains(t, body, "RemoteException")
	}
	st, _, _ := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info")
	assert.Equal(t, 200, st, "the fault ran out")

	rm.Fault("*", yarnfake.Fault{Status: 500})
	st, _, _ = mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/metrics")
	assert.Equal(t, 500, st, "* matches every route")
	rm.ClearFaults()
	st, _, _ = mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/metrics")
	assert.Equal(t, 200, st)
}

func TestFaultDelayAndHangEndWithTheClient(t *testing.T) {
	rm := yarnfake.New(t)
	rm.Fault("GET /ws/v1/cluster/info", yarnfake.Fault{Delay: time.Hour, Times: 1})
	rm.Fault("GET /ws/v1/cluster/metrics", yarnfake.Fault{Hang: true})
	for _, path := range []string{"/ws/v1/cluster/info", "/ws/v1/cluster/metrics"} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, _, _, err := get(t, ctx, "GET", rm.URL()+path)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, path)
	}
	// A short delay answers normally.
	rm.Fault("GET /ws/v1/cluster/scheduler", yarnfake.Fault{Delay: time.Millisecond})
	st, _, _ := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/scheduler")
	assert.Equal(t, 200, st)
}

func TestCloseReleasesHungRequests(t *testing.T) {
	rm, err := yarnfake.NewServer()
	require.NoError(t, err)
	rm.Fault("*", yarnfake.Fault{Hang: true})
	done := make(chan error, 1)
	go func() {
		_, _, _, err := get(t, context.Background(), "GET", rm.URL()+"/ws/v1/cluster/info")
		done <- err
	}()
	require.Eventually(t, func() bool { return rm.Count("GET /ws/v1/cluster/info") == 1 }, 10*time.Second, time.Millisecond)
	rm.Close()
	<-done // the hung request ended (with an error or an empty answer); Close did not block
	rm.Close()
}

func TestFaultMalformedCutsTheBody(t *testing.T) {
	rm := yarnfake.New(t)
	rm.Fault("GET /ws/v1/cluster/nodes", yarnfake.Fault{Malformed: true})
	st, _, body := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/nodes")
	assert.Equal(t, 200, st)
	assert.NotEmpty(t, body)
	assert.False(t, json.Valid([]byte(body)))
}

func TestStandby(t *testing.T) {
	active := yarnfake.New(t)
	standby := yarnfake.New(t)
	standby.Standby(active.URL())

	_, _, body := mustGet(t, "GET", standby.URL()+"/ws/v1/cluster/info")
	assert.Contains(t, body, `"haState":"STANDBY"`, "a standby answers /info itself")
	st, h, body := mustGet(t, "GET", standby.URL()+"/ws/v1/cluster/nodes?states=RUNNING")
	assert.Equal(t, http.StatusTemporaryRedirect, st)
	assert.Equal(t, active.URL()+"/ws/v1/cluster/nodes?states=RUNNING", h.Get("Location"))
	assert.Contains(t, body, "This is standby RM. The redirect url is: ")

	standby.Standby("")
	st, h, body = mustGet(t, "POST", standby.URL()+"/ws/v1/cluster/apps/new-application")
	assert.Equal(t, http.StatusTemporaryRedirect, st)
	assert.Empty(t, h.Get("Location"))
	assert.True(t, strings.HasPrefix(h.Get("Refresh"), "3;url="))
	assert.Contains(t, body, "There is no active RM right now.")

	standby.Active()
	st, _, _ = mustGet(t, "GET", standby.URL()+"/ws/v1/cluster/nodes")
	assert.Equal(t, 200, st)
}

func TestRESTSubmissionDisabled(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithRESTSubmissionDisabled())
	for _, path := range []string{"/ws/v1/cluster/apps/new-application", "/ws/v1/cluster/apps"} {
		st, h, body := mustGet(t, "POST", rm.URL()+path)
		assert.Equal(t, 403, st, path)
		assert.Equal(t, "application/json", h.Get("Content-Type"), "the RM labels its plain text as JSON")
		assert.Equal(t, yarnfake.RESTSubmissionDisabledMessage, body)
	}
	st, _, _ := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/apps")
	assert.Equal(t, 200, st, "reads still work")
	// The recorded answer says the same.
	rec, err := yarnfake.LoadCapture(yarnfake.DefaultVersion, "", "error-403-submit-disabled.json")
	require.NoError(t, err)
	assert.Equal(t, yarnfake.RESTSubmissionDisabledMessage, strings.TrimSpace(string(rec.Body)))
}

func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape yarnfake.Shape
		path  string
		want  []string
		not   []string
	}{
		{"recorded", 0, "/ws/v1/cluster/nodes?states=DECOMMISSIONED", []string{`{"nodes":{}}`}, nil},
		{"null empty", yarnfake.NullEmpty, "/ws/v1/cluster/nodes?states=DECOMMISSIONED", []string{`{"nodes":null}`}, nil},
		{"single objects", yarnfake.SingleObjects, "/ws/v1/cluster/apps?states=ACCEPTED,RUNNING",
			[]string{`"apps":{"app":{"`}, []string{`"app":[`}},
		{"jersey 2 raw", yarnfake.Jersey2Raw, "/ws/v1/cluster/info", []string{`"startedOn":"`}, []string{`"startedOn":1`}},
		{"long max survives", yarnfake.StringNumbers, "/ws/v1/cluster/nodes", []string{`"maximumAllocation":"9223372036854775807"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := yarnfake.New(t, yarnfake.WithShape(tc.shape))
			_, _, body := mustGet(t, "GET", rm.URL()+tc.path)
			assert.True(t, json.Valid([]byte(body)))
			for _, w := range tc.want {
				assert.Contains(t, body, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, body, n)
			}
		})
	}
	// Non-JSON bodies pass unchanged.
	rm := yarnfake.New(t, yarnfake.WithShape(yarnfake.Jersey2Raw))
	_, _, body := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/info?x=1")
	assert.True(t, json.Valid([]byte(body)))
}

func TestSynthNodes(t *testing.T) {
	body, err := yarnfake.SynthNodes(3, yarnfake.NodeSpec{
		Racks: 2,
		Used:  func(i int) []yarnfake.Resource { return []yarnfake.Resource{{Name: "yarn.io/gpu", Value: int64(i)}} },
	})
	require.NoError(t, err)
	var doc struct {
		Nodes struct {
			Node []struct {
				ID, Rack          string
				UsedResource      resource `json:"usedResource"`
				AvailableResource resource `json:"availableResource"`
				TotalResource     resource `json:"totalResource"`
			} `json:"node"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	require.Len(t, doc.Nodes.Node, 3)
	n2 := doc.Nodes.Node[2]
	assert.Equal(t, "node00002.example.com:45454", n2.ID)
	assert.Equal(t, "/rack-0", n2.Rack)
	assert.Equal(t, int64(2), n2.UsedResource.value("yarn.io/gpu"))
	assert.Equal(t, int64(2), n2.AvailableResource.value("yarn.io/gpu"))
	assert.Equal(t, int64(4), n2.TotalResource.value("yarn.io/gpu"))
	assert.Equal(t, int64(40), n2.TotalResource.value("vcores"))
	assert.Equal(t, int64(16384), n2.TotalResource.Memory)

	// NoTotal: the Hadoop 3.1 shape.
	body, err = yarnfake.SynthNodes(1, yarnfake.NodeSpec{NoTotal: true})
	require.NoError(t, err)
	assert.NotContains(t, string(body), "totalResource")

	for name, spec := range map[string]yarnfake.NodeSpec{
		"duplicate type": {Total: []yarnfake.Resource{{Name: "vcores", Value: 1}, {Name: "vcores", Value: 2}}},
		"negative":       {Total: []yarnfake.Resource{{Name: "vcores", Value: -1}}},
		"overused": {Used: func(int) []yarnfake.Resource {
			return []yarnfake.Resource{{Name: "yarn.io/gpu", Value: 5}}
		}},
		"unknown used": {Used: func(int) []yarnfake.Resource { return []yarnfake.Resource{{Name: "x", Value: 1}} }},
	} {
		_, err := yarnfake.SynthNodes(2, spec)
		assert.ErrorIs(t, err, yarnfake.ErrBadSpec, name)
	}
	_, err = yarnfake.SynthNodes(-1, yarnfake.NodeSpec{})
	assert.ErrorIs(t, err, yarnfake.ErrBadSpec)
}

// TestNodes: uneven, labelled and lost nodes; a node the scheduler does not hold reports no
// containers and no used or available resource, as Hadoop's NodeInfo.
func TestNodes(t *testing.T) {
	gpus := func(n int64) []yarnfake.Resource {
		return []yarnfake.Resource{{Name: "memory-mb", Value: 8192}, {Name: "vcores", Value: 8}, {Name: "yarn.io/gpu", Value: n}}
	}
	body, err := yarnfake.Nodes([]yarnfake.Node{
		{ID: "gpu1:8041", Total: gpus(8), Used: []yarnfake.Resource{{Name: "yarn.io/gpu", Value: 3}, {Name: "vcores", Value: 2}}, Labels: []string{"gpu"}},
		{ID: "gone:8041", State: "LOST", Total: gpus(2)},
		{},
	})
	require.NoError(t, err)
	var doc struct {
		Nodes struct {
			Node []struct {
				ID, State, NodeHostName string
				Rack                    string
				UsedVirtualCores        int64     `json:"usedVirtualCores"`
				NodeLabels              []string  `json:"nodeLabels"`
				UsedResource            *resource `json:"usedResource"`
				AvailableResource       *resource `json:"availableResource"`
				TotalResource           resource  `json:"totalResource"`
			} `json:"node"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	require.Len(t, doc.Nodes.Node, 3)
	gpu, gone, dflt := doc.Nodes.Node[0], doc.Nodes.Node[1], doc.Nodes.Node[2]

	assert.Equal(t, "gpu1:8041", gpu.ID)
	assert.Equal(t, "gpu1", gpu.NodeHostName)
	assert.Equal(t, "RUNNING", gpu.State)
	assert.Equal(t, "/default-rack", gpu.Rack)
	assert.Equal(t, []string{"gpu"}, gpu.NodeLabels)
	assert.Equal(t, int64(2), gpu.UsedVirtualCores)
	require.NotNil(t, gpu.UsedResource)
	assert.Equal(t, int64(3), gpu.UsedResource.value("yarn.io/gpu"))
	assert.Equal(t, int64(5), gpu.AvailableResource.value("yarn.io/gpu"))
	assert.Equal(t, int64(8192), gpu.TotalResource.Memory)

	assert.Equal(t, "LOST", gone.State)
	assert.Nil(t, gone.UsedResource, "a lost node has no scheduler report")
	assert.Nil(t, gone.AvailableResource)
	assert.Equal(t, int64(2), gone.TotalResource.value("yarn.io/gpu"))
	assert.Empty(t, gone.NodeLabels)

	assert.Equal(t, "node00002.example.com:45454", dflt.ID, "an empty Node is a harness node")
	assert.Equal(t, int64(40), dflt.TotalResource.value("vcores"))

	for name, nodes := range map[string][]yarnfake.Node{
		"overused":       {{Total: gpus(1), Used: []yarnfake.Resource{{Name: "yarn.io/gpu", Value: 2}}}},
		"unknown used":   {{Total: gpus(1), Used: []yarnfake.Resource{{Name: "yarn.io/fpga", Value: 1}}}},
		"duplicate type": {{Total: []yarnfake.Resource{{Name: "vcores", Value: 1}, {Name: "vcores", Value: 1}}}},
	} {
		_, err := yarnfake.Nodes(nodes)
		assert.ErrorIs(t, err, yarnfake.ErrBadSpec, name)
	}
}

// Names with control characters, quotes, backslashes and bidi controls come out as valid JSON that decodes to
// them (Go's %q would write \x1b, which is not JSON).
func TestNodesEncodesAnyNameAsJSON(t *testing.T) {
	hostile := "r\x1b]0;t\x07\"\\\u202e"
	body, err := yarnfake.Nodes([]yarnfake.Node{{ID: hostile + ":1", Rack: hostile, Version: hostile,
		Total: []yarnfake.Resource{{Name: "memory-mb", Value: 1}, {Name: "vcores", Value: 1}, {Name: "x/" + hostile, Value: 1, Units: hostile}}}})
	require.NoError(t, err)
	require.True(t, json.Valid(body), "%s", body)
	var doc struct {
		Nodes struct {
			Node []struct {
				ID, Rack, Version, NodeHostName, NodeHTTPAddress string
				TotalResource                                    resource `json:"totalResource"`
			} `json:"node"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	n := doc.Nodes.Node[0]
	assert.Equal(t, hostile+":1", n.ID)
	assert.Equal(t, hostile, n.Rack)
	assert.Equal(t, hostile, n.Version)
	assert.Equal(t, hostile, n.NodeHostName)
	assert.Equal(t, hostile+":8042", n.NodeHTTPAddress)
	assert.Equal(t, int64(1), n.TotalResource.value("x/"+hostile))
}

func TestWithNodesServesTheSynthesisedCluster(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithNodes(250, yarnfake.NodeSpec{}))
	_, _, body := mustGet(t, "GET", rm.URL()+"/ws/v1/cluster/nodes")
	assert.Equal(t, 250, strings.Count(body, `"totalResource"`))

	_, err := yarnfake.NewServer(yarnfake.WithNodes(-3, yarnfake.NodeSpec{}))
	assert.True(t, errors.Is(err, yarnfake.ErrBadSpec))
}

type resource struct {
	Memory int64 `json:"memory"`
	RI     struct {
		List []struct {
			Name  string `json:"name"`
			Value int64  `json:"value"`
		} `json:"resourceInformation"`
	} `json:"resourceInformations"`
}

func (r resource) value(name string) int64 {
	for _, e := range r.RI.List {
		if e.Name == name {
			return e.Value
		}
	}
	return -1
}

// fatalRecorder records what New does with a TB when an option is bad.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) { f.msg = format }

func TestNewFailsTheTestOnABadOption(t *testing.T) {
	f := &fatalRecorder{TB: t}
	assert.Nil(t, yarnfake.New(f, yarnfake.WithVersion("0.1")))
	assert.NotEmpty(t, f.msg)
}

func TestWithIdleTimeoutClosesIdleConnections(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithIdleTimeout(20*time.Millisecond))
	conn, err := net.Dial("tcp", strings.TrimPrefix(rm.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /ws/v1/cluster/info HTTP/1.1\r\nHost: rm\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	// The server closes the kept-alive connection once it has been idle: the read ends.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := conn.Read(make([]byte, 1))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF)
}
