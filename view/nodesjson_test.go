package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

func indented(prefix, indent string, html bool) func(io.Writer, any) error {
	return func(w io.Writer, v any) error {
		enc := json.NewEncoder(w)
		enc.SetIndent(prefix, indent)
		enc.SetEscapeHTML(html)
		return enc.Encode(v)
	}
}

func TestWriteNodesJSONIsNodesOf(t *testing.T) {
	gpu := records.NewResources(8192, 8, records.Resource{Name: records.GPU, Value: 2})
	nodes := []yarn.Node{
		{ID: "c:1", State: "RUNNING", Host: "c", Rack: "/r1", HTTPAddress: "c:8042", Total: gpu, Used: records.NewResources(1, 1), Available: gpu},
		{ID: "a:1", State: "LOST", Host: "a<&>\u2028", Rack: "/r\"\\\n", Total: records.NewResources(4, 4)},
		{ID: "b:1", State: "RUNNING", Host: "b\u202e\x7f", Rack: "/r1", Total: gpu},
		{ID: "a:1", State: "RUNNING", Host: "dup", Rack: "/dup", Total: gpu},
		{ID: "d:1", State: "LOST", Host: "d", Rack: "/r2", Total: records.NewResources(1, 2)},
		{ID: "e:1", State: "NEW", Host: "e", Rack: "/r2"},
	}
	encoders := map[string]func(io.Writer, any) error{
		"two spaces (the CLI's -o json)": indented("", "  ", false),
		"two spaces, HTML escaped":       indented("", "  ", true),
		"compact":                        func(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) },
		"a prefix":                       indented("> ", "  ", false),
		"tabs":                           indented("", "\t", false),
	}
	for name, enc := range encoders {
		for _, set := range []struct {
			name     string
			nodes    []yarn.Node
			resource string
		}{
			{"every node", nodes, ""},
			{"GPU nodes", nodes, records.GPU},
			{"a resource no node has", nodes, "yarn.io/fpga"},
			{"no nodes", nil, ""},
			{"one node", nodes[:1], ""},
		} {
			t.Run(name+"/"+set.name, func(t *testing.T) {
				var want, got bytes.Buffer
				require.NoError(t, enc(&want, NodesOf(set.nodes, set.resource)))
				require.NoError(t, WriteNodesJSON(&got, enc, yarn.NodeTableOf(set.nodes), set.resource))
				assert.Equal(t, want.String(), got.String())
			})
		}
	}
	assert.True(t, streamable(indented("", "  ", false)))
	assert.False(t, streamable(indented("", "\t", false)), "another indentation is encoded whole")
}

// BenchmarkWriteNodesJSON50k: `cluster nodes -o json` of 50,000 nodes (4 resource types each),
// one node at a time.
func BenchmarkWriteNodesJSON50k(b *testing.B) {
	nodes := make([]yarn.Node, 50000)
	for i := range nodes {
		r := records.NewResources(16384, 32, records.Resource{Name: records.GPU, Value: 4}, records.Resource{Name: records.FPGA, Value: 2})
		nodes[i] = yarn.Node{ID: fmt.Sprintf("node%05d.example.com:45454", i), State: "RUNNING", Host: fmt.Sprintf("node%05d.example.com", i),
			Rack: fmt.Sprintf("/rack-%d", i%20), HTTPAddress: fmt.Sprintf("node%05d.example.com:8042", i), Total: r, Used: r, Available: r}
	}
	t := yarn.NodeTableOf(nodes)
	enc := indented("", "  ", false)
	b.ReportAllocs()
	for b.Loop() {
		var n countWriter
		if err := WriteNodesJSON(&n, enc, t, ""); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(n))
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
