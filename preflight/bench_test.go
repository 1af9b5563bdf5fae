package preflight

import (
	"context"
	"testing"
)

// BenchmarkRunLive10kNodes runs a whole preflight (offline and live checks) against a fake RM with
// 10,000 RUNNING nodes of 16384 MB, 32 vcores, 4 GPUs and 2 FPGAs, a quarter of them half busy.
// The /nodes answer is about 20 MB of JSON, as Hadoop 3.5 would send it.
func BenchmarkRunLive10kNodes(b *testing.B) {
	nodes := uniformNodes(10000, map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2})
	for i := 0; i < len(nodes); i += 4 {
		nodes[i].used = map[string]int64{"memory-mb": 8192, "vcores": 16, "yarn.io/gpu": 2, "yarn.io/fpga": 1}
	}
	bodies := synthCluster(stdTypes, nodes, bigMax)
	bodies["/conf"] = capture(b, "yarn/yarnfake/captures/hadoop-3.5.0/conf.json")
	rm := newFakeRM(b, bodies)
	in := Input{Flink: flinkConf(b, goodFlink), Hadoop: goodHadoop().load(b), Client: rmClient(b, rm.URL()), Containers: 20000}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := Run(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.entries(IDCapacity)) != 1 || rep.entries(IDCapacity)[0].Status != StatusWarn {
			b.Fatalf("capacity: %+v", rep.entries(IDCapacity))
		}
	}
	b.ReportMetric(float64(len(bodies["/ws/v1/cluster/nodes"]))/(1<<20), "nodes-MB")
}
