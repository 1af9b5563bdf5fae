// Command rmnodes measures how package yarn decodes a large /ws/v1/cluster/nodes answer: it
// synthesises N nodes shaped like Hadoop 3.5's (four resource types) with package yarnfake,
// serves them from its in-process fake ResourceManager, fetches them with yarn.Client.Nodes and
// prints the wall time and the peak Go heap during the call. bench/rm-nodes-decode.sh runs it under /usr/bin/time -v for the
// process's peak RSS.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func main() {
	n := flag.Int("nodes", 10000, "number of nodes in the answer")
	runs := flag.Int("runs", 3, "number of fetches")
	flag.Parse()
	if err := run(*n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "rmnodes:", err)
		os.Exit(1)
	}
}

func run(n, runs int) error {
	// The nodes of a large GPU cluster: 262144 MB, 64 vcores, 8 GPUs and 2 FPGAs each, node i
	// using i%8 eighths of its memory and vcores and i%8%5 GPUs, over 40 racks.
	spec := yarnfake.NodeSpec{
		Total: []yarnfake.Resource{{Name: records.MemoryMB, Value: 262144}, {Name: records.VCores, Value: 64}, {Name: records.GPU, Value: 8}, {Name: records.FPGA, Value: 2}},
		Used: func(i int) []yarnfake.Resource {
			u := int64(i % 8)
			return []yarnfake.Resource{{Name: records.MemoryMB, Value: u * 4096}, {Name: records.VCores, Value: u * 4}, {Name: records.GPU, Value: u % 5}}
		},
		Racks: 40,
	}
	body, err := yarnfake.SynthNodes(n, spec)
	if err != nil {
		return err
	}
	rm, err := yarnfake.NewServer(yarnfake.WithNodes(n, spec))
	if err != nil {
		return err
	}
	defer rm.Close()
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "bench"})
	if err != nil {
		return err
	}
	fmt.Printf("nodes=%d body=%.1f MB\n", n, float64(len(body))/1e6)
	for i := range runs {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { // sample the live heap every millisecond
			defer close(done)
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			var ms runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					runtime.ReadMemStats(&ms)
					if ms.HeapAlloc > peak.Load() {
						peak.Store(ms.HeapAlloc)
					}
				}
			}
		}()
		start, cpu0 := time.Now(), cpuTime()
		nodes, err := c.Nodes(context.Background(), yarn.NodesQuery{})
		elapsed, cpu := time.Since(start), cpuTime()-cpu0
		close(stop)
		<-done
		if err != nil {
			return err
		}
		var after, retained runtime.MemStats
		runtime.ReadMemStats(&after)
		if peak.Load() < after.HeapAlloc {
			peak.Store(after.HeapAlloc)
		}
		runtime.GC()
		runtime.ReadMemStats(&retained)
		gpus := int64(0)
		for _, nd := range nodes {
			gpus += nd.Total.Value(records.GPU)
		}
		fmt.Printf("run %d: %d nodes (%d GPUs) in %v (CPU %v, server and GC included); allocated %.1f MB in %d allocations; peak heap %.1f MB above the %.1f MB before; result retains %.1f MB\n",
			i+1, len(nodes), gpus, elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond),
			float64(after.TotalAlloc-before.TotalAlloc)/1e6, after.Mallocs-before.Mallocs,
			float64(peak.Load()-before.HeapAlloc)/1e6, float64(before.HeapAlloc)/1e6,
			float64(retained.HeapAlloc-before.HeapAlloc)/1e6)
		runtime.KeepAlive(nodes)
	}
	return nil
}

// cpuTime is the user+system CPU time of the process so far: unlike wall time it hardly depends
// on what else the machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
