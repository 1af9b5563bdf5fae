package yarn

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/records"
)

func TestVariantNodes(t *testing.T) {
	for _, tc := range []struct {
		file  string
		check func(t *testing.T, nodes []Node)
	}{
		{"../../yarnfake/captures/hadoop-3.1-derived/nodes.json", func(t *testing.T, nodes []Node) {
			require.Len(t, nodes, 2)
			n := nodes[0]
			assert.True(t, n.TotalDerived, "3.1 has no totalResource")
			assert.Equal(t, qmap{records.MemoryMB: {Value: 8192, Units: "Mi"}, records.VCores: {Value: 8, Units: ""}, records.GPU: {Value: 4, Units: ""}}, quantities(n.Total))
			assert.Equal(t, int64(1), n.Used.Value(records.GPU))
			assert.Equal(t, "/rack-a", n.Rack)
			assert.Equal(t, time.UnixMilli(1560000000000).UTC(), n.LastHealthUpdate)
			// The NEW node has no scheduler report: only the flat memory/vcore fields.
			n = nodes[1]
			assert.Equal(t, "NEW", n.State)
			assert.True(t, n.LastHealthUpdate.IsZero())
			assert.Equal(t, qmap{records.MemoryMB: {Value: 0, Units: "Mi"}, records.VCores: {Value: 0, Units: ""}}, quantities(n.Total))
			assert.Zero(t, n.Total.Value(records.GPU))
		}},
		{"nodes-jersey2-single.json", func(t *testing.T, nodes []Node) {
			require.Len(t, nodes, 1)
			n := nodes[0]
			assert.Equal(t, []string{"gpu"}, n.NodeLabels)
			assert.Empty(t, n.HealthReport)
			assert.Equal(t, qmap{records.MemoryMB: {Value: 0, Units: "Mi"}, records.VCores: {Value: 0, Units: ""}}, quantities(n.Used), "vCores from the flat field when not listed")
			assert.Equal(t, qmap{records.MemoryMB: {Value: 8192, Units: "Mi"}, records.VCores: {Value: 8, Units: ""}, records.GPU: {Value: 4, Units: ""}}, quantities(n.Total))
			assert.Equal(t, int64(4), n.Available.Value(records.GPU))
		}},
		{"nodes-bare-arrays.json", func(t *testing.T, nodes []Node) {
			require.Len(t, nodes, 1)
			assert.Equal(t, int64(2), nodes[0].Total.Value(records.FPGA))
			assert.Equal(t, int64(1), nodes[0].Used.Value(records.FPGA))
		}},
		{"nodes-null.json", func(t *testing.T, nodes []Node) {
			assert.Empty(t, nodes)
		}},
		{"nodes-2.x.json", func(t *testing.T, nodes []Node) {
			require.Len(t, nodes, 1)
			assert.True(t, nodes[0].TotalDerived)
			assert.Equal(t, qmap{records.MemoryMB: {Value: 8192, Units: "Mi"}, records.VCores: {Value: 8, Units: ""}}, quantities(nodes[0].Total))
			assert.Equal(t, qmap{records.MemoryMB: {Value: 3072, Units: "Mi"}, records.VCores: {Value: 2, Units: ""}}, quantities(nodes[0].Used))
		}},
		{"nodes-huge.json", func(t *testing.T, nodes []Node) {
			require.Len(t, nodes, 1)
			n := nodes[0]
			// 2^53+1 is not a float64; a float64 decoder would give ...992.
			assert.Equal(t, int64(9007199254740993), n.Used.Value(records.MemoryMB))
			assert.Equal(t, int64(9007199254740994), n.Total.Value(records.MemoryMB))
			assert.Equal(t, int64(math.MaxInt64), n.Available.Value(records.VCores))
			assert.Equal(t, int64(math.MaxInt64), n.Total.Value(records.VCores))
			assert.Equal(t, records.Quantity{Value: math.MaxInt64, Units: "k"}, quantities(n.Total)["counter"], "a sum beyond int64 saturates")
			assert.Equal(t, records.Quantity{Value: 8, Units: "Gi"}, quantities(n.Total)["resource1"])
			assert.Equal(t, int64(8), n.Total.Value("nvidia.com/gpu"))
			var names []string
			for _, e := range n.Total.All() {
				names = append(names, e.Name)
			}
			assert.Equal(t, []string{records.MemoryMB, records.VCores, "nvidia.com/gpu", "resource1", "counter"}, names, "the RM's order")
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			// Relative to testdata/variants: the hand-derived 3.1 nodes live with the captures.
			body, err := os.ReadFile(filepath.Join("testdata", "variants", tc.file))
			require.NoError(t, err)
			rm := newFakeRM(t)
			rm.Reply("GET /ws/v1/cluster/nodes", 200, "application/json", body)
			nodes, err := testClient(t, Options{}, rm.URL()).Nodes(context.Background(), NodesQuery{})
			require.NoError(t, err)
			tc.check(t, nodes)
		})
	}
}

func TestDecodeResource(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want qmap
		err  string
	}{
		{"null", `null`, nil, ""},
		{"legacy only", `{"memory":1024,"vCores":2}`, qmap{records.MemoryMB: {Value: 1024, Units: "Mi"}, records.VCores: {Value: 2, Units: ""}}, ""},
		{"empty object", `{}`, nil, ""},
		{"jersey1 list", `{"memory":1,"vCores":1,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","units":"Mi","value":4096},{"name":"yarn.io/gpu","units":"","value":2}]}}`,
			qmap{records.MemoryMB: {Value: 4096, Units: "Mi"}, records.VCores: {Value: 1, Units: ""}, records.GPU: {Value: 2, Units: ""}}, ""},
		{"jersey2 single object", `{"resourceInformations":{"resourceInformation":{"name":"yarn.io/gpu","value":3}}}`,
			qmap{records.GPU: {Value: 3, Units: ""}}, ""},
		{"bare array", `{"resourceInformations":[{"name":"yarn.io/fpga","value":1}]}`, qmap{records.FPGA: {Value: 1, Units: ""}}, ""},
		{"null list", `{"memory":8,"vCores":1,"resourceInformations":null}`, qmap{records.MemoryMB: {Value: 8, Units: "Mi"}, records.VCores: {Value: 1, Units: ""}}, ""},
		{"null entries", `{"memory":8,"vCores":1,"resourceInformations":{"resourceInformation":null}}`, qmap{records.MemoryMB: {Value: 8, Units: "Mi"}, records.VCores: {Value: 1, Units: ""}}, ""},
		{"max int64", `{"resourceInformations":{"resourceInformation":[{"name":"x","value":9223372036854775807}]}}`, qmap{"x": {Value: math.MaxInt64, Units: ""}}, ""},
		{"min int64", `{"resourceInformations":{"resourceInformation":[{"name":"x","value":-9223372036854775808}]}}`, qmap{"x": {Value: math.MinInt64, Units: ""}}, ""},
		{"string number", `{"memory":"16","vCores":"2"}`, qmap{records.MemoryMB: {Value: 16, Units: "Mi"}, records.VCores: {Value: 2, Units: ""}}, ""},
		{"integral exponent", `{"memory":1.6E1,"vCores":2.0}`, qmap{records.MemoryMB: {Value: 16, Units: "Mi"}, records.VCores: {Value: 2, Units: ""}}, ""},
		{"overflow", `{"memory":9223372036854775808}`, nil, "does not fit"},
		{"fraction", `{"memory":1.5}`, nil, "not a whole number"},
		{"huge exponent", `{"memory":1e999999999}`, nil, "out of range"},
		{"not a number", `{"memory":"lots"}`, nil, "not an integer"},
		{"nameless entry", `{"resourceInformations":[{"value":1}]}`, nil, "has no name"},
		{"array instead of object", `[1,2]`, nil, "cannot unmarshal array"},
		{"trailing data", `{} {}`, nil, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeResource([]byte(tc.in))
			if tabletest.WantErr(t, err, tc.err) {
				return
			}
			assert.Equal(t, tc.want, quantities(got))
		})
	}
}

func TestJSONHelpers(t *testing.T) {
	var l list[string]
	require.NoError(t, json.Unmarshal([]byte(`"a"`), &l))
	assert.Equal(t, list[string]{"a"}, l)
	require.NoError(t, json.Unmarshal([]byte(`["a","b"]`), &l))
	assert.Equal(t, list[string]{"a", "b"}, l)
	require.NoError(t, json.Unmarshal([]byte(`null`), &l))
	assert.Nil(t, l)
	// [] is an empty list, not an absent one: a queue with nodeLabels [] may use no label.
	require.NoError(t, json.Unmarshal([]byte(`[]`), &l))
	assert.NotNil(t, l)
	assert.Empty(t, l)

	var e entryList
	require.NoError(t, json.Unmarshal([]byte(`{"entry":[{"key":"a","value":1},{"key":"b","value":"x"}]}`), &e))
	m, err := e.stringMap()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "b": "x"}, m)
	require.NoError(t, json.Unmarshal([]byte(`{"entry":{"key":"a","value":true}}`), &e))
	m, err = e.stringMap()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "true"}, m)
	require.NoError(t, json.Unmarshal([]byte(`{"z":"1","a":"2"}`), &e))
	require.Len(t, e, 2)
	assert.Equal(t, "a", e[0].Key, "plain objects are sorted by key")
	require.NoError(t, json.Unmarshal([]byte(`{"key":"k","value":"v"}`), &e))
	assert.Equal(t, "k", e[0].Key)
	assert.Error(t, json.Unmarshal([]byte(`5`), &e))

	var b jsonBool
	for in, want := range map[string]bool{`true`: true, `"TRUE"`: true, `false`: false, `null`: false, `""`: false} {
		require.NoError(t, json.Unmarshal([]byte(in), &b), in)
		assert.Equal(t, want, bool(b), in)
	}
	assert.Error(t, json.Unmarshal([]byte(`"yes"`), &b))

	var f jsonFloat
	require.NoError(t, json.Unmarshal([]byte(`"12.5"`), &f))
	assert.InDelta(t, 12.5, float64(f), 0)
	assert.Error(t, json.Unmarshal([]byte(`"NaN"`), &f))

	var s jsonString
	require.NoError(t, json.Unmarshal([]byte(`42`), &s))
	assert.Equal(t, "42", string(s))
	assert.Error(t, json.Unmarshal([]byte(`{}`), &s))

	type elem struct {
		Name string `json:"name"`
	}
	items, err := unwrapList[elem]([]byte(`{"name":"one"}`), "x")
	require.NoError(t, err)
	assert.Equal(t, []elem{{Name: "one"}}, items, "an object without the wrapper key is one element")
	items, err = unwrapList[elem]([]byte(`{"x":{"name":"a"}}`), "x")
	require.NoError(t, err)
	assert.Equal(t, []elem{{Name: "a"}}, items)
	_, err = unwrapList[elem]([]byte(`"text"`), "x")
	assert.Error(t, err)
	_, err = unwrapList[int]([]byte(`{"other":1}`), "x")
	assert.Error(t, err)
}

func TestDecodeScheduler(t *testing.T) {
	fair := `{"scheduler":{"schedulerInfo":{"type":"fairScheduler","rootQueue":{"queueName":"root","maxResources":{"memory":8192,"vCores":8},
	 "usedResources":{"memory":1024,"vCores":1},"childQueues":{"queue":{"type":"fairSchedulerLeafQueueInfo","queueName":"root.gpu",
	 "maxResources":{"memory":4096,"vCores":4,"resourceInformations":{"resourceInformation":[{"name":"yarn.io/gpu","value":2}]}},
	 "minResources":{"memory":0,"vCores":0}}}}}}}`
	s, err := decodeScheduler(strings.NewReader(fair))
	require.NoError(t, err)
	assert.Equal(t, FairScheduler, s.Type)
	require.Len(t, s.Queues(), 2)
	gpu := s.Queue("root.gpu")
	require.NotNil(t, gpu)
	assert.True(t, gpu.Leaf)
	assert.Equal(t, int64(2), gpu.MaxResources.Value(records.GPU))
	assert.Equal(t, int64(1024), s.Root.Used.Value(records.MemoryMB))

	fifo := `{"scheduler":{"schedulerInfo":{"type":"fifoScheduler","capacity":1.0,"usedCapacity":0.25,"qstate":"RUNNING","numNodes":2}}}`
	s, err = decodeScheduler(strings.NewReader(fifo))
	require.NoError(t, err)
	assert.Equal(t, FifoScheduler, s.Type)
	require.NotNil(t, s.Root)
	assert.Equal(t, "RUNNING", s.Root.State)
	assert.InDelta(t, 25.0, s.Root.UsedCapacity, 1e-9)

	_, err = decodeScheduler(strings.NewReader(`{"scheduler":null}`))
	assert.ErrorIs(t, err, ErrUnexpectedResponse)

	deep := strings.Repeat(`{"queueName":"q","queues":{"queue":`, 70) + `{}` + strings.Repeat(`}}`, 70)
	_, err = decodeScheduler(strings.NewReader(`{"scheduler":{"schedulerInfo":` + deep + `}}`))
	assert.ErrorContains(t, err, "deeper than")
}

func TestDecodeMalformed(t *testing.T) {
	for name, fn := range map[string]func(string) error{
		"info":     func(s string) error { _, err := decodeClusterInfo(strings.NewReader(s)); return err },
		"metrics":  func(s string) error { _, err := decodeClusterMetrics(strings.NewReader(s)); return err },
		"nodes":    func(s string) error { _, err := decodeNodes(strings.NewReader(s)); return err },
		"apps":     func(s string) error { _, err := decodeApps(strings.NewReader(s)); return err },
		"attempts": func(s string) error { _, err := decodeAppAttempts(strings.NewReader(s)); return err },
		"conf":     func(s string) error { _, err := decodeRMConf(strings.NewReader(s)); return err },
	} {
		for _, in := range []string{`<html>`, `{"nodes":5}`, `{"apps":"x"}`, `{"clusterInfo":[1]}`, `{"clusterMetrics":{"totalMB":"x"}}`, `{"appAttempts":{"appAttempt":[1]}}`, `{"properties":7}`} {
			err := fn(in)
			if err != nil {
				assert.ErrorIs(t, err, ErrUnexpectedResponse, "%s %s", name, in)
			}
		}
		assert.Error(t, fn(`<html>`), name)
	}
}

// TestStreamingMatchesWhole decodes every nodes and apps body once from memory and once through a
// one-byte-at-a-time reader (the streaming decoder then often finds the next value outside its
// buffer and takes the slow path): the results must be equal.
func TestStreamingMatchesWhole(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "variants", "nodes-*.json"))
	require.NoError(t, err)
	files = append(files, filepath.Join("yarnfake", "captures", "hadoop-3.1-derived", "nodes.json"))
	for _, name := range []string{"nodes.json", "nodes-busy.json", "nodes-decommissioned.json"} {
		files = append(files, filepath.Join(capturesDir, name))
	}
	files = append(files, filepath.Join(capturesDir, "apps.json"), filepath.Join(capturesDir, "apps-empty.json"))
	extra := map[string]string{
		"single app":    `{"apps":{"app":{"id":"application_1_0001","state":"RUNNING"}}}`,
		"bare array":    `{"apps":[{"id":"application_1_0001"}]}`,
		"null inner":    `{"apps":{"app":null}}`,
		"other keys":    `{"x":[1,{"y":2}],"apps":{"z":3,"app":[{"id":"a"}]},"w":null}`,
		"list of nodes": `{"nodes":{"node":[{"id":"a:1"},{"id":"b:1"}]}}`,
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		extra[filepath.Base(f)] = string(body)
	}
	for name, body := range extra {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(body, `"apps"`) {
				whole, err := decodeApps(strings.NewReader(body))
				require.NoError(t, err)
				slow, err := decodeApps(iotest.OneByteReader(strings.NewReader(body)))
				require.NoError(t, err)
				assert.Equal(t, whole, slow)
				return
			}
			whole, err := decodeNodes(strings.NewReader(body))
			require.NoError(t, err)
			slow, err := decodeNodes(iotest.OneByteReader(strings.NewReader(body)))
			require.NoError(t, err)
			assert.Equal(t, whole, slow)
		})
	}
	for _, bad := range []string{`[]`, `{"nodes":5}`, `{"nodes":{"node":[1]}}`, `{"nodes":{"node":[{}]`, `{"nodes":"x"}`} {
		_, err := decodeNodes(strings.NewReader(bad))
		assert.ErrorIs(t, err, ErrUnexpectedResponse, bad)
		_, err = decodeNodes(iotest.OneByteReader(strings.NewReader(bad)))
		assert.ErrorIs(t, err, ErrUnexpectedResponse, bad)
	}
}

// qmap is a resource vector as name → quantity, for comparing vectors whatever their order.
type qmap = map[string]records.Quantity

// quantities returns r as a qmap, nil for the empty vector.
func quantities(r records.Resources) qmap {
	if r.Len() == 0 {
		return nil
	}
	out := qmap{}
	for _, e := range r.All() {
		out[e.Name] = e.Quantity()
	}
	return out
}

// TestNestedListBound: a list inside a record (here a node's resourceInformation) is held to
// maxListElements too, whether it is small enough to be decoded at once or not; one that fits is
// decoded whole.
func TestNestedListBound(t *testing.T) {
	node := func(n int) string {
		return `{"nodes":{"node":[{"id":"h:1","totalResource":{"memory":1,"vCores":1,"resourceInformations":{"resourceInformation":[` +
			strings.TrimSuffix(strings.Repeat(`{"name":"x","value":1},`, n), ",") + `]}}}]}}`
	}
	nodes, err := decodeNodes(strings.NewReader(node(3)))
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	assert.Equal(t, int64(1), nodes[0].Total.Value("x"))

	for _, n := range []int{maxListElements, maxListElements + 1} {
		_, err = decodeNodes(strings.NewReader(node(n)))
		if n <= maxListElements {
			assert.NoError(t, err, n)
			continue
		}
		require.ErrorIs(t, err, ErrResponseTooLarge, n)
		assert.ErrorContains(t, err, "more than 100000 elements")
	}
	// The bound is on elements, not bytes: a short array of many tiny elements is refused
	// as surely as a long one.
	tiny := `{"nodes":{"node":[{"id":"h:1","nodeLabels":[` + strings.TrimSuffix(strings.Repeat(`"",`, maxListElements+1), ",") + `]}]}}`
	_, err = decodeNodes(strings.NewReader(tiny))
	assert.ErrorIs(t, err, ErrResponseTooLarge)
}
