//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yarn-er/yarn-er/records"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/yarn"
)

// amJob is one application run by `yarn-er am` on the mini-YARN.
type amJob struct {
	AppID   string
	App     *yarn.App
	Staging string
	// Share is a directory every container can write (the programs report there).
	Share string
	// AMLog is the AM's stderr.
	AMLog string
	// MaxGPUsUsed is the largest sum of used yarn.io/gpu over /ws/v1/cluster/nodes seen while
	// the application ran.
	MaxGPUsUsed int64
	// SubmitToFinish is the wall time from submission to a terminal state.
	SubmitToFinish time.Duration
}

// runAMJob stages the built yarn-er and a job spec in a file: staging directory named after the
// application, submits `yarn-er am` over REST with both as file: local resources (as submit
// does with hdfs: ones), and waits for the application to end while watching the nodes' GPUs.
// The containers find their GPUs in their NodeManager's own fake GPU host (docker/README.md,
// "Fake GPU hosts"), with a coordination file of the test's own.
func runAMJob(t testing.TB, ep *Endpoints, mod func(*jobspec.Spec)) *amJob {
	t.Helper()
	return runAMJobWith(t, ep, amJobOptions{Mod: mod})
}

// amJobOptions vary runAMJob.
type amJobOptions struct {
	// Mod changes the spec.
	Mod func(*jobspec.Spec)
	// Raw, when not nil, is written as the spec file instead; the AM's stderr then goes to
	// <LOG_DIR>/stderr, whose tail YARN puts in the attempt's diagnostics.
	Raw []byte
	// KillAfterRanks kills the application through REST once that many ranks reported.
	KillAfterRanks int
	// Stage, when set, returns the staging directory URL for the application and the
	// binary's local file for the ranks (default: a local directory and a file: URL).
	Stage func(appID, bin string) (stagingURL string, binary jobspec.LocalFile)
}

func runAMJobWith(t testing.TB, ep *Endpoints, o amJobOptions) *amJob {
	t.Helper()
	mod, raw := o.Mod, o.Raw
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := yarnErBinary(t)
	yc := yarnClient(t, ep)
	na, err := yc.NewApplication(ctx)
	require.NoError(t, err)

	share := t.TempDir()
	staging := filepath.Join(t.TempDir(), ".yarn-er", na.ID)
	require.NoError(t, os.MkdirAll(staging, 0o700))
	stagedBin := filepath.Join(staging, jobspec.BinaryName)
	copyFile(t, bin, stagedBin, 0o755)
	binFI, err := os.Stat(stagedBin)
	require.NoError(t, err)

	spec := &jobspec.Spec{
		Version: jobspec.Version, Name: t.Name(), User: ep.User,
		SchedulerAddresses: []string{ep.RMSchedulerAddress},
		Containers:         8,
		Priority:           1,
		Resource: []jobspec.Quantity{
			{Name: records.MemoryMB, Value: 64, Units: "Mi"},
			{Name: records.VCores, Value: 1},
			{Name: "yarn.io/gpu", Value: 1},
		},
		Devices: &jobspec.Devices{Kind: "gpu", Amount: 1},
		// The NodeManager's fake GPU host, a coordination file of this test's (shareEnv).
		Env: map[string]string{"SHARE": share, "YARN_ER_COORDINATION_FILE": filepath.Join(share, "gpus")},
		Binary: jobspec.LocalFile{Name: jobspec.BinaryName, URL: "file://" + stagedBin, Size: binFI.Size(),
			MtimeMillis: binFI.ModTime().UnixMilli(), Type: records.LocalFile},
		StagingDir: "file://" + staging,
	}
	if o.Stage != nil {
		spec.StagingDir, spec.Binary = o.Stage(na.ID, stagedBin)
	}
	mod(spec)
	b, err := spec.Marshal()
	require.NoError(t, err)
	if raw != nil {
		b = raw
	}
	specPath := filepath.Join(staging, jobspec.FileName)
	require.NoError(t, os.WriteFile(specPath, b, 0o600))

	job := &amJob{AppID: na.ID, Staging: staging, Share: share, AMLog: filepath.Join(share, "am.stderr")}
	amStderr := job.AMLog
	if raw != nil {
		amStderr = "<LOG_DIR>/stderr"
	}
	killed := false
	job.MaxGPUsUsed, job.SubmitToFinish = runApp(t, ctx, yc, yarn.ApplicationSubmissionContext{
		ApplicationID:   na.ID,
		ApplicationName: "yarn-er am " + t.Name(),
		ApplicationType: "yarn-er",
		MaxAppAttempts:  1,
		Resource:        records.NewResources(64, 1),
		AMContainerSpec: yarn.ContainerLaunchContext{
			LocalResources: map[string]records.LocalResource{
				jobspec.BinaryName: localFileResource(t, stagedBin),
				jobspec.FileName:   localFileResource(t, specPath),
			},
			Commands: []string{"./yarn-er am 1><LOG_DIR>/stdout 2>" + amStderr},
		},
	}, []string{job.AMLog}, func(app *yarn.App) {
		job.App = app
		if o.KillAfterRanks > 0 && !killed && !app.State.Terminal() {
			if runs, _ := filepath.Glob(filepath.Join(share, "rank-*.runs")); len(runs) >= o.KillAfterRanks {
				_, _, err := yc.KillApplication(ctx, na.ID)
				require.NoError(t, err)
				killed = true
			}
		}
	})
	return job
}

func copyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// amLogValue returns the value of key on the first AM log line containing msg ("" when absent).
func amLogValue(t testing.TB, path, msg, key string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, msg) {
			continue
		}
		for _, field := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(field, key+"="); ok {
				return v
			}
		}
	}
	return ""
}

// rankReport is what each container's program wrote.
type rankReport struct {
	Rank    int
	Cuda    string
	Devices []string
	Runs    int
}

// rankReports reads share/rank-<r>.{json,cuda,runs}.
func rankReports(t testing.TB, share string) map[int]rankReport {
	t.Helper()
	out := map[int]rankReport{}
	runs, err := filepath.Glob(filepath.Join(share, "rank-*.runs"))
	require.NoError(t, err)
	for _, p := range runs {
		r, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "rank-"), ".runs"))
		require.NoError(t, err, p)
		rep := rankReport{Rank: r}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rep.Runs = strings.Count(string(b), "\n")
		if b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d.cuda", r))); err == nil {
			rep.Cuda = strings.TrimSpace(string(b))
		}
		if b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d.json", r))); err == nil {
			var info struct {
				Devices []struct {
					ID string `json:"id"`
				} `json:"devices"`
			}
			require.NoError(t, json.Unmarshal(b, &info), "rank %d info file: %s", r, b)
			for _, d := range info.Devices {
				rep.Devices = append(rep.Devices, d.ID)
			}
		}
		out[r] = rep
	}
	return out
}

// reportCommand is each rank's program: it records its rank, world size, devices (the info file
// `yarn-er exec` wrote and CUDA_VISIBLE_DEVICES), then runs tail (a shell snippet). The quotes
// and $ pass through the NodeManager's launch script unchanged.
func reportCommand(tail string) []string {
	return []string{"/bin/sh", "-c", `r="$YARN_ER_RANK"; echo "$YARN_ER_WORLD_SIZE $YARN_ER_CONTAINER_ID" >> "$SHARE/rank-$r.runs"; ` +
		`cp yarn-er-devices.json "$SHARE/rank-$r.json"; echo "$CUDA_VISIBLE_DEVICES" > "$SHARE/rank-$r.cuda"; ` + tail}
}

// TestAMEightGPUContainers: `yarn-er am` runs 8 ranks × 1 yarn.io/gpu on the two 4-GPU
// NodeManagers; every rank sees exactly one device of its node's fake host, all distinct, the RM
// shows 8 GPUs in use while they run, the application SUCCEEDS and its staging directory is gone.
func TestAMEightGPUContainers(t *testing.T) {
	ep := cluster(t)
	// Each rank holds its GPU until all 8 reported theirs (the NodeManagers may start their
	// containers seconds apart on a loaded machine), so the devices are held at the same time.
	barrier := `i=0; while [ "$(ls "$SHARE" | grep -c 'json$')" -lt 8 ] && [ $i -lt 900 ]; do sleep 0.2; i=$((i+1)); done; sleep 1`
	job := runAMJob(t, ep, func(s *jobspec.Spec) { s.Command = reportCommand(barrier) })
	require.Equal(t, records.AppFinished, job.App.State)
	require.Equal(t, records.FinalSucceeded, job.App.FinalStatus, "diagnostics: %s", job.App.Diagnostics)
	assert.Contains(t, job.App.Diagnostics, "all 8 rank(s) exited 0")

	reps := rankReports(t, job.Share)
	require.Len(t, reps, 8)
	seen := map[string]int{}
	for r := range 8 {
		rep, ok := reps[r]
		require.True(t, ok, "rank %d reported", r)
		assert.Equal(t, 1, rep.Runs, "rank %d ran once", r)
		require.Len(t, rep.Devices, 1, "rank %d sees exactly one device", r)
		assert.Equal(t, rep.Devices[0], rep.Cuda, "rank %d: CUDA_VISIBLE_DEVICES is its device", r)
		seen[rep.Devices[0]]++
	}
	assert.Len(t, seen, 8, "8 distinct devices: %v", seen)
	assert.Equal(t, int64(8), job.MaxGPUsUsed, "used yarn.io/gpu over /ws/v1/cluster/nodes")
	assert.NoDirExists(t, job.Staging, "the AM removed the staging directory")
	logAMFigures(t, job)
}

// TestAMRankFailsAfterRestarts: rank 2 always exits 7; with one restart it runs twice, then the
// application FAILS with a diagnostic naming rank 2, its container, node and exit status.
func TestAMRankFailsAfterRestarts(t *testing.T) {
	ep := cluster(t)
	job := runAMJob(t, ep, func(s *jobspec.Spec) {
		s.Containers = 4
		s.Restarts = 1
		// Rank 2 fails only once the other ranks run (each writes rank-<r>.runs first), so that
		// every rank has started when the application fails: NodeManagers that start containers
		// quickly (Hadoop 3.2-3.4) would otherwise see it fail before rank 3 got a container.
		s.Command = reportCommand(`if [ "$r" = 2 ]; then for i in $(seq 600); do [ -e "$SHARE/rank-0.runs" ] && [ -e "$SHARE/rank-1.runs" ] && [ -e "$SHARE/rank-3.runs" ] && break; sleep 0.1; done; echo "rank 2 gives up" >&2; exit 7; fi; sleep 60; touch "$SHARE/rank-$r.done"`)
	})
	require.Equal(t, records.AppFinished, job.App.State)
	require.Equal(t, records.FinalFailed, job.App.FinalStatus, "diagnostics: %s", job.App.Diagnostics)
	diag := job.App.Diagnostics
	assert.Contains(t, diag, "rank 2 failed 2 time(s) (restarts allowed: 1)")
	assert.Contains(t, diag, "exit status 7")
	assert.Contains(t, diag, "rank 2 gives up", "the tail of the program's stderr")
	assert.Regexp(t, `in container container_\S+_0\d+ on node \S+:\d+`, diag)

	reps := rankReports(t, job.Share)
	require.Contains(t, reps, 2)
	assert.Equal(t, 2, reps[2].Runs, "rank 2 ran, was restarted once, then no more")
	runs, err := os.ReadFile(filepath.Join(job.Share, "rank-2.runs"))
	require.NoError(t, err)
	lines := strings.Fields(string(runs))
	require.Len(t, lines, 4)
	assert.NotEqual(t, lines[1], lines[3], "the restart ran in a fresh container")
	assert.Contains(t, diag, lines[3], "the diagnostic names the last container")
	for _, r := range []int{0, 1, 3} {
		assert.Equal(t, 1, reps[r].Runs, "rank %d", r)
		assert.NoFileExists(t, filepath.Join(job.Share, fmt.Sprintf("rank-%d.done", r)), "rank %d was stopped, not waited for", r)
	}
	assert.NoDirExists(t, job.Staging)
}

// TestAMNineContainersOnEightGPUs: the ninth rank waits for a GPU and runs once one is free; all
// succeed and no more than 8 GPUs are ever in use.
func TestAMNineContainersOnEightGPUs(t *testing.T) {
	ep := cluster(t)
	job := runAMJob(t, ep, func(s *jobspec.Spec) {
		s.Containers = 9
		s.Command = reportCommand("sleep 2")
	})
	require.Equal(t, records.FinalSucceeded, job.App.FinalStatus, "diagnostics: %s", job.App.Diagnostics)
	reps := rankReports(t, job.Share)
	require.Len(t, reps, 9)
	var ranks []int
	for r, rep := range reps {
		ranks = append(ranks, r)
		assert.Len(t, rep.Devices, 1, "rank %d", r)
		assert.Equal(t, "9", strings.Fields(mustRead(t, filepath.Join(job.Share, fmt.Sprintf("rank-%d.runs", r))))[0], "world size")
	}
	slices.Sort(ranks)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, ranks)
	assert.LessOrEqual(t, job.MaxGPUsUsed, int64(8))
	assert.NoDirExists(t, job.Staging)
	logAMFigures(t, job)
}

// waitAMDone waits for the AM's last log line: the RM reports the application finished once the
// AM unregistered, a moment before the AM logs its figures and exits.
func waitAMDone(t testing.TB, job *amJob) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for amLogValue(t, job.AMLog, "yarn-er am: done", "status") == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the AM of %s did not log its end in %s", job.AppID, job.AMLog)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logAMFigures logs what the AM measured (from its log).
func logAMFigures(t testing.TB, job *amJob) {
	t.Helper()
	waitAMDone(t, job)
	done := func(key string) string { return amLogValue(t, job.AMLog, "yarn-er am: done", key) }
	t.Logf("AM: registered after %s, all allocated after %s, heartbeats %s, peak RSS %s KiB (at exit: anon %s KiB, file %s KiB); submit to finish %s",
		amLogValue(t, job.AMLog, "am: registered", "after"), amLogValue(t, job.AMLog, "every rank has a container", "after"),
		done("heartbeats"), done("peakRSSKiB"), done("rssAnonKiB"), done("rssFileKiB"), job.SubmitToFinish)
}

func mustRead(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestAMCorruptSpec: a spec the AM cannot read fails the attempt at once; YARN shows the AM's
// message (the tail of its stderr) in the application's diagnostics.
func TestAMCorruptSpec(t *testing.T) {
	ep := cluster(t)
	job := runAMJobWith(t, ep, amJobOptions{Mod: func(s *jobspec.Spec) { s.Command = []string{"true"} }, Raw: []byte(`{"version":1,"containers":`)})
	assert.Equal(t, records.AppFailed, job.App.State)
	assert.Equal(t, records.FinalFailed, job.App.FinalStatus)
	assert.Contains(t, job.App.Diagnostics, "yarn-er-job.json: job spec: not JSON")
	assert.Contains(t, job.App.Diagnostics, "exitCode: 3")
	t.Logf("diagnostics: %s", job.App.Diagnostics)
}

// TestAMWrongSchedulerAddress: a job spec whose scheduler address is the ResourceManager's
// client port (a slip between yarn.resourcemanager.address and .scheduler.address): that service
// takes the AMRMToken for a client's delegation token and refuses it at SASL, and the AM fails at
// once, naming the address and the fix. (A server of another protocol on the address answers
// RpcNoSuchProtocolException, with a fix of its own: internal/ipc's TestWrongProtocolSaysWhichAddress.)
func TestAMWrongSchedulerAddress(t *testing.T) {
	ep := cluster(t)
	job := runAMJobWith(t, ep, amJobOptions{Mod: func(s *jobspec.Spec) {
		s.SchedulerAddresses = []string{ep.RMAddress}
		s.Command = []string{"true"}
	}})
	assert.Equal(t, records.AppFailed, job.App.State)
	log, err := os.ReadFile(job.AMLog)
	require.NoError(t, err)
	assert.Contains(t, string(log), "InvalidToken")
	assert.Contains(t, string(log), "fix: "+ep.RMAddress+" took the AMRMToken for a client's delegation token")
	assert.Contains(t, string(log), "yarn.resourcemanager.scheduler.address")
	t.Logf("the AM's log:\n%s", log)
}

// TestAMKilled: killing the application through REST while its ranks run ends it KILLED; the AM,
// stopped by SIGTERM, cannot unregister but removes the staging directory, and the ranks'
// containers are gone.
func TestAMKilled(t *testing.T) {
	ep := cluster(t)
	job := runAMJobWith(t, ep, amJobOptions{
		Mod: func(s *jobspec.Spec) {
			s.Containers = 2
			s.Command = reportCommand(`sleep 60; touch "$SHARE/rank-$r.done"`)
		},
		KillAfterRanks: 2,
	})
	assert.Equal(t, records.AppKilled, job.App.State)
	assert.Equal(t, records.FinalKilled, job.App.FinalStatus)
	assert.Eventually(t, func() bool {
		_, err := os.Stat(job.Staging)
		return os.IsNotExist(err)
	}, 30*time.Second, 100*time.Millisecond, "the AM removed the staging directory on SIGTERM")
	assert.Eventually(t, func() bool { return amLogValue(t, job.AMLog, "staging directory removed", "dir") != "" },
		30*time.Second, 100*time.Millisecond, "the AM logged the removal")
	yc := yarnClient(t, ep)
	require.Eventually(t, func() bool {
		nodes, err := yc.Nodes(context.Background(), yarn.NodesQuery{})
		if err != nil {
			return false
		}
		var used int64
		for _, n := range nodes {
			used += n.Used.Value("yarn.io/gpu")
		}
		return used == 0
	}, time.Minute, 200*time.Millisecond, "every container of the application is gone")
	for r := range 2 {
		assert.NoFileExists(t, filepath.Join(job.Share, fmt.Sprintf("rank-%d.done", r)))
	}
}

// TestAMRemovesHDFSStaging: with the staging directory on the mini-YARN's HDFS (and the ranks'
// yarn-er localized from it, with the size and mtime HDFS reports), the AM removes the
// directory through the NameNode named in its URL once the application SUCCEEDED.
func TestAMRemovesHDFSStaging(t *testing.T) {
	ep := cluster(t)
	hc := hdfsClient(t, ep)
	var dir string
	job := runAMJobWith(t, ep, amJobOptions{
		Mod: func(s *jobspec.Spec) {
			s.Containers = 2
			s.Command = reportCommand("true")
		},
		Stage: func(appID, bin string) (string, jobspec.LocalFile) {
			dir = "/user/" + ep.User + "/.yarn-er/" + appID
			data, err := os.ReadFile(bin)
			require.NoError(t, err)
			fi := hdfsPut(t, hc, dir+"/"+jobspec.BinaryName, data)
			hdfsPut(t, hc, dir+"/leftover", []byte("x"))
			return ep.HDFSURI + dir, jobspec.LocalFile{Name: jobspec.BinaryName, URL: ep.HDFSURI + dir + "/" + jobspec.BinaryName,
				Size: fi.Size(), MtimeMillis: fi.ModTime().UnixMilli(), Type: records.LocalFile}
		},
	})
	require.Equal(t, records.FinalSucceeded, job.App.FinalStatus, "diagnostics: %s", job.App.Diagnostics)
	assert.Len(t, rankReports(t, job.Share), 2, "both ranks ran the yarn-er localized from HDFS")
	_, err := hc.Stat(dir)
	assert.True(t, os.IsNotExist(err), "staging %s on HDFS is gone: %v", dir, err)
}

// BenchmarkAMJob measures `yarn-er am` on the mini-YARN: N ranks of 64 MiB, 1 vcore and 1
// yarn.io/gpu, each running `true` under `yarn-er exec`, from submission (the spec and binary
// already staged on a local file system) to FINISHED; inside the AM, the time from its start to
// registration and to every rank having a container, and its peak RSS. One iteration per case:
// bench/am-job.sh.
func BenchmarkAMJob(b *testing.B) {
	ep := cluster(b)
	for _, n := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("containers=%d/gpu=1", n), func(b *testing.B) {
			sums := map[string]float64{}
			for i := 0; i < b.N; i++ {
				job := runAMJob(b, ep, func(s *jobspec.Spec) {
					s.Containers = n
					s.Command = []string{"true"}
				})
				if job.App.FinalStatus != records.FinalSucceeded {
					b.Fatalf("%s: %s/%s: %s", job.AppID, job.App.State, job.App.FinalStatus, job.App.Diagnostics)
				}
				waitAMDone(b, job)
				ms := func(msg, key string) float64 {
					d, err := time.ParseDuration(amLogValue(b, job.AMLog, msg, key))
					if err != nil {
						b.Fatalf("AM log %s: no %s= on %q: %v", job.AMLog, key, msg, err)
					}
					return float64(d.Microseconds()) / 1000
				}
				rss, _ := strconv.ParseFloat(amLogValue(b, job.AMLog, "yarn-er am: done", "peakRSSKiB"), 64)
				sums["ms-registered"] += ms("am: registered", "after")
				sums["ms-allocated"] += ms("every rank has a container", "after")
				sums["am-maxrss-KiB"] += rss
				sums["s-submit-to-finish"] += job.SubmitToFinish.Seconds()
			}
			for k, v := range sums {
				b.ReportMetric(v/float64(b.N), k)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
