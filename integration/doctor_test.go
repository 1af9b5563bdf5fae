//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envIsolateState names a running mini-YARN started with --isolate-node 0, to reuse.
const envIsolateState = "YARN_ER_MINIYARN_ISOLATE_STATE"

// isolatingMiniYARN is docker/conf's cluster with NodeManager 0 isolating its containers' GPUs
// (--isolate-node 0: each container's fake host holds the device nodes of its own GPUs only) and
// NodeManager 1 not (every container of it can open all 4).
var isolatingMiniYARN = &lazyCluster{what: "GPU-isolating", env: envIsolateState, conf: "conf",
	state: "mini-yarn-isolate", flags: []string{"--isolate-node", "0"}}

// doctorJSON is the part of `yarn-er doctor -o json` the tests read.
type doctorJSON struct {
	ApplicationID string `json:"applicationId"`
	Leaks         int    `json:"leaks"`
	Nodes         []struct {
		Node    string   `json:"node"`
		Verdict string   `json:"verdict"`
		Reason  string   `json:"reason"`
		Fix     []string `json:"fix"`
		Probe   *struct {
			Granted int64 `json:"granted"`
			Listed  []struct {
				ID    string `json:"id"`
				Opens bool   `json:"opens"`
			} `json:"listed"`
			NodeManager struct {
				State string `json:"state"`
			} `json:"nodeManager"`
			Executor struct {
				Class  string `json:"class"`
				Source string `json:"source"`
			} `json:"executor"`
		} `json:"probe"`
	} `json:"nodes"`
}

// isolatingNode returns the id of the NodeManager that isolates GPUs and of the one that does not.
func isolatingNode(t *testing.T, ep *Endpoints) (isolating, leaky string) {
	t.Helper()
	require.Len(t, ep.NodeManagers, 2)
	for _, nm := range ep.NodeManagers {
		if nm.IsolatesGPUs {
			isolating = nm.ID
		} else {
			leaky = nm.ID
		}
	}
	require.NotEmpty(t, isolating, "endpoints.json names no isolating NodeManager")
	require.NotEmpty(t, leaky)
	return isolating, leaky
}

// runDoctor runs `yarn-er doctor -o json ARGS...` and decodes its verdicts.
func runDoctor(t *testing.T, ctx context.Context, ep *Endpoints, want int, args ...string) doctorJSON {
	t.Helper()
	r := runCLI(t, ctx, ep, append([]string{"doctor", "--progress", "plain", "-o", "json"}, args...)...)
	require.Equal(t, want, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var d doctorJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	return d
}

// TestDoctor: doctor probes both NodeManagers from inside a container each, passes the one that
// isolates (its probe opens exactly the GPU it was given, of the 4 the driver lists), fails the
// other (its probe opens all 4) with exit 3 and the fix, and names each node in -o json.
func TestDoctor(t *testing.T) {
	parallelOn(t, &isolatingMiniYARN.guard)
	ep := isolatingMiniYARN.endpoints(t)
	isolating, leaky := isolatingNode(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	d := runDoctor(t, ctx, ep, 3)
	assert.Regexp(t, `^application_\d+_\d+$`, d.ApplicationID)
	assert.Equal(t, 1, d.Leaks)
	byNode := map[string]int{}
	for i, n := range d.Nodes {
		byNode[n.Node] = i
	}
	require.Contains(t, byNode, isolating, "doctor names the isolating node")
	require.Contains(t, byNode, leaky, "doctor names the leaky node")

	ok := d.Nodes[byNode[isolating]]
	assert.Equal(t, "ok", ok.Verdict, ok.Reason)
	assert.Empty(t, ok.Fix)
	require.NotNil(t, ok.Probe)
	assert.Equal(t, int64(1), ok.Probe.Granted)
	require.Len(t, ok.Probe.Listed, 4, "the driver lists every GPU of the node")
	open := 0
	for _, dv := range ok.Probe.Listed {
		if dv.Opens {
			open++
		}
	}
	assert.Equal(t, 1, open, "the isolating node's container opens only its own GPU")

	bad := d.Nodes[byNode[leaky]]
	assert.Equal(t, "leak", bad.Verdict, bad.Reason)
	assert.Contains(t, bad.Reason, "can open 4")
	assert.Contains(t, bad.Fix, "container-executor.cfg: [gpu] module.enabled=true, so that container-executor denies a container the GPUs it was not given (devices cgroup)")
	if ep.HadoopAtLeast(3, 5) {
		// The NodeManagers' web servers run: the probe read the executor from /conf.
		require.NotNil(t, bad.Probe)
		assert.Equal(t, "nodemanager /conf", bad.Probe.Executor.Source)
		assert.Equal(t, "dev.yarner.miniyarn.IsolatingExecutor", bad.Probe.Executor.Class)
		assert.Equal(t, "no-plugin", bad.Probe.NodeManager.State)
	}

	// The table names the verdicts and the fix; the exit status is 3.
	r := runCLI(t, ctx, ep, "doctor", "--progress", "none")
	require.Equal(t, 3, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, leaky+": leak: ")
	assert.Contains(t, r.stdout, isolating+": ok: ")
	assert.Contains(t, r.stdout, "fix: container-executor.cfg: [gpu] module.enabled=true")
	assert.Contains(t, r.stderr, "doctor: 1 of 2 node(s) let a container open GPUs it was not given")

	// --nodes: only the isolating node, which passes.
	only := runDoctor(t, ctx, ep, 0, "--nodes", isolating)
	require.Len(t, only.Nodes, 1)
	assert.Equal(t, isolating, only.Nodes[0].Node)
	assert.Equal(t, "ok", only.Nodes[0].Verdict)
}

// TestDoctorTimeout: a node whose GPUs another application holds gets no probe container; doctor
// gives up after --timeout, kills its probes, names the node timeout and exits 0.
func TestDoctorTimeout(t *testing.T) {
	parallelOn(t, &isolatingMiniYARN.guard)
	ep := isolatingMiniYARN.endpoints(t)
	_, leaky := isolatingNode(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// Every GPU of the leaky node held by a job pinned there (placement nodes).
	spec := filepath.Join(t.TempDir(), "hold.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("name: hold\nroles:\n  hold:\n    count: 1\n    gpus: 4\n    memory: 128m\n"+
		"    command: [sleep, \"300\"]\n    placement: {nodes: [\""+leaky+"\"]}\n"), 0o644))
	hold := runCLI(t, ctx, ep, "submit", "--spec", spec, "--detach")
	require.Equal(t, 0, hold.code, hold.stderr)
	holdID := strings.TrimSpace(hold.stdout)
	t.Cleanup(func() { runCLI(t, context.Background(), ep, "app", "kill", holdID) })
	yc := yarnClient(t, ep)
	require.Eventually(t, func() bool {
		n, err := yc.Node(ctx, leaky)
		if err != nil {
			return false
		}
		used, _ := n.Used.Get("yarn.io/gpu")
		return used == 4
	}, 3*time.Minute, 500*time.Millisecond, "the holding job has the leaky node's 4 GPUs")

	d := runDoctor(t, ctx, ep, 0, "--nodes", leaky, "--timeout", "15s")
	require.Len(t, d.Nodes, 1)
	assert.Equal(t, leaky, d.Nodes[0].Node)
	assert.Equal(t, "timeout", d.Nodes[0].Verdict, d.Nodes[0].Reason)
	assert.Contains(t, d.Nodes[0].Reason, "no report within --timeout 15s")
	assert.Equal(t, 0, d.Leaks)
}

// TestGPUPluginDoctor: on the GPU plugin's mini-YARN doctor names each node with a verdict, the
// isolating node ok and the other a leak (exit 3); the probes found the plugin running without
// assignments (no LinuxContainerExecutor), and the leak's fix does not ask for the plugin again.
func TestGPUPluginDoctor(t *testing.T) {
	parallelOn(t, &gpuPluginMiniYARN.guard)
	ep := gpuPluginMiniYARN.endpoints(t)
	isolating, leaky := isolatingNode(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	d := runDoctor(t, ctx, ep, 3)
	verdicts := map[string]string{}
	for _, n := range d.Nodes {
		verdicts[n.Node] = n.Verdict
		require.NotNil(t, n.Probe, n.Node)
		if !ep.HadoopAtLeast(3, 5) {
			continue // the NodeManagers serve no web API to ask
		}
		assert.Equal(t, "no-assignments", n.Probe.NodeManager.State, "%s: the plugin assigns nothing without LinuxContainerExecutor", n.Node)
		for _, fx := range n.Fix {
			assert.NotContains(t, fx, "yarn.nodemanager.resource-plugins=yarn.io/gpu", "%s: the plugin is on already", n.Node)
		}
	}
	assert.Equal(t, map[string]string{isolating: "ok", leaky: "leak"}, verdicts)
}
