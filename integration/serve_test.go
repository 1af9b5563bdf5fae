//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn"
)

// servedProcess is a running `yarn-er serve` on the mini-YARN.
type servedProcess struct {
	cmd    *exec.Cmd
	base   string
	stderr *syncBuffer
	done   chan error
}

// syncBuffer is a bytes buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (https?://[0-9.:]+)`)

// startServe starts `yarn-er serve --listen 127.0.0.1:0` on ep with args, waits until /readyz
// answers 200 and stops it (SIGTERM) when the test ends.
func startServe(t *testing.T, ep *Endpoints, args ...string) *servedProcess {
	t.Helper()
	cmd := exec.Command(yarnErBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--interval", "1s"}, args...)...)
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_USER_NAME="+ep.User)
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &servedProcess{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.stderr, line)
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("serve's stderr:\n%s", p.stderr.String())
		}
	})
	select {
	case p.base = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not say where it listens: %s", p.stderr.String())
	}
	require.Eventually(t, func() bool {
		code, _ := httpGet(t, p.base+"/readyz")
		return code == http.StatusOK
	}, 60*time.Second, 100*time.Millisecond, "readyz: %s", p.stderr.String())
	return p
}

func httpGet(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeAPIIsTheCLI: on the mini-YARN, /api/v1/cluster/{nodes,queues,info} are byte for byte
// what `yarn-er cluster ... -o json` prints (both read the cluster idle, so the same state), the
// metrics pass `promtool check metrics` with each node's 4 GPUs as yarner_node_total_resource, and
// SIGTERM under load ends serve with exit 0 within 5 s.
func TestServeAPIIsTheCLI(t *testing.T) {
	ep := cluster(t)
	p := startServe(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, what := range []string{"nodes", "queues", "info"} {
		var api, cli string
		// The cluster may change between the poll and the CLI's read (a NodeManager heartbeat
		// moves nothing on an idle cluster, but another test's application could): try a few polls.
		require.Eventually(t, func() bool {
			_, api = httpGet(t, p.base+"/api/v1/cluster/"+what)
			r := runCLI(t, ctx, ep, "cluster", what, "-o", "json")
			cli = r.stdout
			return r.code == 0 && api == cli
		}, 20*time.Second, 500*time.Millisecond, "GET /api/v1/cluster/%s equals `cluster %s -o json`", what, what)
		assert.Equal(t, cli, api)
	}
	_, nodes := httpGet(t, p.base+"/api/v1/cluster/nodes")
	for _, nm := range ep.NodeManagers {
		assert.Contains(t, nodes, fmt.Sprintf(`"id": %q`, nm.ID))
	}

	code, metrics := httpGet(t, p.base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, nm := range ep.NodeManagers {
		assert.Regexp(t, fmt.Sprintf(`yarner_node_total_resource\{node=%q,rack="[^"]*",resource="yarn.io/gpu"\} 4\n`, nm.ID), metrics)
	}
	promtool := exec.Command("promtool", "check", "metrics")
	promtool.Stdin = strings.NewReader(metrics)
	out, err := promtool.CombinedOutput()
	require.NoError(t, err, "promtool check metrics: %s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "no lint findings")

	// POST /api/v1/translate and /api/v1/preflight answer what the CLI prints with -o json for the
	// same file (run in the file's directory, so that both name it flink-conf.yaml).
	conf := "taskmanager.memory.process.size: 2g\nexternal-resources: gpu\nexternal-resource.gpu.amount: 2\n" +
		"external-resource.gpu.yarn.config-key: yarn.io/gpu\n" +
		"external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink-conf.yaml"), []byte(conf), 0o644))
	for _, tc := range []struct {
		route string
		args  []string
	}{
		{"translate", []string{"translate", "--flink-conf", "flink-conf.yaml", "-o", "json"}},
		{"preflight", []string{"preflight", "--flink-conf", "flink-conf.yaml", "--containers", "2", "-o", "json"}},
	} {
		cmd := exec.CommandContext(ctx, yarnErBinary(t), tc.args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR="+ep.HadoopConfDir, "HADOOP_USER_NAME="+ep.User, "NO_COLOR=1")
		cli := runCommand(t, cmd)
		require.Contains(t, []int{0, 3}, cli.code, cli.stderr)
		resp, err := http.Post(p.base+"/api/v1/"+tc.route, "application/yaml", strings.NewReader(conf))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Equal(t, cli.stdout, string(body), "POST /api/v1/%s is `yarn-er %s -o json`", tc.route, tc.route)
	}
	// Hostile bodies: 4xx with a message, and serve still answers.
	for _, tc := range []struct {
		body string
		code int
	}{
		{strings.Repeat("x", 2<<20), http.StatusRequestEntityTooLarge},
		{`{"hadoopConf":{"../core-site.xml":"x"}}`, http.StatusBadRequest},
		{`{"flinkConf":"taskmanager.memory.process.size: lots"}`, http.StatusUnprocessableEntity},
	} {
		resp, err := http.Post(p.base+"/api/v1/translate", "", strings.NewReader(tc.body))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, tc.code, resp.StatusCode, string(body))
		assert.Contains(t, string(body), `"error"`)
	}
	code, _ = httpGet(t, p.base+"/healthz")
	assert.Equal(t, http.StatusOK, code)

	// SIGTERM under load: 8 clients reading as fast as they can.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(p.base + "/api/v1/cluster/nodes")
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		assert.NoError(t, err, "exit 0 after SIGTERM: %s", p.stderr.String())
		assert.Less(t, time.Since(start), 5*time.Second)
		p.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("serve still runs 10 s after SIGTERM")
	}
	close(stop)
	wg.Wait()
	assert.Contains(t, p.stderr.String(), "yarn-er serve: stopped")
}

// TestServePrometheusScrapes: a real Prometheus scrapes serve and its query API has each
// NodeManager's 4 yarn.io/gpu as yarner_node_total_resource.
func TestServePrometheusScrapes(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	require.NoError(t, err, "Debian's prometheus package (.ci/run installs it)")
	ep := cluster(t)
	p := startServe(t, ep)
	target := strings.TrimPrefix(p.base, "http://")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: yarn-er
    static_configs:
      - targets: [%q]
`, target)), 0o644))
	port := freePort(t)
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+port, "--log.level=warn")
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("prometheus:\n%s", log.String())
		}
	})
	query := "http://127.0.0.1:" + port + "/api/v1/query?query=" + url.QueryEscape(`yarner_node_total_resource{resource="yarn.io/gpu"}`)
	type sample struct {
		Metric map[string]string `json:"metric"`
		Value  []any             `json:"value"`
	}
	var got []sample
	require.Eventually(t, func() bool {
		code, body := httpGet(t, query)
		if code != http.StatusOK {
			return false
		}
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []sample `json:"result"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(body), &r) != nil || r.Status != "success" {
			return false
		}
		got = r.Data.Result
		return len(got) >= len(ep.NodeManagers)
	}, 90*time.Second, time.Second, "Prometheus has the GPU totals")
	byNode := map[string]string{}
	for _, s := range got {
		assert.Equal(t, "yarn-er", s.Metric["job"])
		require.Len(t, s.Value, 2)
		byNode[s.Metric["node"]], _ = s.Value[1].(string)
	}
	for _, nm := range ep.NodeManagers {
		assert.Equal(t, "4", byNode[nm.ID], "node %s", nm.ID)
	}
	code, up := httpGet(t, "http://127.0.0.1:"+port+"/api/v1/query?query=yarner_rm_up")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, up, `"1"]`)
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, port, _ := strings.Cut(l.Addr().String(), ":")
	return port
}

// submitDetached submits `yarn-er submit --detach` with args and returns the application id;
// the application is killed when the test ends.
func submitDetached(t *testing.T, ctx context.Context, ep *Endpoints, args ...string) string {
	t.Helper()
	r := runCLI(t, ctx, ep, append([]string{"submit", "--detach", "-o", "json"}, args...)...)
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	id, _ := res["applicationId"].(string)
	require.NotEmpty(t, id)
	t.Cleanup(func() {
		kctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		runCLI(t, kctx, ep, "app", "kill", id)
		runCLI(t, kctx, ep, "app", "wait", id, "-q")
	})
	return id
}

// TestServeAppWhyAndGPUMap: one application fills the queue's 8 GPUs (2 containers of 4), a second
// asks for one more and waits: `yarn-er app why` and /api/v1/apps/{id}/why name the first as the
// holder, and the GPU map, rendered by headless Chromium, colours every device with the holder.
func TestServeAppWhyAndGPUMap(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	yc := yarnClient(t, ep)
	// Registered first, so it runs last: after the applications are killed, wait until their
	// containers have let go of every GPU (the next test needs all 8).
	t.Cleanup(func() {
		wctx, wcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer wcancel()
		for wctx.Err() == nil {
			nodes, err := yc.Nodes(wctx, yarn.NodesQuery{})
			used := int64(0)
			for _, n := range nodes {
				used += n.Used.Value("yarn.io/gpu")
			}
			if err == nil && used == 0 {
				time.Sleep(2 * time.Second) // the NodeManagers' processes end after the RM frees them
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Logf("the killed applications' GPUs were not free within 2 minutes")
	})
	holder := submitDetached(t, ctx, ep, "--containers", "2", "--gpus", "4", "--memory", "128m", "--name", "holder", "--", "sleep", "600")
	require.Eventually(t, func() bool {
		ap, err := yc.App(ctx, holder)
		return err == nil && ap.Allocated.Value("yarn.io/gpu") == 8
	}, 3*time.Minute, time.Second, "the holder gets all 8 GPUs")
	// The preflight would refuse (no GPU free now): --force.
	waiter := submitDetached(t, ctx, ep, "--gpus", "1", "--memory", "128m", "--name", "waiter", "--force", "--", "true")
	require.Eventually(t, func() bool {
		ap, err := yc.App(ctx, waiter)
		if err != nil {
			return false
		}
		p, err := ap.PendingAny()
		return err == nil && p.Value("yarn.io/gpu") == 1
	}, 3*time.Minute, time.Second, "the waiter's AM asks for its GPU container")

	r := runCLI(t, ctx, ep, "app", "why", waiter, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var why struct {
		Waiting bool   `json:"waiting"`
		Summary string `json:"summary"`
		Reasons []struct {
			Code string `json:"code"`
		} `json:"reasons"`
		Holders []struct {
			ID string `json:"id"`
		} `json:"holders"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &why), r.stdout)
	assert.True(t, why.Waiting)
	require.NotEmpty(t, why.Holders, r.stdout)
	assert.Equal(t, holder, why.Holders[0].ID, "the holder of the queue's GPUs")
	require.NotEmpty(t, why.Reasons)
	assert.Contains(t, []string{"queue-max", "user-limit", "no-free-node"}, why.Reasons[0].Code)
	table := runCLI(t, ctx, ep, "app", "why", waiter)
	assert.Contains(t, table.stdout, holder)

	p := startServe(t, ep)
	code, body := httpGet(t, p.base+"/api/v1/apps/"+waiter+"/why")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"id": "`+holder+`"`)

	// The GPU map in headless Chromium: every device of both nodes held by the holder.
	chromium, err := exec.LookPath("chromium")
	require.NoError(t, err, "Debian's chromium package (.ci/run installs it)")
	var dom string
	require.Eventually(t, func() bool {
		cctx, ccancel := context.WithTimeout(ctx, 60*time.Second)
		defer ccancel()
		cmd := exec.CommandContext(cctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
			"--virtual-time-budget=5000", "--dump-dom", p.base+"/")
		out, err := cmd.Output()
		if err != nil {
			return false
		}
		dom = string(out)
		return strings.Contains(dom, `data-loaded="true"`) && strings.Count(dom, `data-app="`+holder+`"`) >= 8
	}, 2*time.Minute, 2*time.Second, "the GPU map shows 8 devices of %s", holder)
	for _, nm := range ep.NodeManagers {
		assert.Contains(t, dom, `data-node="`+nm.ID+`"`)
	}
	assert.Contains(t, dom, waiter, "the waiting application is listed")
	assert.Contains(t, dom, "queue root.default is full", "with its why")
}
