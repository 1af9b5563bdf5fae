package amrm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/records"
)

// Protocol names (declaringClassProtocolName and the connection context's protocol).
const (
	amProtocol = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"
	cmProtocol = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB"
)

// invalidRequestClass is the Java class of the ResourceManager's refusal of a wrong responseId.
const invalidRequestClass = "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException"

// Config configures a Client.
type Config struct {
	// SchedulerAddrs are the ResourceManager scheduler addresses (yarn.resourcemanager.scheduler.address,
	// default port 8030), several under RM HA, tried in order.
	SchedulerAddrs []string
	// Credentials hold the AMRMToken (kind YARN_AM_RM_TOKEN), usually from CredentialsFromEnv.
	Credentials *records.Credentials
	// Heartbeat is the interval between allocate calls in Run (default 1s).
	Heartbeat time.Duration
	// RetryTimeout is how long Run keeps heartbeating through connection failures (an RM restart
	// or failover) before giving up (default 2 minutes).
	RetryTimeout time.Duration
	// MaxIdle closes an unused connection before the next call (default 10s).
	MaxIdle time.Duration
	// Dial opens TCP connections (default net.Dialer with a 10s timeout).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives progress and warnings (default discards). Tokens are never logged.
	Logger *slog.Logger
}

// Client is an ApplicationMaster's client of the ResourceManager's ApplicationMasterProtocol:
// register, heartbeat with absolute asks per priority, release, and unregister. Its methods are safe
// for concurrent use; allocate calls are serialized.
type Client struct {
	cfg    Config
	logger *slog.Logger
	rpc    *ipc.Client

	hb sync.Mutex // one allocate/register/unregister exchange at a time

	mu          sync.Mutex
	amrmAlias   string
	amrmToken   records.Token
	registered  bool
	regReq      RegisterRequest
	reg         *Registration
	types       map[string]ResourceType
	responseID  int32
	progress    float32
	asks        map[int32]*askState
	placed      map[placedKey]*askState      // SchedulingRequests (AskPlaced)
	toRelease   map[records.ContainerID]bool // released, not yet confirmed completed
	sendRelease map[records.ContainerID]bool // to send with the next allocate
	nmTokens    map[string]records.Token
	allocates   int
}

type askState struct {
	capability  records.Resources
	nodeLabel   string
	outstanding int
	dirty       bool
	version     int
	placement   Placement // SchedulingRequests only
	// racks restrict a plain ask to the NodeManagers of these racks (AskOnRacks); sentRacks are
	// the racks the ResourceManager holds a request of this priority for.
	racks     []string
	sentRacks []string
}

// New returns a client; it connects on Register.
func New(cfg Config) (*Client, error) {
	if len(cfg.SchedulerAddrs) == 0 {
		return nil, errors.New("amrm: no ResourceManager scheduler address (yarn.resourcemanager.scheduler.address)")
	}
	alias, tok, ok := cfg.Credentials.TokenByKind(records.KindAMRMToken)
	if !ok {
		return nil, fmt.Errorf("%w: the credentials hold no %s token; an ApplicationMaster started by YARN finds it in $%s",
			ErrNoToken, records.KindAMRMToken, records.EnvTokenFile)
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = time.Second
	}
	if cfg.RetryTimeout <= 0 {
		cfg.RetryTimeout = 2 * time.Minute
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg:         cfg,
		logger:      logger,
		amrmAlias:   alias,
		amrmToken:   tok.Clone(),
		asks:        map[int32]*askState{},
		placed:      map[placedKey]*askState{},
		toRelease:   map[records.ContainerID]bool{},
		sendRelease: map[records.ContainerID]bool{},
		nmTokens:    map[string]records.Token{},
	}
	rpc, err := ipc.NewClient(ipc.Config{
		Addrs:    cfg.SchedulerAddrs,
		Protocol: amProtocol,
		Token:    c.currentToken,
		MaxIdle:  cfg.MaxIdle,
		Dial:     cfg.Dial,
		Logger:   logger,
	})
	if err != nil {
		return nil, err
	}
	c.rpc = rpc
	return c, nil
}

func (c *Client) currentToken() (*ipc.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ipcToken(c.amrmToken), nil
}

// AMRMToken returns the current AMRMToken (the RM rolls it; see AllocateResponse am_rm_token).
func (c *Client) AMRMToken() records.Token {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.amrmToken.Clone()
}

// Credentials returns the configured credentials with the current AMRMToken in place of the
// original one.
func (c *Client) Credentials() *records.Credentials {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.cfg.Credentials.WithoutKinds()
	out.Tokens[c.amrmAlias] = c.amrmToken.Clone()
	return out
}

// UpdateTokens replaces (or adds) the tokens of the given aliases in the credentials that
// Credentials returns from now on, which the containers started later get: fresh HDFS delegation
// tokens of an application that outlives the first ones. An AMRMToken among them is ignored (the
// ResourceManager rolls that one itself).
func (c *Client) UpdateTokens(tokens map[string]records.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	creds := c.cfg.Credentials.WithoutKinds()
	for alias, t := range tokens {
		if t.Kind == records.KindAMRMToken {
			continue
		}
		creds.Tokens[alias] = t.Clone()
	}
	c.cfg.Credentials = creds
}

// RegisterRequest is what an AM tells the ResourceManager about itself.
type RegisterRequest struct {
	// Host is the AM's host (shown by the RM; "" is allowed).
	Host string
	// RPCPort is the AM's RPC port, or -1 when it serves none.
	RPCPort int32
	// TrackingURL is shown by the RM's UI as the application's tracking link.
	TrackingURL string
}

// Registration is the ResourceManager's answer to Register.
type Registration struct {
	// MaximumCapability is the largest container the scheduler grants.
	MaximumCapability records.Resources
	// ResourceTypes are the resource types the RM knows (memory-mb, vcores, yarn.io/gpu, ...).
	ResourceTypes []ResourceType
	// Queue is the queue the application runs in.
	Queue string
	// ContainersFromPreviousAttempts are live containers kept across attempts.
	ContainersFromPreviousAttempts []Container
	// ResourceProfiles are the RM's resource profiles, when enabled.
	ResourceProfiles map[string]records.Resources
}

// HasResourceType reports whether the RM declared a resource type.
func (r *Registration) HasResourceType(name string) bool {
	return slices.ContainsFunc(r.ResourceTypes, func(t ResourceType) bool { return t.Name == name })
}

// Register registers the ApplicationMaster. It keeps the maximum capability and the resource types,
// which later asks are checked against.
func (c *Client) Register(ctx context.Context, req RegisterRequest) (*Registration, error) {
	c.hb.Lock()
	defer c.hb.Unlock()
	c.mu.Lock()
	c.regReq = req
	c.mu.Unlock()
	return c.register(ctx)
}

func (c *Client) register(ctx context.Context) (*Registration, error) {
	c.mu.Lock()
	req := c.regReq
	c.mu.Unlock()
	preq := &yarnpb.RegisterApplicationMasterRequestProto{
		Host:        proto.String(req.Host),
		RpcPort:     proto.Int32(req.RPCPort),
		TrackingUrl: proto.String(req.TrackingURL),
	}
	resp := &yarnpb.RegisterApplicationMasterResponseProto{}
	// Not resent on a lost connection: a second registration is refused ("already registered").
	if err := c.rpc.Call(ctx, "registerApplicationMaster", preq, resp, ipc.CallOptions{}); err != nil {
		return nil, fmt.Errorf("amrm: %w%s", err, notTheScheduler(err, c.rpc.Addr()))
	}
	types := map[string]ResourceType{
		records.MemoryMB: {Name: records.MemoryMB, Units: "Mi", Type: "COUNTABLE"},
		records.VCores:   {Name: records.VCores, Type: "COUNTABLE"},
	}
	reg := &Registration{Queue: resp.GetQueue()}
	for _, t := range resp.GetResourceTypes() {
		rt := ResourceType{Name: t.GetName(), Units: t.GetUnits(), Type: t.GetType().String()}
		types[rt.Name] = rt
	}
	for _, n := range slices.Sorted(maps.Keys(types)) {
		reg.ResourceTypes = append(reg.ResourceTypes, types[n])
	}
	reg.MaximumCapability = resourceFromProto(resp.GetMaximumCapability(), types)
	for _, p := range resp.GetContainersFromPreviousAttempts() {
		reg.ContainersFromPreviousAttempts = append(reg.ContainersFromPreviousAttempts, containerFromProto(p, types))
	}
	if profs := resp.GetResourceProfiles().GetResourceProfilesMap(); len(profs) > 0 {
		reg.ResourceProfiles = map[string]records.Resources{}
		for _, p := range profs {
			reg.ResourceProfiles[p.GetName()] = resourceFromProto(p.GetResources(), types)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.registered = true
	c.responseID = 0
	c.types = types
	c.reg = reg
	for _, t := range resp.GetNmTokensFromPreviousAttempts() {
		c.nmTokens[nodeAddr(t.GetNodeId())] = tokenFromProto(t.GetToken())
	}
	c.logger.Info("amrm: registered", "queue", reg.Queue, "maximumCapability", reg.MaximumCapability.String(),
		"resourceTypes", len(reg.ResourceTypes), "rm", c.rpc.Addr())
	return reg, nil
}

// Ask sets the number of containers still wanted at a priority, as an absolute total (not a
// delta): the ResourceManager replaces its outstanding count with it, then counts down as it
// allocates. Use one priority per resource profile; allocations are matched to asks by priority.
// The capability may only change while nothing is outstanding at that priority.
//
// Ask checks every resource type in capability against the registration (ErrUnknownResource: the RM
// would silently drop it) and against the maximum capability (ErrExceedsMaximum), so nothing is sent
// for a bad ask. The ask goes out with the next heartbeat.
func (c *Client) Ask(priority int32, capability records.Resources, count int) error {
	return c.ask(priority, capability, count, "", nil)
}

// AskWithLabel is Ask restricted to nodes with a node label expression (e.g. "gpu").
func (c *Client) AskWithLabel(priority int32, capability records.Resources, count int, nodeLabel string) error {
	return c.ask(priority, capability, count, nodeLabel, nil)
}

// AskOnRacks is AskWithLabel restricted to the NodeManagers of racks (network locations as the
// ResourceManager writes them, e.g. /default-rack; none: anywhere). It asks as Hadoop's
// AMRMClient does for a ContainerRequest with racks and relaxLocality false: one
// ResourceRequest per rack, with relaxLocality true, and the off-switch one ("*") with
// relaxLocality false, each for the whole count, the node label on "*" only. The CapacityScheduler
// and the FairScheduler then allocate on the racks' nodes only (a node elsewhere skips the
// priority), and keep the ask pending while none of them has room; the FifoScheduler ignores
// relaxLocality and allocates anywhere. The racks may only change while nothing is outstanding
// at the priority.
func (c *Client) AskOnRacks(priority int32, capability records.Resources, count int, nodeLabel string, racks []string) error {
	for _, r := range racks {
		if r == "" || r == "*" {
			return fmt.Errorf("amrm: ask at priority %d: rack %q: want a rack's network location, e.g. /default-rack", priority, r)
		}
	}
	return c.ask(priority, capability, count, nodeLabel, racks)
}

func (c *Client) ask(priority int32, capability records.Resources, count int, nodeLabel string, racks []string) error {
	if count < 0 || count > 1<<31-1 {
		return fmt.Errorf("amrm: ask for %d containers at priority %d: count out of range", count, priority)
	}
	racks = slices.Compact(slices.Sorted(slices.Values(racks)))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reg == nil {
		return fmt.Errorf("%w: call Register before Ask (the asked resource types are checked against the registration)", ErrNotRegistered)
	}
	if err := c.checkCapability(capability); err != nil {
		return err
	}
	a, ok := c.asks[priority]
	if ok && a.outstanding > 0 && (!sameResource(a.capability, capability) || a.nodeLabel != nodeLabel) {
		return fmt.Errorf("amrm: priority %d already asks for %d containers of %s; use one priority per resource profile",
			priority, a.outstanding, a.capability)
	}
	if ok && a.outstanding > 0 && !slices.Equal(a.racks, racks) {
		return fmt.Errorf("amrm: priority %d already asks for %d containers on racks [%s]; use one priority per set of racks",
			priority, a.outstanding, strings.Join(a.racks, ", "))
	}
	if !ok {
		a = &askState{}
		c.asks[priority] = a
	}
	a.capability, a.nodeLabel, a.racks = records.ResourcesOf(capability.All()...), nodeLabel, racks
	a.outstanding = count
	a.dirty = true
	a.version++
	return nil
}

func (c *Client) checkCapability(r records.Resources) error {
	entries := r.All()
	slices.SortFunc(entries, func(a, b records.Resource) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range entries {
		if _, ok := c.types[e.Name]; !ok {
			known := slices.Sorted(maps.Keys(c.types))
			return fmt.Errorf("%w: %q is not a resource type of this ResourceManager (it knows %s); "+
				"the RM would drop it silently. Declare it in yarn.resource-types (resource-types.xml) on the RM "+
				"and the NodeManagers, or remove it from the ask",
				ErrUnknownResource, e.Name, strings.Join(known, ", "))
		}
		if e.Value < 0 {
			return fmt.Errorf("amrm: negative %s=%d in the ask %s", e.Name, e.Value, r)
		}
	}
	max := c.reg.MaximumCapability
	for _, e := range entries {
		m, _ := max.Quantity(e.Name)
		if m.Units == "" {
			m.Units = wireUnits(e.Name, c.types)
		}
		if cmp, err := e.Quantity().Cmp(m); err != nil {
			return fmt.Errorf("amrm: resource %s=%s: %w", e.Name, e.Quantity(), err)
		} else if cmp > 0 {
			return fmt.Errorf("%w: %s=%s exceeds the ResourceManager's maximum allocation %s=%s "+
				"(yarn.scheduler.maximum-allocation-*, capped by the largest NodeManager)", ErrExceedsMaximum, e.Name, e.Quantity(), e.Name, m)
		}
	}
	return nil
}

// sameResource reports whether a and b ask for the same amounts, whatever their order.
func sameResource(a, b records.Resources) bool {
	if a.Len() != b.Len() {
		return false
	}
	for _, e := range a.All() {
		if q, ok := b.Quantity(e.Name); !ok || q != e.Quantity() {
			return false
		}
	}
	return true
}

// Outstanding returns how many containers are still wanted at a priority (plain asks and
// SchedulingRequests together).
func (c *Client) Outstanding(priority int32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	if a, ok := c.asks[priority]; ok {
		n = a.outstanding
	}
	for k, a := range c.placed {
		if k.prio == priority {
			n += a.outstanding
		}
	}
	return n
}

// Release gives containers back to the ResourceManager with the next heartbeat.
func (c *Client) Release(ids ...records.ContainerID) error {
	for _, id := range ids {
		if _, err := containerIDProto(id); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.toRelease[id] = true
		c.sendRelease[id] = true
	}
	return nil
}

// SetProgress sets the progress (0 to 1) reported with each heartbeat.
func (c *Client) SetProgress(p float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progress = min(max(p, 0), 1)
}

// NMToken returns the cached NMToken for a NodeManager address (host:port, as in Container.Node).
func (c *Client) NMToken(node string) (records.Token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.nmTokens[node]
	return t.Clone(), ok
}

// Container is a container the ResourceManager allocated.
type Container struct {
	ID records.ContainerID
	// Node is the NodeManager's IPC address host:port (its NodeId), where the container is started.
	Node string
	// NodeHTTPAddress is the NodeManager's web address.
	NodeHTTPAddress string
	// Resource is what the container was granted.
	Resource records.Resources
	// Priority is the priority of the ask the container answers.
	Priority int32
	// AllocationRequestID is the allocation request id the RM reports (-1 when none).
	AllocationRequestID int64
	// ExecutionType is GUARANTEED or OPPORTUNISTIC.
	ExecutionType string
	// Version is the container's update version.
	Version int32

	token records.Token // the container token, for startContainers
	pid   *yarnpb.ContainerIdProto
}

func containerFromProto(p *yarnpb.ContainerProto, types map[string]ResourceType) Container {
	return Container{
		ID:                  containerIDFromProto(p.GetId()),
		Node:                nodeAddr(p.GetNodeId()),
		NodeHTTPAddress:     p.GetNodeHttpAddress(),
		Resource:            resourceFromProto(p.GetResource(), types),
		Priority:            p.GetPriority().GetPriority(),
		AllocationRequestID: p.GetAllocationRequestId(),
		ExecutionType:       p.GetExecutionType().String(),
		Version:             p.GetVersion(),
		token:               tokenFromProto(p.GetContainerToken()),
		pid:                 p.GetId(),
	}
}

// ContainerStatus is a container's state, as the RM reports completed containers or an NM reports any.
type ContainerStatus struct {
	ID    records.ContainerID
	State records.ContainerState
	// ExitStatus is the process exit code, or one of YARN's negative codes (-100 aborted/released,
	// -101 disks failed, -102 preempted, -103/-104 over memory limits, -105 killed by the AM, ...);
	// -1000 when not set.
	ExitStatus  int32
	Diagnostics string
	Capability  records.Resources
}

func statusFromProto(p *yarnpb.ContainerStatusProto, types map[string]ResourceType) ContainerStatus {
	st := records.ContainerState(strings.TrimPrefix(p.GetState().String(), "C_"))
	if p.State == nil {
		st = ""
	}
	return ContainerStatus{
		ID:          containerIDFromProto(p.GetContainerId()),
		State:       st,
		ExitStatus:  p.GetExitStatus(),
		Diagnostics: p.GetDiagnostics(),
		Capability:  resourceFromProto(p.GetCapability(), types),
	}
}

// NodeReport is a NodeManager whose state changed.
type NodeReport struct {
	Node          string
	HTTPAddress   string
	Rack          string
	State         string
	Used          records.Resources
	Capability    records.Resources
	NumContainers int32
	HealthReport  string
	Labels        []string
}

// Released is a container the client gave back on its own.
type Released struct {
	Container Container
	// Reason says why, e.g. "missing yarn.io/gpu=1 (got 0)" or "surplus: nothing outstanding at priority 1".
	Reason string
}

// Allocation is the outcome of one heartbeat.
type Allocation struct {
	// Allocated are new containers that match an outstanding ask by priority and carry every
	// asked resource; the ask's outstanding count went down by one for each.
	Allocated []Container
	// Released are containers the client released itself: surplus ones (nothing outstanding at
	// their priority) and ones missing an asked resource (re-asked).
	Released []Released
	// Completed are containers that finished (exited, were released, killed or lost).
	Completed []ContainerStatus
	// Headroom is the resource still available to the application.
	Headroom records.Resources
	// NumClusterNodes is the number of NodeManagers in the cluster.
	NumClusterNodes int
	// UpdatedNodes are nodes whose state changed.
	UpdatedNodes []NodeReport
	// Preempted are containers the RM will take back (strict and negotiable preemption).
	Preempted []records.ContainerID
	// ResponseID is the RM's response id for this heartbeat.
	ResponseID int32
	// Rejected are SchedulingRequests the RM gave up placing (placement-processor handler).
	Rejected []Rejected
}

// Allocate sends one heartbeat: outstanding asks that changed, releases and progress. It re-registers
// and resends every ask and release when the RM has forgotten the AM (ApplicationMasterNotRegisteredException
// after an RM restart or failover, or an AM_RESYNC command).
//
// When the RM refuses the heartbeat's responseId (InvalidApplicationMasterRequestException:
// "Invalid responseId in AllocateRequest ... expect responseId to be N but get M", Hadoop 3.1's
// wording with commas too), Allocate takes N from the message, logs a warning, and sends the
// heartbeat once more with it, with every ask's total and every unconfirmed release again (answers
// the client never saw may have counted containers against the asks). A message without a
// readable N, an N equal to the id just sent, or a second refusal returns the error, matching
// ErrInvalidRequest. Hadoop's AMRMClientImpl has no such step (the exception fails its allocate);
// Hadoop's AMRMClientRelayer (the NodeManager's AMRMProxy, 3.2+) reads N the same way and uses it
// on its next heartbeat.
//
// Response ids wrap from 2147483647 to 0, as the RM counts them; the client echoes the RM's.
func (c *Client) Allocate(ctx context.Context) (*Allocation, error) {
	c.hb.Lock()
	defer c.hb.Unlock()
	reregistered, resynced := false, false
	for {
		alloc, err := c.allocate(ctx)
		switch {
		case err == nil:
			return alloc, nil
		case errors.Is(err, ErrNotRegistered) && !reregistered && c.isRegistered():
			reregistered = true
			c.logger.Warn("amrm: the ResourceManager does not know this application master; registering again", "err", err)
			if err := c.resync(ctx); err != nil {
				return nil, err
			}
		case errors.Is(err, ErrInvalidRequest) && !resynced && c.adoptExpectedResponseID(err):
			resynced = true
		default:
			return nil, err
		}
	}
}

func (c *Client) isRegistered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.registered
}

// resync registers again and marks every ask and release for resending.
func (c *Client) resync(ctx context.Context) error {
	if _, err := c.register(ctx); err != nil {
		return fmt.Errorf("amrm: register again after the ResourceManager lost the application master: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resendAllLocked()
	return nil
}

// resendAllLocked marks every ask and every unconfirmed release for the next allocate. c.mu is held.
func (c *Client) resendAllLocked() {
	for _, a := range c.asks {
		a.dirty = true
	}
	for _, a := range c.placed {
		a.dirty = true
	}
	for id := range c.toRelease {
		c.sendRelease[id] = true
	}
}

// adoptExpectedResponseID takes the responseId the ResourceManager expects from its refusal of
// the last allocate, and reports whether the heartbeat can be sent again with it: err is an
// InvalidApplicationMasterRequestException about the responseId, its message names the expected
// id, and that id is not the one just sent.
func (c *Client) adoptExpectedResponseID(err error) bool {
	var re *records.RemoteError
	if !errors.As(err, &re) || re.Class != invalidRequestClass {
		return false
	}
	m, ok := parseResponseIDMismatch(re.Message)
	if !ok {
		return false
	}
	c.mu.Lock()
	sent := c.responseID
	if m.Expected == sent {
		c.mu.Unlock()
		return false
	}
	c.responseID = m.Expected
	c.resendAllLocked()
	attempt := ""
	if a, err := AMRMAttempt(c.amrmToken); err == nil {
		attempt = a.String()
	} else if m.Attempt != (records.ApplicationAttemptID{}) {
		attempt = m.Attempt.String()
	}
	c.mu.Unlock()
	c.logger.Warn("amrm: the ResourceManager refused the heartbeat's responseId; sending it again with the expected one",
		"attempt", attempt, "sentResponseId", sent, "expectedResponseId", m.Expected)
	return true
}

func (c *Client) allocate(ctx context.Context) (*Allocation, error) {
	c.mu.Lock()
	if !c.registered {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: call Register before Allocate", ErrNotRegistered)
	}
	req := &yarnpb.AllocateRequestProto{
		ResponseId: proto.Int32(c.responseID),
		Progress:   proto.Float32(c.progress),
	}
	sentVersions := map[int32]int{}
	for _, p := range slices.Sorted(maps.Keys(c.asks)) {
		a := c.asks[p]
		if !a.dirty {
			continue
		}
		cap, err := resourceProto(a.capability, c.types)
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		req.Ask = append(req.Ask, resourceRequests(p, a, cap)...)
		sentVersions[p] = a.version
	}
	sentPlaced := map[placedKey]int{}
	for _, k := range slices.SortedFunc(maps.Keys(c.placed), comparePlacedKeys) {
		a := c.placed[k]
		if !a.dirty {
			continue
		}
		sr, err := schedulingRequestProto(k, a, c.types)
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		req.SchedulingRequests = append(req.SchedulingRequests, sr)
		sentPlaced[k] = a.version
	}
	var sentReleases []records.ContainerID
	for _, id := range slices.SortedFunc(maps.Keys(c.sendRelease), records.ContainerID.Compare) {
		pid, err := containerIDProto(id)
		if err != nil {
			continue
		}
		req.Release = append(req.Release, pid)
		sentReleases = append(sentReleases, id)
	}
	c.mu.Unlock()

	resp := &yarnpb.AllocateResponseProto{}
	// Safe to resend: the RM answers a repeated responseId with its last response.
	if err := c.rpc.Call(ctx, "allocate", req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
		if len(req.SchedulingRequests) > 0 && isPlacementRefusal(err) {
			return nil, fmt.Errorf("%w: %w", ErrPlacementRefused, err)
		}
		return nil, fmt.Errorf("amrm: %w", err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.allocates++
	for p, v := range sentVersions {
		if a := c.asks[p]; a != nil && a.version == v {
			a.dirty = false
			a.sentRacks = a.racks
		}
	}
	for k, v := range sentPlaced {
		if a := c.placed[k]; a != nil && a.version == v {
			a.dirty = false
		}
	}
	for _, id := range sentReleases {
		delete(c.sendRelease, id)
	}
	c.responseID = resp.GetResponseId()
	for _, t := range resp.GetNmTokens() {
		node := nodeAddr(t.GetNodeId())
		c.nmTokens[node] = tokenFromProto(t.GetToken())
		c.logger.Debug("amrm: NMToken received", "node", node)
	}
	if t := resp.GetAmRmToken(); t != nil {
		nt := tokenFromProto(t)
		if nt.Kind == "" {
			nt.Kind = records.KindAMRMToken
		}
		if nt.Service == "" {
			nt.Service = c.amrmToken.Service
		}
		c.amrmToken = nt
		c.logger.Info("amrm: AMRMToken rolled by the ResourceManager; new connections use the new token")
	}
	// AMCommand's proto2 default is AM_RESYNC: only a present field is a command.
	if resp.AMCommand != nil {
		switch resp.GetAMCommand() {
		case yarnpb.AMCommandProto_AM_SHUTDOWN:
			return nil, ErrShutdown
		case yarnpb.AMCommandProto_AM_RESYNC:
			return nil, fmt.Errorf("%w: the ResourceManager sent AM_RESYNC", ErrNotRegistered)
		}
	}

	out := &Allocation{
		Headroom:        resourceFromProto(resp.GetLimit(), c.types),
		NumClusterNodes: int(resp.GetNumClusterNodes()),
		ResponseID:      resp.GetResponseId(),
	}
	for _, s := range resp.GetCompletedContainerStatuses() {
		st := statusFromProto(s, c.types)
		delete(c.toRelease, st.ID)
		delete(c.sendRelease, st.ID)
		out.Completed = append(out.Completed, st)
	}
	for _, r := range resp.GetRejectedSchedulingRequests() {
		sr := r.GetRequest()
		k := placedKey{sr.GetPriority().GetPriority(), sr.GetAllocationRequestId()}
		n := int(sr.GetResourceSizing().GetNumAllocations())
		if a := c.placed[k]; a != nil {
			n = min(max(n, 0), a.outstanding)
			a.outstanding -= n
		}
		rj := Rejected{Priority: k.prio, AllocationRequestID: k.id, Count: n, Reason: r.GetReason().String(), Constraint: constraintText(sr)}
		c.logger.Warn("amrm: the ResourceManager rejected a SchedulingRequest", "priority", rj.Priority,
			"allocationRequestId", rj.AllocationRequestID, "containers", rj.Count, "reason", rj.Reason, "constraint", rj.Constraint)
		out.Rejected = append(out.Rejected, rj)
	}
	for _, p := range resp.GetAllocatedContainers() {
		ct := containerFromProto(p, c.types)
		a := c.placed[placedKey{ct.Priority, ct.AllocationRequestID}]
		if a == nil || a.outstanding == 0 {
			a = c.asks[ct.Priority]
		}
		var reason string
		switch {
		case a == nil || a.outstanding == 0:
			reason = fmt.Sprintf("surplus: nothing outstanding at priority %d", ct.Priority)
		default:
			reason = missingResources(a.capability, ct.Resource)
			if reason != "" {
				// The RM counted this container against the ask: resend the total to get a replacement.
				a.dirty = true
			}
		}
		if reason != "" {
			c.logger.Warn("amrm: releasing container", "container", ct.ID.String(), "node", ct.Node, "reason", reason)
			c.toRelease[ct.ID] = true
			c.sendRelease[ct.ID] = true
			out.Released = append(out.Released, Released{Container: ct, Reason: reason})
			continue
		}
		a.outstanding--
		out.Allocated = append(out.Allocated, ct)
	}
	for _, n := range resp.GetUpdatedNodes() {
		out.UpdatedNodes = append(out.UpdatedNodes, NodeReport{
			Node: nodeAddr(n.GetNodeId()), HTTPAddress: n.GetHttpAddress(), Rack: n.GetRackName(),
			State: strings.TrimPrefix(n.GetNodeState().String(), "NS_"), Used: resourceFromProto(n.GetUsed(), c.types),
			Capability: resourceFromProto(n.GetCapability(), c.types), NumContainers: n.GetNumContainers(),
			HealthReport: n.GetHealthReport(), Labels: n.GetNodeLabels(),
		})
	}
	if pm := resp.GetPreempt(); pm != nil {
		for _, pc := range pm.GetStrictContract().GetContainer() {
			out.Preempted = append(out.Preempted, containerIDFromProto(pc.GetId()))
		}
		for _, pc := range pm.GetContract().GetContainer() {
			out.Preempted = append(out.Preempted, containerIDFromProto(pc.GetId()))
		}
	}
	if len(out.Allocated)+len(out.Released)+len(out.Completed) > 0 {
		c.logger.Debug("amrm: heartbeat", "responseId", out.ResponseID, "allocated", len(out.Allocated),
			"released", len(out.Released), "completed", len(out.Completed))
	}
	return out, nil
}

// resourceRequests are the ResourceRequests of the plain ask at priority p: the off-switch one
// ("*"), and with racks one per rack (relaxLocality true) while the off-switch one has
// relaxLocality false, as Hadoop's AMRMClient sends a ContainerRequest with racks and
// relaxLocality false; a rack asked for before and no longer is sent with 0 containers, which
// drops it at the ResourceManager.
func resourceRequests(p int32, a *askState, cap *yarnpb.ResourceProto) []*yarnpb.ResourceRequestProto {
	one := func(name string, n int, relax bool) *yarnpb.ResourceRequestProto {
		rr := &yarnpb.ResourceRequestProto{
			Priority:      &yarnpb.PriorityProto{Priority: proto.Int32(p)},
			ResourceName:  proto.String(name),
			Capability:    cap,
			NumContainers: proto.Int32(int32(n)),
			RelaxLocality: proto.Bool(relax),
			ExecutionTypeRequest: &yarnpb.ExecutionTypeRequestProto{
				ExecutionType: yarnpb.ExecutionTypeProto_GUARANTEED.Enum(),
			},
		}
		if a.nodeLabel != "" && name == anyResource {
			// On "*" only, as MapReduce asks: the scheduler takes a request's partition from
			// its "*" request, and the ResourceManager (3.2.2 and 3.5.0 alike) holds a refusal
			// of a node label expression on a request for a rack or host ("specified node label
			// expression in a resource request has resource name = ...").
			rr.NodeLabelExpression = proto.String(a.nodeLabel)
		}
		return rr
	}
	var out []*yarnpb.ResourceRequestProto
	for _, r := range a.sentRacks {
		if !slices.Contains(a.racks, r) {
			out = append(out, one(r, 0, true))
		}
	}
	for _, r := range a.racks {
		out = append(out, one(r, a.outstanding, true))
	}
	return append(out, one(anyResource, a.outstanding, len(a.racks) == 0))
}

// anyResource is the resource name of an off-switch request: any node.
const anyResource = "*"

// missingResources says which asked extended resources a container lacks ("" when none).
func missingResources(asked, got records.Resources) string {
	var miss []string
	entries := asked.All()
	slices.SortFunc(entries, func(a, b records.Resource) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range entries {
		if e.Name == records.MemoryMB || e.Name == records.VCores || e.Value <= 0 {
			continue
		}
		g, _ := got.Quantity(e.Name)
		gv, _, err := g.In(e.Units)
		if err != nil {
			gv = g.Value
		}
		if gv < e.Value {
			miss = append(miss, fmt.Sprintf("%s=%d (got %d)", e.Name, e.Value, gv))
		}
	}
	if len(miss) == 0 {
		return ""
	}
	return "missing " + strings.Join(miss, ", ")
}

// notTheScheduler is the fix for a registration refused because addr is the ResourceManager's
// client port, not its scheduler's: that service checks the AMRMToken as a client's delegation
// token and refuses it at SASL with its delegation-token secret manager's words ("token
// (RM_DELEGATION_TOKEN ...) can't be found in cache" up to Hadoop 3.3, "Token for real user: ...,
// can't be found in cache" from 3.4), where the scheduler's AMRMToken checks speak of AMRMTokens
// and application attempts. Empty for other errors.
func notTheScheduler(err error, addr string) string {
	var re *records.RemoteError
	if !errors.As(err, &re) || !errors.Is(err, ErrInvalidToken) ||
		!strings.Contains(re.Message, "RM_DELEGATION_TOKEN") && !strings.Contains(re.Message, "can't be found in cache") {
		return ""
	}
	return " (fix: " + addr + " took the AMRMToken for a client's delegation token: it is the ResourceManager's" +
		" client port (yarn.resourcemanager.address), not its scheduler's (yarn.resourcemanager.scheduler.address," +
		" 8030 by default))"
}

// Run heartbeats every Config.Heartbeat and hands each Allocation to fn until fn returns done or an
// error, or ctx ends. Connection failures (an RM restart or failover) are retried for up to
// Config.RetryTimeout. fn runs between heartbeats: start containers from other goroutines (see
// NMClient) so heartbeats stay on time; fn may call Ask and Release.
func (c *Client) Run(ctx context.Context, fn func(*Allocation) (done bool, err error)) error {
	lastOK := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		alloc, err := c.Allocate(ctx)
		if err != nil {
			if errors.Is(err, ErrConnection) && ctx.Err() == nil && time.Since(lastOK) < c.cfg.RetryTimeout {
				c.logger.Warn("amrm: heartbeat failed; retrying", "err", err)
				timer.Reset(c.cfg.Heartbeat)
				continue
			}
			return err
		}
		lastOK = time.Now()
		done, err := fn(alloc)
		if err != nil || done {
			return err
		}
		timer.Reset(c.cfg.Heartbeat)
	}
}

// Unregister tells the ResourceManager the application finished, repeating the call until the RM
// confirms (it may answer "not yet" while it stores the final state).
func (c *Client) Unregister(ctx context.Context, status records.FinalStatus, diagnostics, trackingURL string) error {
	c.hb.Lock()
	defer c.hb.Unlock()
	if !c.isRegistered() {
		return fmt.Errorf("%w: Unregister before Register", ErrNotRegistered)
	}
	req := &yarnpb.FinishApplicationMasterRequestProto{
		Diagnostics:            proto.String(diagnostics),
		TrackingUrl:            proto.String(trackingURL),
		FinalApplicationStatus: yarnpb.FinalApplicationStatusProto(status).Enum(),
	}
	resynced := false
	for {
		resp := &yarnpb.FinishApplicationMasterResponseProto{}
		err := c.rpc.Call(ctx, "finishApplicationMaster", req, resp, ipc.CallOptions{Idempotent: true})
		if err != nil {
			err = fmt.Errorf("amrm: %w", err)
			if errors.Is(err, ErrNotRegistered) && !resynced {
				resynced = true
				c.logger.Warn("amrm: the ResourceManager does not know this application master; registering again to unregister")
				if err := c.resync(ctx); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if resp.GetIsUnregistered() {
			c.mu.Lock()
			c.registered = false
			c.mu.Unlock()
			c.logger.Info("amrm: unregistered", "finalStatus", status.String())
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stats are counters for diagnostics and tests.
type Stats struct {
	// Allocates is the number of successful allocate calls.
	Allocates int
	// Connections is the number of connections opened to the ResourceManager.
	Connections int
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Allocates: c.allocates, Connections: c.rpc.Dials()}
}

// Close closes the connection to the ResourceManager. It does not unregister.
func (c *Client) Close() error { return c.rpc.Close() }
