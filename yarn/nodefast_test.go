package yarn

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generalNode decodes a node object as encoding/json does, without the fast path.
func generalNode(b []byte) (nodeJSON, error) {
	var n nodeJSON
	err := json.Unmarshal(b, &n)
	return n, err
}

// checkFastNode fails t when the fast path accepts b and decodes it otherwise than the general
// path; it reports whether the fast path accepted it.
func checkFastNode(t *testing.T, b []byte) bool {
	t.Helper()
	var fast nodeJSON
	if !fast.decodeFast(b) {
		return false
	}
	general, err := generalNode(b)
	require.NoError(t, err, "the fast path accepted what the general path refuses: %s", b)
	require.Equal(t, general, fast, "%s", b)
	gn, gerr := general.node()
	fn, ferr := fast.node()
	require.Equal(t, gerr, ferr)
	require.Equal(t, gn, fn)
	return true
}

// captureNodes returns every node object of the /nodes captures of every Hadoop line.
func captureNodes(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("yarnfake/captures/*/nodes*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string][]byte{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var body struct {
			Nodes struct {
				Node json.RawMessage `json:"node"`
			} `json:"nodes"`
		}
		require.NoError(t, json.Unmarshal(data, &body), file)
		raw := body.Nodes.Node
		var list []json.RawMessage
		if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
			require.NoError(t, json.Unmarshal(raw, &list), file)
		} else if len(raw) > 0 && string(raw) != "null" {
			list = []json.RawMessage{raw}
		}
		for i, n := range list {
			out[filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file)+"#"+string(rune('0'+i))] = n
		}
	}
	return out
}

// The nodes every Hadoop line sends take the fast path, and decode as the general path decodes
// them.
func TestNodeFastOnCaptures(t *testing.T) {
	nodes := captureNodes(t)
	require.NotEmpty(t, nodes)
	for name, b := range nodes {
		t.Run(name, func(t *testing.T) {
			assert.True(t, checkFastNode(t, b), "a node as Hadoop writes it should take the fast path")
		})
	}
	// And the synthesised 10,000-node cluster of the benchmarks.
	body := synthNodes(t, 3)
	var wrapped struct {
		Nodes struct {
			Node []json.RawMessage `json:"node"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(body, &wrapped))
	for _, n := range wrapped.Nodes.Node {
		assert.True(t, checkFastNode(t, n))
	}
}

// nodeFastCases are shapes the fast path must leave to the general path, or decode as it does.
var nodeFastCases = []struct {
	name string
	json string
	fast bool
}{
	{"plain", `{"id":"h:1","state":"RUNNING","numContainers":3,"nodeLabels":["gpu"],"totalResource":{"memory":8,"vCores":2,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","units":"Mi","value":8}]}}}`, true},
	{"nulls", `{"id":null,"usedMemoryMB":null,"nodeLabels":null,"usedResource":null,"totalResource":{"memory":null,"resourceInformations":null}}`, true},
	{"one label, one entry", `{"nodeLabels":"gpu","totalResource":{"resourceInformations":{"resourceInformation":{"name":"yarn.io/gpu","value":4,"tags":[],"attributes":{}}}}}`, true},
	{"empty lists", `{"nodeLabels":[],"totalResource":{"resourceInformations":{"resourceInformation":[]}}}`, true},
	{"unknown keys of every kind", `{"x":{"a":[1,{"b":"c\"}"}]},"y":-1.5e3,"z":true,"id":"h:1","w":null}`, true},
	{"largest and smallest int64", `{"lastHealthUpdate":9223372036854775807,"numContainers":-9223372036854775808}`, true},
	{"above int64", `{"numContainers":9223372036854775808}`, false},
	{"a fraction", `{"numContainers":1.0}`, false},
	{"an exponent", `{"numContainers":4E3}`, false},
	{"a number as a string", `{"numContainers":"3"}`, false},
	{"a number where a string goes", `{"version":3}`, false},
	{"an escaped string", `{"healthReport":"disk \"full\""}`, false},
	{"a key in another case", `{"State":"RUNNING"}`, false},
	{"a key folded by encoding/json", `{"ſtate":"RUNNING"}`, false},
	{"a repeated key", `{"id":"a","id":"b"}`, false},
	{"a repeated resource", `{"totalResource":{"memory":1},"totalResource":{"vCores":2}}`, false},
	{"a wrapper with other keys", `{"totalResource":{"resourceInformations":{"resourceInformation":[],"name":"x"}}}`, false},
	{"a bare list of entries", `{"totalResource":{"resourceInformations":[{"name":"x","value":1}]}}`, false},
	{"attributes with entries", `{"totalResource":{"resourceInformations":{"resourceInformation":[{"name":"x","attributes":{"a":"b"}}]}}}`, false},
	{"not an object", `[1]`, false},
	{"non-UTF-8 in a string", "{\"healthReport\":\"\xff\"}", false},
}

func TestNodeFastCases(t *testing.T) {
	for _, tc := range nodeFastCases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.fast, checkFastNode(t, []byte(tc.json)))
		})
	}
}

// A list of nodes decodes the same with and without the fast path, and the nodes of Hadoop's
// shape take it.
func TestDecodeNodesFastEqualsGeneral(t *testing.T) {
	body := synthNodes(t, 50)
	nodes, err := decodeNodes(strings.NewReader(string(body)))
	require.NoError(t, err)
	var wrapped struct {
		Nodes struct {
			Node []nodeJSON `json:"node"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(body, &wrapped))
	require.Len(t, nodes, len(wrapped.Nodes.Node))
	for i := range nodes {
		want, err := wrapped.Nodes.Node[i].node()
		require.NoError(t, err)
		assert.Equal(t, want, nodes[i])
	}
}

// FuzzNodeFast: whatever valid JSON the fast path accepts, it decodes exactly as encoding/json
// does (the same nodeJSON, the same Node), and it never panics.
func FuzzNodeFast(f *testing.F) {
	for _, tc := range nodeFastCases {
		f.Add([]byte(tc.json))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var n nodeJSON
		accepted := n.decodeFast(data) // must not panic, valid or not
		if !accepted || !json.Valid(data) {
			return
		}
		checkFastNode(t, data)
	})
}
