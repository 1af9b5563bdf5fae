//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlacementSpreadByConstraint: 3 ranks with placement spread: node on the mini-YARN's 2
// NodeManagers, placed by the ResourceManager (the harness sets
// yarn.resourcemanager.placement-constraints.handler=scheduler): the AM asks for all three by one
// SchedulingRequest with anti-affinity to the role's allocation tag; two run at once on different
// NodeManagers, the third waits at the ResourceManager and `app why` says it waits on the
// placement constraint; it runs once a node is free of the role. Nothing is given back.
func TestPlacementSpreadByConstraint(t *testing.T) {
	ep := cluster(t)
	share := t.TempDir()
	job := writeJob(t, fmt.Sprintf(`name: spread-by-constraint
env: {SHARE: %s}
roles:
  worker:
    count: 3
    gpus: 1
    memory: 128m
    placement: {spread: node, fallback: fail}
    command: 'echo "$NM_PORT" > "$SHARE/start-$RANK"; while [ ! -f "$SHARE/go" ]; do sleep 0.2; done'
`, share), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--spec", job, "--detach", "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	appID, _ := r.jsonObject(t)["applicationId"].(string)
	require.NotEmpty(t, appID)
	defer runCLI(t, context.Background(), ep, "app", "kill", appID)

	// Two ranks start, on different NodeManagers; the third waits, and app why says why.
	started := func() []string {
		var ports []string
		for rank := range 3 {
			if b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("start-%d", rank))); err == nil {
				ports = append(ports, strings.TrimSpace(string(b)))
			}
		}
		return ports
	}
	var why map[string]any
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if len(started()) < 2 {
			continue
		}
		w := runCLI(t, ctx, ep, "app", "why", appID, "-o", "json")
		require.Equal(t, 0, w.code, w.stderr)
		require.NoError(t, json.Unmarshal([]byte(w.stdout), &why))
		if reasons, _ := why["reasons"].([]any); len(reasons) > 0 {
			break
		}
	}
	ports := started()
	require.Len(t, ports, 2, "two ranks run, the third waits")
	assert.NotEqual(t, ports[0], ports[1], "placement spread: node: the two ranks on different NodeManagers")
	require.NotNil(t, why, "app why answered")
	assert.Equal(t, true, why["waiting"])
	reasons, _ := why["reasons"].([]any)
	require.NotEmpty(t, reasons, "app why: %v", why)
	first := reasons[0].(map[string]any)
	assert.Equal(t, "placement-constraint", first["code"])
	assert.Contains(t, first["message"], "wait for a node without a container tagged worker (placement constraint notin,node,worker")
	asks, _ := why["asks"].([]any)
	require.Len(t, asks, 1)
	assert.Equal(t, "notin,node,worker", asks[0].(map[string]any)["placementConstraint"])
	assert.EqualValues(t, 1, asks[0].(map[string]any)["containers"])

	// Let the two finish: the third lands on a node freed of the role and the job succeeds.
	require.NoError(t, os.WriteFile(filepath.Join(share, "go"), nil, 0o644))
	w := runCLI(t, ctx, ep, "app", "wait", appID, "-q")
	require.Equal(t, 0, w.code, w.stderr)
	assert.Len(t, started(), 3)

	logs := runCLI(t, ctx, ep, "app", "logs", appID)
	require.Equal(t, 0, logs.code, logs.stderr)
	out := logs.stdout + logs.stderr
	assert.Contains(t, out, `placedBy="ResourceManager (placement constraints)"`)
	assert.Contains(t, out, "ranks wait: placement spread: node puts at most one rank of the role on each node")
	assert.NotContains(t, out, "giving back a container", "the ResourceManager placed them: nothing given back")
	assert.NotContains(t, out, "cannot place the role by placement constraints")
}

// TestPlacementPackByConstraint: 3 ranks with placement pack: node all run on one NodeManager
// (the first anywhere, the others by affinity to its allocation tag).
func TestPlacementPackByConstraint(t *testing.T) {
	ep := cluster(t)
	share := t.TempDir()
	job := writeJob(t, fmt.Sprintf(`name: pack-by-constraint
env: {SHARE: %s}
roles:
  worker:
    count: 3
    memory: 128m
    placement: {pack: node, fallback: fail}
    command: 'echo "$NM_PORT $LOCAL_WORLD_SIZE" > "$SHARE/rank-$RANK"; sleep 3'
`, share), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--spec", job, "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var first string
	for rank := range 3 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d", rank)))
		require.NoError(t, err, "rank %d ran", rank)
		f := strings.Fields(string(b))
		require.Len(t, f, 2, string(b))
		if first == "" {
			first = f[0]
		}
		assert.Equal(t, first, f[0], "rank %d on the first rank's NodeManager", rank)
	}
}

// TestPlacementSpreadRestart: a rank of a spread role placed by the ResourceManager fails once and
// is restarted: the AM asks again by the same SchedulingRequest with a new count, which the
// CapacityScheduler accepts from Hadoop 3.3 on (3.2.2 refuses any update of a SchedulingRequest:
// there the role falls back to the AM's own placement, placement.fallback am). The job succeeds
// with the two ranks on different NodeManagers. Each rank runs until the other has started (the
// restarted rank 0 included): spread keeps apart the ranks that run at once, and on a loaded
// machine rank 1 could otherwise end before rank 0's new container is placed.
func TestPlacementSpreadRestart(t *testing.T) {
	ep := cluster(t)
	share := t.TempDir()
	job := writeJob(t, fmt.Sprintf(`name: spread-restart
env: {SHARE: %s}
roles:
  worker:
    count: 2
    memory: 128m
    restarts: 1
    placement: {spread: node}
    command: 'if [ "$RANK" = 0 ] && [ ! -f "$SHARE/failed" ]; then touch "$SHARE/failed"; exit 3; fi; echo "$NM_PORT" > "$SHARE/rank-$RANK"; for i in $(seq 240); do [ -f "$SHARE/rank-$((1 - RANK))" ] && break; sleep 0.5; done; sleep 1'
`, share), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--spec", job, "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	appID, _ := r.jsonObject(t)["applicationId"].(string)
	var ports []string
	for rank := range 2 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d", rank)))
		require.NoError(t, err, "rank %d ran", rank)
		ports = append(ports, strings.TrimSpace(string(b)))
	}
	assert.NotEqual(t, ports[0], ports[1], "the restarted rank 0 and rank 1 on different NodeManagers")
	logs := runCLI(t, ctx, ep, "app", "logs", appID)
	require.Equal(t, 0, logs.code, logs.stderr)
	out := logs.stdout + logs.stderr
	assert.Contains(t, out, "rank failed; restarting it in a new container")
	if strings.HasPrefix(ep.HadoopVersion, "3.2.") {
		t.Logf("Hadoop %s: fell back to the AM's placement: %v", ep.HadoopVersion, strings.Contains(out, "cannot place the role by placement constraints"))
	} else {
		assert.NotContains(t, out, "cannot place the role by placement constraints", "the ResourceManager took the new count")
	}
}

// TestPlacementRefusedByHandler: on a ResourceManager whose placement-constraints handler is
// Hadoop's default, disabled (the misconfigured mini-YARN), the allocate carrying the
// SchedulingRequest is refused. With the default placement.fallback (am) the preflight warns,
// the AM places the ranks itself and says so, and the two ranks still land on different
// NodeManagers (each runs until the other has started: spread keeps apart the ranks that run at
// once); with fallback fail, submit stops at the preflight, and forced past it the
// application fails with the ResourceManager's reason.
func TestPlacementRefusedByHandler(t *testing.T) {
	ep := misconfiguredCluster(t)
	share := t.TempDir()
	jobFor := func(fallback string) string {
		return writeJob(t, fmt.Sprintf(`name: spread-refused
env: {SHARE: %s}
roles:
  worker:
    count: 2
    memory: 128m
    placement: {spread: node, fallback: %s}
    command: 'echo "$NM_PORT" > "$SHARE/%s-$RANK"; for i in $(seq 240); do [ -f "$SHARE/%s-$((1 - RANK))" ] && break; sleep 0.5; done; sleep 1'
`, share, fallback, fallback, fallback), nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	r := runCLI(t, ctx, ep, "submit", "--spec", jobFor("am"), "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	assert.Contains(t, r.stderr, "cluster.placement: placement spread: node cannot be placed by the ResourceManager (yarn.resourcemanager.placement-constraints.handler is disabled")
	res := r.jsonObject(t)
	appID, _ := res["applicationId"].(string)
	assert.Contains(t, res["diagnostics"], "placed without placement constraints (the ResourceManager could not place them): role worker (spread: node, placed by the ApplicationMaster)")
	var ports []string
	for rank := range 2 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("am-%d", rank)))
		require.NoError(t, err, "rank %d ran", rank)
		ports = append(ports, strings.TrimSpace(string(b)))
	}
	assert.NotEqual(t, ports[0], ports[1], "the AM's own placement: the ranks on different NodeManagers")
	// The AM's log: this cluster aggregates no logs, so app logs reads them from the NodeManager's
	// web services, which the mini-YARN serves on Hadoop 3.5 only (docs/hadoop-versions.md). The
	// diagnostics above and below say the same on every line.
	if strings.HasPrefix(ep.HadoopVersion, "3.5.") {
		logs := runCLI(t, ctx, ep, "app", "logs", appID)
		require.Equal(t, 0, logs.code, logs.stderr)
		assert.Contains(t, logs.stdout+logs.stderr, "the ApplicationMaster places the ranks itself with plain asks (placement.fallback: am)")
		assert.Contains(t, logs.stdout+logs.stderr, "Found non empty SchedulingRequest", "the ResourceManager's own words")
	}

	fail := jobFor("fail")
	r = runCLI(t, ctx, ep, "submit", "--spec", fail, "-o", "json")
	require.NotEqual(t, 0, r.code, "stdout: %s", r.stdout)
	assert.Contains(t, r.stdout+r.stderr, "cluster.placement")
	assert.Contains(t, r.stdout+r.stderr, "placement.fallback is fail: the application will fail")

	r = runCLI(t, ctx, ep, "submit", "--spec", fail, "--force", "-o", "json")
	require.NotEqual(t, 0, r.code, "stdout: %s", r.stdout)
	res = r.jsonObject(t)
	assert.Equal(t, "FAILED", res["finalStatus"])
	assert.Contains(t, res["diagnostics"], "role worker: the ResourceManager cannot place spread: node by placement constraints (placement.fallback: fail)")
	assert.Contains(t, res["diagnostics"], "Found non empty SchedulingRequest")
}

// TestPlacementRacks: placement racks asks as Hadoop's AMRMClient does for a ContainerRequest with
// racks and relaxLocality false (a ResourceRequest per rack, relaxLocality false on *). On the
// mini-YARN every NodeManager is on /default-rack (no topology script), so a role with racks
// [/default-rack] runs, and one with spread: node beside it runs its two ranks on different
// NodeManagers (the AM spreads them among the racks' nodes). A role on /nowhere stays pending at
// the ResourceManager: the preflight warns, and `app why` names the rack.
func TestPlacementRacks(t *testing.T) {
	ep := cluster(t)
	share := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	job := writeJob(t, fmt.Sprintf(`name: racks
env: {SHARE: %s}
roles:
  onrack:
    count: 2
    memory: 128m
    placement: {racks: [/default-rack]}
    command: 'echo "$NM_PORT" > "$SHARE/onrack-$RANK"'
  spread:
    count: 2
    memory: 128m
    placement: {spread: node, racks: [/default-rack]}
    command: 'echo "$NM_PORT" > "$SHARE/spread-$RANK"; for i in $(seq 240); do [ -f "$SHARE/spread-$((1 - RANK))" ] && break; sleep 0.5; done; sleep 1'
`, share), nil)
	r := runCLI(t, ctx, ep, "submit", "--spec", job, "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	assert.NotContains(t, r.stderr, "no RUNNING NodeManager is on")
	appID, _ := r.jsonObject(t)["applicationId"].(string)
	var spread []string
	for rank := range 2 {
		_, err := os.Stat(filepath.Join(share, fmt.Sprintf("onrack-%d", rank)))
		require.NoError(t, err, "onrack rank %d ran", rank)
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("spread-%d", rank)))
		require.NoError(t, err, "spread rank %d ran", rank)
		spread = append(spread, strings.TrimSpace(string(b)))
	}
	assert.NotEqual(t, spread[0], spread[1], "spread: node among the rack's nodes: different NodeManagers")
	logs := runCLI(t, ctx, ep, "app", "logs", appID)
	require.Equal(t, 0, logs.code, logs.stderr)
	out := logs.stdout + logs.stderr
	assert.Contains(t, out, `placedBy="ResourceManager (rack requests, relaxLocality false)"`)
	assert.Contains(t, out, `role=spread`)
	assert.NotContains(t, out, "off the role's racks")

	// A rack nobody is on: submitted (the preflight warns), and the ranks wait.
	nowhere := writeJob(t, `name: racks-nowhere
roles:
  worker:
    count: 2
    memory: 128m
    placement: {racks: [/nowhere]}
    command: 'true'
`, nil)
	r = runCLI(t, ctx, ep, "submit", "--spec", nowhere, "--detach", "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	assert.Contains(t, r.stderr, "cluster.placement: placement racks [/nowhere]: no RUNNING NodeManager is on /nowhere")
	appID, _ = r.jsonObject(t)["applicationId"].(string)
	require.NotEmpty(t, appID)
	defer runCLI(t, context.Background(), ep, "app", "kill", appID)

	var why map[string]any
	var reason map[string]any
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && reason == nil; time.Sleep(500 * time.Millisecond) {
		w := runCLI(t, ctx, ep, "app", "why", appID, "-o", "json")
		require.Equal(t, 0, w.code, w.stderr)
		require.NoError(t, json.Unmarshal([]byte(w.stdout), &why))
		reasons, _ := why["reasons"].([]any)
		for _, x := range reasons {
			if m := x.(map[string]any); m["code"] == "no-node-on-rack" {
				reason = m
			}
		}
	}
	require.NotNil(t, reason, "app why names the rack: %v", why)
	assert.Contains(t, reason["message"], "2 container(s) of")
	assert.Contains(t, reason["message"], "may run only on /nowhere (the request for * has relaxLocality false")
	assert.Contains(t, reason["message"], "the RUNNING nodes are on /default-rack")
	asks, _ := why["asks"].([]any)
	require.Len(t, asks, 1)
	assert.Equal(t, []any{"/nowhere"}, asks[0].(map[string]any)["locations"])
	text := runCLI(t, ctx, ep, "app", "why", appID)
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, "on /nowhere only")
	assert.Contains(t, text.stdout, "[no-node-on-rack]")
	t.Logf("app why:\n%s", text.stdout)

	k := runCLI(t, ctx, ep, "app", "kill", appID)
	require.Equal(t, 0, k.code, k.stderr)
}
