package yarn

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// sameNode fails unless a and b are the same node: every field, an empty resource vector or
// label list whether nil or not.
func sameNode(t *testing.T, a, b Node, what string) {
	t.Helper()
	require.Equal(t, a.ID, b.ID, what)
	require.Equal(t, []string{a.State, a.Host, a.Rack, a.HTTPAddress, a.Version, a.HealthReport},
		[]string{b.State, b.Host, b.Rack, b.HTTPAddress, b.Version, b.HealthReport}, "%s: node %s", what, a.ID)
	require.True(t, a.LastHealthUpdate.Equal(b.LastHealthUpdate), "%s: node %s lastHealthUpdate %v, %v", what, a.ID, a.LastHealthUpdate, b.LastHealthUpdate)
	require.Equal(t, a.LastHealthUpdate.Location(), b.LastHealthUpdate.Location(), what)
	require.Equal(t, a.NumContainers, b.NumContainers, what)
	require.Equal(t, a.TotalDerived, b.TotalDerived, what)
	require.True(t, slices.Equal(a.NodeLabels, b.NodeLabels), "%s: node %s labels %q, %q", what, a.ID, a.NodeLabels, b.NodeLabels)
	require.Equal(t, a.Total.All(), b.Total.All(), "%s: node %s total", what, a.ID)
	require.Equal(t, a.Used.All(), b.Used.All(), "%s: node %s used", what, a.ID)
	require.Equal(t, a.Available.All(), b.Available.All(), "%s: node %s available", what, a.ID)
}

// checkSameTable fails unless the table decoded from body holds the nodes decodeNodes reads (or
// both fail).
func checkSameTable(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := decodeNodes(bytes.NewReader(body))
	tab, err := decodeNodeTable(bytes.NewReader(body), 2)
	if wantErr != nil {
		require.Error(t, err, "the list decoder fails (%v) on %q", wantErr, body)
		return
	}
	require.NoError(t, err, "%q", body)
	require.Equal(t, len(want), tab.Len())
	for i := range want {
		sameNode(t, want[i], tab.Node(i), "table")
		require.Equal(t, want[i].ID, tab.ID(i))
		require.Equal(t, want[i].State, tab.State(i))
		require.Equal(t, want[i].Rack, tab.Rack(i))
		require.Equal(t, want[i].Host, tab.Host(i))
		require.True(t, slices.Equal(want[i].NodeLabels, tab.Labels(i)))
		require.Equal(t, want[i].Available.All(), tab.Available(i).All())
	}
	again := NodeTableOf(tab.Nodes())
	for i := range want {
		sameNode(t, want[i], again.Node(i), "NodeTableOf")
	}
}

func TestNodeTableKeepsEveryField(t *testing.T) {
	gpu := []yarnfake.Resource{{Name: "memory-mb", Value: 8192}, {Name: "vcores", Value: 8}, {Name: "yarn.io/gpu", Value: 2}}
	fpgaFirst := []yarnfake.Resource{{Name: "memory-mb", Value: 4, Units: "Gi"}, {Name: "vcores", Value: 8}, {Name: "yarn.io/fpga", Value: 1}, {Name: "yarn.io/gpu", Value: 2}}
	synth, err := yarnfake.Nodes([]yarnfake.Node{
		{ID: "a:1", Rack: "/r1", Total: gpu, Labels: []string{"gpu"}},
		{ID: "b:1", Rack: "/r1", Total: gpu, Used: []yarnfake.Resource{{Name: "yarn.io/gpu", Value: 1}}},
		{ID: "c:1", Rack: "/r2", Total: gpu, State: "LOST", Version: "3.1.4"},
		{ID: "evil\"}\n\\x:1", Rack: "/r1\xff", Total: fpgaFirst, Labels: []string{"", "x"}},
		{ID: "a:1", Rack: "/dup", Total: gpu, Labels: []string{"gpu"}},
	})
	require.NoError(t, err)
	cases := map[string][]byte{"synthesised": synth,
		"extreme amounts": []byte(`{"nodes":{"node":[{"id":"x:1","state":"RUNNING","totalResource":{"resourceInformations":{"resourceInformation":[` +
			`{"name":"memory-mb","units":"Mi","value":9223372036854775807},{"name":"vcores","value":-9223372036854775808},` +
			`{"name":"yarn.io/gpu","value":-1},{"name":"yarn.io/fpga","value":0},{"name":"a","value":63},{"name":"b","value":64},` +
			`{"name":"c","value":-64},{"name":"d","value":-65},{"name":"e","value":8192}]}},` +
			`"usedResource":{"memory":1,"vCores":2},"availableResource":{"memory":-3,"vCores":4}}]}}`)}
	for name, body := range nodeListCases {
		cases[name] = []byte(body)
	}
	files, _ := filepath.Glob("testdata/variants/nodes*.json")
	captured, _ := filepath.Glob("yarnfake/captures/*/nodes*.json")
	files = append(files, captured...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		cases[f] = b
	}
	require.Greater(t, len(files), 3, "the node list variants and every Hadoop line's capture")
	for name, body := range cases {
		t.Run(name, func(t *testing.T) { checkSameTable(t, body) })
	}
	tab, err := decodeNodeTable(bytes.NewReader(cases["extreme amounts"]), 0)
	require.NoError(t, err)
	assert.Equal(t, int64(math.MinInt64), tab.Total(0).Value("vcores"))
	assert.Equal(t, int64(math.MaxInt64), tab.Total(0).Value("memory-mb"))
	assert.Equal(t, int64(-3), tab.Available(0).Value("memory-mb"))
}

// TestNodeTableRetainedBound: the table's bound counts the strings it keeps once: nodes that
// each have a health report of their own are refused past the bound, the same report on every
// node is kept once.
func TestNodeTableRetainedBound(t *testing.T) {
	list := func(health func(i int) string) []byte {
		var b strings.Builder
		b.WriteString(`{"nodes":{"node":[`)
		for i := range 100 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"h%d:1","state":"RUNNING","healthReport":%q}`, i, health(i))
		}
		b.WriteString(`]}}`)
		return []byte(b.String())
	}
	unique := list(func(i int) string { return fmt.Sprintf("%d%s", i, strings.Repeat("x", 1000)) })
	_, err := decodeNodeTableBounded(bytes.NewReader(unique), 0, 50_000)
	require.ErrorIs(t, err, ErrResponseTooLarge)
	assert.Contains(t, err.Error(), "records kept")

	same := list(func(int) string { return strings.Repeat("x", 1000) })
	tab, err := decodeNodeTableBounded(bytes.NewReader(same), 0, 50_000)
	require.NoError(t, err)
	assert.Equal(t, 100, tab.Len())
	assert.Equal(t, strings.Repeat("x", 1000), tab.Node(99).HealthReport)
}

func TestNodeTableEmpty(t *testing.T) {
	var nilTable *NodeTable
	require.Equal(t, 0, nilTable.Len())
	require.Equal(t, 0, NodeTableOf(nil).Len())
	require.Empty(t, NodeTableOf(nil).Nodes())
}

// FuzzNodeTable: whatever the answer, the table holds the nodes the list decoder reads.
func FuzzNodeTable(f *testing.F) {
	for _, body := range nodeListCases {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"nodes":{"node":[{"id":"a:1","nodeLabels":["x",""],"lastHealthUpdate":5,"totalResource":{"memory":1,"vCores":2}},{"id":"b","usedMemoryMB":1,"usedVirtualCores":1,"availMemoryMB":2,"availableVirtualCores":3}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameTable(t, data)
	})
}
