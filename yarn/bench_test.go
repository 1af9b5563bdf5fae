package yarn

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/yarn-er/yarn-er/records"
)

// synthNodes returns a /ws/v1/cluster/nodes body of n nodes shaped like Hadoop 3.5's (every field
// of the captured nodes.json, four resource types with Long.MAX_VALUE maximumAllocation).
func synthNodes(n int) []byte {
	ri := func(mem, vcores, gpu, fpga int) string {
		entry := func(name, units string, v int) string {
			return fmt.Sprintf(`{"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":"%s","resourceType":"COUNTABLE","units":"%s","value":%d}`, name, units, v)
		}
		return fmt.Sprintf(`{"memory":%d,"vCores":%d,"resourceInformations":{"resourceInformation":[%s,%s,%s,%s]}}`,
			mem, vcores, entry("memory-mb", "Mi", mem), entry("vcores", "", vcores), entry("yarn.io/gpu", "", gpu), entry("yarn.io/fpga", "", fpga))
	}
	var b bytes.Buffer
	b.WriteString(`{"nodes":{"node":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		used := i % 8
		fmt.Fprintf(&b, `{"rack":"/rack-%d","state":"RUNNING","id":"node%05d.example.com:45454","nodeHostName":"node%05d.example.com","nodeHTTPAddress":"node%05d.example.com:8042","lastHealthUpdate":1796033172368,"version":"3.5.0","healthReport":"","numContainers":%d,"usedMemoryMB":%d,"availMemoryMB":%d,"usedVirtualCores":%d,"availableVirtualCores":%d,"memUtilization":0.0,"cpuUtilization":0.0,"numRunningOpportContainers":0,"usedMemoryOpportGB":0,"usedVirtualCoresOpport":0,"numQueuedContainers":0,"allocationTags":{},"resourceUtilization":{"nodePhysicalMemoryMB":0,"nodeVirtualMemoryMB":0,"nodeCPUUsage":0.0,"aggregatedContainersPhysicalMemoryMB":0,"aggregatedContainersVirtualMemoryMB":0,"containersCPUUsage":0.0},"usedResource":%s,"availableResource":%s,"nodeAttributesInfo":{},"totalResource":%s}`,
			i%40, i, i, i, used, used*4096, 262144-used*4096, used*4, 64-used*4,
			ri(used*4096, used*4, used%5, 0), ri(262144-used*4096, 64-used*4, 8-used%5, 2), ri(262144, 64, 8, 2))
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

func TestSynthNodesDecode(t *testing.T) {
	nodes, err := decodeNodes(bytes.NewReader(synthNodes(3)))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[2].Total.Value(records.GPU) != 8 || nodes[2].Used.Value(records.GPU) != 2 || nodes[1].Available.Value(records.FPGA) != 2 {
		t.Fatalf("unexpected decode of the synthetic nodes: %+v", nodes)
	}
}

// BenchmarkDecodeNodes10k decodes a 10,000-node /nodes body (about 16 MB).
func BenchmarkDecodeNodes10k(b *testing.B) {
	body := synthNodes(10000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		nodes, err := decodeNodes(bytes.NewReader(body))
		if err != nil || len(nodes) != 10000 {
			b.Fatal(err, len(nodes))
		}
	}
}

// BenchmarkClientNodes10k is the same through the client and an HTTP round trip on loopback.
func BenchmarkClientNodes10k(b *testing.B) {
	body := synthNodes(10000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := NewClient(Options{Addresses: []string{srv.URL}, User: "bench"})
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
