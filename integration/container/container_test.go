//go:build container

// Package container tests the container images and docker/compose.yaml end to end: it builds the
// images with docker/image, starts each profile with compose, waits for the health checks, runs
// yarn-er from the host against the clusters (cluster nodes, preflight --strict, submit), checks the
// serve profile (yarn-er serve's API and the Prometheus of Debian's package scraping it), stops them
// and checks that no container, network, volume or firewall rule is left behind. The same checks
// run under either engine and its compose:
//
//	make container-test          # podman and podman-compose 1.x (CI)
//	make container-test-docker   # a private dockerd (docker/dockerd-private) and docker compose v2
//	go test -tags container -count=1 -v ./integration/container/
//
// Environment: CONTAINER_ENGINE (podman, the default, or docker; for docker, DOCKER_HOST names the
// daemon), YARN_ER_COMPOSE (the compose command; default podman-compose for podman, "docker
// compose" for docker), YARN_ER_IMAGE_FLAGS (extra docker/image flags, e.g. "--ca-bundle
// /path/ca.pem", or "--copy-from podman" to build with podman and copy the images to docker),
// CONTAINERS_CONF (podman).
package container

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is the test's view of the tools: the engine, compose and the repository.
type env struct {
	root    string   // repository root
	engine  string   // podman or docker
	compose []string // the compose command
	project string   // compose project name of this run
	image   string   // the mini-YARN image
	hadoop  string   // harness/pom.xml's hadoop.version
	yarnEr  string   // yarn-er built for the host
	flink   string   // a FLINK_HOME whose GPU discovery script is yarn-er
}

// hostState is what the host holds of the engine's containers, networks and volumes and of the
// firewall.
type hostState struct {
	Containers []string
	Networks   []string
	Volumes    []string
	Firewall   []string
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/yarn-er/yarn-er\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "yarn-er checkout not found above the working directory")
		dir = parent
	}
}

// run runs a command, streaming nothing, and returns its stdout, stderr and exit status.
func run(ctx context.Context, environ []string, dir string, name string, args ...string) (string, string, int, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), environ...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return stdout.String(), stderr.String(), exitErr.ExitCode(), nil
	}
	return stdout.String(), stderr.String(), 0, err
}

// must runs a command that must succeed and returns its stdout.
func must(t *testing.T, ctx context.Context, environ []string, dir string, name string, args ...string) string {
	t.Helper()
	out, errOut, code, err := run(ctx, environ, dir, name, args...)
	require.NoError(t, err, "%s %s", name, strings.Join(args, " "))
	require.Equal(t, 0, code, "%s %s\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), out, errOut)
	return out
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

var counters = regexp.MustCompile(`\[\d+:\d+\]|packets \d+ bytes \d+`)

// snapshot records the engine's containers, networks and volumes and the firewall's rules
// (iptables in every table, and nft's ruleset where nft is installed).
func (e *env) snapshot(t *testing.T) hostState {
	t.Helper()
	ctx := context.Background()
	var s hostState
	s.Containers = lines(must(t, ctx, nil, "", e.engine, "ps", "-a", "--format", "{{.Names}}"))
	s.Networks = lines(must(t, ctx, nil, "", e.engine, "network", "ls", "--format", "{{.Name}}"))
	s.Volumes = lines(must(t, ctx, nil, "", e.engine, "volume", "ls", "--format", "{{.Name}}"))
	if _, err := exec.LookPath("iptables-save"); err == nil {
		out, _, _, err := run(ctx, nil, "", "iptables-save")
		require.NoError(t, err)
		for _, l := range lines(out) {
			if !strings.HasPrefix(l, "#") {
				s.Firewall = append(s.Firewall, "iptables "+counters.ReplaceAllString(l, ""))
			}
		}
	}
	if _, err := exec.LookPath("nft"); err == nil {
		out, _, _, err := run(ctx, nil, "", "nft", "list", "ruleset")
		require.NoError(t, err)
		for _, l := range lines(out) {
			s.Firewall = append(s.Firewall, "nft "+counters.ReplaceAllString(l, ""))
		}
	}
	// Sorted once the counters are gone: lines sorted with their counters in them change places
	// when only a counter changed.
	sort.Strings(s.Firewall)
	return s
}

func setup(t *testing.T) *env {
	t.Helper()
	e := &env{root: repoRoot(t), engine: os.Getenv("CONTAINER_ENGINE")}
	if e.engine == "" {
		e.engine = "podman"
	}
	_, err := exec.LookPath(e.engine)
	require.NoError(t, err, "container engine %s (CONTAINER_ENGINE)", e.engine)
	if c := os.Getenv("YARN_ER_COMPOSE"); c != "" {
		e.compose = strings.Fields(c)
	} else if e.engine == "podman" {
		e.compose = []string{"podman-compose"}
	} else {
		e.compose = []string{"docker", "compose"}
	}
	version := must(t, context.Background(), nil, e.root, e.compose[0], append(slices.Clone(e.compose[1:]), "version")...)
	t.Logf("engine %s, compose %q: %s", e.engine, strings.Join(e.compose, " "), strings.TrimSpace(version))
	pom, err := os.ReadFile(filepath.Join(e.root, "docker", "harness", "pom.xml"))
	require.NoError(t, err)
	m := regexp.MustCompile(`<hadoop.version>([^<]+)</hadoop.version>`).FindSubmatch(pom)
	require.NotNil(t, m, "hadoop.version in docker/harness/pom.xml")
	e.hadoop = string(m[1])
	e.image = "localhost/yarn-er/mini-yarn:" + e.hadoop
	e.project = fmt.Sprintf("yarn-er-ct-%d", os.Getpid())

	// The compose file's default image is the harness's Hadoop line (one pin for both paths).
	composeFile, err := os.ReadFile(filepath.Join(e.root, "docker", "compose.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(composeFile), "${HADOOP_VERSION:-"+e.hadoop+"}", "compose.yaml's default Hadoop line is harness/pom.xml's")

	bin := filepath.Join(t.TempDir(), "yarn-er")
	must(t, context.Background(), []string{"CGO_ENABLED=0"}, e.root, "go", "build", "-o", bin, "./cmd/yarn-er")
	e.yarnEr = bin
	e.flink = flinkHome(t, bin)
	return e
}

// flinkHome makes a FLINK_HOME whose GPU plugin directory holds Flink's GPU driver jar (from the
// local Maven repository, fetched when missing) and yarn-er as nvidia-gpu-discovery.sh, as in
// examples/demo.sh.
func flinkHome(t *testing.T, bin string) string {
	t.Helper()
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	jar := filepath.Join(home, ".m2", "repository", "org", "apache", "flink", "flink-external-resource-gpu", "1.20.0", "flink-external-resource-gpu-1.20.0.jar")
	if _, err := os.Stat(jar); err != nil {
		must(t, context.Background(), nil, "", "mvn", "-B", "-q", "dependency:get",
			"-Dartifact=org.apache.flink:flink-external-resource-gpu:1.20.0", "-Dtransitive=false")
	}
	dir := filepath.Join(t.TempDir(), "flink")
	plugin := filepath.Join(dir, "plugins", "external-resource-gpu")
	require.NoError(t, os.MkdirAll(plugin, 0o755))
	b, err := os.ReadFile(jar)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(plugin, filepath.Base(jar)), b, 0o644))
	require.NoError(t, os.Symlink(bin, filepath.Join(plugin, "nvidia-gpu-discovery.sh")))
	return dir
}

// composeArgs is the compose command line for this run's project with every profile (so that
// down removes them all).
func (e *env) composeCmd(args ...string) (string, []string) {
	full := append(slices.Clone(e.compose[1:]), "-f", filepath.Join(e.root, "docker", "compose.yaml"), "-p", e.project)
	for _, p := range []string{"good", "misconfigured", "multi-host", "serve"} {
		full = append(full, "--profile", p)
	}
	return e.compose[0], append(full, args...)
}

// up starts the given profiles' services and returns the project's containers' names.
func (e *env) up(t *testing.T, environ []string, profiles ...string) []string {
	t.Helper()
	return e.upServices(t, environ, profiles)
}

// upServices runs `up -d` with the given profiles and extra arguments (flags, then services) and
// returns the project's containers' names.
func (e *env) upServices(t *testing.T, environ []string, profiles []string, extra ...string) []string {
	t.Helper()
	args := append(slices.Clone(e.compose[1:]), "-f", filepath.Join(e.root, "docker", "compose.yaml"), "-p", e.project)
	for _, p := range profiles {
		args = append(args, "--profile", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	must(t, ctx, environ, e.root, e.compose[0], append(append(args, "up", "-d"), extra...)...)
	return e.containers(t)
}

// containers lists the containers of this run's project.
func (e *env) containers(t *testing.T) []string {
	t.Helper()
	return lines(must(t, context.Background(), nil, "", e.engine, "ps", "-a",
		"--filter", "label=com.docker.compose.project="+e.project, "--format", "{{.Names}}"))
}

// down stops and removes every service of the project.
func (e *env) down(t *testing.T, environ []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name, args := e.composeCmd("down", "--remove-orphans")
	if out, errOut, code, err := run(ctx, environ, e.root, name, args...); err != nil || code != 0 {
		t.Errorf("compose down: %v (exit %d)\n%s\n%s", err, code, out, errOut)
	}
}

// health is a container's health: "healthy", "starting", "unhealthy", "exited" when it stopped, or
// "never started" when it is still only created (compose up has returned by then: its start
// failed, which podman-compose does not always report in its exit status).
func (e *env) health(ctx context.Context, name string) string {
	out, _, _, _ := run(ctx, nil, "", e.engine, "inspect", "--format", "{{.State.Status}}", name)
	switch s := strings.TrimSpace(out); s {
	case "exited", "stopped", "dead":
		return "exited"
	case "created", "configured":
		return "never started"
	}
	if e.engine == "podman" {
		// podman runs health checks from systemd timers; without systemd (a container, CI) run the
		// check now. It fails for a container without one ("has no defined healthcheck").
		_, errOut, code, err := run(ctx, nil, "", "podman", "healthcheck", "run", name)
		switch {
		case err != nil:
			return "error: " + err.Error()
		case code == 0:
			return "healthy"
		case strings.Contains(errOut, "no defined healthcheck"):
			return "no health check: " + strings.TrimSpace(errOut)
		default:
			return "starting"
		}
	}
	out, _, _, _ = run(ctx, nil, "", "docker", "inspect", "--format", "{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}", name)
	return strings.TrimSpace(out)
}

// waitHealthy waits until every named container is healthy; on failure it prints their logs.
func (e *env) waitHealthy(t *testing.T, names []string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	pending := slices.Clone(names)
	for len(pending) > 0 {
		var still []string
		for _, n := range pending {
			h := e.health(ctx, n)
			if h == "healthy" {
				continue
			}
			if h == "exited" || h == "never started" || strings.HasPrefix(h, "no health check") || strings.HasPrefix(h, "error") {
				e.dumpLogs(t, names)
				t.Fatalf("container %s: %s", n, h)
			}
			still = append(still, n)
		}
		pending = still
		if len(pending) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			e.dumpLogs(t, names)
			t.Fatalf("not healthy after %s: %v", timeout, pending)
		case <-time.After(2 * time.Second):
		}
	}
}

func (e *env) dumpLogs(t *testing.T, names []string) {
	t.Helper()
	for _, n := range names {
		out, errOut, _, _ := run(context.Background(), nil, "", e.engine, "logs", "--tail", "40", n)
		t.Logf("== logs of %s (last 40 lines)\n%s%s", n, out, errOut)
	}
}

// endpoints is the part of a state dir's endpoints.json the test uses.
type endpoints struct {
	HadoopConfDir string `json:"hadoopConfDir"`
	User          string `json:"user"`
	RMWebAddress  string `json:"rmWebAddress"`
}

func readEndpoints(t *testing.T, state string) endpoints {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "endpoints.json"))
	require.NoError(t, err)
	var ep endpoints
	require.NoError(t, json.Unmarshal(b, &ep), "%s/endpoints.json", state)
	require.NotEmpty(t, ep.HadoopConfDir)
	return ep
}

// yarnEr runs the host's yarn-er against ep.
func (e *env) yarnErRun(t *testing.T, ep endpoints, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errOut, code, err := run(ctx, []string{"HADOOP_CONF_DIR=" + ep.HadoopConfDir, "HADOOP_USER_NAME=" + ep.User,
		"FLINK_HOME=" + e.flink, "NO_COLOR=1"}, e.root, e.yarnEr, args...)
	require.NoError(t, err)
	t.Logf("$ yarn-er %s\n%s%s(exit %d)", strings.Join(args, " "), out, errOut, code)
	return out, errOut, code
}

// checkCluster: cluster nodes lists nodes RUNNING nodes with 4 yarn.io/gpu each, preflight --strict passes.
func (e *env) checkCluster(t *testing.T, ep endpoints, nodes int) []string {
	t.Helper()
	out, errOut, code := e.yarnErRun(t, ep, "cluster", "nodes", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var got struct {
		Nodes []map[string]any `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.Nodes, nodes, out)
	var ids []string
	for _, n := range got.Nodes {
		assert.Equal(t, "RUNNING", n["state"], "node %v", n["id"])
		ids = append(ids, fmt.Sprint(n["id"]))
	}
	assert.Contains(t, out, "yarn.io/gpu")
	_, errOut, code = e.yarnErRun(t, ep, "preflight", "--flink-conf", filepath.Join(e.root, "examples", "flink-conf.yaml"),
		"--containers", "2", "--strict")
	assert.Equal(t, 0, code, "preflight --strict: %s", errOut)
	return ids
}

// submitGPUs runs `submit --containers 8 --gpus 1`; each rank writes "<hostname> <CUDA_VISIBLE_DEVICES>"
// to share/rank-<rank> and holds its GPU until all 8 have written. It returns the 8 lines.
func (e *env) submitGPUs(t *testing.T, ep endpoints, share string, extra ...string) []string {
	t.Helper()
	require.NoError(t, os.MkdirAll(share, 0o777))
	require.NoError(t, os.Chmod(share, 0o777))
	script := `echo "$(hostname) $CUDA_VISIBLE_DEVICES" > "$SHARE/rank-$YARN_ER_RANK.tmp" && mv "$SHARE/rank-$YARN_ER_RANK.tmp" "$SHARE/rank-$YARN_ER_RANK" && ` +
		`i=0; while [ "$(ls "$SHARE" | grep -c '^rank-[0-9]*$')" -lt 8 ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done`
	args := append([]string{"submit", "--containers", "8", "--gpus", "1", "--memory", "128m", "--env", "SHARE=" + share,
		"-o", "json"}, extra...)
	out, errOut, code := e.yarnErRun(t, ep, append(args, "--", "sh", "-c", script)...)
	require.Equal(t, 0, code, "submit: %s", errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"])
	var ranks []string
	for r := range 8 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d", r)))
		require.NoError(t, err, "rank %d ran", r)
		ranks = append(ranks, strings.TrimSpace(string(b)))
	}
	return ranks
}

// TestContainers: the images build, each compose profile starts and gets healthy, yarn-er works
// against it from the host, and nothing is left once it is down.
func TestContainers(t *testing.T) {
	e := setup(t)
	before := e.snapshot(t)

	t0 := time.Now()
	imageArgs := strings.Fields(os.Getenv("YARN_ER_IMAGE_FLAGS"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	out, errOut, code, err := run(ctx, nil, e.root, filepath.Join(e.root, "docker", "image"), append([]string{"--engine", e.engine}, imageArgs...)...)
	cancel()
	require.NoError(t, err)
	require.Equal(t, 0, code, "docker/image\n%s\n%s", out, errOut)
	t.Logf("docker/image: %s\n%s", time.Since(t0).Round(time.Second), errOut)

	base := t.TempDir()
	state := func(name string) string {
		d := filepath.Join(base, name)
		require.NoError(t, os.MkdirAll(d, 0o777))
		// The good cluster runs as uid 1000; sticky, as yarn-er exec wants of a shared directory
		// that holds its coordination file.
		require.NoError(t, os.Chmod(d, os.ModeSticky|0o777))
		return d
	}
	good, bad, multi := state("good"), state("misconfigured"), state("multi-host")
	environ := []string{"HADOOP_VERSION=" + e.hadoop, "MINI_YARN_STATE=" + good, "MINI_YARN_MISCONFIGURED_STATE=" + bad,
		"MULTI_HOST_STATE=" + multi, "MINI_YARN_USER=1000:1000"}
	t.Cleanup(func() {
		e.down(t, environ)
		// Whatever compose left (a failed start): this run's containers and networks.
		for _, c := range e.containers(t) {
			t.Errorf("left by compose down: container %s", c)
			_, _, _, _ = run(context.Background(), nil, "", e.engine, "rm", "-f", c)
		}
		removeNetavarkBase(t, before)
		after := e.snapshot(t)
		assert.Equal(t, before.Containers, after.Containers, "containers before and after")
		assert.Equal(t, before.Networks, after.Networks, "networks before and after")
		assert.Equal(t, before.Volumes, after.Volumes, "volumes before and after")
		assert.Equal(t, before.Firewall, after.Firewall, "firewall rules before and after")
	})

	// The image's user handling: a uid without a passwd entry (Docker adds none; podman's
	// --passwd=false neither) gets one, so Hadoop's login works, as root and as 1000:1000.
	t.Run("users", func(t *testing.T) {
		for _, user := range []string{"0:0", "1000:1000"} {
			args := []string{"run", "--rm", "--network", "none", "--user", user}
			if e.engine == "podman" {
				args = append(args, "--passwd=false")
			}
			args = append(args, e.image, "sh", "-c",
				`id -un && java -cp "$(echo /opt/yarn-er/docker/harness/target/hadoop-*/current)/lib/*" org.apache.hadoop.security.UserGroupInformation 2>&1 | grep -E '^(User|Group Ids):'`)
			out := must(t, context.Background(), nil, "", e.engine, args...)
			assert.Contains(t, out, "User: yarn", "--user %s: %s", user, out)
		}
	})

	// The single-host cluster (profile good, as uid 1000) and the misconfigured one, side by side,
	// and the serve profile on the good one.
	t.Run("single-host", func(t *testing.T) {
		t0 := time.Now()
		downed := false
		t.Cleanup(func() {
			if !downed {
				e.down(t, environ)
			}
		})
		names := e.up(t, environ, "good", "misconfigured")
		require.Len(t, names, 2, "%v", names)
		e.waitHealthy(t, names, 10*time.Minute)
		t.Logf("good and misconfigured: start to healthy %s", time.Since(t0).Round(time.Second))

		// serve and Prometheus start now, once the cluster is healthy, and are checked after the
		// other checks, so that their first poll and scrapes overlap those. Started in a second `up`:
		// podman-compose on podman < 4.6 ignores depends_on's service_healthy, and serve exits when
		// the mini-YARN's configuration is not there yet (docker compose would wait).
		// On free ports, not the defaults (8089, 9090) that another run may hold; picked now, once
		// the cluster holds its own ephemeral ports.
		serveAddr, promAddr := freeAddr(t), freeAddr(t)
		environ = append(environ, "YARN_ER_SERVE_LISTEN="+serveAddr, "PROMETHEUS_LISTEN="+promAddr)
		t1 := time.Now()
		all := e.upServices(t, environ, []string{"good", "serve"}, "--no-deps", "yarn-er-serve", "prometheus")
		require.Len(t, all, 4, "%v", all)
		serveUp := time.Since(t1)

		ep := readEndpoints(t, good)
		ids := e.checkCluster(t, ep, 2)
		// Both NodeManagers run in the one container: one fake host of 8 GPUs, in the state dir
		// (the same path inside and outside).
		gpus := filepath.Join(good, "gpu-host")
		fakeHost(t, gpus, 8)
		ranks := e.submitGPUs(t, ep, filepath.Join(good, "share"), "--env", "YARN_ER_HOST_ROOT="+gpus,
			"--env", "YARN_ER_COORDINATION_FILE="+filepath.Join(good, "gpus"))
		devs := map[string]bool{}
		for _, r := range ranks {
			f := strings.Fields(r)
			require.Len(t, f, 2, "rank line %q", r)
			devs[f[1]] = true
		}
		assert.Len(t, devs, 8, "8 distinct GPUs of the one host: %v", ranks)

		bep := readEndpoints(t, bad)
		_, errOut, code := e.yarnErRun(t, bep, "preflight", "--flink-conf", filepath.Join(e.root, "examples", "flink-conf.yaml"))
		assert.Equal(t, 3, code, "preflight on the misconfigured cluster finds problems: %s", errOut)

		// The yarn-er image against the good cluster (host networking, its conf mounted).
		out := must(t, context.Background(), nil, "", e.engine, "run", "--rm", "--network", "host",
			"-v", ep.HadoopConfDir+":/conf:ro", "-e", "HADOOP_CONF_DIR=/conf", "-e", "HADOOP_USER_NAME="+ep.User,
			"localhost/yarn-er/yarn-er:latest", "cluster", "nodes")
		assert.Contains(t, out, "yarn.io/gpu")
		t.Logf("yarn-er image: cluster nodes\n%s", out)

		t2 := time.Now()
		e.checkServe(t, serveAddr, promAddr, ids)
		checks := time.Since(t2)
		serveName := e.serviceContainer(t, "yarn-er-serve")
		t3 := time.Now()
		e.down(t, environ)
		downed = true
		code, ok := e.exitCode(t, serveName, t3)
		require.True(t, ok, "compose down: no exit event of %s", serveName)
		assert.Equal(t, 0, code, "compose down: %s's exit status (SIGTERM drains and exits 0; 137 is SIGKILL after the grace period)", serveName)
		t.Logf("serve profile: up %s, its checks after the others %s; compose down (all) %s, serve exited %d",
			serveUp.Round(100*time.Millisecond), checks.Round(100*time.Millisecond), time.Since(t3).Round(100*time.Millisecond), code)
	})

	// The multi-host cluster: RM, NameNode, DataNode and two NodeManagers in their own containers,
	// each NodeManager with its own fake host of 4 GPUs.
	t.Run("multi-host", func(t *testing.T) {
		t0 := time.Now()
		t.Cleanup(func() { e.down(t, environ) })
		names := e.up(t, environ, "multi-host")
		require.Len(t, names, 5, "%v", names)
		e.waitHealthy(t, names, 10*time.Minute)
		t.Logf("multi-host: start to healthy %s", time.Since(t0).Round(time.Second))

		ep := readEndpoints(t, multi)
		ids := e.checkCluster(t, ep, 2)
		assert.ElementsMatch(t, []string{"nm1:45454", "nm2:45454"}, ids)
		// No --env for the GPUs: each NodeManager's containers find its own host's tree.
		ranks := e.submitGPUs(t, ep, filepath.Join(multi, "share"))
		perHost := map[string]map[string]bool{}
		for _, r := range ranks {
			f := strings.Fields(r)
			require.Len(t, f, 2, "rank line %q", r)
			if perHost[f[0]] == nil {
				perHost[f[0]] = map[string]bool{}
			}
			assert.False(t, perHost[f[0]][f[1]], "GPU %s of %s given twice: %v", f[1], f[0], ranks)
			perHost[f[0]][f[1]] = true
		}
		require.Len(t, perHost, 2, "ranks on both NodeManagers: %v", ranks)
		// CUDA_VISIBLE_DEVICES is the GPU's UUID; a host's fake GPUs share a UUID prefix made from its
		// name: every rank got a GPU of the host it ran on.
		prefixes := map[string]string{}
		for h, devs := range perHost {
			assert.Contains(t, []string{"nm1", "nm2"}, h)
			assert.Len(t, devs, 4, "4 distinct GPUs of host %s: %v", h, ranks)
			for d := range devs {
				require.Regexp(t, `^GPU-[0-9a-f]{8}-`, d)
				if p, ok := prefixes[h]; ok {
					assert.Equal(t, p, d[:12], "GPUs of one host %s: %v", h, ranks)
				}
				prefixes[h] = d[:12]
			}
		}
		assert.NotEqual(t, prefixes["nm1"], prefixes["nm2"], "each NodeManager has GPUs of its own: %v", ranks)
		t.Logf("multi-host ranks: %v", ranks)
	})
}

// freeAddr returns 127.0.0.1:PORT with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// serviceContainer is the name of the project's container of service.
func (e *env) serviceContainer(t *testing.T, service string) string {
	t.Helper()
	names := lines(must(t, context.Background(), nil, "", e.engine, "ps", "-a",
		"--filter", "label=com.docker.compose.project="+e.project, "--filter", "label=com.docker.compose.service="+service,
		"--format", "{{.Names}}"))
	require.Len(t, names, 1, "the container of service %s: %v", service, names)
	return names[0]
}

// exitCode is the exit status of container name's exit since since, from the engine's events (the
// container itself is gone after compose down); ok is false when there was no such event.
func (e *env) exitCode(t *testing.T, name string, since time.Time) (int, bool) {
	t.Helper()
	event, format := "die", "{{.Actor.Attributes.exitCode}}"
	if e.engine == "podman" {
		event, format = "died", "{{.ContainerExitCode}}"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := must(t, ctx, nil, "", e.engine, "events", "--since", strconv.FormatInt(since.Unix()-1, 10),
		"--until", strconv.FormatInt(time.Now().Unix()+1, 10), "--filter", "container="+name, "--filter", "event="+event,
		"--format", format)
	l := lines(out)
	if len(l) == 0 {
		return 0, false
	}
	code, err := strconv.Atoi(l[len(l)-1])
	require.NoError(t, err, "%s events: %q", e.engine, out)
	return code, true
}

// getJSON GETs u into v within ctx; it returns the status code (0 when the request failed, e.g.
// nothing listens yet).
func getJSON(ctx context.Context, u string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if v == nil {
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s: %w: %.300s", u, err, b)
	}
	return resp.StatusCode, nil
}

// promSample is one sample of a Prometheus instant query's vector result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"` // [time, "value"]
}

// promQuery runs an instant query against the Prometheus at addr.
func promQuery(ctx context.Context, addr, query string) ([]promSample, error) {
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	code, err := getJSON(ctx, "http://"+addr+"/api/v1/query?query="+url.QueryEscape(query), &r)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK || r.Status != "success" {
		return nil, fmt.Errorf("query %s: HTTP %d, status %q", query, code, r.Status)
	}
	return r.Data.Result, nil
}

// eventually calls f every 500 ms until it returns nil or the deadline passes, then fails with
// f's last error.
func eventually(t *testing.T, timeout time.Duration, what string, f func(ctx context.Context) error) {
	t.Helper()
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(callCtx)
		callCancel()
		if err == nil {
			t.Logf("%s: after %s", what, time.Since(t0).Round(10*time.Millisecond))
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// checkServe: the serve profile's yarn-er serve (at serveAddr) is ready and lists the cluster's
// NodeManagers (ids, as the CLI listed them) with their 4 yarn.io/gpu each, and its Prometheus (at
// promAddr) scrapes it: the target is up and has each node's GPU total. On failure it prints both
// containers' logs.
func (e *env) checkServe(t *testing.T, serveAddr, promAddr string, ids []string) {
	t.Helper()
	defer func() {
		if t.Failed() {
			e.dumpLogs(t, []string{e.serviceContainer(t, "yarn-er-serve"), e.serviceContainer(t, "prometheus")})
		}
	}()
	base := "http://" + serveAddr
	// readyz: 200 once the first poll is in (503 before).
	eventually(t, time.Minute, "serve's /readyz answers 200", func(ctx context.Context) error {
		code, err := getJSON(ctx, base+"/readyz", nil)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("HTTP %d", code)
		}
		return err
	})
	var nodes struct {
		Nodes []struct {
			ID    string           `json:"id"`
			State string           `json:"state"`
			Total map[string]int64 `json:"total"`
		} `json:"nodes"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	code, err := getJSON(ctx, base+"/api/v1/cluster/nodes", &nodes)
	cancel()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, nodes.Nodes, len(ids), "serve's nodes: %+v", nodes)
	gpus := map[string]string{}
	for _, n := range nodes.Nodes {
		assert.Contains(t, ids, n.ID, "serve's node is one the CLI listed")
		assert.Equal(t, "RUNNING", n.State, "node %s", n.ID)
		assert.Equal(t, int64(4), n.Total["yarn.io/gpu"], "node %s's total %v", n.ID, n.Total)
		gpus[n.ID] = "4"
	}
	t.Logf("serve at %s: ready, nodes %v", base, gpus)

	// Prometheus (Debian's package in the profile's image) scrapes serve every 5 s.
	eventually(t, time.Minute, `Prometheus: up{job="yarn-er"} == 1`, func(ctx context.Context) error {
		s, err := promQuery(ctx, promAddr, `up{job="yarn-er"}`)
		if err != nil {
			return err
		}
		if len(s) != 1 || len(s[0].Value) != 2 || s[0].Value[1] != "1" || s[0].Metric["instance"] != serveAddr {
			return fmt.Errorf("up: %+v", s)
		}
		return nil
	})
	eventually(t, time.Minute, "Prometheus has each node's GPU total", func(ctx context.Context) error {
		s, err := promQuery(ctx, promAddr, `yarner_node_total_resource{job="yarn-er",resource="yarn.io/gpu"}`)
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, x := range s {
			if len(x.Value) == 2 {
				got[x.Metric["node"]], _ = x.Value[1].(string)
			}
		}
		if !maps.Equal(got, gpus) {
			return fmt.Errorf("yarner_node_total_resource: %v, want %v", got, gpus)
		}
		return nil
	})
	t.Logf("Prometheus at %s: target up, yarn.io/gpu totals %v", promAddr, gpus)
}

// fakeHost writes a fake host tree of n NVIDIA GPUs (procfs information files and /dev nodes) to dir,
// usable by the cluster's user (uid 1000 in the good cluster).
func fakeHost(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		bus := fmt.Sprintf("0000:%02x:00.0", 0x10+i)
		p := filepath.Join(dir, "proc", "driver", "nvidia", "gpus", bus)
		require.NoError(t, os.MkdirAll(p, 0o755))
		info := fmt.Sprintf("Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-00000000-0000-0000-0000-%012d\nBus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n", i, bus, i)
		require.NoError(t, os.WriteFile(filepath.Join(p, "information"), []byte(info), 0o644))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "dev"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "dev", fmt.Sprintf("nvidia%d", i)), nil, 0o666))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dev", "nvidiactl"), nil, 0o666))
	// As on a real host: the device nodes are crw-rw-rw- (os.WriteFile's mode is cut by the umask).
	for _, f := range append([]string{"nvidiactl"}, func() []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("nvidia%d", i))
		}
		return out
	}()...) {
		require.NoError(t, os.Chmod(filepath.Join(dir, "dev", f), 0o666))
	}
}

// removeNetavarkBase undoes what netavark (podman's network back end) keeps after its last
// network is gone, when the test made it: its base chains (NETAVARK_FORWARD,
// NETAVARK-HOSTPORT-*) and the jumps to them, and the nft tables iptables-nft made for them once
// they hold nothing. Whatever was there before the test is left alone, as is any chain that still
// has rules of its own besides netavark's constant ones.
func removeNetavarkBase(t *testing.T, before hostState) {
	t.Helper()
	if _, err := exec.LookPath("iptables-save"); err != nil {
		return
	}
	for _, l := range before.Firewall {
		if strings.Contains(l, "NETAVARK") {
			return // netavark's chains were there before: not the test's
		}
	}
	ctx := context.Background()
	for _, table := range []string{"filter", "nat"} {
		out, _, _, err := run(ctx, nil, "", "iptables-save", "-t", table)
		if err != nil {
			continue
		}
		var chains []string
		for _, l := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(l, ":NETAVARK"):
				chains = append(chains, strings.Fields(l[1:])[0])
			case strings.HasPrefix(l, "-A ") && strings.Contains(l, "-j NETAVARK") && !strings.HasPrefix(l, "-A NETAVARK"):
				// A jump from a built-in chain: delete that very rule.
				args := append([]string{"-t", table, "-D"}, splitRule(l[3:])...)
				if _, errOut, code, err := run(ctx, nil, "", "iptables", args...); err != nil || code != 0 {
					t.Logf("iptables %v: %v %s", args, err, errOut)
				}
			}
		}
		for _, c := range chains {
			_, _, _, _ = run(ctx, nil, "", "iptables", "-t", table, "-F", c)
		}
		for _, c := range chains {
			if _, errOut, code, err := run(ctx, nil, "", "iptables", "-t", table, "-X", c); err != nil || code != 0 {
				t.Logf("iptables -t %s -X %s: %v %s", table, c, err, errOut)
			}
		}
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return
	}
	for _, table := range []string{"nat", "filter"} {
		if slices.ContainsFunc(before.Firewall, func(l string) bool { return l == "nft table ip "+table+" {" }) {
			continue
		}
		out, _, code, err := run(ctx, nil, "", "nft", "list", "table", "ip", table)
		if err != nil || code != 0 {
			continue
		}
		empty := true
		for _, l := range lines(out) {
			if !strings.HasPrefix(l, "table ") && !strings.HasPrefix(l, "chain ") && !strings.HasPrefix(l, "type ") && l != "}" {
				empty = false
			}
		}
		if empty {
			_, _, _, _ = run(ctx, nil, "", "nft", "delete", "table", "ip", table)
		}
	}
}

// splitRule splits an iptables-save rule into arguments, keeping quoted strings (comments) whole.
func splitRule(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
