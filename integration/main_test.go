//go:build integration

package integration

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Environment variables that name an already running mini-YARN (started with
// `docker/mini-yarn start`); TestMain then uses it and leaves it running.
const (
	envState              = "YARN_ER_MINIYARN_STATE"
	envMisconfiguredState = "YARN_ER_MINIYARN_MISCONFIGURED_STATE"
)

// envActive bounds how many parallel tests work at once (parallelOn); default defaultActive.
const (
	envActive     = "YARN_ER_IT_ACTIVE"
	defaultActive = 2
)

// Start-up and shutdown budgets; generous for a loaded 2-core machine (a cluster is ready in
// about 20 s on an idle one). The script has its own start timeout (MINI_YARN_START_TIMEOUT,
// 300 s) and also builds the harness on first use.
const (
	startBudget = 10 * time.Minute
	stopBudget  = 2 * time.Minute
)

var (
	// tmpRoot holds the state dirs of the clusters this run starts.
	tmpRoot string

	mainCluster *MiniYARN

	misconfiguredMiniYARN = &lazyCluster{what: "misconfigured", env: envMisconfiguredState,
		conf: "conf-misconfigured", state: "mini-yarn-misconfigured"}

	// mainGuard is the main cluster's guard (parallelOn).
	mainGuard = &clusterGuard{}

	// activeSlots holds a token per parallel test at work (parallelOn): at most $YARN_ER_IT_ACTIVE.
	activeSlots chan struct{}
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) (code int) {
	ctx := context.Background()
	// The parallel tests (parallelOn) wait for their cluster's guard and a slot of activeSlots,
	// which bound them; go test's own -parallel (GOMAXPROCS by default) would also count the
	// waiting ones, so it is raised unless given.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "64")
	}
	active := defaultActive
	if v := os.Getenv(envActive); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "integration: %s=%q: want a number of tests, 1 or more\n", envActive, v)
			return 2
		}
		active = n
	}
	activeSlots = make(chan struct{}, active)
	root, err := RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	tmpRoot, err = os.MkdirTemp("", "yarn-er-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer func() {
		// Every cluster still running stops at once (a stop takes 10-25 s, mostly waiting), and
		// the ones tests stopped in the background are waited for.
		for _, c := range append(secureRunClusters(), shortTokenMiniYARN.cluster, labelledMiniYARN.cluster, misconfiguredMiniYARN.cluster, hdfsHAMiniYARN.cluster, recoveringMiniYARN.cluster, profilesMiniYARN.cluster, haMiniYARN.cluster, gpuPluginMiniYARN.cluster, isolatingMiniYARN.cluster, migMiniYARN.cluster, mainCluster) {
			stopInBackground(c)
		}
		if err := waitForStops(); err != nil {
			fmt.Fprintln(os.Stderr, "integration:", err)
			code = 1
		}
		if code == 0 {
			_ = os.RemoveAll(tmpRoot)
		} else {
			fmt.Fprintf(os.Stderr, "integration: cluster state and logs kept in %s\n", tmpRoot)
		}
	}()

	mainCluster, err = useOrStart(ctx, os.Getenv(envState),
		filepath.Join(root, "docker", "conf"), filepath.Join(tmpRoot, "mini-yarn"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: no mini-YARN:", err)
		return 1
	}
	// make matrix runs this suite once per Hadoop line: a reused cluster of another line would
	// test the wrong one.
	if want := os.Getenv("MINI_YARN_HADOOP_VERSION"); want != "" && mainCluster.Endpoints.HadoopVersion != want {
		fmt.Fprintf(os.Stderr, "integration: MINI_YARN_HADOOP_VERSION is %s but the mini-YARN at %s runs Hadoop %s\n",
			want, mainCluster.StateDir, mainCluster.Endpoints.HadoopVersion)
		return 1
	}
	fmt.Fprintf(os.Stderr, "integration: Hadoop %s\n", mainCluster.Endpoints.HadoopVersion)
	return m.Run()
}

// Clusters being stopped in the background, and what their stops returned.
var (
	stops    sync.WaitGroup
	stopMu   sync.Mutex
	stopErrs []error
)

// stopInBackground stops c (nil or reused: nothing) without waiting: the next test goes on while
// the cluster winds down; TestMain waits for every stop (waitForStops).
func stopInBackground(c *MiniYARN) {
	if c == nil {
		return
	}
	stops.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopBudget)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			stopMu.Lock()
			stopErrs = append(stopErrs, err)
			stopMu.Unlock()
		}
	})
}

// waitForStops waits for the background stops and returns their errors.
func waitForStops() error {
	stops.Wait()
	stopMu.Lock()
	defer stopMu.Unlock()
	return errors.Join(stopErrs...)
}

// useOrStart reuses the cluster of stateDir if it runs, or starts one from confDir in fresh.
func useOrStart(ctx context.Context, stateDir, confDir, fresh string, flags ...string) (*MiniYARN, error) {
	if stateDir != "" {
		c, err := Reuse(ctx, stateDir)
		if err == nil {
			fmt.Fprintf(os.Stderr, "integration: using the running mini-YARN at %s (%s)\n",
				stateDir, c.Endpoints.RMWebAddress)
			return c, nil
		}
		fmt.Fprintf(os.Stderr, "integration: %v; starting one\n", err)
	}
	startCtx, cancel := context.WithTimeout(ctx, startBudget)
	defer cancel()
	fmt.Fprintf(os.Stderr, "integration: starting a mini-YARN from %s in %s\n", confDir, fresh)
	return Start(startCtx, confDir, fresh, os.Stderr, flags...)
}

// cluster returns the endpoints of the run's mini-YARN, made from docker/conf: 2 RUNNING
// NodeManagers with 16384 MB, 40 vcores, 4 yarn.io/gpu and 2 yarn.io/fpga each,
// CapacityScheduler with DominantResourceCalculator, HDFS, REST submission with ?user.name=.
func cluster(t testing.TB) *Endpoints {
	t.Helper()
	if mainCluster == nil || mainCluster.Endpoints == nil {
		t.Fatal("no mini-YARN: TestMain did not start one")
	}
	return mainCluster.Endpoints
}

// misconfiguredCluster returns the endpoints of a second mini-YARN, made from
// docker/conf-misconfigured: DefaultResourceCalculator and no extended resource type
// (neither yarn.io/gpu nor yarn.io/fpga; Hadoop 3.3+ refuses the default calculator with
// any). It is started on first use, once per run (or taken from
// $YARN_ER_MINIYARN_MISCONFIGURED_STATE), and stopped at the end of the run.
func misconfiguredCluster(t testing.TB) *Endpoints {
	t.Helper()
	return misconfiguredMiniYARN.endpoints(t)
}

// clusterGuard serialises the parallel tests of one cluster (parallelOn): they share its
// capacity, and some of them fault it.
type clusterGuard struct{ mu sync.Mutex }

// parallelOn makes t a parallel test of the cluster that g guards. It runs once the sequential
// tests are done (go test's rule for parallel tests), beside the parallel tests of the other
// clusters but after those of its own, and it holds one of the run's $YARN_ER_IT_ACTIVE slots
// (default 2) while it works, so that a 2-core machine runs two at a time. A cluster's first
// parallel test starts it, in its slot.
//
// The tests made parallel are the long ones of the clusters with few tests (Flink's jobs, the
// fault matrices, doctor): the suite's time is then about the sequential tests plus the longest of
// these, not their sum (docs/benchmarks.md, "The whole CI run").
func parallelOn(t *testing.T, g *clusterGuard) {
	t.Helper()
	holdParallel(t, g, true)
}

// parallelWaitingOn is parallelOn for a test that mostly waits (a job that runs out several token
// lifetimes): it takes no slot, so that the others work meanwhile.
func parallelWaitingOn(t *testing.T, g *clusterGuard) {
	t.Helper()
	holdParallel(t, g, false)
}

func holdParallel(t *testing.T, g *clusterGuard, slot bool) {
	t.Helper()
	t.Parallel()
	t0 := time.Now()
	g.mu.Lock()
	t.Cleanup(g.mu.Unlock)
	if slot {
		activeSlots <- struct{}{}
		t.Cleanup(func() { <-activeSlots })
	}
	if w := time.Since(t0); w > time.Second {
		t.Logf("waited %s for its cluster and a slot", w.Round(time.Second))
	}
}

// lazyCluster is a mini-YARN made from docker/<conf>, started in <tmpRoot>/<state> on first use,
// once per run (or taken from the state dir that $<env> names), and stopped by TestMain.
type lazyCluster struct {
	what, env, conf, state string
	// flags are docker/mini-yarn start's own (e.g. "--recovery").
	flags []string
	// guard serialises the cluster's parallel tests (parallelOn).
	guard clusterGuard

	once    sync.Once
	cluster *MiniYARN
	err     error
}

// endpoints starts the cluster on first use and returns its endpoints; the test fails when it
// cannot start.
func (l *lazyCluster) endpoints(t testing.TB) *Endpoints {
	t.Helper()
	l.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			l.err = err
			return
		}
		l.cluster, l.err = useOrStart(context.Background(), os.Getenv(l.env),
			filepath.Join(root, "docker", l.conf), filepath.Join(tmpRoot, l.state), l.flags...)
	})
	if l.err != nil {
		t.Fatalf("no %s mini-YARN: %v", l.what, l.err)
	}
	return l.cluster.Endpoints
}
