package yarn

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

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

// generalNodes decodes a /nodes answer through encoding/json's Decoder only (the path before the
// fast one).
func generalNodes(r io.Reader) ([]Node, error) {
	var out []Node
	err := streamListGeneral(r, "nodes", "node", func(j *nodeJSON) error {
		n, err := j.node()
		if err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	return out, err
}

// fastNodes decodes a /nodes answer through the fast list path.
func fastNodes(r io.Reader) ([]Node, error) {
	var out []Node
	err := streamListFast(r, "nodes", "node", func(j *nodeJSON) error {
		n, err := j.node()
		if err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	return out, err
}

// checkSameNodes fails t unless both paths decode body alike: the same nodes, or both an error.
func checkSameNodes(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := generalNodes(bytes.NewReader(body))
	for name, r := range map[string]io.Reader{
		"whole":         bytes.NewReader(body),
		"byte by byte":  iotest.OneByteReader(bytes.NewReader(body)),
		"half and half": iotest.HalfReader(bytes.NewReader(body)),
		"EOF with data": iotest.DataErrReader(bytes.NewReader(body)),
	} {
		got, err := fastNodes(r)
		if wantErr != nil {
			require.Error(t, err, "%s: the general path fails (%v) on %q", name, wantErr, body)
			continue
		}
		require.NoError(t, err, "%s: %q", name, body)
		require.Equal(t, want, got, "%s: %q", name, body)
	}
}

var nodeListCases = map[string]string{
	"empty":                        `{"nodes":{"node":[]}}`,
	"one":                          `{"nodes":{"node":[{"id":"a:1","state":"RUNNING"}]}}`,
	"spaced":                       " { \"nodes\" :\n{ \"node\" : [ {\"id\":\"a:1\"} ,\n {\"id\":\"b:1\"} ] } } ",
	"a shape the fast path leaves": `{"nodes":{"node":[{"id":"a:1","numContainers":"3"},{"State":"LOST"}]}}`,
	"members after the list":       `{"nodes":{"node":[{"id":"a:1"}],"x":[1,2]},"y":{"z":null}}`,
	"the list twice":               `{"nodes":{"node":[{"id":"a:1"}],"node":[{"id":"b:1"}]}}`,
	"another key first":            `{"x":1,"nodes":{"node":[{"id":"a:1"}]}}`,
	"one object, Jersey 1":         `{"nodes":{"node":{"id":"a:1"}}}`,
	"null":                         `{"nodes":null}`,
	"strings with brackets":        `{"nodes":{"node":[{"id":"a:1","healthReport":"[}{\"]"}]}}`,
	"a null element":               `{"nodes":{"node":[null]}}`,
	"a number element":             `{"nodes":{"node":[1]}}`,
	"trailing comma":               `{"nodes":{"node":[{"id":"a:1"},]}}`,
	"leading comma":                `{"nodes":{"node":[,{"id":"a:1"}]}}`,
	"missing comma":                `{"nodes":{"node":[{"id":"a:1"} {"id":"b:1"}]}}`,
	"unbalanced":                   `{"nodes":{"node":[{"id":"a:1"]}}`,
	"truncated in an element":      `{"nodes":{"node":[{"id":"a:`,
	"truncated after an element":   `{"nodes":{"node":[{"id":"a:1"}`,
	"invalid literal":              `{"nodes":{"node":[{"id":"a:1","x":tru}]}}`,
	"invalid number":               `{"nodes":{"node":[{"id":"a:1","x":01}]}}`,
	"invalid escape":               `{"nodes":{"node":[{"id":"a:1","x":"\q"}]}}`,
	"bad unicode escape":           `{"nodes":{"node":[{"id":"a:1","x":"\u12"}]}}`,
	"control character":            "{\"nodes\":{\"node\":[{\"id\":\"a\x01\"}]}}",
	"garbage after":                `{"nodes":{"node":[{"id":"a:1"}]}}garbage`,
	"not JSON":                     `<html>`,
	"nothing":                      ``,
}

func TestStreamListFastEqualsGeneral(t *testing.T) {
	for name, body := range nodeListCases {
		t.Run(name, func(t *testing.T) { checkSameNodes(t, []byte(body)) })
	}
	t.Run("captures", func(t *testing.T) {
		files, err := filepath.Glob("yarnfake/captures/*/nodes*.json")
		require.NoError(t, err)
		for _, file := range files {
			body, err := os.ReadFile(file)
			require.NoError(t, err)
			checkSameNodes(t, body)
		}
	})
	t.Run("synthesised, larger than the splitter's buffer", func(t *testing.T) {
		checkSameNodes(t, synthNodes(t, 200))
	})
}

// A read error in the middle of the list reaches the caller, as it would through encoding/json.
func TestStreamListFastReadError(t *testing.T) {
	body := synthNodes(t, 100)
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(boom))
	_, err := fastNodes(r)
	require.ErrorIs(t, err, boom)
}

// The fast list path keeps the element bound of the general one.
func TestStreamListFastElementBound(t *testing.T) {
	body := `{"nodes":{"node":[` + strings.TrimSuffix(strings.Repeat(`{},`, maxListElements+1), ",") + `]}}`
	_, err := fastNodes(strings.NewReader(body))
	require.ErrorIs(t, err, ErrResponseTooLarge)
}

// FuzzStreamListFast: the fast list path and encoding/json's decode every answer alike (the same
// nodes, or both an error), whatever the reads' sizes.
func FuzzStreamListFast(f *testing.F) {
	for _, body := range nodeListCases {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameNodes(t, data)
	})
}

// FuzzFastSkip: the fast path's grammar is JSON's.
func FuzzFastSkip(f *testing.F) {
	for _, tc := range nodeFastCases {
		f.Add([]byte(tc.json))
	}
	f.Add([]byte(`[1,-0.5e+3,"\u00e9\n",true,false,null,{}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fastScan{b: data}
		ok := s.skip()
		s.ws()
		ok = ok && s.i == len(data)
		if ok != json.Valid(data) {
			t.Fatalf("fast grammar says %v, encoding/json %v, for %q", ok, json.Valid(data), data)
		}
	})
}
