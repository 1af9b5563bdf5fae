// Package am is yarn-er's ApplicationMaster: it runs the job a jobspec.Spec describes on YARN.
// It registers with the ResourceManager's scheduler (amrm), asks for the spec's N containers at
// one priority with the spec's resource vector (extended resources included; amrm releases and
// asks again for any allocation that lacks them), starts each rank through the NodeManager
// protocol with the yarn-er binary and the user's files localized and the program wrapped in
// `yarn-er exec`, restarts a failed rank in a fresh container up to spec.Restarts times, and
// unregisters SUCCEEDED when every rank exited 0 or FAILED naming the rank that used up its
// restarts. The staging directory is removed when the application ends unless spec.KeepStaging.
//
// Run reads nothing global: the identity, credentials, logger, clock and heartbeats come in
// Options (FromEnv builds the identity and credentials from an AM container's environment). The
// package never imports the REST client (yarn/): the spec is its only input.
package am

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/internal/defaults"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// Defaults of Options.
const (
	DefaultHeartbeat      = 100 * time.Millisecond
	DefaultIdleHeartbeat  = time.Second
	DefaultRetryTimeout   = 2 * time.Minute
	DefaultStopTimeout    = 30 * time.Second
	DefaultCleanupTimeout = 5 * time.Second
)

// Options configure Run.
type Options struct {
	// Identity is the AM's application, attempt and container (see FromEnv). AppID is required.
	Identity Identity
	// Credentials hold the AMRMToken (see FromEnv). Other tokens (HDFS delegation tokens) are
	// passed on to the containers; the AMRMToken never is.
	Credentials *records.Credentials
	// Logger receives progress (default discards). Tokens are never logged.
	Logger *slog.Logger
	// Heartbeat is the allocate interval while container asks are outstanding or containers are
	// being started (default spec.HeartbeatMillis, else DefaultHeartbeat).
	Heartbeat time.Duration
	// IdleHeartbeat is the longest interval, reached while every rank has its container and
	// nothing changes (default DefaultIdleHeartbeat): after a heartbeat that brought an
	// allocation or a completion, or a container start, the interval starts again at Heartbeat
	// and doubles with every uneventful heartbeat up to IdleHeartbeat.
	IdleHeartbeat time.Duration
	// RetryTimeout is how long heartbeats are retried through connection failures (an RM restart
	// or failover) before the attempt fails (default DefaultRetryTimeout).
	RetryTimeout time.Duration
	// StopTimeout bounds stopping the remaining containers and unregistering (default DefaultStopTimeout).
	StopTimeout time.Duration
	// CleanupTimeout bounds the staging removal after ctx ended (default DefaultCleanupTimeout).
	CleanupTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// TrackingURL is registered with the ResourceManager and reported at the end ("" for none).
	TrackingURL string
	// Staging removes the staging directory (nil: OpenStaging(spec.StagingDir, AppID, spec.User, Credentials)).
	Staging Staging
	// Tokens refreshes the application's HDFS delegation tokens when the spec asks for it
	// (spec.Tokens; tokens.go). Required then.
	Tokens TokenRefresher

	// traceInterval, when set (tests), sees every heartbeat interval chosen.
	traceInterval func(d time.Duration, busy, changed bool)
}

// Rank is one rank's state at the end of Run.
type Rank struct {
	// Role is the rank's role (jobspec.DefaultRole in a job without roles); Rank is within it.
	Role string
	Rank int
	// Launches is how many containers the rank was started in.
	Launches int
	// Container and Node are the rank's last container.
	Container records.ContainerID
	Node      string
	// ExitStatus and Diagnostics are the last container's (-1000 when it never completed).
	ExitStatus  int32
	Diagnostics string
	// Succeeded: the last container exited 0.
	Succeeded bool
}

// Result is what happened.
type Result struct {
	// Status is the final status the AM unregistered with (StatusUndefined when it did not
	// unregister: killed, or the attempt failed).
	Status records.FinalStatus
	// Diagnostics are the diagnostics sent with the final status.
	Diagnostics string
	Ranks       []Rank
	// Restarts is the number of rank restarts.
	Restarts int
	// Adopted is the number of ranks this attempt took over running from a previous attempt
	// (ranks.go); AdoptedDone the ranks that had exited 0 before.
	Adopted, AdoptedDone int
	// Released are the containers given back (surplus, or lacking an asked resource).
	Released int
	// PlacementFallbacks counts the roles that fell back from placement by constraints (the
	// ResourceManager refused or rejected their SchedulingRequests; placement.fallback am or relax).
	PlacementFallbacks int
	// PlacementPauses counts the pauses of the asks of roles with racks whose containers kept
	// landing against their placement (placement.go).
	PlacementPauses int
	// Heartbeats is the number of allocate calls.
	Heartbeats int
	// Registered and AllAllocated are the times from Run's start to registration and to the
	// first moment every rank had a container (zero when that never happened).
	Registered, AllAllocated time.Duration
	// StagingRemoved reports the staging directory removed; StagingError says why not.
	StagingRemoved bool
	StagingError   string
}

// ErrApplicationFailed is matched by a *RankError.
var ErrApplicationFailed = errors.New("am: application failed")

// RankError is a rank that failed more often than the spec allows; the application unregistered
// FAILED with its message as diagnostics.
type RankError struct {
	// Role is the rank's role ("" in a job without roles).
	Role       string
	Rank       int
	Failures   int
	Restarts   int
	Container  records.ContainerID
	Node       string
	ExitStatus int32
	// Diagnostics are the NodeManager's (trimmed).
	Diagnostics string
}

func (e *RankError) Error() string {
	who := fmt.Sprintf("rank %d", e.Rank)
	if e.Role != "" {
		who = fmt.Sprintf("role %s rank %d", e.Role, e.Rank)
	}
	msg := fmt.Sprintf("yarn-er: %s failed %d time(s) (restarts allowed: %d); last in container %s on node %s with exit status %d",
		who, e.Failures, e.Restarts, e.Container, e.Node, e.ExitStatus)
	if e.Diagnostics != "" {
		msg += ": " + e.Diagnostics
	}
	return msg
}

// Is makes errors.Is(err, ErrApplicationFailed) true.
func (e *RankError) Is(target error) bool { return target == ErrApplicationFailed }

// ErrKilled is returned when ctx ended before the application did (SIGTERM from the NodeManager
// when the application is killed): the AM cannot unregister; on the last attempt it removed the
// staging directory.
var ErrKilled = errors.New("am: stopped before the application ended")

type slotState int

const (
	waiting slotState = iota
	// held: allocated for a rank of a gang that has not started yet.
	held
	starting
	running
	succeeded
	// exhausted: the rank failed with no restarts left; it is never started again.
	exhausted
)

type slot struct {
	// rank is the rank within its role; global its index in the job (the ranks record's).
	rank      int
	global    int
	role      *roleState
	state     slotState
	launches  int
	failures  int
	container amrm.Container
	exit      int32
	diag      string
	// lingering: a previous attempt's container of this rank that YARN did not hand over; the
	// first heartbeat may still report its end (planAdoption).
	lingering bool
}

type opened struct {
	st  Staging
	err error
}

// launchQueue is how many container starts' outcomes wait for the run loop at most; a start
// beyond it waits in its goroutine (the AM's memory does not grow with the spec's count).
const launchQueue = 64

type launchResult struct {
	s   *slot
	id  records.ContainerID
	err error
}

// runner is one Run.
type runner struct {
	spec   *jobspec.Spec
	opts   Options
	log    *slog.Logger
	start  time.Time
	rm     *amrm.Client
	nm     *amrm.NMClient
	roles  []*roleState
	byPrio map[int32]*roleState
	gangs  []*gangState
	slots  []*slot
	byID   map[records.ContainerID]*slot
	res    *Result
	launch chan launchResult
	wg     sync.WaitGroup
	// fail is the application's failure (*RankError, *GangError) once it is decided.
	fail error

	stagingCh chan opened
	// stagingFed says stagingCh gets the staging connection; stagingConn takes it from there
	// into staging and stagingErr (stagingGot), under stagingMu.
	stagingFed bool
	stagingMu  sync.Mutex
	stagingGot bool
	staging    Staging
	stagingErr error
	cleaned    bool
	// record says the ranks record is kept (ranks.go): another attempt may follow.
	record bool
	// lingerChecked says the lingering ranks were dealt with after the first heartbeat.
	lingerChecked bool
	// freeRestarts counts restarts after the cluster took a container away.
	freeRestarts int
	// backoff is the last heartbeat interval; started is set when a container start succeeded
	// since the last heartbeat.
	backoff time.Duration
	started bool
	// lctx is the context container starts run under (the run's, cancelled when it ends).
	lctx context.Context
	// clusterNodes is the number of NodeManagers the last heartbeat reported (0: unknown).
	clusterNodes int
	// nodeRacks are the racks of the NodeManagers the ResourceManager reported (updated nodes:
	// those whose state changed), by NodeId; an allocated container carries no rack.
	nodeRacks map[string]string
	// peersWarned says the job's peers were too many for the peers file, logged once.
	peersWarned bool
	// credsNow are the credentials containers get now (the HDFS tokens refreshed: tokens.go).
	credsNow atomic.Pointer[records.Credentials]
	// fellBack are the roles that fell back from placement by constraints ("worker (spread: node,
	// placed by the ApplicationMaster)").
	fellBack []string
}

// removeStaging removes the staging directory once (unless the spec keeps it).
func (r *runner) removeStaging(ctx context.Context) {
	if r.cleaned || r.spec.KeepStaging {
		return
	}
	r.cleaned = true
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.CleanupTimeout)
	defer cancel()
	st, err := r.stagingConn(cctx)
	if err != nil {
		r.res.StagingError = err.Error()
	}
	if st == nil {
		return
	}
	defer st.Close()
	if err := st.Remove(cctx); err != nil {
		r.log.Warn("am: staging directory not removed", "dir", r.spec.StagingDir, "err", err)
		r.res.StagingError = err.Error()
		return
	}
	r.res.StagingRemoved = true
	r.log.Info("am: staging directory removed", "dir", r.spec.StagingDir)
}

// closeStaging closes the staging connection once it is open, without waiting for it.
func (r *runner) closeStaging() {
	if !r.stagingFed {
		return
	}
	go func() {
		if st, _ := r.stagingConn(context.Background()); st != nil {
			_ = st.Close()
		}
	}()
}

// stagingConn returns the staging connection opened while the AM registered, waiting for it
// until ctx ends (the opening itself gives up after stagingConnectTimeout).
func (r *runner) stagingConn(ctx context.Context) (Staging, error) {
	if !r.stagingFed {
		return nil, errors.New("am: no staging connection")
	}
	r.stagingMu.Lock()
	defer r.stagingMu.Unlock()
	if !r.stagingGot {
		select {
		case o := <-r.stagingCh:
			r.staging, r.stagingErr, r.stagingGot = o.st, o.err, true
		case <-ctx.Done():
			return nil, fmt.Errorf("staging connection not ready: %w", ctx.Err())
		}
	}
	return r.staging, r.stagingErr
}

// Run runs the spec's application as its ApplicationMaster until it ends or ctx ends. It returns
// the result and nil when every rank exited 0 (unregistered SUCCEEDED), a *RankError when a rank
// used up its restarts (unregistered FAILED), ErrKilled (wrapped) when ctx ended first, and other
// errors when the attempt could not run (bad options, registration refused, ResourceManager
// lost); then the AM did not unregister and YARN may start another attempt.
func Run(ctx context.Context, spec *jobspec.Spec, opts Options) (*Result, error) {
	if spec == nil {
		return nil, errors.New("am: no job spec")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if opts.Identity.AppID == "" {
		return nil, errors.New("am: Options.Identity.AppID is empty")
	}
	if opts.Credentials == nil {
		return nil, fmt.Errorf("am: no credentials: %w", amrm.ErrNoToken)
	}
	if spec.Tokens != nil && opts.Tokens == nil {
		return nil, ErrNoTokenRefresher
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
		if spec.HeartbeatMillis > 0 {
			opts.Heartbeat = time.Duration(spec.HeartbeatMillis) * time.Millisecond
		}
	}
	if opts.IdleHeartbeat <= 0 {
		opts.IdleHeartbeat = max(DefaultIdleHeartbeat, opts.Heartbeat)
	}
	opts.RetryTimeout = defaults.Positive(opts.RetryTimeout, DefaultRetryTimeout)
	opts.StopTimeout = defaults.Positive(opts.StopTimeout, DefaultStopTimeout)
	opts.CleanupTimeout = defaults.Positive(opts.CleanupTimeout, DefaultCleanupTimeout)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Identity.MaxAttempts == 0 {
		opts.Identity.MaxAttempts = spec.MaxAttempts // the RM does not set MAX_APP_ATTEMPTS (3.5)
	}
	r := &runner{spec: spec, opts: opts, log: opts.Logger, start: opts.Now(), byPrio: map[int32]*roleState{},
		byID: map[records.ContainerID]*slot{}, res: &Result{}, launch: make(chan launchResult, launchQueue)}
	r.setupRoles()
	r.credsNow.Store(opts.Credentials)

	// The staging connection opens while the AM registers, so that removal later is one call.
	// It also carries the ranks record (ranks.go): written while another attempt may follow,
	// read by an attempt after the first.
	last := lastAttempt(opts.Identity, spec)
	r.record = !last
	adopting := opts.Identity.Attempt > 1
	r.stagingCh = make(chan opened, 1)
	if !spec.KeepStaging || r.record || adopting {
		r.stagingFed = true
		go func() {
			if opts.Staging != nil {
				r.stagingCh <- opened{st: opts.Staging}
				return
			}
			st, err := openStaging(spec.StagingDir, spec.StagingNameNodes, opts.Identity.AppID, spec.User, r.credsNow.Load)
			if err != nil {
				r.log.Warn("am: the staging directory will not be removed, nor the ranks recorded for another attempt", "err", err)
			}
			r.stagingCh <- opened{st: st, err: err}
		}()
	}

	err := r.run(ctx)
	r.collect()
	switch {
	case r.cleaned:
	case spec.KeepStaging:
		r.log.Info("am: keeping the staging directory", "dir", spec.StagingDir)
		r.closeStaging()
	case last:
		// No attempt follows: this attempt's end (killed, or failed) is the application's.
		// With attempts left, a SIGTERM may as well be a lost AM node: the next attempt needs
		// the staging directory.
		r.removeStaging(ctx)
	default:
		r.log.Info("am: keeping the staging directory for the next attempt", "attempt", opts.Identity.Attempt, "maxAttempts", opts.Identity.MaxAttempts)
		r.closeStaging()
	}
	return r.res, err
}

// lastAttempt reports whether no attempt follows this one if it fails: its number reaches the
// maximum (unknown counts as last), and no attempt-failures-validity-interval lets older failures
// stop counting (with one, the ResourceManager alone knows).
func lastAttempt(id Identity, spec *jobspec.Spec) bool {
	return id.LastAttempt() && spec.AttemptFailuresValidityMillis <= 0
}

func (r *runner) since() time.Duration { return r.opts.Now().Sub(r.start) }

func (r *runner) run(ctx context.Context) error {
	spec := r.spec
	rm, err := amrm.New(amrm.Config{
		SchedulerAddrs: spec.SchedulerAddresses,
		Credentials:    r.opts.Credentials,
		Heartbeat:      r.opts.Heartbeat,
		RetryTimeout:   r.opts.RetryTimeout,
		Logger:         r.log,
	})
	if err != nil {
		return err
	}
	defer rm.Close()
	r.rm = rm
	reg, err := r.register(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrKilled, ctx.Err())
		}
		return fmt.Errorf("am: register with the ResourceManager at %s: %w", strings.Join(spec.SchedulerAddresses, ","), err)
	}
	r.res.Registered = r.since()
	if r.spec.Tokens != nil {
		tctx, stop := context.WithCancel(ctx)
		defer stop()
		go r.refreshTokens(tctx)
	}
	r.log.Info("am: registered", "app", r.opts.Identity.AppID, "attempt", r.opts.Identity.Attempt, "queue", reg.Queue,
		"maxCapability", reg.MaximumCapability.String(), "after", r.res.Registered)

	if r.opts.Identity.Attempt > 1 || len(reg.ContainersFromPreviousAttempts) > 0 {
		r.adopt(ctx, reg)
	}
	for _, role := range r.roles {
		if role.capab, err = RoleCapability(role.spec, reg); err != nil {
			break
		}
		if role.spec.Profile != "" {
			if role.capab, err = ProfileCapability(role.spec.Profile, reg); err != nil {
				err = fmt.Errorf("role %s: %w", role.spec.Name, err)
				break
			}
			r.log.Info("am: asking by resource profile", "role", role.spec.Name, "profile", role.spec.Profile, "resource", role.capab.String())
		}
	}
	if err == nil {
		err = r.askRoles()
	}
	if err != nil {
		// The job cannot run on this cluster: say why, as the application's final status.
		diag := "yarn-er: " + err.Error()
		if len(r.spec.Roles) == 0 {
			diag = fmt.Sprintf("yarn-er: cannot ask for %d container(s) of %s: %v", spec.Containers, r.roles[0].capab.String(), errors.Unwrap(err))
		}
		r.log.Error("am: ask refused", "err", err)
		return r.finish(ctx, records.FinalFailed, diag, err)
	}

	nm, err := amrm.NewNMClient(amrm.NMConfig{Tokens: rm, Logger: r.log})
	if err != nil {
		return err
	}
	defer nm.Close()
	r.nm = nm

	lctx, lcancel := context.WithCancel(ctx)
	defer func() { lcancel(); r.waitLaunches(lctx) }()

	lastOK := r.opts.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrKilled, ctx.Err())
		case lr := <-r.launch:
			r.launched(lctx, lr)
			continue
		case <-timer.C:
		}
		alloc, err := rm.Allocate(ctx)
		if err != nil && errors.Is(err, amrm.ErrPlacementRefused) {
			// Nothing of that heartbeat was taken: each placed role falls back (or fails the
			// application) and the next heartbeat asks again.
			r.placementRefused(err.Error())
			alloc, err = &amrm.Allocation{}, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w: %w", ErrKilled, ctx.Err())
			}
			if errors.Is(err, amrm.ErrConnection) && r.opts.Now().Sub(lastOK) < r.opts.RetryTimeout {
				r.log.Warn("am: heartbeat failed; retrying", "err", err)
				timer.Reset(r.opts.IdleHeartbeat)
				continue
			}
			return fmt.Errorf("am: heartbeat to the ResourceManager: %w", err)
		}
		lastOK = r.opts.Now()
		r.res.Heartbeats++
		changed := len(alloc.Allocated) > 0 || len(alloc.Completed) > 0
		if alloc.NumClusterNodes > 0 {
			r.clusterNodes = alloc.NumClusterNodes
		}
		r.handle(lctx, alloc)
		r.resumeAsks()
		r.spreadAsks()
		r.packAsks()
		if !r.lingerChecked {
			r.lingerChecked = true
			r.restartLingering()
		}
		r.lctx = lctx
		r.startGangs()
		if r.fail == nil {
			if err := r.askRoles(); err != nil && r.fail == nil {
				r.fail = fmt.Errorf("yarn-er: %w", err)
			}
		}
		for drained := false; !drained; {
			select {
			case lr := <-r.launch:
				r.launched(lctx, lr)
			default:
				drained = true
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrKilled, ctx.Err())
		}
		if r.fail != nil {
			r.waitLaunches(lctx) // then every started container is known, and stopped
			r.stopAll(ctx)
			if _, gang := r.fail.(*GangError); gang {
				// The held containers go back to the scheduler now, with the asks withdrawn,
				// not only when the application ends.
				if _, err := rm.Allocate(ctx); err != nil {
					r.log.Warn("am: giving back the gang's containers", "err", err)
				}
			}
			return r.finish(ctx, records.FinalFailed, r.fail.Error(), r.fail)
		}
		done := r.succeeded()
		rm.SetProgress(float32(done) / float32(spec.Containers))
		if done == spec.Containers {
			diag := fmt.Sprintf("yarn-er: all %d rank(s) exited 0 (%d restart(s))", spec.Containers, r.res.Restarts)
			if len(r.fellBack) > 0 {
				diag += "; placed without placement constraints (the ResourceManager could not place them): " + strings.Join(r.fellBack, ", ")
			}
			if r.res.Adopted > 0 || r.res.AdoptedDone > 0 {
				diag += fmt.Sprintf("; attempt %d took over %d running rank(s) and %d finished one(s)",
					r.opts.Identity.Attempt, r.res.Adopted, r.res.AdoptedDone)
			}
			return r.finish(ctx, records.FinalSucceeded, diag, nil)
		}
		if r.res.AllAllocated == 0 && r.allHaveContainers() {
			r.res.AllAllocated = r.since()
			r.log.Info("am: every rank has a container", "containers", spec.Containers, "after", r.res.AllAllocated)
		}
		changed = changed || r.started
		r.started = false
		timer.Reset(r.interval(changed))
	}
}

// register registers, retrying while no ResourceManager is reachable (one restarting or failing
// over) for up to RetryTimeout.
func (r *runner) register(ctx context.Context) (*amrm.Registration, error) {
	for {
		reg, err := r.rm.Register(ctx, amrm.RegisterRequest{Host: r.opts.Identity.Host, RPCPort: -1, TrackingURL: r.opts.TrackingURL})
		if err == nil || !errors.Is(err, amrm.ErrConnection) || r.since()+r.opts.IdleHeartbeat > r.opts.RetryTimeout {
			return reg, err
		}
		r.log.Warn("am: no ResourceManager reachable; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(r.opts.IdleHeartbeat):
		}
	}
}

// interval is the next heartbeat's delay (see nextInterval); changed says the last heartbeat
// brought an allocation or a completion, or a container started since the one before.
func (r *runner) interval(changed bool) time.Duration {
	busy := false
	for _, role := range r.roles {
		busy = busy || r.rm.Outstanding(role.prio) > 0
	}
	for _, s := range r.slots {
		if busy {
			break
		}
		busy = s.state == waiting || s.state == starting || s.state == held
	}
	r.backoff = nextInterval(r.backoff, r.opts.Heartbeat, r.opts.IdleHeartbeat, busy, changed)
	if r.opts.traceInterval != nil {
		r.opts.traceInterval(r.backoff, busy, changed)
	}
	return r.backoff
}

// nextInterval is the heartbeat policy. While containers are asked for or being started (busy)
// the AM heartbeats every fast interval: allocations come back on the next heartbeat after the
// scheduler placed them. Otherwise the interval starts again at fast after anything changed
// (an allocation, a completion, a container started: the containers that just started are the
// ones most likely to end soon, short programs in seconds) and doubles with every uneventful
// heartbeat up to idle, so that an AM whose ranks run for hours costs the ResourceManager one
// heartbeat per idle interval. prev is the interval before (0: none yet).
func nextInterval(prev, fast, idle time.Duration, busy, changed bool) time.Duration {
	idle = max(idle, fast)
	if busy || changed || prev <= 0 {
		return fast
	}
	return min(max(2*prev, fast), idle)
}

func (r *runner) succeeded() int {
	n := 0
	for _, s := range r.slots {
		if s.state == succeeded {
			n++
		}
	}
	return n
}

func (r *runner) allHaveContainers() bool {
	for _, s := range r.slots {
		if s.state == waiting || s.state == held {
			return false
		}
	}
	return true
}

// handle applies one heartbeat's allocation.
func (r *runner) handle(ctx context.Context, a *amrm.Allocation) {
	for _, n := range a.UpdatedNodes {
		if n.Rack != "" {
			if r.nodeRacks == nil {
				r.nodeRacks = map[string]string{}
			}
			r.nodeRacks[n.Node] = n.Rack
		}
	}
	for _, rj := range a.Rejected {
		r.placementRejected(rj)
	}
	for _, rel := range a.Released {
		r.res.Released++
		r.log.Warn("am: container given back", "container", rel.Container.ID.String(), "node", rel.Container.Node, "reason", rel.Reason)
	}
	for _, st := range a.Completed {
		s := r.byID[st.ID]
		if s == nil {
			continue // a container released before it was used
		}
		delete(r.byID, st.ID)
		r.completed(s, st.ExitStatus, st.Diagnostics, false)
	}
	r.lctx = ctx
	// Every container of the heartbeat is assigned first, then the ranks start: each sees the
	// others of its batch as peers.
	var batch []*slot
	defer func() {
		for _, s := range batch {
			r.launch1(s)
		}
	}()
	for _, c := range a.Allocated {
		var s *slot
		if role := r.byPrio[c.Priority]; role != nil && r.fail == nil { // a failing application starts nothing more
			s = role.nextWaiting()
		}
		if s == nil {
			r.log.Info("am: releasing a surplus container", "container", c.ID.String(), "node", c.Node)
			_ = r.rm.Release(c.ID)
			r.res.Released++
			continue
		}
		if r.misplaced(s.role, c) {
			continue
		}
		if g := s.role.gang; g != nil && !g.started {
			r.hold(s, c)
			continue
		}
		s.container, s.state = c, starting
		batch = append(batch, s)
	}
}

// launch1 starts rank s in its container (s.container), under the run's launch context.
func (r *runner) launch1(s *slot) {
	ctx, c := r.lctx, s.container
	s.state, s.exit, s.diag = starting, -1000, ""
	s.launches++
	r.byID[c.ID] = s
	attrs := []any{"rank", s.rank, "container", c.ID.String(), "node", c.Node, "resource", c.Resource.String(), "launch", s.launches}
	if role := r.roleOfLog(s); role != "" {
		attrs = append([]any{"role", role}, attrs...)
	}
	r.log.Info(jobspec.RankStartMessage, attrs...)
	lc := r.rankLaunch(s)
	rec := launchRecord(s.global, s.launches, s.failures, c.ID)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		// Recorded before it starts: every running rank is in the record.
		r.writeRecord(ctx, rec)
		err := r.nm.StartContainer(ctx, c, lc)
		r.launch <- launchResult{s: s, id: c.ID, err: err}
	}()
}

// waitLaunches waits for the container starts in flight (run under ctx), applying their outcomes.
func (r *runner) waitLaunches(ctx context.Context) {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	for {
		select {
		case lr := <-r.launch:
			r.launched(ctx, lr)
		case <-done:
			for {
				select {
				case lr := <-r.launch:
					r.launched(ctx, lr)
				default:
					return
				}
			}
		}
	}
}

// launched applies a container start's outcome. ctx is the context the starts ran under: a start
// that failed after it ended failed because the AM is stopping (SIGTERM, or the application
// ending), which is no failure of the rank's.
func (r *runner) launched(ctx context.Context, lr launchResult) {
	s := lr.s
	if s.state != starting || s.container.ID != lr.id {
		return // completed (or replaced) meanwhile
	}
	if lr.err != nil && ctx.Err() != nil {
		r.log.Debug("am: container start abandoned while stopping", "rank", s.rank, "container", lr.id.String(), "err", lr.err)
		return
	}
	if lr.err == nil {
		s.state = running
		r.started = true
		r.log.Debug("am: rank started", "rank", s.rank, "container", lr.id.String())
		return
	}
	r.log.Warn("am: container start failed", "rank", s.rank, "container", lr.id.String(), "node", s.container.Node, "err", lr.err)
	delete(r.byID, lr.id)
	_ = r.rm.Release(lr.id)
	// A container on a node the ResourceManager sent no NMToken for cannot be started by any
	// program: the cluster's doing, as a container it took away.
	r.completed(s, -1000, "start failed: "+lr.err.Error(), errors.Is(lr.err, amrm.ErrNoToken))
}

// completed applies a rank's container exit: done, restarted, or the application's failure.
// taken says the cluster ended the container whatever its exit status (see notTheProgram).
func (r *runner) completed(s *slot, exit int32, diag string, taken bool) {
	s.exit, s.diag = exit, trimDiagFor(exit, diag)
	if s.state == held {
		// A held container of a gang not started yet ended (its node lost, preempted): the
		// rank waits for another, which is no restart.
		r.log.Warn("am: a container held for the gang ended before the gang started; asking for another", "role", s.role.spec.Name, "rank", s.rank,
			"container", s.container.ID.String(), "exitStatus", exit)
		s.toWaiting()
		r.askOneMore(s, exit)
		return
	}
	if exit == 0 {
		s.state = succeeded
		r.log.Info("am: rank exited 0", "role", s.role.spec.Name, "rank", s.rank, "container", s.container.ID.String())
		r.writeRecord(context.Background(), doneRecord(s.global))
		return
	}
	if (taken || notTheProgram(exit)) && r.freeRestarts < r.maxFreeRestarts() {
		// Preempted, lost with its node or disks, or killed by the ResourceManager or the
		// NodeManager's scheduler: not
		// the program's failure, so it does not use up the rank's restarts.
		r.freeRestarts++
		r.log.Warn("am: rank's container was taken away; restarting it without counting", "role", s.role.spec.Name, "rank", s.rank, "container", s.container.ID.String(),
			"node", s.container.Node, "exitStatus", exit, "diagnostics", s.diag)
		s.toWaiting()
		r.res.Restarts++
		r.askOneMore(s, exit)
		return
	}
	s.failures++
	restarts := s.role.spec.Restarts
	if s.failures > restarts {
		r.log.Error("am: rank failed; no restarts left", "role", s.role.spec.Name, "rank", s.rank, "container", s.container.ID.String(), "node", s.container.Node, "exitStatus", exit, "failures", s.failures)
		s.state = exhausted
		if r.fail == nil {
			r.fail = &RankError{Role: r.roleOfLog(s), Rank: s.rank, Failures: s.failures, Restarts: restarts, Container: s.container.ID,
				Node: s.container.Node, ExitStatus: exit, Diagnostics: s.diag}
		}
		return
	}
	r.log.Warn("am: rank failed; restarting it in a new container", "role", s.role.spec.Name, "rank", s.rank, "container", s.container.ID.String(), "node", s.container.Node,
		"exitStatus", exit, "restart", s.failures, "of", restarts, "diagnostics", s.diag)
	s.toWaiting()
	r.res.Restarts++
	r.askOneMore(s, exit)
}

// askOneMore asks for one more container for a rank to restart in.
func (r *runner) askOneMore(s *slot, exit int32) {
	if r.fail != nil {
		return
	}
	role := s.role
	if err := r.ask(role, r.rm.Outstanding(role.prio)+1); err != nil {
		r.fail = &RankError{Role: r.roleOfLog(s), Rank: s.rank, Failures: s.failures, Restarts: role.spec.Restarts, Container: s.container.ID,
			Node: s.container.Node, ExitStatus: exit, Diagnostics: "cannot ask for a new container: " + err.Error()}
	}
}

// YARN's exit statuses (ContainerExitStatus) for containers ended by the cluster, not by the
// program: ABORTED (node lost, container expired), DISKS_FAILED, PREEMPTED,
// KILLED_BY_RESOURCEMANAGER and KILLED_BY_CONTAINER_SCHEDULER. The memory kills (-103, -104) and
// KILLED_FOR_EXCESS_LOGS (-109) are the program's.
const (
	exitAborted          = -100
	exitDisksFailed      = -101
	exitPreempted        = -102
	exitKilledByRM       = -106
	exitKilledBySchedule = -108
)

func notTheProgram(exit int32) bool {
	switch exit {
	case exitAborted, exitDisksFailed, exitPreempted, exitKilledByRM, exitKilledBySchedule:
		return true
	}
	return false
}

// maxFreeRestarts bounds the restarts that do not count (a cluster that keeps taking containers
// away must not keep the application running forever).
func (r *runner) maxFreeRestarts() int { return max(10, 2*r.spec.Containers) }

// stopAll stops every started container that has not completed.
func (r *runner) stopAll(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, r.opts.StopTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range r.slots {
		if s.state == held {
			_ = r.rm.Release(s.container.ID)
			continue
		}
		if s.state != running {
			continue
		}
		c := s.container
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.nm.StopContainer(sctx, c.Node, c.ID); err != nil {
				r.log.Warn("am: stop container", "rank", s.rank, "container", c.ID.String(), "err", err)
				return
			}
			r.log.Info("am: stopped container", "rank", s.rank, "container", c.ID.String(), "node", c.Node)
		}()
	}
	wg.Wait()
}

// finish unregisters with a final status.
func (r *runner) finish(ctx context.Context, status records.FinalStatus, diag string, cause error) error {
	if ctx.Err() != nil {
		// Killed: no unregistering, and whether the staging directory goes is Run's decision
		// (another attempt may follow).
		return fmt.Errorf("%w: %w", ErrKilled, ctx.Err())
	}
	// The staging directory goes first: once the ResourceManager reports the application
	// finished, nothing of it is left on the file system.
	r.removeStaging(ctx)
	uctx, cancel := context.WithTimeout(ctx, r.opts.StopTimeout)
	defer cancel()
	if err := r.rm.Unregister(uctx, status, diag, r.opts.TrackingURL); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrKilled, ctx.Err())
		}
		return errors.Join(cause, fmt.Errorf("am: unregister %s: %w", status, err))
	}
	r.res.Status, r.res.Diagnostics = status, diag
	r.log.Info("am: unregistered", "status", status.String(), "diagnostics", diag, "after", r.since())
	return cause
}

// collect fills the result's ranks.
func (r *runner) collect() {
	r.res.Ranks = r.res.Ranks[:0]
	for _, s := range r.slots {
		r.res.Ranks = append(r.res.Ranks, Rank{Role: s.role.spec.Name, Rank: s.rank, Launches: s.launches, Container: s.container.ID, Node: s.container.Node,
			ExitStatus: s.exit, Diagnostics: s.diag, Succeeded: s.state == succeeded})
	}
}

// YARN's exit statuses for a container the NodeManager killed over its memory: their
// diagnostics start with the reason, followed by a dump of the process tree.
const (
	exitOverVmem = -103
	exitOverPmem = -104
)

// trimDiagFor trims a container's diagnostics (see trimDiag), keeping the first line too (up to
// 500 bytes) when the NodeManager killed it over its memory: that line says so and by how much,
// and the process-tree dump after it can be longer than what trimDiag keeps.
func trimDiagFor(exit int32, s string) string {
	s = strings.TrimSpace(s)
	if exit != exitOverVmem && exit != exitOverPmem {
		return trimDiag(s)
	}
	head, rest, ok := strings.Cut(s, "\n")
	if !ok || len(s) <= diagLimit {
		return trimDiag(s)
	}
	if len(head) > 500 {
		head = strings.ToValidUTF8(head[:500], "") + "…"
	}
	return head + "\n" + trimDiag(rest)
}

// diagLimit is the most bytes of a container's diagnostics trimDiag keeps.
const diagLimit = 1500

// trimDiag keeps the end of a NodeManager diagnostic, where the NodeManager puts the tail of the
// program's stderr (the head is a launch exception and the exit code, already in our message).
func trimDiag(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > diagLimit {
		cut := len(s) - diagLimit
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return s
}
