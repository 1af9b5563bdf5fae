package yarn

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// synthNodes returns a /ws/v1/cluster/nodes body of n nodes shaped like Hadoop 3.5's (package
// yarnfake's synthesiser): 262144 MB, 64 vcores, 8 GPUs and 2 FPGAs each, node i using i%8
// eighths of its memory and vcores and i%8%5 GPUs, spread over 40 racks.
func synthNodes(tb testing.TB, n int) []byte {
	tb.Helper()
	body, err := yarnfake.SynthNodes(n, yarnfake.NodeSpec{
		Total: []yarnfake.Resource{{Name: records.MemoryMB, Value: 262144}, {Name: records.VCores, Value: 64}, {Name: records.GPU, Value: 8}, {Name: records.FPGA, Value: 2}},
		Used: func(i int) []yarnfake.Resource {
			u := int64(i % 8)
			return []yarnfake.Resource{{Name: records.MemoryMB, Value: u * 4096}, {Name: records.VCores, Value: u * 4}, {Name: records.GPU, Value: u % 5}}
		},
		Racks: 40,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func TestSynthNodesDecode(t *testing.T) {
	nodes, err := decodeNodes(bytes.NewReader(synthNodes(t, 3)))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[2].Total.Value(records.GPU) != 8 || nodes[2].Used.Value(records.GPU) != 2 || nodes[1].Available.Value(records.FPGA) != 2 {
		t.Fatalf("unexpected decode of the synthetic nodes: %+v", nodes)
	}
}

// BenchmarkDecodeNodes10k decodes a 10,000-node /nodes body (about 16 MB).
func BenchmarkDecodeNodes10k(b *testing.B) {
	body := synthNodes(b, 10000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		nodes, err := decodeNodes(bytes.NewReader(body))
		if err != nil || len(nodes) != 10000 {
			b.Fatal(err, len(nodes))
		}
	}
}

// BenchmarkDecodeNodeTable10k is the same body decoded into a NodeTable (serve's and cluster
// nodes' form); MB-kept is the table's estimated size.
func BenchmarkDecodeNodeTable10k(b *testing.B) {
	body := synthNodes(b, 10000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var kept int64
	for b.Loop() {
		tab, err := decodeNodeTable(bytes.NewReader(body), 0)
		if err != nil || tab.Len() != 10000 {
			b.Fatal(err, tab.Len())
		}
		kept = tab.size()
	}
	b.ReportMetric(float64(kept)/1e6, "MB-kept")
}

// BenchmarkClientNodes10k is the same through the client and an HTTP round trip on loopback.
func BenchmarkClientNodes10k(b *testing.B) {
	body := synthNodes(b, 10000)
	rm := newFakeRM(b)
	rm.Reply("GET /ws/v1/cluster/nodes", http.StatusOK, "application/json", body)
	c, err := NewClient(Options{Addresses: []string{rm.URL()}, User: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		nodes, err := c.Nodes(context.Background(), NodesQuery{})
		if err != nil || len(nodes) != 10000 {
			b.Fatal(err, len(nodes))
		}
	}
}
