//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkDistShell runs Hadoop's DistributedShell and `yarn-er submit` interleaved on the same
// mini-YARN: for every N of $YARN_ER_DISTSHELL_N (default 4,16,64) and $YARN_ER_DISTSHELL_RUNS
// repetitions (default 3), DistributedShell with `-num_containers N -container_resources
// memory-mb=128,vcores=1,yarn.io/gpu=1 -shell_command true` and `yarn-er submit --containers N
// --gpus 1 --memory 128m -- true`, alternating which goes first. Each run records the wall time
// from starting the client to the application's FINISHED (and to the client's exit), the AM's
// peak RSS (VmHWM of the AM process, sampled from /proc; for yarn-er also the peakRSSKiB its
// log reports) and where the time went, from the ResourceManager's state changes in the
// cluster log. $YARN_ER_DISTSHELL_LIB is the directory of DistributedShell's jars and their
// client libraries (bench/distshell.sh fetches them with Maven); without it the benchmark is
// skipped. $YARN_ER_BENCH_OUT, when set, receives the table. Run with bench/distshell.sh.
func BenchmarkDistShell(b *testing.B) {
	lib := os.Getenv("YARN_ER_DISTSHELL_LIB")
	if lib == "" {
		b.Skip("YARN_ER_DISTSHELL_LIB is not set: run bench/distshell.sh")
	}
	dsJar, err := filepath.Glob(filepath.Join(lib, "hadoop-yarn-applications-distributedshell-*.jar"))
	if err != nil || len(dsJar) != 1 {
		b.Fatalf("no single DistributedShell jar in %s: %v %v", lib, dsJar, err)
	}
	ns := []int{4, 16, 64}
	if v := os.Getenv("YARN_ER_DISTSHELL_N"); v != "" {
		ns = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("YARN_ER_DISTSHELL_N=%q: want a comma-separated list of container counts", v)
			}
			ns = append(ns, n)
		}
	}
	runs := 3
	if v := os.Getenv("YARN_ER_DISTSHELL_RUNS"); v != "" {
		if runs, err = strconv.Atoi(v); err != nil || runs < 1 {
			b.Fatalf("YARN_ER_DISTSHELL_RUNS=%q: want a positive number", v)
		}
	}
	ep := cluster(b)
	bin := yarnErBinary(b)
	conf := distShellConf(b, ep)

	var rows []benchRun
	for i := 0; i < b.N; i++ {
		for rep := range runs {
			for _, n := range ns {
				order := []string{"distshell", "yarn-er"}
				if rep%2 == 1 {
					slices.Reverse(order)
				}
				for _, tool := range order {
					var r benchRun
					if tool == "distshell" {
						r = runDistShell(b, ep, conf, lib, dsJar[0], n)
					} else {
						r = runYarnErSubmit(b, ep, bin, n)
					}
					r.Rep = rep + 1
					b.Logf("%s", r.row())
					rows = append(rows, r)
				}
			}
		}
	}
	table := benchTable(rows, ns)
	b.Logf("\n%s", table)
	if out := os.Getenv("YARN_ER_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(0, "ns/op")
}

// benchRun is one application of the benchmark.
type benchRun struct {
	Tool  string
	N     int
	Rep   int
	AppID string
	// Load is the 1-minute load average before the run.
	Load float64
	// Wall is client start to FINISHED (RM); Exit is client start to the client's exit.
	Wall, Exit time.Duration
	// Phases, from the client's start: the RM accepted the submission, launched the AM
	// container, the AM registered, the first and the last container allocated, the last
	// container running, the AM unregistered.
	Submitted, AMLaunched, Registered, FirstAlloc, LastAlloc, LastRunning, Unregistered time.Duration
	// Allocated counts the containers the RM allocated besides the AM's.
	Allocated int
	// Staging is what submit reports (yarn-er only).
	Staging time.Duration
	// RSSKiB is the AM process's VmHWM sampled from /proc; LogRSSKiB what the AM logged.
	RSSKiB, LogRSSKiB int64
	// AMRegisteredAfter is the AM's own time from its start to registration (yarn-er only).
	AMRegisteredAfter string
	Heartbeats        string
}

func (r benchRun) row() string {
	s := func(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }
	return fmt.Sprintf("| %s | %d | %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %.1f | %.1f | %s | %s |",
		r.Tool, r.N, r.Rep, r.Load, s(r.Wall), s(r.Exit), s(r.Submitted), s(r.AMLaunched), s(r.Registered), s(r.FirstAlloc),
		s(r.LastAlloc), s(r.LastRunning), s(r.Unregistered), s(r.Staging), r.Allocated, r.AppID,
		float64(r.RSSKiB)/1024, float64(r.LogRSSKiB)/1024, r.AMRegisteredAfter, r.Heartbeats)
}

const benchRowHeader = "| tool | N | run | load | FINISHED s | client exit s | accepted s | AM launched s | registered s | 1st alloc s | last alloc s | last running s | unregistered s | staging s | allocated | app | AM RSS MiB (/proc) | AM RSS MiB (log) | AM: registered after | heartbeats |\n" +
	"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n"

// benchTable is every run, then the medians per tool and N with yarn-er's ratios.
func benchTable(rows []benchRun, ns []int) string {
	var sb strings.Builder
	sb.WriteString(benchRowHeader)
	for _, r := range rows {
		sb.WriteString(r.row() + "\n")
	}
	sb.WriteString("\n| N | DistributedShell FINISHED s (median) | yarn-er FINISHED s (median) | wall ratio | DistributedShell AM RSS MiB (median) | yarn-er AM RSS MiB (median) | RSS ratio |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	med := func(tool string, n int, f func(benchRun) float64) float64 {
		var v []float64
		for _, r := range rows {
			if r.Tool == tool && r.N == n {
				v = append(v, f(r))
			}
		}
		if len(v) == 0 {
			return math.NaN()
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	wall := func(r benchRun) float64 { return r.Wall.Seconds() }
	rss := func(r benchRun) float64 {
		if r.LogRSSKiB > r.RSSKiB {
			return float64(r.LogRSSKiB) / 1024
		}
		return float64(r.RSSKiB) / 1024
	}
	for _, n := range ns {
		dw, yw := med("distshell", n, wall), med("yarn-er", n, wall)
		dr, yr := med("distshell", n, rss), med("yarn-er", n, rss)
		fmt.Fprintf(&sb, "| %d | %.1f | %.1f | %.2f× | %.0f | %.1f | 1/%.0f |\n", n, dw, yw, yw/dw, dr, yr, dr/yr)
	}
	return sb.String()
}

// distShellConf is a copy of the cluster's client configuration with yarn.is.minicluster=true,
// without which DistributedShell's client does not give its AM the client's class path.
func distShellConf(t testing.TB, ep *Endpoints) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(ep.HadoopConfDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(ep.HadoopConfDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "yarn-site.xml" {
			b = bytes.Replace(b, []byte("</configuration>"),
				[]byte("<property><name>yarn.is.minicluster</name><value>true</value></property>\n</configuration>"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// timeRun runs cmd, tool's run of n containers, while sampling the AM processes whose command line
// has am (see sampleAMs), and returns the run with its load and exit time, the sampler (still
// running) and the start time. A failed cmd fails the test with its output.
func timeRun(t testing.TB, cmd *exec.Cmd, tool string, n int, am string, output fmt.Stringer) (benchRun, *amSampler, time.Time) {
	t.Helper()
	r := benchRun{Tool: tool, N: n, Load: loadAvg()}
	sampler := sampleAMs(am)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		sampler.stop()
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, output)
	}
	r.Exit = time.Since(start)
	return r, sampler, start
}

// runDistShell runs DistributedShell's client for n containers and measures its application.
func runDistShell(t testing.TB, ep *Endpoints, conf, lib, jar string, n int) benchRun {
	t.Helper()
	cmd := exec.Command("java", "-cp", conf+string(os.PathListSeparator)+filepath.Join(lib, "*"),
		"org.apache.hadoop.yarn.applications.distributedshell.Client", "-jar", jar,
		"-num_containers", strconv.Itoa(n), "-container_resources", "memory-mb=128,vcores=1,yarn.io/gpu=1",
		"-shell_command", "true", "-timeout", "600000")
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+ep.User, "HADOOP_CONF_DIR="+conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	r, sampler, start := timeRun(t, cmd, "distshell", n, "distributedshell.ApplicationMaster", &out)
	time.Sleep(300 * time.Millisecond) // the AM process may outlive the client's last report by a little
	peaks := sampler.stop()
	for cid, kib := range peaks {
		if r.AppID == "" || cid > r.AppID {
			r.AppID, r.RSSKiB = cid, kib
		}
	}
	if r.AppID == "" {
		t.Fatalf("DistributedShell's AM process was never seen; client output:\n%s", out.String())
	}
	r.AppID = appOfContainer(r.AppID)
	rmPhases(t, ep, &r, start)
	return r
}

// runYarnErSubmit runs `yarn-er submit` for n containers and measures its application.
func runYarnErSubmit(t testing.TB, ep *Endpoints, bin string, n int) benchRun {
	t.Helper()
	cmd := exec.Command(bin, "submit", "--containers", strconv.Itoa(n), "--gpus", "1", "--memory", "128m",
		"--progress", "plain", "--", "true")
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_USER_NAME="+ep.User, "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r, sampler, start := timeRun(t, cmd, "yarn-er", n, " am", &stderr)
	r.AppID = strings.TrimSpace(stdout.String())
	if m := regexp.MustCompile(`staged [^\n]* in ([0-9.]+(?:ms|s|µs))`).FindStringSubmatch(stderr.String()); m != nil {
		r.Staging, _ = time.ParseDuration(m[1])
	}
	amLog := ""
	deadline := time.Now().Add(30 * time.Second)
	for amLog == "" || amLogValue(t, amLog, "yarn-er am: done", "status") == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no AM log with its end for %s (%q)", r.AppID, amLog)
		}
		logs, _ := filepath.Glob(filepath.Join(ep.StateDir, "target", "test", "data", "cluster", "*", "cluster-logDir-nm-*",
			r.AppID, "container_*_01_000001", "stderr"))
		switch {
		case len(logs) == 1:
			amLog = logs[0]
		default:
			// A cluster without a deletion delay (docker/mini-yarn start) aggregates the logs of
			// a finished application and removes them from the NodeManager: read them from HDFS.
			if a := aggregatedAMLog(t, ep, bin, r.AppID); a != "" {
				amLog = a
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	peaks := sampler.stop()
	r.RSSKiB = peaks[strings.Replace(r.AppID, "application_", "container_", 1)+"_01_000001"]
	r.LogRSSKiB, _ = strconv.ParseInt(amLogValue(t, amLog, "yarn-er am: done", "peakRSSKiB"), 10, 64)
	r.AMRegisteredAfter = amLogValue(t, amLog, "am: registered", "after")
	r.Heartbeats = amLogValue(t, amLog, "yarn-er am: done", "heartbeats")
	rmPhases(t, ep, &r, start)
	return r
}

// aggregatedAMLog writes the AM's stderr as `yarn-er app logs` reads it (aggregated on HDFS once
// the application has finished) to a file and returns its path, or "" while there is none.
func aggregatedAMLog(t testing.TB, ep *Endpoints, bin, appID string) string {
	t.Helper()
	am := strings.Replace(appID, "application_", "container_", 1) + "_01_000001"
	cmd := exec.Command(bin, "app", "logs", appID, "--container", am, "--file", "stderr")
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_USER_NAME="+ep.User, "NO_COLOR=1")
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte("yarn-er am: done")) {
		return ""
	}
	path := filepath.Join(t.TempDir(), am+".stderr")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// appOfContainer is the application of an AM container id (attempt 1).
func appOfContainer(cid string) string {
	s := strings.TrimPrefix(cid, "container_")
	if i := strings.Index(s, "_01_"); i > 0 {
		s = s[:i]
	}
	return "application_" + s
}

// amSampler polls /proc every 50 ms for AM processes (a command line containing match and a
// CONTAINER_ID ending in _000001) and keeps each one's VmHWM by container id.
type amSampler struct {
	done  chan struct{}
	wg    sync.WaitGroup
	peaks map[string]int64
}

func sampleAMs(match string) *amSampler {
	s := &amSampler{done: make(chan struct{}), peaks: map[string]int64{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		known := map[int]string{} // pid -> AM container id
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				pid, err := strconv.Atoi(e.Name())
				if err != nil {
					continue
				}
				// Not cached when absent: the launch script's bash becomes the AM by exec, same pid.
				cid := known[pid]
				if cid == "" {
					if cid = amContainer(pid, match); cid == "" {
						continue
					}
					known[pid] = cid
				}
				if kib := procKiB(pid, "VmHWM"); kib > s.peaks[cid] {
					s.peaks[cid] = kib
				}
			}
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *amSampler) stop() map[string]int64 {
	close(s.done)
	s.wg.Wait()
	return s.peaks
}

// amContainer is the AM container id of process pid when its command line contains match, else "".
func amContainer(pid int, match string) string {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) == 0 || !strings.Contains(" "+strings.Join(args, " "), match) {
		return ""
	}
	base := filepath.Base(args[0])
	if base != "java" && base != "yarn-er" && base != "yarn-er-am" {
		return "" // the launch script's bash, not the AM
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return ""
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "CONTAINER_ID="); ok && strings.HasSuffix(v, "_000001") {
			return v
		}
	}
	return ""
}

func procKiB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}

var clusterLogTime = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) `)

// rmPhases fills r's phases from the ResourceManager's state changes in the cluster log, as
// durations from start.
func rmPhases(t testing.TB, ep *Endpoints, r *benchRun, start time.Time) {
	t.Helper()
	suffix := strings.TrimPrefix(r.AppID, "application_")
	app, attempt := "application_"+suffix+" ", "appattempt_"+suffix+"_000001 "
	amc := "container_" + suffix + "_01_000001 "
	var finished time.Time
	deadline := time.Now().Add(30 * time.Second)
	for finished.IsZero() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no FINISHED in the cluster log %s", r.AppID, ep.ClusterLog)
		}
		f, err := os.Open(ep.ClusterLog)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var firstAlloc, lastAlloc, lastRunning time.Time
		allocated := 0
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, suffix) {
				continue
			}
			m := clusterLogTime.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
			if err != nil {
				continue
			}
			d := ts.Sub(start)
			switch {
			case strings.Contains(line, app+"State change from NEW to NEW_SAVING"):
				r.Submitted = d
			case strings.Contains(line, attempt+"State change from ALLOCATED to LAUNCHED"):
				r.AMLaunched = d
			case strings.Contains(line, attempt+"State change from LAUNCHED to RUNNING"):
				r.Registered = d
			case strings.Contains(line, attempt+"State change from RUNNING to FINAL_SAVING"):
				r.Unregistered = d
			case strings.Contains(line, app+"State change from FINISHING to FINISHED"):
				finished = ts
			case strings.Contains(line, "rmcontainer.RMContainerImpl") && !strings.Contains(line, amc):
				if strings.Contains(line, "Container Transitioned from NEW to ALLOCATED") {
					allocated++
					if firstAlloc.IsZero() {
						firstAlloc = ts
					}
					lastAlloc = ts
				} else if strings.Contains(line, "Container Transitioned from ACQUIRED to RUNNING") {
					lastRunning = ts
				}
			}
		}
		f.Close()
		if !finished.IsZero() {
			r.Wall = finished.Sub(start)
			r.FirstAlloc, r.LastAlloc, r.LastRunning = firstAlloc.Sub(start), lastAlloc.Sub(start), lastRunning.Sub(start)
			r.Allocated = allocated
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
}
