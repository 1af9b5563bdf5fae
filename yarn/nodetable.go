package yarn

import (
	"context"
	"encoding/binary"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/records"
)

// NodeTable is a list of NodeManagers kept compactly: the strings of every node in one arena,
// the strings nodes repeat (state, rack, version, health report, labels) and the shapes of the
// resource vectors (names and units in order) once, and the amounts in one slice. A node costs
// about 200 bytes instead of a Node's 800 or so, which a long-running reader of a 50,000-node
// cluster (serve) keeps between two polls. Node(i) rebuilds the i-th Node. A NodeTable is not
// changed once built; it is safe for concurrent readers.
type NodeTable struct {
	// arena holds each node's ID, Host and HTTPAddress, one after the other; ends[3*i+k] is where
	// the k-th string of node i ends (it starts where the string before it ended).
	arena string
	ends  []uint32
	// codes are, per node, the indexes in dict of its state, rack, version and health report,
	// and in labelSets of its labels.
	codes     []uint32
	dict      []string
	labelSets [][]string
	// shapes are the vectors' names and units in order; shape 0 is the empty vector. vec holds,
	// per node, the shape of Total, Used and Available; valOff where the node's amounts start in
	// vals (Total's, then Used's, then Available's), each a varint (zig-zag: encoding/binary's
	// AppendVarint), so that the usual amounts take one to three bytes instead of eight.
	shapes [][]shapeEntry
	vec    []uint32
	valOff []uint32
	vals   []byte
	// times are LastHealthUpdate in Unix milliseconds (math.MinInt64: unset), containers
	// NumContainers; derived marks TotalDerived.
	times      []int64
	containers []int64
	derived    []bool
}

// shapeEntry is one entry of a vector's shape: a resource name and its unit.
type shapeEntry struct{ name, units string }

const (
	codeState = iota
	codeRack
	codeVersion
	codeHealth
	codeLabels
	codesPerNode
)

// noTime marks a zero LastHealthUpdate.
const noTime = -1 << 63

// size estimates the memory the table keeps.
func (t *NodeTable) size() int64 {
	s := int64(len(t.arena) + 4*(len(t.ends)+len(t.codes)+len(t.vec)+len(t.valOff)) +
		len(t.vals) + 8*(len(t.times)+len(t.containers)) + len(t.derived))
	for _, d := range t.dict {
		s += int64(len(d)) + 16
	}
	return s
}

// Len is the number of nodes.
func (t *NodeTable) Len() int {
	if t == nil {
		return 0
	}
	return len(t.derived)
}

func (t *NodeTable) str(i, k int) string {
	j := 3*i + k
	start := uint32(0)
	if j > 0 {
		start = t.ends[j-1]
	}
	return t.arena[start:t.ends[j]]
}

// ID is node i's ID, without rebuilding the node.
func (t *NodeTable) ID(i int) string { return t.str(i, 0) }

// Host is node i's host name, without rebuilding the node.
func (t *NodeTable) Host(i int) string { return t.str(i, 1) }

// State is node i's state, without rebuilding the node.
func (t *NodeTable) State(i int) string { return t.dict[t.codes[codesPerNode*i+codeState]] }

// Rack is node i's rack, without rebuilding the node.
func (t *NodeTable) Rack(i int) string { return t.dict[t.codes[codesPerNode*i+codeRack]] }

// Labels are node i's labels, shared: the caller must not change them.
func (t *NodeTable) Labels(i int) []string { return t.labelSets[t.codes[codesPerNode*i+codeLabels]] }

// Total is node i's total resource.
func (t *NodeTable) Total(i int) records.Resources { return t.vector(i, 0) }

// Used is node i's used resource.
func (t *NodeTable) Used(i int) records.Resources { return t.vector(i, 1) }

// Available is node i's available resource.
func (t *NodeTable) Available(i int) records.Resources { return t.vector(i, 2) }

// vector rebuilds node i's k-th vector (Total, Used, Available).
func (t *NodeTable) vector(i, k int) records.Resources {
	shape := t.shapes[t.vec[3*i+k]]
	if len(shape) == 0 {
		return records.Resources{}
	}
	vals := t.vals[t.valOff[i]:]
	for j := range k {
		for range t.shapes[t.vec[3*i+j]] {
			_, n := binary.Varint(vals)
			vals = vals[n:]
		}
	}
	var buf [8]records.Resource
	entries := buf[:0]
	for _, e := range shape {
		v, n := binary.Varint(vals)
		vals = vals[n:]
		entries = append(entries, records.Resource{Name: e.name, Value: v, Units: e.units})
	}
	return records.ResourcesOf(entries...)
}

// Node rebuilds node i.
func (t *NodeTable) Node(i int) Node {
	c := t.codes[codesPerNode*i : codesPerNode*(i+1)]
	n := Node{
		ID: t.str(i, 0), Host: t.str(i, 1), HTTPAddress: t.str(i, 2),
		State: t.dict[c[codeState]], Rack: t.dict[c[codeRack]], Version: t.dict[c[codeVersion]], HealthReport: t.dict[c[codeHealth]],
		NumContainers: t.containers[i], TotalDerived: t.derived[i],
	}
	if ms := t.times[i]; ms != noTime {
		n.LastHealthUpdate = time.UnixMilli(ms).UTC()
	}
	if l := t.labelSets[c[codeLabels]]; len(l) > 0 {
		n.NodeLabels = slices.Clone(l)
	}
	n.Total, n.Used, n.Available = t.Total(i), t.Used(i), t.Available(i)
	return n
}

// Nodes rebuilds every node, in order.
func (t *NodeTable) Nodes() []Node {
	out := make([]Node, t.Len())
	for i := range out {
		out[i] = t.Node(i)
	}
	return out
}

// NodeTableOf returns the table of nodes (tests, and callers holding a list already).
func NodeTableOf(nodes []Node) *NodeTable {
	b := newNodeTableBuilder(len(nodes))
	for i := range nodes {
		b.add(&nodes[i])
	}
	return b.build()
}

// nodeTableBuilder builds a NodeTable one node at a time.
type nodeTableBuilder struct {
	t       NodeTable
	arena   strings.Builder
	dictIdx map[string]uint32
	shapeIx map[string]uint32
	labelIx map[string]uint32
	key     []byte
	entries []records.Resource
	// shared counts the bytes of the strings, label sets and shapes kept once (dict, labelSets,
	// shapes), for size.
	shared int64
}

// newNodeTableBuilder returns a builder with room for hint nodes.
func newNodeTableBuilder(hint int) *nodeTableBuilder {
	hint = max(hint, 0)
	b := &nodeTableBuilder{dictIdx: map[string]uint32{"": 0}, shapeIx: map[string]uint32{"": 0}, labelIx: map[string]uint32{"": 0}}
	b.t.dict = []string{""}
	b.t.labelSets = [][]string{nil}
	b.t.shapes = [][]shapeEntry{nil}
	b.t.ends = make([]uint32, 0, 3*hint)
	b.t.codes = make([]uint32, 0, codesPerNode*hint)
	b.t.vec = make([]uint32, 0, 3*hint)
	b.t.valOff = make([]uint32, 0, hint)
	b.t.vals = make([]byte, 0, 24*hint)
	b.t.times = make([]int64, 0, hint)
	b.t.containers = make([]int64, 0, hint)
	b.t.derived = make([]bool, 0, hint)
	b.arena.Grow(48 * hint)
	return b
}

func (b *nodeTableBuilder) code(s string) uint32 {
	if c, ok := b.dictIdx[s]; ok {
		return c
	}
	c := uint32(len(b.t.dict))
	s = strings.Clone(s)
	b.t.dict = append(b.t.dict, s)
	b.dictIdx[s] = c
	b.shared += 2*int64(len(s)) + 48 // the string, its map key, their headers
	return c
}

func (b *nodeTableBuilder) shape(r records.Resources) uint32 {
	if r.Len() == 0 {
		return 0
	}
	b.entries = r.AppendTo(b.entries[:0])
	b.key = b.key[:0]
	for _, e := range b.entries {
		b.key = append(b.key, e.Name...)
		b.key = append(b.key, 0)
		b.key = append(b.key, e.Units...)
		b.key = append(b.key, 0)
	}
	if c, ok := b.shapeIx[string(b.key)]; ok {
		return c
	}
	shape := make([]shapeEntry, len(b.entries))
	for j, e := range b.entries {
		shape[j] = shapeEntry{name: strings.Clone(e.Name), units: strings.Clone(e.Units)}
	}
	c := uint32(len(b.t.shapes))
	b.t.shapes = append(b.t.shapes, shape)
	b.shapeIx[string(b.key)] = c
	b.shared += 2*int64(len(b.key)) + 32*int64(len(shape)) + 48
	return c
}

// labels returns the index of the label set l in labelSets, adding it when new.
func (b *nodeTableBuilder) labels(l []string) uint32 {
	if len(l) == 0 {
		return 0
	}
	b.key = b.key[:0]
	for _, s := range l {
		b.key = strconv.AppendInt(b.key, int64(len(s)), 10)
		b.key = append(b.key, ':')
		b.key = append(b.key, s...)
	}
	if c, ok := b.labelIx[string(b.key)]; ok {
		return c
	}
	c := uint32(len(b.t.labelSets))
	b.t.labelSets = append(b.t.labelSets, slices.Clone(l))
	b.labelIx[string(b.key)] = c
	b.shared += 2*int64(len(b.key)) + 16*int64(len(l)) + 48
	return c
}

// size estimates the memory the table keeps so far, the strings kept once included.
func (b *nodeTableBuilder) size() int64 {
	t := &b.t
	return int64(b.arena.Len()+4*(len(t.ends)+len(t.codes)+len(t.vec)+len(t.valOff))+
		len(t.vals)+8*(len(t.times)+len(t.containers))+len(t.derived)) + b.shared
}

// add appends n.
func (b *nodeTableBuilder) add(n *Node) {
	t := &b.t
	for _, s := range []string{n.ID, n.Host, n.HTTPAddress} {
		b.arena.WriteString(s)
		t.ends = append(t.ends, uint32(b.arena.Len()))
	}
	t.codes = append(t.codes, b.code(n.State), b.code(n.Rack), b.code(n.Version), b.code(n.HealthReport),
		b.labels(n.NodeLabels))
	t.valOff = append(t.valOff, uint32(len(t.vals)))
	for _, r := range []records.Resources{n.Total, n.Used, n.Available} {
		t.vec = append(t.vec, b.shape(r))
		if r.Len() > 0 {
			for _, e := range r.AppendTo(b.entries[:0]) {
				t.vals = binary.AppendVarint(t.vals, e.Value)
			}
		}
	}
	ms := int64(noTime)
	if !n.LastHealthUpdate.IsZero() {
		ms = n.LastHealthUpdate.UnixMilli()
	}
	t.times = append(t.times, ms)
	t.containers = append(t.containers, n.NumContainers)
	t.derived = append(t.derived, n.TotalDerived)
}

// build returns the table; the builder is spent.
func (b *nodeTableBuilder) build() *NodeTable {
	t := b.t
	t.arena = b.arena.String()
	return &t
}

// decodeNodeTable decodes a /ws/v1/cluster/nodes body into a table, streaming the list: no node
// record is kept beyond the one being read.
func decodeNodeTable(r io.Reader, hint int) (*NodeTable, error) {
	return decodeNodeTableBounded(r, hint, MaxListRetained)
}

// decodeNodeTableBounded is decodeNodeTable with limit bytes kept at most (MaxListRetained).
func decodeNodeTableBounded(r io.Reader, hint int, limit int64) (*NodeTable, error) {
	b := newNodeTableBuilder(hint)
	boundary, _ := r.(recordBoundary)
	err := streamList(r, "nodes", "node", func(j *nodeJSON) error {
		n, err := j.node()
		if err != nil {
			return err
		}
		b.add(&n)
		if b.size() > limit {
			return &ResponseLimitError{Endpoint: "nodes", What: "records kept", Limit: limit,
				Class: "the memory the records of one list may keep, about 200 bytes a node in a table"}
		}
		if boundary != nil {
			boundary.recordDone()
		}
		return nil
	})
	if err != nil {
		return nil, unexpected("nodes", err)
	}
	return b.build(), nil
}

// NodeTable returns the cluster's NodeManagers as a compact table, decoded as the answer streams
// (Nodes keeps every record whole). hint is the number of nodes expected (the last table's
// Len, 0 when unknown), for the table's first allocation.
func (c *Client) NodeTable(ctx context.Context, q NodesQuery, hint int) (*NodeTable, error) {
	query := url.Values{}
	if len(q.States) > 0 {
		query.Set("states", strings.ToUpper(strings.Join(q.States, ",")))
	}
	return getDecoded(ctx, c, pathNodes, query, func(r io.Reader) (*NodeTable, error) { return decodeNodeTable(r, hint) })
}
