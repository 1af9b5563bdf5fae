//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/yarn"
)

// envLabelsState names a running mini-YARN started from docker/conf-labels, to reuse.
const envLabelsState = "YARN_ER_MINIYARN_LABELS_STATE"

var labelledMiniYARN = &lazyCluster{what: "labelled", env: envLabelsState, conf: "conf-labels", state: "mini-yarn-labels"}

// labelledCluster returns the endpoints of a mini-YARN made from docker/conf-labels: docker/conf's
// two NodeManagers, NodeManager 0 in the exclusive node label "gpu"; queue root.default (no label,
// half the default partition, user-limit-factor 0.5) and root.gpu (the other half and the whole
// "gpu" partition). Started on first use, once per run, and stopped at its end.
func labelledCluster(t testing.TB) *Endpoints {
	t.Helper()
	return labelledMiniYARN.endpoints(t)
}

// labelledNode returns the id (host:port) of the RUNNING node carrying label, and the others'.
func labelledNode(t *testing.T, ep *Endpoints, label string) (string, []string) {
	t.Helper()
	nodes, err := yarnClient(t, ep).Nodes(context.Background(), yarn.NodesQuery{})
	require.NoError(t, err)
	var with string
	var others []string
	for _, n := range nodes {
		if slices.Contains(n.NodeLabels, label) {
			require.Empty(t, with, "one node labelled %s", label)
			with = n.ID
			continue
		}
		others = append(others, n.ID)
	}
	require.NotEmpty(t, with, "a node labelled %s: %+v", label, nodes)
	return with, others
}

// labelledPreflight runs preflight of examples/flink-conf.yaml with the dynamic properties for
// containers TaskManagers (0: the file's) from queue.
func labelledPreflight(t *testing.T, ep *Endpoints, queue string, containers int, dynamic ...string) *preflight.Report {
	t.Helper()
	in := preflightInput(t, ep, "flink-conf.yaml", dynamic...)
	in.Queue, in.Containers = queue, containers
	return runPreflight(t, in)
}

// entry returns the one entry of id with status st whose message has every part.
func entry(t *testing.T, rep *preflight.Report, id string, st preflight.Status, parts ...string) preflight.Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.ID != id || c.Status != st {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(c.Message, p)
		}
		if ok {
			return c
		}
	}
	t.Fatalf("no %s %s entry with %q", st, id, parts)
	return preflight.Check{}
}

// TestNodeLabelPreflight: on a cluster whose GPU node 0 is in the exclusive label "gpu", Flink's
// TaskManagers asking for the label pass from the queue that may use it and fail from the one
// that may not; without the label only the unlabelled node counts; the default queue's user
// limit holds one TaskManager.
func TestNodeLabelPreflight(t *testing.T) {
	parallelOn(t, &labelledMiniYARN.guard)
	ep := labelledCluster(t)
	labelled, others := labelledNode(t, ep, "gpu")
	require.Len(t, others, 1)
	t.Logf("Hadoop %s: node %s labelled gpu, %s not", ep.HadoopVersion, labelled, others[0])

	t.Run("queue with the label", func(t *testing.T) {
		rep := labelledPreflight(t, ep, "gpu", 0, "yarn.taskmanager.node-label=gpu")
		entry(t, rep, preflight.IDNodeLabel, preflight.StatusPass, "yarn.taskmanager.node-label = gpu: 1 of the 1 RUNNING nodes with the label can hold the TaskManager container")
		// The node's 4 GPUs hold 2 TaskManagers (2 GPUs each); the JobManager goes to the default partition.
		entry(t, rep, preflight.IDCapacity, preflight.StatusPass, "on the 1 RUNNING node labelled gpu", ", 2 on an empty cluster")
		entry(t, rep, preflight.IDQueueCapacity, preflight.StatusPass, "queue root.gpu", "in partition gpu")
		assert.True(t, rep.OK, "failing: %v", rep.Checks)
	})
	t.Run("queue without the label", func(t *testing.T) {
		rep := labelledPreflight(t, ep, "default", 0, "yarn.taskmanager.node-label=gpu")
		c := entry(t, rep, preflight.IDNodeLabel, preflight.StatusFail, "yarn.taskmanager.node-label = gpu: queue root.default may not use the label", "accessible node labels: none")
		assert.Contains(t, c.Fix, "yarn.scheduler.capacity.root.default.accessible-node-labels")
		assert.False(t, rep.OK)
	})
	t.Run("no label: only the unlabelled node", func(t *testing.T) {
		rep := labelledPreflight(t, ep, "gpu", 0)
		entry(t, rep, preflight.IDNodeLabel, preflight.StatusPass, "no node label is asked for")
		entry(t, rep, preflight.IDNoNodeFits, preflight.StatusPass, "1 of 1 RUNNING nodes", "outside the exclusive node labels gpu")
		entry(t, rep, preflight.IDCapacity, preflight.StatusPass, "on the 1 RUNNING node outside the exclusive node labels gpu", ", 2 on an empty cluster")
	})
	t.Run("user limit", func(t *testing.T) {
		rep := labelledPreflight(t, ep, "default", 0, "yarn.taskmanager.node-label=")
		entry(t, rep, preflight.IDQueueCapacity, preflight.StatusPass, "queue root.default")
		rep = labelledPreflight(t, ep, "default", 2)
		c := entry(t, rep, preflight.IDQueueCapacity, preflight.StatusFail, "one user may hold at most", "user-limit-factor 0.5", "1 TaskManager container", "2 wanted", "waits forever")
		assert.Contains(t, c.Fix, "yarn.scheduler.capacity.root.default.user-limit-factor")
	})
}

// TestNodeLabelSubmit: `submit --node-label gpu --gpus 1` runs every rank on the labelled node
// (from the queue that may use the label), and is refused by its preflight from the one that may
// not, before an application id is used up.
func TestNodeLabelSubmit(t *testing.T) {
	parallelOn(t, &labelledMiniYARN.guard)
	ep := labelledCluster(t)
	labelled, _ := labelledNode(t, ep, "gpu")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	refused := runCLI(t, ctx, ep, "submit", "--queue", "default", "--node-label", "gpu", "--gpus", "1", "--memory", "128m", "--", "true")
	assert.Equal(t, 3, refused.code, "stderr: %s", refused.stderr)
	assert.Contains(t, refused.stderr+refused.stdout, "cluster.node-label")
	assert.Contains(t, refused.stderr+refused.stdout, "may not use the label")

	share := t.TempDir()
	script := `echo "$NM_HOST:$NM_PORT" > "$SHARE/rank-$YARN_ER_RANK"`
	args := append([]string{"submit", "--queue", "gpu", "--node-label", "gpu", "--containers", "2", "--gpus", "1",
		"--memory", "128m", "-o", "json"}, shareEnv(share)...)
	r := runCLI(t, ctx, ep, append(args, "--", "sh", "-c", script)...)
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"])
	for rank := range 2 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d", rank)))
		require.NoError(t, err, "rank %d ran", rank)
		assert.Equal(t, labelled, strings.TrimSpace(string(b)), "rank %d ran on the node labelled gpu", rank)
	}
}
