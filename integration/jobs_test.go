//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// torchPython returns a Python with PyTorch from PyPI: docker/torch/venv creates it on first use
// (.ci/run does before the tests) and reuses it after.
func torchPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), "docker", "torch", "venv")).Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "docker/torch/venv: %s", stderr)
	return strings.TrimSpace(string(out))
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return filepath.Dir(wd)
}

// writeJob writes a job file into a temporary directory with the given extra files.
func writeJob(t *testing.T, doc string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	p := filepath.Join(dir, "job.yaml")
	require.NoError(t, os.WriteFile(p, []byte(doc), 0o644))
	return p
}

// TestSubmitSpecTorchAllReduce: the proof. `yarn-er submit --spec` runs a real PyTorch
// job: 4 ranks of a gang (2 yarn.io/gpu each, so 2 on each of the two 4-GPU NodeManagers), which
// meet at MASTER_ADDR:MASTER_PORT with torch.distributed's env:// rendezvous and all-reduce over
// gloo; every rank sees the sum 1+2+3+4 and the whole gang in its peers file.
func TestSubmitSpecTorchAllReduce(t *testing.T) {
	ep := cluster(t)
	python := torchPython(t)
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "jobs", "allreduce.py"))
	require.NoError(t, err)
	share := t.TempDir()
	job := writeJob(t, fmt.Sprintf(`name: torch-allreduce
gang: true
gang_timeout: 3m
env:
  PYTHON: %s
  RESULT_DIR: %s
  YARN_ER_COORDINATION_FILE: %s
files: [allreduce.py]
roles:
  worker:
    count: 4
    gpus: 2
    memory: 1g
    command: ["sh", "-c", "exec $PYTHON allreduce.py"]
`, python, share, filepath.Join(share, "gpus")), map[string]string{"allreduce.py": string(script)})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--spec", job, "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"])

	type result struct {
		Rank      int      `json:"rank"`
		World     int      `json:"world"`
		Sum       float64  `json:"sum"`
		NMPort    string   `json:"nm_port"`
		Master    string   `json:"master"`
		NodeRank  string   `json:"node_rank"`
		LocalRank string   `json:"local_rank"`
		Peers     []string `json:"peers"`
	}
	masters, ports := map[string]bool{}, map[string]int{}
	for rank := range 4 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d.json", rank)))
		require.NoError(t, err, "rank %d wrote its result", rank)
		var got result
		require.NoError(t, json.Unmarshal(b, &got))
		assert.Equal(t, rank, got.Rank)
		assert.Equal(t, 4, got.World)
		assert.Equal(t, 10.0, got.Sum, "rank %d: the all-reduce summed 1+2+3+4", rank)
		assert.Len(t, got.Peers, 4, "rank %d: the whole gang in its peers file", rank)
		masters[got.Master] = true
		ports[got.NMPort]++
	}
	assert.Len(t, masters, 1, "every rank met at the same MASTER_ADDR:MASTER_PORT: %v", masters)
	assert.Len(t, ports, 2, "the ranks ran on both NodeManagers: %v", ports)
	for p, n := range ports {
		assert.Equal(t, 2, n, "NodeManager port %s ran 2 ranks", p)
	}
}

// TestSubmitSpecCoordinatorAndWorkers: the example: a coordinator (no GPU) and a gang of
// two one-GPU workers that depend on it. The workers start after the coordinator runs, together,
// each with the rendezvous variables of its role.
func TestSubmitSpecCoordinatorAndWorkers(t *testing.T) {
	ep := cluster(t)
	share := t.TempDir()
	job := writeJob(t, fmt.Sprintf(`name: coordinator-and-workers
env:
  SHARE: %s
  YARN_ER_COORDINATION_FILE: %s
roles:
  coordinator:
    memory: 128m
    command: 'echo "$YARN_ER_ROLE $RANK $WORLD_SIZE" > "$SHARE/coordinator"; i=0; while [ ! -f "$SHARE/worker-1" ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done'
  worker:
    count: 2
    gpus: 1
    memory: 128m
    gang: true
    placement: {spread: node}
    depends_on: [coordinator]
    framework: pytorch
    command: 'test -f "$SHARE/coordinator" && echo "$RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT $NODE_RANK $LOCAL_RANK $NM_PORT $(wc -l < "$YARN_ER_PEERS")" > "$SHARE/worker-$RANK"'
`, share, filepath.Join(share, "gpus")), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dry := runCLI(t, ctx, ep, "submit", "--spec", job, "--dry-run", "-o", "json")
	require.Equal(t, 0, dry.code, dry.stderr)
	assert.Contains(t, dry.stdout, `"gang": "worker"`)

	r := runCLI(t, ctx, ep, "submit", "--spec", job, "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	b, err := os.ReadFile(filepath.Join(share, "coordinator"))
	require.NoError(t, err)
	assert.Equal(t, "coordinator 0 1", strings.TrimSpace(string(b)))
	var first []string
	for rank := range 2 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("worker-%d", rank)))
		require.NoError(t, err, "worker %d ran after the coordinator", rank)
		f := strings.Fields(string(b))
		require.Len(t, f, 8, string(b))
		assert.Equal(t, fmt.Sprint(rank), f[0])
		assert.Equal(t, "2", f[1])
		assert.NotEmpty(t, f[2], "MASTER_ADDR")
		assert.Equal(t, "3", f[7], "the peers file lists the coordinator and both workers")
		if first == nil {
			first = f
		} else {
			assert.Equal(t, first[2:4], f[2:4], "both workers meet at worker 0's MASTER_ADDR:MASTER_PORT")
			assert.NotEqual(t, first[6], f[6], "placement spread: node: the workers ran on different NodeManagers")
			assert.NotEqual(t, first[4], f[4], "and so have different NODE_RANKs")
		}
	}
}

// TestSubmitSpecSpreadThirdWaits: 3 ranks with placement spread: node on the 2 NodeManagers: two
// run at once on different nodes, the third waits (the AM's log says why) and runs once a node
// is free of the role.
func TestSubmitSpecSpreadThirdWaits(t *testing.T) {
	ep := cluster(t)
	share := t.TempDir()
	job := writeJob(t, fmt.Sprintf(`name: spread
env: {SHARE: %s}
roles:
  worker:
    count: 3
    memory: 128m
    placement: {spread: node}
    command: 'echo "$NM_PORT $(date +%%s%%N)" > "$SHARE/start-$RANK"; sleep 4; echo "$(date +%%s%%N)" > "$SHARE/end-$RANK"'
`, share), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--spec", job, "--detach", "-o", "json")
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	appID, _ := res["applicationId"].(string)
	require.NotEmpty(t, appID)

	// While it runs, app status shows the ranks by role, from the AM's log on its NodeManager
	// (the mini-YARN's NodeManagers serve their web API, and so the AM's log, on Hadoop 3.5+).
	if ep.NodeManagers[0].HTTPAddress != "" {
		var ranks []any
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && len(ranks) < 2; time.Sleep(500 * time.Millisecond) {
			st := runCLI(t, ctx, ep, "app", "status", appID, "-o", "json")
			require.Equal(t, 0, st.code, st.stderr)
			var status map[string]any
			require.NoError(t, json.Unmarshal([]byte(st.stdout), &status))
			ranks, _ = status["ranks"].([]any)
		}
		require.GreaterOrEqual(t, len(ranks), 2, "app status lists the running ranks")
		first := ranks[0].(map[string]any)
		assert.Equal(t, "worker", first["role"])
		assert.Contains(t, first["container"], "container_")
	}
	w := runCLI(t, ctx, ep, "app", "wait", appID, "-q")
	require.Equal(t, 0, w.code, w.stderr)

	type span struct {
		port       string
		start, end int64
	}
	var spans []span
	for rank := range 3 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("start-%d", rank)))
		require.NoError(t, err, "rank %d ran", rank)
		var sp span
		_, err = fmt.Sscan(string(b), &sp.port, &sp.start)
		require.NoError(t, err)
		b, err = os.ReadFile(filepath.Join(share, fmt.Sprintf("end-%d", rank)))
		require.NoError(t, err)
		_, err = fmt.Sscan(string(b), &sp.end)
		require.NoError(t, err)
		spans = append(spans, sp)
	}
	// No two ranks ran on one NodeManager at the same time.
	for i := range spans {
		for j := i + 1; j < len(spans); j++ {
			if spans[i].port == spans[j].port {
				overlap := spans[i].start < spans[j].end && spans[j].start < spans[i].end
				assert.False(t, overlap, "ranks %d and %d overlapped on NodeManager port %s", i, j, spans[i].port)
			}
		}
	}
	logs := runCLI(t, ctx, ep, "app", "logs", appID)
	require.Equal(t, 0, logs.code, logs.stderr)
	assert.Contains(t, logs.stdout+logs.stderr, "ranks wait: placement spread: node puts at most one rank of the role on each node")

	// app logs --role R --rank N: that rank's container only.
	one := runCLI(t, ctx, ep, "app", "logs", appID, "--role", "worker", "--rank", "2", "--file", "stderr")
	require.Equal(t, 0, one.code, one.stderr)
	assert.Contains(t, one.stdout, "(worker rank 2)")
	assert.NotContains(t, one.stdout, "(worker rank 0)")
}

// TestSubmitSpecBadJobFiles: bad job files are refused before anything is staged, with file:line,
// the field and the fix, exit 2; so is a gang larger than the cluster can ever hold.
func TestSubmitSpecBadJobFiles(t *testing.T) {
	ep := cluster(t)
	for _, tc := range []struct {
		name, doc string
		msg       []string
	}{
		{"unknown field", "roles:\n  w:\n    gpu: 1\n    command: [x]\n", []string{"job.yaml:3: roles.w.gpu: unknown field", "(fix: did you mean gpus?"}},
		{"wrong type", "roles:\n  w:\n    count: two\n    command: [x]\n", []string{"job.yaml:3: roles.w.count:", "want a whole number", "(fix: count: a number of ranks from 1 to 100000"}},
		{"no command", "roles:\n  w:\n    count: 2\n", []string{"job.yaml:3: roles.w.command: missing", "fix: add command:"}},
		{"cycle", "roles:\n  a: {command: x, depends_on: b}\n  b: {command: y, depends_on: [a]}\n", []string{"job.yaml:2: roles.a.depends_on:", "a -> b -> a", "(fix: remove one of the dependencies"}},
		{"gang larger than the cluster", "roles:\n  w:\n    count: 9\n    gpus: 1\n    gang: true\n    command: [x]\n",
			[]string{"job.yaml:2: roles.w.count: gang w:", "even an empty cluster holds only 8", "(fix: ask for at most 8"}},
		{"count beyond the hard bound", "roles:\n  w:\n    count: 1000000000\n    command: [x]\n", []string{"job.yaml:3: roles.w.count:", "100000", "(fix: count: a number of ranks"}},
		{"rack not a network location", "roles:\n  w:\n    command: [x]\n    placement:\n      racks: [/default-rack, rack1]\n",
			[]string{"job.yaml:5: roles.w.placement.racks[1]:", `"rack1" does not start with /`, "(fix: racks: [/default-rack]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, apps := stagingEntries(t, ep), appIDs(t, ep)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			job := writeJob(t, tc.doc, nil)
			r := runCLI(t, ctx, ep, "submit", "--spec", job)
			assert.Equal(t, 2, r.code, r.stderr)
			for _, m := range tc.msg {
				assert.Contains(t, r.stderr, m)
			}
			assert.Equal(t, before, stagingEntries(t, ep), "nothing staged")
			assert.Equal(t, apps, appIDs(t, ep), "no application submitted")
		})
	}
}

// TestSubmitCountsBounded: tried as a new user would, a count far beyond any cluster is refused
// before anything is staged (it used to be submitted, and its AM died out of memory). (A gang
// beyond what the cluster holds is TestSubmitSpecBadJobFiles'; ranks beyond it that may run in
// turns are TestSubmitMoreRanksThanGPUs'.)
func TestSubmitCountsBounded(t *testing.T) {
	ep := cluster(t)
	before, apps := stagingEntries(t, ep), appIDs(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--containers", "1000000000", "--gpus", "1", "--", "true")
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "hard bound of 100000 ranks per job")
	assert.Equal(t, before, stagingEntries(t, ep), "nothing staged")
	assert.Equal(t, apps, appIDs(t, ep), "no application submitted")
}
