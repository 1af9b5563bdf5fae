//go:build unix

package main

import (
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkDiscoverLatency measures one `yarn-er discover 1` as Flink runs it (a new process, the
// built binary, 8 fake GPUs read from procfs), alone and with 64 processes asking at once, with and
// without coordination. It reports the p50 and p99 latency of a call; with coordination, the timed call
// is the acquisition (the release that follows each success is not timed), and a refusal (exit 5, all 8
// GPUs taken) counts as a call too. bench/discover-latency.sh runs it.
func BenchmarkDiscoverLatency(b *testing.B) {
	bin := buildYarnEr(b)
	h := newGPUHost(b, 8)
	for _, bc := range []struct {
		name         string
		workers      int
		coordination bool
	}{
		{"alone/no-coordination", 1, false},
		{"alone/coordination", 1, true},
		{"contention-64/no-coordination", 64, false},
		{"contention-64/coordination", 64, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			owners := make([]*exec.Cmd, bc.workers)
			for i := range owners {
				owners[i] = exec.Command("sleep", "3600")
				require.NoError(b, owners[i].Start())
			}
			defer func() {
				for _, o := range owners {
					_ = o.Process.Kill()
					_ = o.Wait()
				}
			}()
			var mu sync.Mutex
			var lat []time.Duration
			refused := 0
			jobs := make(chan struct{}, b.N)
			for i := 0; i < b.N; i++ {
				jobs <- struct{}{}
			}
			close(jobs)
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < bc.workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					owner := strconv.Itoa(owners[w].Process.Pid)
					args := []string{"discover", "1", "--host-root", h.tree.Root}
					if bc.coordination {
						args = append(args, "--enable-coordination-mode", "--coordination-file", h.coord, "--owner-pid", owner, "--lock-timeout", "60s")
					}
					for range jobs {
						start := time.Now()
						err := exec.Command(bin, args...).Run()
						d := time.Since(start)
						code := 0
						if exitErr, ok := err.(*exec.ExitError); ok {
							code = exitErr.ExitCode()
						} else if err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						lat = append(lat, d)
						if code == 5 {
							refused++
						}
						mu.Unlock()
						if code == 0 && bc.coordination {
							if err := exec.Command(bin, "discover", "--release", "--coordination-file", h.coord, "--owner-pid", owner).Run(); err != nil {
								b.Error(err)
								return
							}
						} else if code != 0 && code != 5 {
							b.Errorf("exit %d", code)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if len(lat) == 0 {
				return
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(refused)/float64(len(lat)), "refused/op")
		})
	}
}
