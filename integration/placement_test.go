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
// with the two ranks on different NodeManagers.
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
    command: 'if [ "$RANK" = 0 ] && [ ! -f "$SHARE/failed" ]; then touch "$SHARE/failed"; exit 3; fi; echo "$NM_PORT" > "$SHARE/rank-$RANK"; sleep 2'
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
// NodeManagers; with fallback fail, submit stops at the preflight, and forced past it the
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
    command: 'echo "$NM_PORT" > "$SHARE/%s-$RANK"; sleep 2'
`, share, fallback, fallback), nil)
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
	logs := runCLI(t, ctx, ep, "app", "logs", appID)
	require.Equal(t, 0, logs.code, logs.stderr)
	assert.Contains(t, logs.stdout+logs.stderr, "the ApplicationMaster places the ranks itself with plain asks (placement.fallback: am)")
	assert.Contains(t, logs.stdout+logs.stderr, "Found non empty SchedulingRequest", "the ResourceManager's own words")

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
