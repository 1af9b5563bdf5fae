// Command rmnodes measures how package yarn decodes a large /ws/v1/cluster/nodes answer: it
// synthesises N nodes shaped like Hadoop 3.5's (four resource types), serves them from an
// in-process HTTP server, fetches them with yarn.Client.Nodes and prints the wall time and the
// peak Go heap during the call. bench/rm-nodes-decode.sh runs it under /usr/bin/time -v for the
// process's peak RSS.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
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
	body := synth(n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{srv.URL}, User: "bench"})
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

// synth builds the /nodes body: the fields of a real Hadoop 3.5 node, four resource types.
func synth(n int) []byte {
	ri := func(mem, vcores, gpu, fpga int) string {
		e := func(name, units string, v int) string {
			return fmt.Sprintf(`{"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":"%s","resourceType":"COUNTABLE","units":"%s","value":%d}`, name, units, v)
		}
		return fmt.Sprintf(`{"memory":%d,"vCores":%d,"resourceInformations":{"resourceInformation":[%s,%s,%s,%s]}}`,
			mem, vcores, e("memory-mb", "Mi", mem), e("vcores", "", vcores), e("yarn.io/gpu", "", gpu), e("yarn.io/fpga", "", fpga))
	}
	var b bytes.Buffer
	b.WriteString(`{"nodes":{"node":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		u := i % 8
		fmt.Fprintf(&b, `{"rack":"/rack-%d","state":"RUNNING","id":"node%05d.example.com:45454","nodeHostName":"node%05d.example.com","nodeHTTPAddress":"node%05d.example.com:8042","lastHealthUpdate":1796033172368,"version":"3.5.0","healthReport":"","numContainers":%d,"usedMemoryMB":%d,"availMemoryMB":%d,"usedVirtualCores":%d,"availableVirtualCores":%d,"memUtilization":0.0,"cpuUtilization":0.0,"numRunningOpportContainers":0,"usedMemoryOpportGB":0,"usedVirtualCoresOpport":0,"numQueuedContainers":0,"allocationTags":{},"resourceUtilization":{"nodePhysicalMemoryMB":0,"nodeVirtualMemoryMB":0,"nodeCPUUsage":0.0,"aggregatedContainersPhysicalMemoryMB":0,"aggregatedContainersVirtualMemoryMB":0,"containersCPUUsage":0.0},"usedResource":%s,"availableResource":%s,"nodeAttributesInfo":{},"totalResource":%s}`,
			i%40, i, i, i, u, u*4096, 262144-u*4096, u*4, 64-u*4,
			ri(u*4096, u*4, u%5, 0), ri(262144-u*4096, 64-u*4, 8-u%5, 2), ri(262144, 64, 8, 2))
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}
