package view

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// NodeOrder is the order of `cluster nodes`: the indexes in t of the nodes that have resource
// (above 0; every node when resource is ""), sorted by node id (nodes of the same id in t's order).
func NodeOrder(t *yarn.NodeTable, resource string) []int32 {
	order := make([]int32, 0, t.Len())
	for i := range t.Len() {
		if resource != "" {
			if n := t.Node(i); n.Total.Value(resource) <= 0 {
				continue
			}
		}
		order = append(order, int32(i))
	}
	slices.SortStableFunc(order, func(x, y int32) int { return strings.Compare(t.ID(int(x)), t.ID(int(y))) })
	return order
}

// WriteNodesJSON writes `cluster nodes` of the nodes of t that have resource, the same bytes as
// encode(w, NodesOf(t.Nodes(), resource)), one node at a time: no list of the nodes' records or
// views, nor the whole document, is ever held (a 50,000-node document is some 40 MB). encode is
// the writer of -o json: an indented encoder (two spaces a level) passes the check it is
// streamed through; any other is given the whole view.
func WriteNodesJSON(w io.Writer, encode func(io.Writer, any) error, t *yarn.NodeTable, resource string) error {
	order := NodeOrder(t, resource)
	if len(order) == 0 || !streamable(encode) {
		nodes := make([]yarn.Node, len(order))
		for k, i := range order {
			nodes[k] = t.Node(int(i))
		}
		return encode(w, NodesOf(nodes, ""))
	}
	if _, err := io.WriteString(w, nodesHead); err != nil {
		return err
	}
	var buf bytes.Buffer
	var fast []byte
	checked, useFast := false, false
	for k, i := range order {
		n := t.Node(int(i))
		v := NodeOf(&n)
		sep := ",\n"
		if k == len(order)-1 {
			sep = "\n"
		}
		// A node whose every string is plain ASCII is written directly, once the encoder was seen
		// to write the first such node the same way; any other through encode.
		var ok bool
		if !checked || useFast {
			fast, ok = appendNodeFast(fast[:0], &v, sep)
		}
		if ok && !checked {
			checked = true
			buf.Reset()
			if err := encode(&buf, v); err != nil {
				return err
			}
			useFast = bytes.Equal(fast, nested(buf.Bytes(), sep))
		}
		if ok && useFast {
			if _, err := w.Write(fast); err != nil {
				return err
			}
			continue
		}
		buf.Reset()
		if err := encode(&buf, v); err != nil {
			return err
		}
		if _, err := w.Write(nested(buf.Bytes(), sep)); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, nodesTail)
	return err
}

const (
	nodesHead  = "{\n  \"nodes\": [\n"
	nodesTail  = "  ]\n}\n"
	nodeIndent = "    "
)

// nested is one node's document (encode's output, ending in a line feed) as an element of the
// list: every line indented two levels more, then sep. A line feed occurs in encoded JSON only
// between tokens (a string's own is escaped).
func nested(doc []byte, sep string) []byte {
	doc = bytes.TrimSuffix(doc, []byte("\n"))
	out := make([]byte, 0, len(doc)+len(doc)/8+len(sep)+len(nodeIndent))
	out = append(out, nodeIndent...)
	for {
		i := bytes.IndexByte(doc, '\n')
		if i < 0 {
			break
		}
		out = append(out, doc[:i+1]...)
		out = append(out, nodeIndent...)
		doc = doc[i+1:]
	}
	out = append(out, doc...)
	return append(out, sep...)
}

// streamable reports whether encode writes a list of nodes as WriteNodesJSON stitches it, tried
// on two nodes whose strings need escaping.
func streamable(encode func(io.Writer, any) error) bool {
	sample := Nodes{Nodes: []Node{
		{ID: "a:1", State: "RUNNING", Host: "a<&>", Rack: "/r\n\"\\\u2028", HTTPAddress: "a:8042",
			Total: ResourceMap(records.NewResources(1, 2, records.Resource{Name: "yarn.io/gpu", Value: 4})), Used: ResourceMap(records.NewResources(0, 0))},
		{ID: "b:1", State: "LOST", Host: "b\u202e", Rack: "/r", HTTPAddress: "\x7f"},
	}}
	var whole, stitched bytes.Buffer
	if encode(&whole, sample) != nil {
		return false
	}
	stitched.WriteString(nodesHead)
	for k, n := range sample.Nodes {
		var one bytes.Buffer
		if encode(&one, n) != nil {
			return false
		}
		sep := ",\n"
		if k == len(sample.Nodes)-1 {
			sep = "\n"
		}
		stitched.Write(nested(one.Bytes(), sep))
	}
	stitched.WriteString(nodesTail)
	return bytes.Equal(whole.Bytes(), stitched.Bytes())
}

// plain reports whether every JSON encoder writes s as its bytes between quotes: printable ASCII
// without the characters one escapes (quote, backslash, and the HTML ones).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendNodeFast appends the node as an element of the list (as nested writes it) and sep, when
// its strings and resource names are plain; else it reports false.
func appendNodeFast(dst []byte, n *Node, sep string) ([]byte, bool) {
	const in1, in2 = nodeIndent + "  ", nodeIndent + "    "
	dst = append(dst, nodeIndent+"{\n"...)
	for _, f := range [...]struct{ key, val string }{{"id", n.ID}, {"state", n.State}, {"host", n.Host}, {"rack", n.Rack}, {"httpAddress", n.HTTPAddress}} {
		if !plain(f.val) {
			return dst, false
		}
		dst = append(dst, in1+`"`...)
		dst = append(dst, f.key...)
		dst = append(dst, `": "`...)
		dst = append(dst, f.val...)
		dst = append(dst, "\",\n"...)
	}
	for k, f := range [...]struct {
		key string
		r   ResourceMap
	}{{"total", n.Total}, {"used", n.Used}, {"available", n.Available}} {
		dst = append(dst, in1+`"`...)
		dst = append(dst, f.key...)
		dst = append(dst, `": `...)
		if f.r.IsZero() {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, "{\n"...)
			for j, name := range f.r.Names() {
				if !plain(name) {
					return dst, false
				}
				if j > 0 {
					dst = append(dst, ",\n"...)
				}
				dst = append(dst, in2+`"`...)
				dst = append(dst, name...)
				dst = append(dst, `": `...)
				dst = strconv.AppendInt(dst, f.r.Quantity(name).Value, 10)
			}
			dst = append(dst, "\n"+in1+"}"...)
		}
		if k < 2 {
			dst = append(dst, ',')
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, nodeIndent+"}"...)
	return append(dst, sep...), true
}
