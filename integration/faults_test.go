//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// The fault verbs of docker/mini-yarn (harness Faults.java) on a running GPU job: the job
// survives each, and the ranks themselves count how often each of them started.

// envRecoveryState names a running mini-YARN started with --recovery from docker/conf, to reuse.
const envRecoveryState = "YARN_ER_MINIYARN_RECOVERY_STATE"

// recoveringMiniYARN is docker/conf's cluster started with --recovery: its ResourceManager keeps
// its state and restarts work-preserving on fixed ports (restart-rm).
var recoveringMiniYARN = &lazyCluster{what: "recovering", env: envRecoveryState, conf: "conf",
	state: "mini-yarn-recovery", flags: []string{"--recovery"}}

// faultJob starts a 4-rank, 1-GPU-each submit whose ranks append "$NM_PORT $CUDA_VISIBLE_DEVICES"
// to share/rank-R at each start, wait until the file go exists (at most 3 minutes), and exit 0.
// It returns the application id once all four ranks reported their first start, and a channel
// with the submit's result.
func faultJob(t *testing.T, ctx context.Context, ep *Endpoints, share string, extra ...string) (string, <-chan cliRun) {
	t.Helper()
	script := `echo "$NM_PORT $CUDA_VISIBLE_DEVICES" >> "$SHARE/rank-$YARN_ER_RANK"; ` +
		`i=0; while [ ! -e "$SHARE/go" ] && [ $i -lt 900 ]; do sleep 0.2; i=$((i+1)); done`
	args := append([]string{"submit", "--containers", "4", "--gpus", "1", "--memory", "128m", "-o", "json", "--progress", "plain"},
		append(extra, shareEnv(share)...)...)
	done := make(chan cliRun, 1)
	go func() { done <- runCLI(t, ctx, ep, append(args, "--", "sh", "-c", script)...) }()
	// Whatever happens to the test, the ranks end and give their GPUs back.
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(share, "go"), nil, 0o644) })
	started := func() bool {
		for r := range 4 {
			if _, err := os.Stat(filepath.Join(share, fmt.Sprintf("rank-%d", r))); err != nil {
				return false
			}
		}
		return true
	}
	// A submit that ends first (its application failed) says why at once, rather than after the
	// whole wait.
	deadline := time.After(3 * time.Minute)
	for !started() {
		select {
		case r := <-done:
			t.Fatalf("the job ended (exit %d) before all four ranks started: %s\nstdout: %s", r.code, r.stderr, r.stdout)
		case <-deadline:
			t.Fatal("all four ranks started: not within 3 minutes")
		case <-ctx.Done():
			t.Fatalf("all four ranks started: %v", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	apps := runCLI(t, ctx, ep, "app", "list", "--limit", "1", "-o", "json")
	require.Equal(t, 0, apps.code, apps.stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(apps.stdout), &list), apps.stdout)
	require.Len(t, list, 1)
	return list[0]["id"].(string), done
}

// rankStarts reads share/rank-R of the four ranks: the node port and GPU of each start.
func rankStarts(t *testing.T, share string) [][]string {
	t.Helper()
	out := make([][]string, 4)
	for r := range 4 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d", r)))
		require.NoError(t, err)
		out[r] = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	return out
}

// finishJob lets the ranks end and returns the submit's final report.
func finishJob(t *testing.T, ctx context.Context, share string, done <-chan cliRun) map[string]any {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(share, "go"), nil, 0o644))
	var r cliRun
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the job did not end")
	}
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"])
	return res
}

// appStatus is `yarn-er app status APP -o json` as far as these tests read it; ok is false when
// the command failed.
func appStatus(t *testing.T, ctx context.Context, ep *Endpoints, appID string) (st struct {
	Attempt struct {
		ID   string `json:"id"`
		Node string `json:"node"`
	} `json:"attempt"`
	Containers []struct {
		State string `json:"state"`
		AM    bool   `json:"am"`
	} `json:"containers"`
}, ok bool) {
	t.Helper()
	r := runCLI(t, ctx, ep, "app", "status", appID, "-o", "json")
	return st, r.code == 0 && json.Unmarshal([]byte(r.stdout), &st) == nil
}

// awaitRanksRunning waits until the RM has the four ranks' containers of appID RUNNING.
func awaitRanksRunning(t *testing.T, ctx context.Context, ep *Endpoints, appID string) {
	t.Helper()
	// YARN keeps across attempts (and an RM restart) only the containers it knows RUNNING: one
	// still starting then is killed (and the rank restarted). Wait until the RM lists all four.
	require.Eventually(t, func() bool {
		st, ok := appStatus(t, ctx, ep, appID)
		running := 0
		for _, c := range st.Containers {
			if !c.AM && c.State == "RUNNING" {
				running++
			}
		}
		return ok && running == 4
	}, 2*time.Minute, 250*time.Millisecond, "the RM lists the four ranks' containers RUNNING")
	// The REST API shows a container the AM started as RUNNING before its NodeManager's next
	// heartbeat (500 ms in docker/conf) confirms it; until then the RM holds it ACQUIRED and
	// kills it with the attempt (Hadoop 3.2 did so here). Leave a few heartbeats' time.
	time.Sleep(3 * time.Second)
}

// TestKillAMAdoptsTheRanks: `docker/mini-yarn kill-am` kills the ApplicationMaster of a running
// 4-rank job; attempt 2 adopts all four ranks (the application keeps its containers across
// attempts, the ranks record names them), none starts again, and the job SUCCEEDS.
func TestKillAMAdoptsTheRanks(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	appID, msg, _ := killAMUnderJob(t, ctx, ep)
	assert.Contains(t, msg, "attempt 2 registered")
	st, ok := appStatus(t, ctx, ep, appID)
	require.True(t, ok)
	assert.True(t, strings.HasSuffix(st.Attempt.ID, "_000002"), "the application ended in attempt 2: %+v", st.Attempt)
}

// killAMUnderJob runs faultJob, kills its ApplicationMaster once the RM has the four ranks
// running, lets the job end, and checks that attempt 2 took all four over, none started twice.
// It returns the application, kill-am's message and the submit's final report.
func killAMUnderJob(t *testing.T, ctx context.Context, ep *Endpoints) (appID, msg string, res map[string]any) {
	t.Helper()
	share := t.TempDir()
	appID, done := faultJob(t, ctx, ep, share)
	awaitRanksRunning(t, ctx, ep, appID)
	msg, err := Fault(ctx, ep.StateDir, "kill-am", appID)
	require.NoError(t, err)
	t.Log(msg)

	res = finishJob(t, ctx, share, done)
	assert.Contains(t, res["diagnostics"], "attempt 2 took over 4 running rank(s)",
		"the ranks record, read by attempt 2")
	for r, starts := range rankStarts(t, share) {
		assert.Len(t, starts, 1, "rank %d started once: %v", r, starts)
	}
	return appID, msg, res
}

// TestStopNodeManagerRestartsItsRanksElsewhere: `docker/mini-yarn stop-nm` takes a NodeManager
// away under a running 4-rank job: the ResourceManager has it SHUTDOWN, its ranks start again on
// the other node (without using up a restart: --restarts is 0), each on a GPU of its own, and
// the job SUCCEEDS; `start-nm` brings the node back RUNNING.
func TestStopNodeManagerRestartsItsRanksElsewhere(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	share := t.TempDir()
	appID, done := faultJob(t, ctx, ep, share)
	t.Logf("application %s", appID)

	// The node to stop is one the AM does not run on: this test is about the ranks of a lost
	// node (the AM's own node lost is an AM restart, as kill-am).
	status, ok := appStatus(t, ctx, ep, appID)
	require.True(t, ok)
	victim := -1
	for i, nm := range ep.NodeManagers {
		if !strings.HasPrefix(status.Attempt.Node, nm.ID) {
			victim = i
			break
		}
	}
	require.GreaterOrEqual(t, victim, 0, "a node without the AM (AM on %q)", status.Attempt.Node)
	port := ep.NodeManagers[victim].Port()
	msg, err := Fault(ctx, ep.StateDir, "stop-nm", "--node", fmt.Sprint(victim))
	require.NoError(t, err)
	t.Log(msg)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_, _ = Fault(context.Background(), ep.StateDir, "start-nm", "--node", fmt.Sprint(victim))
		}
	})
	assert.Contains(t, msg, "SHUTDOWN")
	// Gone as a node that went away: a connection to its port is refused, but no other program
	// may take the port meanwhile, so that start-nm brings it back as the same node.
	nmAddr := ep.NodeManagers[victim].ID
	if c, err := net.DialTimeout("tcp", nmAddr, 5*time.Second); err == nil {
		_ = c.Close()
		t.Errorf("the stopped NodeManager's %s accepted a connection", nmAddr)
	} else {
		assert.ErrorIs(t, err, syscall.ECONNREFUSED, "dial %s", nmAddr)
	}
	assertPortHeld(t, port)
	nodes := runCLI(t, ctx, ep, "cluster", "nodes", "-o", "json", "--state", "SHUTDOWN")
	require.Equal(t, 0, nodes.code, nodes.stderr)
	assert.Contains(t, nodes.stdout, `"SHUTDOWN"`)

	// The ranks of the lost node start again on the other one.
	require.Eventually(t, func() bool {
		for _, starts := range rankStarts(t, share) {
			if strings.HasPrefix(starts[len(starts)-1], port+" ") {
				return false
			}
		}
		return true
	}, 3*time.Minute, 200*time.Millisecond, "every rank runs off the stopped node")
	res := finishJob(t, ctx, share, done)
	seen := map[string]bool{}
	moved := 0
	for r, starts := range rankStarts(t, share) {
		last := starts[len(starts)-1]
		assert.False(t, seen[last], "rank %d shares its GPU with another rank: %s", r, last)
		seen[last] = true
		if strings.HasPrefix(starts[0], port+" ") {
			moved++
			assert.Len(t, starts, 2, "rank %d of the lost node started once more: %v", r, starts)
		} else {
			assert.Len(t, starts, 1, "rank %d of the other node started once: %v", r, starts)
		}
	}
	assert.Positive(t, moved, "some rank ran on the stopped node")
	assert.Contains(t, res["diagnostics"], "all 4 rank(s) exited 0")

	msg, err = Fault(ctx, ep.StateDir, "start-nm", "--node", fmt.Sprint(victim))
	require.NoError(t, err)
	restarted = true
	t.Log(msg)
	assert.Contains(t, msg, "RUNNING")
	yc := yarnClient(t, ep)
	ns, err := yc.Nodes(ctx, yarn.NodesQuery{})
	require.NoError(t, err)
	running := 0
	for _, n := range ns {
		if n.State == "RUNNING" {
			running++
		}
	}
	assert.Equal(t, len(ep.NodeManagers), running, "every NodeManager RUNNING again: %+v", ns)
}

// TestRestartRMKeepsTheRanks: `docker/mini-yarn restart-rm` restarts the ResourceManager of a
// cluster started with --recovery under a running 4-rank job: the RM recovers the application,
// the NodeManagers resync with their containers, the AM registers again and resends its state,
// submit's follow loop goes on, and the job SUCCEEDS with every rank started once.
func TestRestartRMKeepsTheRanks(t *testing.T) {
	parallelOn(t, &recoveringMiniYARN.guard)
	ep := recoveringMiniYARN.endpoints(t)
	assertFixedPortsOutsideEphemeral(t, readHadoopXML(t, filepath.Join(ep.HadoopConfDir, "yarn-site.xml")), []string{""})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	share := t.TempDir()
	appID, done := faultJob(t, ctx, ep, share)
	awaitRanksRunning(t, ctx, ep, appID)

	msg, err := Fault(ctx, ep.StateDir, "restart-rm")
	require.NoError(t, err)
	t.Log(msg)
	m := regexp.MustCompile(`(\d+) of (\d+) application\(s\) recovered`).FindStringSubmatch(msg)
	require.NotNil(t, m, msg)
	assert.Equal(t, m[2], m[1], "every application recovered: %s", msg)

	res := finishJob(t, ctx, share, done)
	assert.Contains(t, res["diagnostics"], "all 4 rank(s) exited 0 (0 restart(s))")
	for r, starts := range rankStarts(t, share) {
		assert.Len(t, starts, 1, "rank %d started once: %v", r, starts)
	}
}

// TestRestartRMNeedsRecovery: restart-rm on a cluster started without --recovery is refused
// with the reason, and the cluster runs on.
func TestRestartRMNeedsRecovery(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	msg, err := Fault(ctx, ep.StateDir, "restart-rm")
	require.Error(t, err)
	assert.Contains(t, msg, "started without --recovery")
	r := runCLI(t, ctx, ep, "cluster", "info")
	assert.Equal(t, 0, r.code, r.stderr)
}

// envHAState names a running mini-YARN started with --ha from docker/conf, to reuse.
const envHAState = "YARN_ER_MINIYARN_HA_STATE"

// haMiniYARN is docker/conf's cluster started with --ha: ResourceManagers rm0 (active at start)
// and rm1 that elect the active one through an embedded ZooKeeper (automatic failover) and keep
// their state in it. Hadoop 3.5+ only (docker/README.md): make matrix runs the HA tests on the
// default line.
var haMiniYARN = &lazyCluster{what: "HA", env: envHAState, conf: "conf", state: "mini-yarn-ha", flags: []string{"--ha"}}

// TestHAFaultMatrix: each fault of docker/mini-yarn under a running 4-rank GPU job on the HA
// mini-YARN: the job SUCCEEDS, and (counted by the ranks themselves) every rank started once, but
// the ranks of a lost NodeManager, which started once more elsewhere. The last case fails over
// and then restarts the new active ResourceManager under one job.
func TestHAFaultMatrix(t *testing.T) {
	parallelOn(t, &haMiniYARN.guard)
	ep := haMiniYARN.endpoints(t)
	for _, tc := range []struct {
		name   string
		faults func(t *testing.T, ctx context.Context, appID string) (lostPort string)
	}{
		{"failover", func(t *testing.T, ctx context.Context, appID string) string {
			haFault(t, ctx, ep, "failed over from", "failover")
			// The other commands follow the active RM too: no error, at most a warning line.
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"cluster", "nodes", "-o", "json"}, `"state": "RUNNING"`},
				{[]string{"cluster", "apps", "-o", "json"}, appID},
				{[]string{"app", "status", appID, "-o", "json"}, appID},
			} {
				r := runCLI(t, ctx, ep, tc.args...)
				assert.Equal(t, 0, r.code, "%v after the failover: %s", tc.args, r.stderr)
				assert.LessOrEqual(t, strings.Count(r.stderr, "\n"), 1, "%v after the failover: %s", tc.args, r.stderr)
				assert.Contains(t, r.stdout, tc.want, tc.args)
			}
			return ""
		}},
		{"restart-rm", func(t *testing.T, ctx context.Context, _ string) string {
			haFault(t, ctx, ep, "restarted the ResourceManager", "restart-rm")
			return ""
		}},
		{"kill-am", func(t *testing.T, ctx context.Context, appID string) string {
			haFault(t, ctx, ep, "attempt 2 registered", "kill-am", appID)
			return ""
		}},
		{"stop-nm", func(t *testing.T, ctx context.Context, appID string) string {
			st, ok := appStatus(t, ctx, ep, appID)
			require.True(t, ok)
			victim := 0
			if strings.HasPrefix(st.Attempt.Node, ep.NodeManagers[0].ID) {
				victim = 1
			}
			haFault(t, ctx, ep, "SHUTDOWN", "stop-nm", "--node", fmt.Sprint(victim))
			t.Cleanup(func() { _, _ = Fault(context.Background(), ep.StateDir, "start-nm", "--node", fmt.Sprint(victim)) })
			return ep.NodeManagers[victim].Port()
		}},
		{"failover then restart-rm", func(t *testing.T, ctx context.Context, _ string) string {
			haFault(t, ctx, ep, "failed over from", "failover")
			haFault(t, ctx, ep, "restarted the ResourceManager", "restart-rm")
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			share := t.TempDir()
			appID, done := faultJob(t, ctx, ep, share)
			awaitRanksRunning(t, ctx, ep, appID)
			lost := tc.faults(t, ctx, appID)
			if lost != "" {
				// The lost node's ranks start again elsewhere before the job may end.
				require.Eventually(t, func() bool {
					for _, starts := range rankStarts(t, share) {
						if strings.HasPrefix(starts[len(starts)-1], lost+" ") {
							return false
						}
					}
					return true
				}, 3*time.Minute, 200*time.Millisecond, "every rank runs off the stopped node")
			}
			finishJob(t, ctx, share, done)
			for r, starts := range rankStarts(t, share) {
				want := 1
				if lost != "" && strings.HasPrefix(starts[0], lost+" ") {
					want = 2
				}
				assert.Len(t, starts, want, "rank %d: %v", r, starts)
			}
		})
	}
}

// TestHAFailoverIsAnElection: the ResourceManagers of the HA mini-YARN elect the active one
// through ZooKeeper, and failover is a lost ZooKeeper session, not a transition: before and after
// it, ZooKeeper itself (its dump of ephemeral znodes), the RMs' REST APIs and their own log agree
// that the standby's elector took the election lock when the active RM's session expired.
func TestHAFailoverIsAnElection(t *testing.T) {
	parallelOn(t, &haMiniYARN.guard)
	ep := haMiniYARN.endpoints(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NotEmpty(t, ep.ZooKeeper, "endpoints.json names the embedded ZooKeeper")
	require.NotEmpty(t, ep.HAElectionLock)
	ids := strings.Split(ep.HARMIDs, ",")
	require.Len(t, ep.RMWebAddresses, len(ids), "one web address per rm-id")

	// What a client of an HA cluster reads: the RMs, and that failover is automatic.
	yarnSite := readHadoopXML(t, filepath.Join(ep.HadoopConfDir, "yarn-site.xml"))
	assert.Equal(t, ep.HARMIDs, yarnSite["yarn.resourcemanager.ha.rm-ids"])
	assert.Equal(t, "true", yarnSite["yarn.resourcemanager.ha.automatic-failover.enabled"])
	assert.Equal(t, "true", yarnSite["yarn.resourcemanager.ha.automatic-failover.embedded"])
	assert.Equal(t, ep.ZooKeeper, yarnSite["hadoop.zk.address"])
	assertFixedPortsOutsideEphemeral(t, yarnSite, ids)

	// The RMs and ZooKeeper agree on who is active, and that is all they say.
	active := func() (idx int, session string) {
		t.Helper()
		idx = -1
		for i := range ids {
			info := rmHAInfo(t, ep, i)
			// The state of the RM's embedded elector's ZooKeeper connection, where an RM without
			// one says "Could not find leader elector. ...". Not always CONNECTED: an elector that
			// takes its new session's first event before it has stored the new client drops that
			// event as stale and goes on reporting TERMINATED while connected (Hadoop 3.5.0's
			// ActiveStandbyElector; seen here once in about ten starts).
			assert.Contains(t, []string{"CONNECTED", "DISCONNECTED", "TERMINATED"}, info.HAZooKeeperConnectionState, ids[i])
			assert.True(t, strings.HasSuffix(info.RMStateStoreName, ".ZKRMStateStore"), info.RMStateStoreName)
			switch info.HAState {
			case "ACTIVE":
				require.Equal(t, -1, idx, "one active RM")
				idx = i
			case "STANDBY":
			default:
				t.Fatalf("%s is %s", ids[i], info.HAState)
			}
		}
		require.NotEqual(t, -1, idx, "an active RM")
		session = zkEphemeralOwner(zkFourLetterWord(t, ctx, ep.ZooKeeper, "dump"), ep.HAElectionLock)
		require.NotEmpty(t, session, "ZooKeeper has an owner of %s", ep.HAElectionLock)
		return idx, session
	}
	from, before := active()

	// A standby whose fixed port another process took could never become active: the verb says
	// so and leaves the cluster as it was, rather than expiring the active RM's session.
	standby := ids[1-from]
	key := "yarn.resourcemanager.scheduler.address." + standby
	squatter, err := net.Listen("tcp", yarnSite[key])
	require.NoError(t, err, "listen on %s's %s", standby, yarnSite[key])
	msg, err := Fault(ctx, ep.StateDir, "failover")
	require.NoError(t, squatter.Close())
	require.Error(t, err, msg)
	_, port, _ := net.SplitHostPort(yarnSite[key])
	assert.Regexp(t, "standby "+standby+" could not become active: another process holds "+regexp.QuoteMeta(key)+`=[^,]+:`+port+`\b`, err.Error())
	if again, s := active(); again != from || s != before {
		t.Fatalf("the refused failover changed the active RM or its session: %s %s, was %s %s", ids[again], s, ids[from], before)
	}

	logStart := fileSize(t, ep.ClusterLog)

	msg, err = Fault(ctx, ep.StateDir, "failover")
	require.NoError(t, err, msg)
	t.Log(msg)
	m := regexp.MustCompile(`failed over from (\S+) to (\S+) by election: ZooKeeper expired \S+ session (0x[0-9a-f]+), ` +
		`\S+ \(session (0x[0-9a-f]+)\) took the lock (\S+) and was active after (\d+) ms`).FindStringSubmatch(msg)
	require.NotNil(t, m, msg)
	to, after := active()
	assert.Equal(t, ids[from], m[1], "the verb failed over from the RM that was active")
	assert.Equal(t, ids[to], m[2], "the verb's new active RM is the one that says ACTIVE")
	assert.NotEqual(t, from, to, "the other RM is active now")
	assert.Equal(t, before, m[3], "the expired session is the one ZooKeeper had owning the lock")
	assert.Equal(t, after, m[4], "the lock's new owner, as ZooKeeper says")
	assert.NotEqual(t, before, after)
	assert.Equal(t, ep.HAElectionLock, m[5])

	// An elector did it: the new active RM's wrote itself into the election's breadcrumb as the
	// latest active, as an elector does once it holds the lock. (The former active turns standby
	// when it learns that its session expired, or earlier when the new one fenced it out of the
	// state store; its log lines differ.)
	log := fileFrom(t, ep.ClusterLog, logStart)
	assert.Contains(t, log, "to indicate that the local node is the most recent active")
}

// rmHA is the HA part of a ResourceManager's /ws/v1/cluster/info.
type rmHA struct {
	HAState                    string `json:"haState"`
	HAZooKeeperConnectionState string `json:"haZooKeeperConnectionState"`
	RMStateStoreName           string `json:"rmStateStoreName"`
}

// rmHAInfo asks ResourceManager i itself (a standby answers /ws/v1/cluster/info too).
func rmHAInfo(t *testing.T, ep *Endpoints, i int) rmHA {
	t.Helper()
	var body struct {
		ClusterInfo *rmHA `json:"clusterInfo"`
	}
	u := strings.TrimRight(ep.RMWebAddresses[i], "/") + "/ws/v1/cluster/info?user.name=" + url.QueryEscape(ep.User)
	restGetJSON(t, u, &body)
	require.NotNil(t, body.ClusterInfo, u)
	return *body.ClusterInfo
}

// zkFourLetterWord sends one of ZooKeeper's four-letter words (srvr, dump, ...) and returns the
// answer, which the server ends by closing the connection.
func zkFourLetterWord(t *testing.T, ctx context.Context, addr, word string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	require.NoError(t, conn.SetDeadline(deadline))
	_, err = conn.Write([]byte(word))
	require.NoError(t, err)
	b, err := io.ReadAll(io.LimitReader(conn, 1<<20))
	require.NoError(t, err, "ZooKeeper's %s", word)
	return string(b)
}

// zkEphemeralOwner reads the session that owns the ephemeral znode path from ZooKeeper's dump
// ("Sessions with Ephemerals (N):", then each session, "0x...:", and its znodes, one a line);
// "" when no session owns it.
func zkEphemeralOwner(dump, path string) string {
	_, rest, ok := strings.Cut(dump, "Sessions with Ephemerals")
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "Connections dump:")
	session := ""
	for _, line := range strings.Split(rest, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "0x") && strings.HasSuffix(line, ":"):
			session = strings.TrimSuffix(line, ":")
		case line == path:
			return session
		}
	}
	return ""
}

// fileSize is the size of file now.
func fileSize(t *testing.T, file string) int64 {
	t.Helper()
	fi, err := os.Stat(file)
	require.NoError(t, err)
	return fi.Size()
}

// fileFrom reads file from offset on (at most 64 MiB).
func fileFrom(t *testing.T, file string, offset int64) string {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Seek(offset, io.SeekStart)
	require.NoError(t, err)
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	require.NoError(t, err)
	return string(b)
}

// haFault runs a fault verb on the HA cluster and checks that its report says want.
func haFault(t *testing.T, ctx context.Context, ep *Endpoints, want, verb string, args ...string) {
	t.Helper()
	msg, err := Fault(ctx, ep.StateDir, verb, args...)
	require.NoError(t, err)
	t.Log(msg)
	assert.Contains(t, msg, want)
}

// TestHAFlinkThroughFailover: Flink's own ApplicationMaster (the JobManager) with yarn-er as the
// discovery script through an RM failover on the HA mini-YARN: the job keeps its TaskManagers, a
// TaskManager killed after the failover is replaced by one whose GPUs no other TaskManager holds,
// and the job succeeds.
func TestHAFlinkThroughFailover(t *testing.T) {
	parallelOn(t, &haMiniYARN.guard)
	ep := haMiniYARN.endpoints(t)
	version := flinkVersions()[0]
	s := newFlinkSetup(t, ep, version, 8, nil)
	c, err := yarn.NewClient(yarn.Options{Addresses: ep.RMWebAddresses, User: ep.User})
	require.NoError(t, err)

	app := s.deploy(t, "flink-gpu-failover-"+version)
	t.Cleanup(func() {
		if a, err := c.App(context.Background(), app); err == nil && !a.State.Terminal() {
			_, _, _ = c.KillApplication(context.Background(), app)
		}
	})
	first := s.waitReports(t, c, app, "report-0-0.json", "report-1-0.json")
	r0, r1 := first["report-0-0.json"], first["report-1-0.json"]
	assertDisjoint(t, []tmReport{r0, r1})

	ctx, cancel := context.WithTimeout(context.Background(), flinkFinishBudget+flinkReportBudget)
	defer cancel()
	haFault(t, ctx, ep, "failed over from", "failover")
	require.True(t, alive(r0.PID) && alive(r1.PID), "the TaskManagers outlive the failover")

	// After the failover: kill one TaskManager; the JobManager, re-registered with the new active
	// RM, asks for a replacement, whose discovery must not hand out the survivor's GPUs.
	require.NoError(t, syscall.Kill(r0.PID, syscall.SIGKILL))
	_, live := s.awaitReplacement(t, ctx, c, app, r0, r1)
	assertDisjoint(t, live)

	require.NoError(t, os.WriteFile(s.release, nil, 0o644))
	a, err := c.WaitApp(ctx, app, time.Second, nil)
	require.NoError(t, err, "application %s did not end", app)
	assert.Equal(t, records.AppFinished, a.State, a.Diagnostics)
	assert.Equal(t, records.FinalSucceeded, a.FinalStatus, a.Diagnostics)
}

// TestStopAMNodeAdoptsTheRest: the NodeManager the ApplicationMaster runs on goes away. The AM
// dies with it; YARN starts attempt 2 on the other node (a lost node does not count against the
// attempts), which adopts the ranks still running there and starts again only those of the lost
// node. Counted by the ranks: the other node's ranks started once, the lost node's twice; the job
// SUCCEEDS.
func TestStopAMNodeAdoptsTheRest(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	share := t.TempDir()
	appID, done := faultJob(t, ctx, ep, share)
	awaitRanksRunning(t, ctx, ep, appID)
	status, ok := appStatus(t, ctx, ep, appID)
	require.True(t, ok)
	victim := -1
	for i, nm := range ep.NodeManagers {
		if strings.HasPrefix(status.Attempt.Node, nm.ID) {
			victim = i
		}
	}
	require.GreaterOrEqual(t, victim, 0, "the AM's node %q is one of the cluster's", status.Attempt.Node)
	port := ep.NodeManagers[victim].Port()
	msg, err := Fault(ctx, ep.StateDir, "stop-nm", "--node", fmt.Sprint(victim))
	require.NoError(t, err)
	t.Log(msg)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_, _ = Fault(context.Background(), ep.StateDir, "start-nm", "--node", fmt.Sprint(victim))
		}
	})

	// Attempt 2 registers on the other node and every rank runs off the stopped one.
	require.Eventually(t, func() bool {
		st, ok := appStatus(t, ctx, ep, appID)
		return ok && st.Attempt.ID != status.Attempt.ID && !strings.HasPrefix(st.Attempt.Node, ep.NodeManagers[victim].ID)
	}, 3*time.Minute, 500*time.Millisecond, "a second attempt on another node")
	require.Eventually(t, func() bool {
		for _, starts := range rankStarts(t, share) {
			if strings.HasPrefix(starts[len(starts)-1], port+" ") {
				return false
			}
		}
		return true
	}, 3*time.Minute, 200*time.Millisecond, "every rank runs off the stopped node")
	res := finishJob(t, ctx, share, done)
	moved := 0
	for r, starts := range rankStarts(t, share) {
		if strings.HasPrefix(starts[0], port+" ") {
			moved++
			assert.Len(t, starts, 2, "rank %d of the lost node started once more: %v", r, starts)
		} else {
			assert.Len(t, starts, 1, "rank %d of the other node was adopted, not restarted: %v", r, starts)
		}
	}
	assert.Positive(t, moved, "some rank ran on the AM's node")
	assert.Equal(t, "SUCCEEDED", res["finalStatus"], res["diagnostics"])

	msg, err = Fault(ctx, ep.StateDir, "start-nm", "--node", fmt.Sprint(victim))
	require.NoError(t, err)
	restarted = true
	t.Log(msg)
}

// assertFixedPortsOutsideEphemeral: the RMs' fixed ports (free while an RM stands by or restarts)
// lie outside the kernel's ephemeral range, so no bind(0) or outgoing connection elsewhere on the
// machine can take one meanwhile. A CI run once found another cluster's IPC server on a standby
// RM's scheduler port; that RM could then never become active again.
// ids are the rm-ids of an HA cluster; a single RM's keys have none ("").
func assertFixedPortsOutsideEphemeral(t *testing.T, yarnSite map[string]string, ids []string) {
	t.Helper()
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Logf("no ephemeral port range to compare with: %v", err)
		return
	}
	var lo, hi int
	_, err = fmt.Sscan(string(raw), &lo, &hi)
	require.NoError(t, err, "ip_local_port_range %q", raw)
	checked := 0
	for _, key := range []string{"yarn.resourcemanager.address", "yarn.resourcemanager.scheduler.address",
		"yarn.resourcemanager.resource-tracker.address", "yarn.resourcemanager.admin.address",
		"yarn.resourcemanager.webapp.address"} {
		for _, id := range ids {
			k := key
			if id != "" {
				k += "." + id
			}
			addr := yarnSite[k]
			if !assert.NotEmpty(t, addr, k) {
				continue
			}
			_, p, err := net.SplitHostPort(addr)
			require.NoError(t, err, addr)
			port, err := strconv.Atoi(p)
			require.NoError(t, err, addr)
			assert.False(t, port >= lo && port <= hi, "%s = %s is inside the ephemeral range %d-%d", k, addr, lo, hi)
			checked++
		}
	}
	assert.Positive(t, checked)
}

// assertPortHeld: a socket is bound to port on this host, as a bind without SO_REUSEADDR, the
// kind the kernel's own choice of a port (bind(0), an outgoing connection) respects, is refused.
func assertPortHeld(t *testing.T, port string) {
	t.Helper()
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	err = syscall.Bind(fd, &syscall.SockaddrInet4{Port: p, Addr: [4]byte{127, 0, 0, 1}})
	assert.ErrorIs(t, err, syscall.EADDRINUSE, "port %d of the stopped NodeManager is held", p)
}
