// Command servebench measures `yarn-er serve` against a synthesised ResourceManager
// (yarn/yarnfake, SynthNodes) of N nodes: the serve process's resident memory, the latency of
// /metrics under many concurrent scrapers, and the RM polls seen meanwhile (one per interval,
// whatever the number of scrapers); and `yarn-er cluster nodes -o json` on the same RM (wall time,
// peak RSS, measured by GNU time: /usr/bin/time). It prints Markdown rows for docs/benchmarks.md.
//
// usage: go run ./bench/servebench -bin ./yarn-er -nodes 1000,10000,50000 [-scrapers 100] [-duration 15s]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func main() {
	bin := flag.String("bin", "./yarn-er", "the yarn-er binary")
	nodeList := flag.String("nodes", "1000,10000,50000", "cluster sizes, comma-separated")
	scrapers := flag.Int("scrapers", 100, "concurrent /metrics scrapers")
	duration := flag.Duration("duration", 15*time.Second, "how long the scrapers run")
	interval := flag.Duration("interval", 5*time.Second, "serve's --interval")
	flag.Parse()
	fmt.Printf("| nodes | /metrics size | serve RSS after | serve peak RSS | /metrics p50 | p99 | scrapes | RM /nodes polls in %s (interval %s) | `cluster nodes -o json` wall | its peak RSS |\n", *duration, *interval)
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(*nodeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fail("bad -nodes %q: %v", f, err)
		}
		if err := run(*bin, n, *scrapers, *duration, *interval); err != nil {
			fail("%d nodes: %v", n, err)
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "servebench: "+format+"\n", args...)
	os.Exit(1)
}

var listening = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

func run(bin string, n, scrapers int, duration, interval time.Duration) error {
	spec := yarnfake.NodeSpec{Racks: 20, Used: func(i int) []yarnfake.Resource {
		if i%4 != 0 {
			return nil
		}
		return []yarnfake.Resource{{Name: "memory-mb", Value: 8192}, {Name: "vcores", Value: 20}, {Name: "yarn.io/gpu", Value: 2}}
	}}
	rm, err := yarnfake.NewServer(yarnfake.WithVersion("3.5.0"), yarnfake.WithNodes(n, spec))
	if err != nil {
		return err
	}
	defer rm.Close()

	// cluster nodes -o json, as a user would run it, under GNU time: the peak RSS a child started
	// from this process reports (rusage) would count this process's own memory, which the
	// child shares until it executes yarn-er.
	timeFile, err := os.CreateTemp("", "servebench-time-")
	if err != nil {
		return err
	}
	timeFile.Close()
	defer os.Remove(timeFile.Name())
	start := time.Now()
	cli := exec.Command("/usr/bin/time", "-o", timeFile.Name(), "-f", "%M", bin, "cluster", "nodes", "-o", "json", "--rm", rm.URL(), "--user", "bench")
	cli.Env = cleanEnv()
	cli.Stdout = io.Discard
	var cliErr strings.Builder
	cli.Stderr = &cliErr
	if err := cli.Run(); err != nil {
		return fmt.Errorf("cluster nodes: %w: %s", err, cliErr.String())
	}
	cliWall := time.Since(start)
	out, err := os.ReadFile(timeFile.Name())
	if err != nil {
		return err
	}
	cliRSS, err := strconv.Atoi(strings.TrimSpace(string(out))) // KiB
	if err != nil {
		return fmt.Errorf("GNU time's output %q: %w", out, err)
	}

	srv := exec.Command(bin, "serve", "--rm", rm.URL(), "--user", "bench", "--listen", "127.0.0.1:0", "--interval", interval.String())
	srv.Env = cleanEnv()
	pipe, err := srv.StderrPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-addr:
	case <-time.After(time.Minute):
		return fmt.Errorf("serve did not start")
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("serve not ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The scrapers ask for gzip, as Prometheus does, and read the compressed bytes without
	// decompressing them: on a 2-core machine 100 decompressing clients would measure themselves.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: scrapers, DisableCompression: true}}
	get := func() (int64, error) {
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return io.Copy(io.Discard, resp.Body)
	}
	size, gzSize := int64(0), int64(0)
	if resp, err := http.Get(base + "/metrics"); err == nil {
		size, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	gzSize, _ = get()
	before := rm.Count("GET /ws/v1/cluster/nodes")
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for range scrapers {
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				if _, err := get(); err != nil {
					continue
				}
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	polls := rm.Count("GET /ws/v1/cluster/nodes") - before
	rss, hwm := procMem(srv.Process.Pid)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	fmt.Printf("| %d | %.1f MB (gzip %.1f MB) | %s | %s | %s | %s | %d | %d | %s | %.0f MiB |\n", n, float64(size)/1e6, float64(gzSize)/1e6, rss, hwm,
		pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), len(lat), polls, cliWall.Round(10*time.Millisecond), float64(cliRSS)/1024)
	return nil
}

// procMem returns the process's VmRSS and VmHWM.
func procMem(pid int) (rss, hwm string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?", "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 {
			kb, _ := strconv.Atoi(f[1])
			switch f[0] {
			case "VmRSS:":
				rss = fmt.Sprintf("%d MiB", kb/1024)
			case "VmHWM:":
				hwm = fmt.Sprintf("%d MiB", kb/1024)
			}
		}
	}
	return rss, hwm
}

// cleanEnv is the environment without a Hadoop configuration or yarn-er settings that would
// point the commands elsewhere.
func cleanEnv() []string {
	var out []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if k == "HADOOP_CONF_DIR" || k == "HADOOP_HOME" || strings.HasPrefix(k, "YARN_ER_") || k == "YARN_CONF_DIR" {
			continue
		}
		out = append(out, e)
	}
	return out
}
