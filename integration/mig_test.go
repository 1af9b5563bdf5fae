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

	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

// envMIGState names a running mini-YARN started from docker/conf-mig, to reuse.
const envMIGState = "YARN_ER_MINIYARN_MIG_STATE"

var migMiniYARN = &lazyCluster{what: "MIG", env: envMIGState, conf: "conf-mig", state: "mini-yarn-mig"}

// TestSubmitMIGSlices: on a mini-YARN whose NodeManagers offer MIG slices as resource types
// (docker/conf-mig: two nvidia.com/mig-1g.10gb and one nvidia.com/mig-3g.40gb each), `submit
// --resource nvidia.com/mig-1g.10gb=1` passes the preflight's yarn.mig-resources, and each of 4
// ranks, held at once, gets a 1g.10gb slice of its own: CUDA_VISIBLE_DEVICES is its MIG UUID,
// never one of the 3g.40gb slice, never a whole GPU. The ranks share one fake MIG host (a GPU
// with MIG off and one with four 1g.10gb and one 3g.40gb slices, with a fake nvidia-smi -L) and
// its coordination file, given by --env as the NodeManagers' own fake hosts have no slices.
func TestSubmitMIGSlices(t *testing.T) {
	parallelOn(t, &migMiniYARN.guard)
	ep := migMiniYARN.endpoints(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tree := discoverytest.New(t)
	bin := tree.NVIDIAMIGHost(filepath.Join(t.TempDir(), "bin"), nil, []discoverytest.MIGSlice{
		{Profile: "1g.10gb", GI: 7}, {Profile: "1g.10gb", GI: 8}, {Profile: "3g.40gb", GI: 2}, {Profile: "1g.10gb", GI: 9}, {Profile: "1g.10gb", GI: 10}})
	share := t.TempDir()

	// Flink asking for a slice per TaskManager: the live ResourceManager knows the type, the
	// NodeManagers offer it, and preflight's yarn.mig-resources passes.
	fc := filepath.Join(t.TempDir(), "flink-conf.yaml")
	require.NoError(t, os.WriteFile(fc, []byte("taskmanager.memory.process.size: 1g\nexternal-resources: mig\n"+
		"external-resource.mig.amount: 1\nexternal-resource.mig.yarn.config-key: nvidia.com/mig-1g.10gb\n"), 0o644))
	pf := runCLI(t, ctx, ep, "preflight", "--flink-conf", fc, "--containers", "4", "-o", "json")
	var rep struct {
		Checks []struct{ ID, Status, Message string } `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(pf.stdout), &rep), "stdout: %s\nstderr: %s", pf.stdout, pf.stderr)
	status := map[string]string{}
	for _, ch := range rep.Checks {
		status[ch.ID] += ch.Status + ": " + ch.Message + "\n"
	}
	assert.Contains(t, status["yarn.mig-resources"], "pass: MIG slices as resource types: nvidia.com/mig-1g.10gb = 2 per NodeManager (profile 1g.10gb); nvidia.com/mig-3g.40gb = 1 per NodeManager (profile 3g.40gb)")
	assert.Contains(t, status["cluster.type-unknown"], "pass: ")
	assert.Contains(t, status["cluster.capacity"], "4 TaskManager containers")

	script := `echo "$CUDA_VISIBLE_DEVICES" > "$SHARE/rank-$YARN_ER_RANK" && ` +
		`i=0; while [ "$(ls "$SHARE" | grep -c '^rank-')" -lt 4 ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done`
	args := []string{"submit", "--containers", "4", "--resource", "nvidia.com/mig-1g.10gb=1", "--memory", "128m", "-o", "json",
		"--env", "SHARE=" + share, "--env", "YARN_ER_HOST_ROOT=" + tree.Root, "--env", "PATH=" + bin + ":/usr/bin:/bin",
		"--env", "YARN_ER_COORDINATION_FILE=" + filepath.Join(share, "coord")}
	r := runCLI(t, ctx, ep, append(args, "--", "sh", "-c", script)...)
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"])
	assert.Contains(t, res["resource"], "nvidia.com/mig-1g.10gb=1")
	want := map[string]bool{}
	for _, j := range []int{0, 1, 3, 4} {
		want[discoverytest.NVIDIAMIGUUID(1, j)] = true
	}
	seen := map[string]int{}
	for rank := range 4 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d", rank)))
		require.NoError(t, err, "rank %d ran", rank)
		got := strings.TrimSpace(string(b))
		assert.True(t, want[got], "rank %d got %q: a 1g.10gb slice's MIG UUID", rank, got)
		seen[got]++
	}
	for uuid, n := range seen {
		assert.Equal(t, 1, n, "%s handed to %d ranks at once", uuid, n)
	}

	// The same fake host: a --gpus rank gets the GPU with MIG off, never a slice.
	one := runCLI(t, ctx, ep, append([]string{"submit", "--gpus", "1", "--memory", "128m", "-o", "json",
		"--env", "SHARE=" + share, "--env", "YARN_ER_HOST_ROOT=" + tree.Root, "--env", "PATH=" + bin + ":/usr/bin:/bin",
		"--env", "YARN_ER_COORDINATION_FILE=" + filepath.Join(share, "coord")},
		"--", "sh", "-c", `echo "$CUDA_VISIBLE_DEVICES" > "$SHARE/gpu"`)...)
	require.Equal(t, 0, one.code, "stderr: %s", one.stderr)
	b, err := os.ReadFile(filepath.Join(share, "gpu"))
	require.NoError(t, err)
	assert.Equal(t, discoverytest.NVIDIAUUID(0), strings.TrimSpace(string(b)))
}
