package view

import (
	"bytes"
	"encoding/json"
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
