package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// benchRM is a synthesised ResourceManager of n nodes in bench/servebench's shape (4 yarn.io/gpu
// and 2 yarn.io/fpga a node, every fourth half busy, 20 racks) and a watch of it.
func benchRM(b *testing.B, n int) (*Watcher, *Handler) {
	b.Helper()
	spec := yarnfake.NodeSpec{Racks: 20, Used: func(i int) []yarnfake.Resource {
		if i%4 != 0 {
			return nil
		}
		return []yarnfake.Resource{{Name: "memory-mb", Value: 8192}, {Name: "vcores", Value: 20}, {Name: "yarn.io/gpu", Value: 2}}
	}}
	rm := yarnfake.New(b, yarnfake.WithVersion("3.5.0"), yarnfake.WithNodes(n, spec))
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "bench", Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWatcher(WatchOptions{Client: c, Interval: time.Hour, PollTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	h, err := NewHandler(Options{Watcher: w})
	if err != nil {
		b.Fatal(err)
	}
	return w, h
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkPoll: one poll (every request, the nodes decoded into the table, /metrics encoded) of
// a synthesised RM of 1k, 10k and 50k nodes served in the same process. Besides time, bytes and
// allocations per poll: MB-kept, the heap the published snapshot keeps (measured after a
// collection, with the previous snapshot gone).
func BenchmarkPoll(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			w, _ := benchRM(b, n)
			before := heapInUse()
			b.ReportAllocs()
			for b.Loop() {
				if err := w.PollOnce(context.Background()); err != nil {
					b.Fatal(err)
				}
				// Encoded by the poll itself now; by the first scrape before (so that both
				// count the same work).
				w.Status().Snapshot.clusterMetricsText()
			}
			b.StopTimer()
			b.ReportMetric(float64(heapInUse()-before)/1e6, "MB-kept")
			runtime.KeepAlive(w)
		})
	}
}

// BenchmarkScrape: one GET /metrics (gzip, as Prometheus asks) at 10k and 50k nodes, after the
// poll: what a scraper costs serve (the bytes were encoded at the poll).
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			w, h := benchRM(b, n)
			if err := w.PollOnce(context.Background()); err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			b.ReportAllocs()
			for b.Loop() {
				d := &discard{header: http.Header{}}
				h.ServeHTTP(d, req)
				if d.code != http.StatusOK {
					b.Fatal(d.code)
				}
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing of the body: the cost of an answer without a
// recorder's copy of it.
type discard struct {
	header http.Header
	code   int
}

func (d *discard) Header() http.Header { return d.header }

func (d *discard) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	return len(p), nil
}

func (d *discard) WriteHeader(code int) { d.code = code }
