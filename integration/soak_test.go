//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yarn-er/yarn-er/yarn"
)

// BenchmarkSoak (bench/soak.sh): one long 4-rank GPU job on the HA mini-YARN while random faults
// hit the cluster every $YARN_ER_SOAK_DURATION / $YARN_ER_SOAK_FAULTS (default 10m / 20): an RM
// failover, a work-preserving RM restart, a NodeManager stopped (and started again 10 s later)
// or the AM killed. Each start of a rank (container) appends its node to a file of its own, so
// the ranks themselves count their starts. Reported per tool: the application's end, ranks lost
// (not running when the faults are over), restarts a lost node needed, unneeded restarts (every
// other start beyond the first), and the time from each fault to "whole again" as the fault verb
// reports it (p50, max). yarn-er's AM, and DistributedShell's when $YARN_ER_DISTSHELL_LIB names
// its jars (bench/distshell.sh fetches them), each on the same cluster one after the other with
// the same seed ($YARN_ER_SOAK_SEED). $YARN_ER_BENCH_OUT receives the table.
func BenchmarkSoak(b *testing.B) {
	dur := 10 * time.Minute
	if v := os.Getenv("YARN_ER_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			b.Fatalf("YARN_ER_SOAK_DURATION=%q: want a duration of a minute or more", v)
		}
		dur = d
	}
	faults := envInt(b, "YARN_ER_SOAK_FAULTS", 20)
	seed := uint64(envInt(b, "YARN_ER_SOAK_SEED", 1))
	ep := haMiniYARN.endpoints(b)
	tools := []string{"yarn-er"}
	lib := os.Getenv("YARN_ER_DISTSHELL_LIB")
	if lib != "" {
		tools = append(tools, "distshell")
	}
	var rows []string
	for i := 0; i < b.N; i++ {
		for _, tool := range tools {
			r := soakRun(b, ep, tool, lib, dur, faults, seed)
			b.Logf("%s", r)
			rows = append(rows, r)
		}
	}
	table := "| tool | end | ranks lost | restarts needed | unneeded restarts | faults | whole again p50 | max |\n|---|---|---|---|---|---|---|---|\n" +
		strings.Join(rows, "\n") + "\n"
	b.Logf("\n%s", table)
	if out := os.Getenv("YARN_ER_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(0, "ns/op")
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// soakScript is each rank's command: record the start, then run until the stop file exists.
const soakScript = `id=${YARN_ER_RANK:-$CONTAINER_ID}; echo "$NM_PORT" >> "$SHARE/start-$id"; ` +
	`while [ ! -e "$SHARE/stop" ]; do sleep 1; done`

// wholeAgain matches the times a fault verb reports; the last one is when the cluster was whole
// again (failover and restart-rm under --ha name the election's times before it).
var wholeAgain = regexp.MustCompile(`(?:after|in) (\d+) ms`)

// soakRun runs one tool's job through the faults and returns its table row.
func soakRun(b *testing.B, ep *Endpoints, tool, lib string, dur time.Duration, faults int, seed uint64) string {
	share := b.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), dur+15*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	script := filepath.Join(share, "rank.sh")
	if err := os.WriteFile(script, []byte(soakScript+"\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	if tool == "yarn-er" {
		cmd = exec.CommandContext(ctx, yarnErBinary(b), "submit", "--containers", "4", "--gpus", "1", "--memory", "128m",
			"--restarts", "100", "-o", "json", "--progress", "none", "--env", "SHARE="+share,
			"--env", "YARN_ER_COORDINATION_FILE="+filepath.Join(share, "gpus"), "--", "sh", "-c", soakScript)
		cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_USER_NAME="+ep.User, "NO_COLOR=1")
	} else {
		jars, _ := filepath.Glob(filepath.Join(lib, "hadoop-yarn-applications-distributedshell-*.jar"))
		if len(jars) != 1 {
			b.Fatalf("no single DistributedShell jar in %s", lib)
		}
		conf := distShellConf(b, ep)
		cmd = exec.CommandContext(ctx, "java", "-cp", conf+string(os.PathListSeparator)+filepath.Join(lib, "*"),
			"org.apache.hadoop.yarn.applications.distributedshell.Client", "-jar", jars[0],
			"-num_containers", "4", "-container_resources", "memory-mb=128,vcores=1,yarn.io/gpu=1",
			"-shell_script", script, "-shell_env", "SHARE="+share, "-keep_containers_across_application_attempts",
			// The window yarn-er's submit uses by default (--attempt-failures-validity 1m).
			"-attempt_failures_validity_interval", "60000", "-timeout", strconv.Itoa(int((dur + 10*time.Minute).Milliseconds())))
		cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+ep.User, "HADOOP_CONF_DIR="+conf)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = os.WriteFile(filepath.Join(share, "stop"), nil, 0o644) }()

	// Wait for the four first starts.
	deadline := time.Now().Add(3 * time.Minute)
	for len(soakStarts(share)) < 4 {
		if time.Now().After(deadline) {
			b.Fatalf("%s: the four ranks did not start: %s", tool, out.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	appID := newestApp(b, ep)

	rng := rand.New(rand.NewPCG(seed, seed))
	verbs := []string{"failover", "restart-rm", "stop-nm", "kill-am"}
	var whole []int
	needed := 0
	every := dur / time.Duration(faults)
	endedAt := 0
	for f := range faults {
		time.Sleep(every / 2)
		// A job that ended has nothing left to lose: the faults stop there, and every rank counts
		// as lost.
		if a, err := yarnClient(b, ep).App(ctx, appID); err == nil && a.State.Terminal() {
			endedAt = f
			b.Logf("%s: the application ended (%s/%s) before fault %d: %s", tool, a.State, a.FinalStatus, f+1, a.Diagnostics)
			break
		}
		verb := verbs[rng.IntN(len(verbs))]
		args := []string{}
		lostPort := ""
		switch verb {
		case "stop-nm":
			n := rng.IntN(len(ep.NodeManagers))
			args = []string{"--node", strconv.Itoa(n)}
			lostPort = ep.NodeManagers[n].Port()
			for _, nodes := range soakStarts(share) {
				if nodes[len(nodes)-1] == lostPort {
					needed++
				}
			}
		case "kill-am":
			args = []string{appID}
		}
		msg, err := Fault(ctx, ep.StateDir, verb, args...)
		b.Logf("%s fault %d/%d %s %v: %s (err %v)", tool, f+1, faults, verb, args, strings.TrimSpace(msg), err)
		if all := wholeAgain.FindAllStringSubmatch(msg, -1); err == nil && len(all) > 0 {
			ms, _ := strconv.Atoi(all[len(all)-1][1])
			whole = append(whole, ms)
		}
		if verb == "stop-nm" {
			time.Sleep(10 * time.Second)
			if msg, err := Fault(ctx, ep.StateDir, "start-nm", args...); err != nil {
				b.Logf("start-nm %v: %s %v", args, msg, err)
			}
		}
		time.Sleep(every / 2)
	}
	// Let restarts settle, then count the ranks running (their last start after the faults).
	time.Sleep(30 * time.Second)
	starts := soakStarts(share)
	total := 0
	for _, s := range starts {
		total += len(s)
	}
	lost := 4 - len(starts)
	if lost < 0 {
		lost = 0 // DistributedShell names starts by container: more than 4 files when it restarts
	}
	if endedAt > 0 {
		lost = 4
	}
	if err := os.WriteFile(filepath.Join(share, "stop"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	end := "timeout"
	select {
	case err := <-done:
		end = "exit 0"
		if err != nil {
			end = err.Error()
			o := out.String()
			b.Logf("%s ended with %v; its output's end:\n%s", tool, err, o[max(0, len(o)-2048):])
		}
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
	}
	if a, err := yarnClient(b, ep).App(context.Background(), appID); err == nil {
		end = fmt.Sprintf("%s/%s (%s)", a.State, a.FinalStatus, end)
	}
	if endedAt > 0 {
		end += fmt.Sprintf(", ended before fault %d", endedAt+1)
		faults = endedAt
	}
	unneeded := total - 4 - needed
	if unneeded < 0 {
		unneeded = 0
	}
	slices.Sort(whole)
	p50, mx := 0, 0
	if len(whole) > 0 {
		p50, mx = whole[len(whole)/2], whole[len(whole)-1]
	}
	return fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %d ms | %d ms |", tool, end, lost, needed, unneeded, faults, p50, mx)
}

// soakStarts reads share/start-<id>: the node port of every start, by rank (or container).
func soakStarts(share string) map[string][]string {
	files, _ := filepath.Glob(filepath.Join(share, "start-*"))
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Fields(string(b))
		if len(lines) > 0 {
			out[strings.TrimPrefix(filepath.Base(f), "start-")] = lines
		}
	}
	return out
}

// newestApp is the id of the newest application of the cluster.
func newestApp(b *testing.B, ep *Endpoints) string {
	apps, err := yarnClient(b, ep).Apps(context.Background(), yarn.AppsQuery{})
	if err != nil || len(apps) == 0 {
		b.Fatalf("no application: %v", err)
	}
	ids := make([]string, len(apps))
	for i, a := range apps {
		ids[i] = a.ID
	}
	slices.SortFunc(ids, func(x, y string) int {
		if len(x) != len(y) {
			return len(x) - len(y)
		}
		return strings.Compare(x, y)
	})
	return ids[len(ids)-1]
}
