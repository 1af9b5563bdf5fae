// Command testam is the ApplicationMaster of yarn-er's integration tests and benchmark: a small Go
// AM built on package amrm. It registers with the ResourceManager, asks for containers (with
// yarn.io/gpu when told), starts a command in each through the NodeManager protocol, waits for
// them to complete, unregisters, and writes what happened to a JSON file for the test to check.
//
// Settings come from the environment the submitting test sets:
//
//	YARNER_TESTAM_SCHEDULER   yarn.resourcemanager.scheduler.address (host:port, comma-separated for HA)
//	YARNER_TESTAM_RESULT      path of the JSON result file
//	YARNER_TESTAM_LOG         path of the AM's debug log (optional)
//	YARNER_TESTAM_MODE        "containers" (default) or "unknown-resource"
//	YARNER_TESTAM_CONTAINERS  number of containers (default 4)
//	YARNER_TESTAM_GPUS        yarn.io/gpu per container (default 1; 0 for none)
//	YARNER_TESTAM_MEMORY_MB   memory per container (default 128)
//	YARNER_TESTAM_COMMAND     shell command each container runs (default "sleep 4")
//	YARNER_TESTAM_HEARTBEAT_MS heartbeat interval (default 1000)
//	YARNER_TESTAM_PROBES      "1": also record the RM's answers to wire-level mistakes (probes.go)
//
// HADOOP_TOKEN_FILE_LOCATION (set by the NodeManager) holds the AMRMToken.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/integration/testam/result"
	"github.com/yarn-er/yarn-er/records"
)

func main() {
	start := time.Now()
	res := &result.Result{TimingsMs: map[string]int64{}, Probes: map[string]result.Remote{}}
	path := os.Getenv("YARNER_TESTAM_RESULT")
	write := func() {
		res.MaxRSSKB = maxRSS()
		b, _ := json.MarshalIndent(res, "", "  ")
		if path != "" {
			_ = os.WriteFile(path+".tmp", b, 0o644)
			_ = os.Rename(path+".tmp", path)
		}
	}
	logger := slog.New(slog.DiscardHandler)
	if lp := os.Getenv("YARNER_TESTAM_LOG"); lp != "" {
		if f, err := os.Create(lp); err == nil {
			defer f.Close()
			logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	logger.Debug("testam: started", "pid", os.Getpid())
	err := run(context.Background(), start, res, logger, write)
	if err != nil {
		res.Error = err.Error()
		logger.Error("testam failed", "err", err)
	}
	res.Done = true
	write()
	if err != nil {
		os.Exit(1)
	}
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return v
	}
	return def
}

func since(start time.Time) int64 { return time.Since(start).Milliseconds() }

func run(ctx context.Context, start time.Time, res *result.Result, logger *slog.Logger, write func()) error {
	res.ContainerID = os.Getenv("CONTAINER_ID")
	creds, err := records.CredentialsFromEnv()
	if err != nil {
		return err
	}
	res.TokenFileFormat = creds.Format.String()
	for _, t := range creds.Tokens {
		res.TokenKinds = append(res.TokenKinds, t.Kind)
	}
	if _, tok, ok := creds.TokenByKind(records.KindAMRMToken); ok {
		if att, err := amrm.AMRMAttempt(tok); err == nil {
			res.Attempt = att.String()
		}
	}
	sched := os.Getenv("YARNER_TESTAM_SCHEDULER")
	if sched == "" {
		return errors.New("YARNER_TESTAM_SCHEDULER is not set")
	}
	rm, err := amrm.New(amrm.Config{
		SchedulerAddrs: strings.Split(sched, ","),
		Credentials:    creds,
		Heartbeat:      time.Duration(envInt("YARNER_TESTAM_HEARTBEAT_MS", 1000)) * time.Millisecond,
		Logger:         logger,
	})
	if err != nil {
		return err
	}
	defer rm.Close()
	host, _ := os.Hostname()
	reg, err := rm.Register(ctx, amrm.RegisterRequest{Host: host, RPCPort: -1})
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	res.TimingsMs["registered"] = since(start)
	res.Queue = reg.Queue
	res.MaxCapability = flatten(reg.MaximumCapability)
	for _, t := range reg.ResourceTypes {
		res.ResourceTypes = append(res.ResourceTypes, t.Name)
	}

	// Probe: a second registration is refused by the RM; record the exception as it arrives.
	if _, err := rm.Register(ctx, amrm.RegisterRequest{Host: host, RPCPort: -1}); err != nil {
		res.Probes["registerTwice"] = remote(err, amrm.ErrInvalidRequest)
	}

	if os.Getenv("YARNER_TESTAM_PROBES") == "1" {
		_, tok, _ := creds.TokenByKind(records.KindAMRMToken)
		probeIPC(ctx, strings.Split(sched, ","), tok, res)
		probeResync(ctx, strings.Split(sched, ","), tok, rm, res)
	}

	status, diag := records.FinalSucceeded, "testam: done"
	switch mode := env("YARNER_TESTAM_MODE", "containers"); mode {
	case "unknown-resource":
		err := rm.Ask(1, records.NewResources(128, 1, records.Resource{Name: "yarn.io/nonexistent", Value: 1}), 1)
		res.AllocatesBeforeError = rm.Stats().Allocates
		if err == nil {
			return errors.New("asking for yarn.io/nonexistent was accepted")
		}
		res.UnknownResourceError = err.Error()
		res.UnknownIsSentinel = errors.Is(err, amrm.ErrUnknownResource)
		// Like a real AM: give up, telling the RM why.
		status, diag = records.FinalFailed, err.Error()
	case "containers":
		if err := runContainers(ctx, start, rm, res, logger, write); err != nil {
			status, diag = records.FinalFailed, err.Error()
			res.Error = err.Error()
		}
	default:
		return fmt.Errorf("unknown YARNER_TESTAM_MODE %q", mode)
	}
	write()
	uctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rm.Unregister(uctx, status, diag, ""); err != nil {
		return fmt.Errorf("unregister: %w", err)
	}
	res.Unregistered = true
	res.TimingsMs["unregistered"] = since(start)
	return nil
}

func runContainers(ctx context.Context, start time.Time, rm *amrm.Client, res *result.Result, logger *slog.Logger, write func()) error {
	n := envInt("YARNER_TESTAM_CONTAINERS", 4)
	gpus := int64(envInt("YARNER_TESTAM_GPUS", 1))
	capability := records.NewResources(int64(envInt("YARNER_TESTAM_MEMORY_MB", 128)), 1)
	if gpus > 0 {
		capability.Set(records.GPU, records.Quantity{Value: gpus})
	}
	if err := rm.Ask(1, capability, n); err != nil {
		return fmt.Errorf("ask: %w", err)
	}
	res.Asked = n
	nm, err := amrm.NewNMClient(amrm.NMConfig{Tokens: rm, Logger: logger})
	if err != nil {
		return err
	}
	defer nm.Close()
	command := env("YARNER_TESTAM_COMMAND", "sleep 4")
	lc := amrm.NewLaunchContext("/bin/sh", "-c", shellQuote(command), "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr").
		WithEnv("YARNER_WORKER", "1").
		WithCredentials(rm.Credentials()) // the AMRMToken is filtered out by amrm

	var mu sync.Mutex
	var launchErr error
	var wg sync.WaitGroup
	completed := map[records.ContainerID]bool{}
	var allocatedIDs []records.ContainerID // of res.Allocated, in order
	statusDone := false
	runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	err = rm.Run(runCtx, func(a *amrm.Allocation) (bool, error) {
		res.Heartbeats++
		for _, r := range a.Released {
			res.Released = append(res.Released, r.Container.ID.String()+": "+r.Reason)
		}
		for _, c := range a.Allocated {
			res.Allocated = append(res.Allocated, result.ContainerInfo{ID: c.ID.String(), Node: c.Node, Priority: c.Priority, Resource: flatten(c.Resource)})
			allocatedIDs = append(allocatedIDs, c.ID)
			wg.Add(1)
			go func(c amrm.Container) {
				defer wg.Done()
				err := nm.StartContainer(runCtx, c, lc)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					launchErr = errors.Join(launchErr, err)
					return
				}
				res.Launched = append(res.Launched, c.ID.String())
				if len(res.Launched) == n {
					res.TimingsMs["allLaunched"] = since(start)
				}
			}(c)
		}
		if n > 1 && len(res.Allocated) >= n-1 && res.TimingsMs["allButOneAllocated"] == 0 {
			res.TimingsMs["allButOneAllocated"] = since(start)
		}
		if len(res.Allocated) == n && res.TimingsMs["allAllocated"] == 0 {
			res.TimingsMs["allAllocated"] = since(start)
		}
		for _, s := range a.Completed {
			res.Completed = append(res.Completed, result.Completed{ID: s.ID.String(), State: string(s.State), ExitStatus: s.ExitStatus, Diagnostics: s.Diagnostics})
			completed[s.ID] = true
		}
		mu.Lock()
		lerr := launchErr
		launched := len(res.Launched)
		var first result.ContainerInfo
		var firstID records.ContainerID
		if len(res.Allocated) > 0 {
			first, firstID = res.Allocated[0], allocatedIDs[0]
		}
		mu.Unlock()
		if lerr != nil {
			return true, lerr
		}
		// Once, ask a NodeManager for a running container's status (getContainerStatuses).
		if !statusDone && launched > 0 && !completed[firstID] {
			statusDone = true
			st, err := nm.ContainerStatus(runCtx, first.Node, firstID)
			res.Statuses = map[string]string{}
			if err != nil {
				res.Statuses[first.ID] = "error: " + err.Error()
			} else {
				res.Statuses[first.ID] = string(st.State)
			}
		}
		if len(completed) >= n {
			res.TimingsMs["allCompleted"] = since(start)
			return true, nil
		}
		if launched == n {
			write() // progress for a watching test
		}
		rm.SetProgress(float32(len(completed)) / float32(n))
		return false, nil
	})
	wg.Wait()
	res.NMTokens = countNMTokens(rm, res.Allocated)
	if err != nil {
		return err
	}
	return launchErr
}

func countNMTokens(rm *amrm.Client, cs []result.ContainerInfo) int {
	nodes := map[string]bool{}
	for _, c := range cs {
		if _, ok := rm.NMToken(c.Node); ok {
			nodes[c.Node] = true
		}
	}
	return len(nodes)
}

func flatten(r records.Resources) map[string]int64 {
	m := map[string]int64{}
	for _, e := range r.All() {
		m[e.Name] = e.Value
	}
	return m
}

func remote(err error, sentinel error) result.Remote {
	out := result.Remote{Error: err.Error(), IsSent: errors.Is(err, sentinel)}
	var re *records.RemoteError
	if errors.As(err, &re) {
		out.Class, out.Message = re.Class, re.Message
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// maxRSS returns the peak resident set size (VmHWM) in KiB, 0 when unknown.
func maxRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				return v
			}
		}
	}
	return 0
}
