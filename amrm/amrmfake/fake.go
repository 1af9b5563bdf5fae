// Package amrmfake is a fake YARN cluster for tests of ApplicationMasters built on package amrm:
// a ResourceManager scheduler (ApplicationMasterProtocol) and NodeManagers
// (ContainerManagementProtocol), each a real Hadoop IPC server on 127.0.0.1 speaking SASL
// TOKEN/DIGEST-MD5, so an AM under test runs its real amrm client against it.
//
// The fake follows the 3.x ResourceManager's rules where an AM can see them: strict responseId
// (the id before the last answer's gets that answer again, any other but the last answer's is
// refused with the RM's InvalidApplicationMasterRequestException message; ids wrap from
// 2147483647 to 0), absolute asks per priority counted down as containers are allocated,
// NMTokens handed out with a node's first container, completed containers reported on a later
// heartbeat, releases and stops reported as completions. What a container "does" is decided by
// Cluster.Exit when the NodeManager starts it. SchedulingRequests are refused, placed or rejected
// as Options.PlacementHandler says, their allocation tags and simple constraints (affinity,
// anti-affinity, cardinality on node or rack) honoured. It is for tests only: nothing here is a ResourceManager.
package amrmfake

import (
	"cmp"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/yarn-er/yarn-er/amrm/internal/fakeyarn"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/records"
)

// ClusterTimestamp and AppNumber make up the fake application's id.
const (
	ClusterTimestamp = fakeyarn.ClusterTimestamp
	AppNumber        = fakeyarn.AppNumber
)

// Values of Options.PlacementHandler (yarn.resourcemanager.placement-constraints.handler).
const (
	HandlerDisabled  = fakeyarn.HandlerDisabled
	HandlerScheduler = fakeyarn.HandlerScheduler
	HandlerProcessor = fakeyarn.HandlerProcessor
)

// AppID is the fake application's id.
var AppID = fakeyarn.AppID

// Exit statuses YARN reports for containers an AM released or stopped, that were lost with
// their node, or preempted.
const (
	ExitAborted           = -100
	ExitPreempted         = -102
	ExitKilledByAppMaster = -105
)

// Launch is one startContainers request the fake NodeManagers received, decoded.
type Launch struct {
	Container records.ContainerID
	Node      string
	// Resource is what the container was allocated.
	Resource       records.Resources
	Commands       []string
	Environment    map[string]string
	LocalResources map[string]LocalResource
	// Tokens are the credentials bytes the AM passed (a token storage file).
	Tokens []byte
}

// LocalResource is a local resource as the NodeManager received it.
type LocalResource struct {
	URL        string
	Size       int64
	Timestamp  int64
	Type       string // FILE, ARCHIVE or PATTERN
	Visibility string // PUBLIC, PRIVATE or APPLICATION
}

// Outcome is what a started container does.
type Outcome struct {
	// ExitStatus is the exit status reported when the container completes.
	ExitStatus int32
	// Diagnostics are reported with the completion.
	Diagnostics string
	// Heartbeats is how many allocate calls after the start the completion is reported on
	// (0 or 1: the next one). A negative value keeps the container running until it is stopped.
	Heartbeats int
}

// Finish is a finishApplicationMaster call.
type Finish struct {
	Status      string // SUCCEEDED, FAILED, KILLED, ...
	Diagnostics string
	TrackingURL string
}

// Options configure a Cluster.
type Options struct {
	// Nodes is the number of NodeManagers (default 2).
	Nodes int
	// GPUsPerNode is each node's yarn.io/gpu capacity (default 4); containers asking no GPU take
	// one of SlotsPerNode instead.
	GPUsPerNode int64
	// SlotsPerNode limits containers per node regardless of GPUs (default 16).
	SlotsPerNode int
	// Exit decides what a started container does (default: exits 0 on the next heartbeat).
	Exit func(l Launch) Outcome
	// FailStart, when it returns a message for a start, makes the NodeManager refuse that start
	// (a failed request of startContainers) with it.
	FailStart func(l Launch) string
	// StripResources, when it returns true for the n-th allocated container (from 0), allocates
	// that container without its extended resources (a scheduler that dropped yarn.io/gpu).
	StripResources func(n int) bool
	// Surplus, when set, is how many containers beyond the asks heartbeat n (from 0) allocates
	// (a scheduler that over-allocates, as one answering a stale absolute ask does).
	Surplus func(n int) int
	// WithholdNMToken, when it returns true for a node (host:port), never sends that node's
	// NMToken with its containers.
	WithholdNMToken func(node string) bool
	// RoundRobin places each new container on the next node with room after the one the last
	// container went to (default: the first node with room), as a scheduler that allocates on
	// the heartbeats of nodes in turn does.
	RoundRobin bool
	// PlacementHandler is the ResourceManager's yarn.resourcemanager.placement-constraints.handler
	// (fakeyarn.HandlerDisabled, the default, refuses SchedulingRequests; HandlerScheduler places
	// them, keeping what cannot be placed pending; HandlerProcessor places them and rejects
	// what cannot be placed on that heartbeat).
	PlacementHandler string
	// FairScheduler makes the scheduler one that cannot place SchedulingRequests (Hadoop's
	// FairScheduler): refused under HandlerScheduler, rejected under HandlerProcessor.
	FairScheduler bool
	// Racks are the nodes' racks, by index (default /default-rack, as Hadoop's resolver without
	// a topology): a plain ask with racks (relaxLocality false on "*") is placed on their nodes
	// only, as the CapacityScheduler and the FairScheduler do.
	Racks []string
	// FifoScheduler ignores relaxLocality, as Hadoop's FifoScheduler does: a rack-bound ask is
	// placed on any node.
	FifoScheduler bool
}

// Cluster is a fake ResourceManager scheduler with its NodeManagers.
type Cluster struct {
	// SchedulerAddr is the scheduler's host:port.
	SchedulerAddr string
	// AMRMToken is the token the scheduler accepts; put it in the AM's credentials.
	AMRMToken records.Token

	opts Options
	rm   *fakeyarn.RM
	// mu is the scheduler's lock (rm.Mu): it guards the fields below, and the NodeManagers take it.
	mu *sync.Mutex

	nodes       []*node
	placed      map[placedKey]*yarnpb.SchedulingRequestProto
	rejected    int
	outstanding map[int32]int
	capability  map[int32]*yarnpb.ResourceProto
	// racks are the rack requests of each priority (rack → count); bound marks a priority whose
	// off-switch request has relaxLocality false.
	racks        map[int32]map[string]int
	bound        map[int32]bool
	maxAsked     map[int32]int
	nextID       int64
	nAllocated   int
	containers   map[records.ContainerID]*container
	pending      []*yarnpb.ContainerStatusProto
	launches     []Launch
	failedStarts []Launch
	stops        []records.ContainerID
	releases     []records.ContainerID
	nmTokenSent  map[string]bool
	usedGPUs     int64
	maxGPUsInUse int64
	// Faults for the next heartbeat: nodes to report, containers to preempt, an AM_RESYNC.
	nodeReports []*yarnpb.NodeReportProto
	// lastNode is the index of the node the last container went to (RoundRobin).
	lastNode  int
	toPreempt []*container
	resync    bool
}

type node struct {
	*fakeyarn.NM
	gpus  int64
	slots int
	lost  bool
	rack  string
}

// placedKey is a SchedulingRequest's scheduler key.
type placedKey struct {
	prio int32
	id   int64
}

type container struct {
	id      records.ContainerID
	tags    []string
	pb      *yarnpb.ContainerProto
	node    *node
	gpus    int64
	started bool
	done    bool
	outcome Outcome
	// due is the allocate number on which the completion is reported; undecided while Options.Exit
	// decides the outcome of a container being started.
	due int
}

// undecided is container.due while the outcome of a start is not known yet.
const undecided = math.MaxInt

// New starts a fake cluster; t.Cleanup stops it.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Nodes <= 0 {
		opts.Nodes = 2
	}
	if opts.GPUsPerNode == 0 {
		opts.GPUsPerNode = 4
	}
	if opts.SlotsPerNode <= 0 {
		opts.SlotsPerNode = 16
	}
	c := &Cluster{
		opts:        opts,
		AMRMToken:   records.Token{Identifier: []byte("fake-amrm-identifier"), Password: []byte("fake-amrm-password"), Kind: records.KindAMRMToken},
		outstanding: map[int32]int{}, capability: map[int32]*yarnpb.ResourceProto{}, maxAsked: map[int32]int{},
		nextID: 2, containers: map[records.ContainerID]*container{}, nmTokenSent: map[string]bool{},
		placed: map[placedKey]*yarnpb.SchedulingRequestProto{},
		racks:  map[int32]map[string]int{}, bound: map[int32]bool{},
	}
	c.rm = fakeyarn.NewRM(t, c.AMRMToken, fakeyarn.RMHooks{
		Register: func(*yarnpb.RegisterApplicationMasterRequestProto) *yarnpb.RegisterApplicationMasterResponseProto {
			return fakeyarn.Registration(opts.GPUsPerNode)
		},
		Allocate: c.allocate,
	})
	c.mu = &c.rm.Mu
	c.SchedulerAddr = c.rm.Server.Addr
	for i := 0; i < opts.Nodes; i++ {
		n := &node{gpus: opts.GPUsPerNode, slots: opts.SlotsPerNode, rack: "/default-rack"}
		if i < len(opts.Racks) {
			n.rack = opts.Racks[i]
		}
		// No lock: the hooks take the cluster's lock themselves, and not for the test's callbacks.
		n.NM = fakeyarn.NewNM(t, records.Token{}, fakeyarn.NMHooks{
			Start: func(req *yarnpb.StartContainersRequestProto) (*yarnpb.StartContainersResponseProto, error) {
				return c.startContainers(n, req), nil
			},
			Stop:     c.stopContainers,
			Statuses: c.containerStatuses,
		})
		c.nodes = append(c.nodes, n)
	}
	return c
}

// Credentials returns credentials holding the scheduler's AMRMToken.
func (c *Cluster) Credentials() *records.Credentials { return c.rm.Credentials() }

// Forget makes the scheduler forget the AM's registration and drops its connections, as an RM
// restart or failover does: the AM must register again and resend its asks.
func (c *Cluster) Forget() {
	c.mu.Lock()
	c.outstanding = map[int32]int{}
	c.racks, c.bound = map[int32]map[string]int{}, map[int32]bool{}
	c.placed = map[placedKey]*yarnpb.SchedulingRequestProto{}
	c.mu.Unlock()
	c.rm.Forget()
}

// Resync makes the next heartbeat answer AM_RESYNC, as a ResourceManager that restarted and
// forgot the attempt does: the scheduler forgets the registration and the asks (not the
// containers), and the AM must register again and ask again.
func (c *Cluster) Resync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resync = true
}

// MoveResponseID sets the scheduler's last response id to id, as a ResourceManager that went on
// answering heartbeats the AM never saw: the AM's next heartbeat is refused with "Invalid
// responseId in AllocateRequest ... expect responseId to be <id> but get <the AM's id>". An id
// near 2147483647 lets a test see the ids wrap to 0.
func (c *Cluster) MoveResponseID(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rm.LastID = id
}

// LoseNode makes the NodeManager at node (host:port) lost, as the ResourceManager sees one that
// stopped heartbeating: the next heartbeat reports it LOST in updated_nodes and completes each of
// its live containers with ExitAborted, and nothing is placed on it again.
func (c *Cluster) LoseNode(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nd := range c.nodes {
		if nd.Server.Addr != node || nd.lost {
			continue
		}
		nd.lost = true
		c.nodeReports = append(c.nodeReports, &yarnpb.NodeReportProto{
			NodeId:    &yarnpb.NodeIdProto{Host: proto.String(nd.Host), Port: proto.Int32(nd.Port)},
			NodeState: yarnpb.NodeStateProto_NS_LOST.Enum(), HealthReport: proto.String("node lost"),
		})
		for _, ct := range c.containers {
			if ct.node == nd && !ct.done {
				c.complete(ct, ExitAborted, "Container released on a *lost* node")
			}
		}
	}
}

// ReportNode makes the next heartbeat report the NodeManager at node (host:port) in state
// (UNHEALTHY, DECOMMISSIONING, ...) in updated_nodes; its containers keep running.
func (c *Cluster) ReportNode(node, state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nd := range c.nodes {
		if nd.Server.Addr == node {
			st := yarnpb.NodeStateProto(yarnpb.NodeStateProto_value["NS_"+state])
			c.nodeReports = append(c.nodeReports, &yarnpb.NodeReportProto{
				NodeId: &yarnpb.NodeIdProto{Host: proto.String(nd.Host), Port: proto.Int32(nd.Port)}, NodeState: st.Enum(),
				RackName: proto.String(nd.rack),
			})
		}
	}
}

// Preempt makes the next heartbeat carry a strict PreemptionMessage for the container, and the
// one after complete it with ExitPreempted, as the capacity scheduler's preemption monitor does.
func (c *Cluster) Preempt(id records.ContainerID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ct := c.containers[id]; ct != nil && !ct.done {
		c.toPreempt = append(c.toPreempt, ct)
	}
}

// Registers is the number of successful registrations.
func (c *Cluster) Registers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rm.Registers
}

// Registration is the last registerApplicationMaster request (host, RPC port, tracking URL).
func (c *Cluster) Registration() (host string, rpcPort int32, trackingURL string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rm.Registration
	return r.GetHost(), r.GetRpcPort(), r.GetTrackingUrl()
}

// copyLocked returns a copy of *s taken with mu held (nil when *s is empty), for the accessors of
// what the fake recorded.
func copyLocked[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *s...)
}

// NodeAddr returns the NodeId (host:port) of NodeManager i, as containers on it name their node.
func (c *Cluster) NodeAddr(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[i]
	return net.JoinHostPort(n.Host, strconv.Itoa(int(n.Port)))
}

// Launches returns every container start, in order.
func (c *Cluster) Launches() []Launch { return copyLocked(c.mu, &c.launches) }

// FailedStarts returns the starts refused through Options.FailStart.
func (c *Cluster) FailedStarts() []Launch { return copyLocked(c.mu, &c.failedStarts) }

// Stops returns the containers the AM stopped through a NodeManager.
func (c *Cluster) Stops() []records.ContainerID { return copyLocked(c.mu, &c.stops) }

// Releases returns the containers the AM released through the scheduler.
func (c *Cluster) Releases() []records.ContainerID { return copyLocked(c.mu, &c.releases) }

// Finishes returns the finishApplicationMaster calls.
func (c *Cluster) Finishes() []Finish {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Finish
	for _, req := range c.rm.Finishes {
		st, _ := strings.CutPrefix(req.GetFinalApplicationStatus().String(), "APP_")
		out = append(out, Finish{Status: st, Diagnostics: req.GetDiagnostics(), TrackingURL: req.GetTrackingUrl()})
	}
	return out
}

// Progress returns the progress values of every allocate call.
func (c *Cluster) Progress() []float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []float32
	for _, req := range c.rm.Requests {
		out = append(out, req.GetProgress())
	}
	return out
}

// Allocates is the number of allocate calls answered.
func (c *Cluster) Allocates() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.rm.Requests)
}

// MaxAsked is the largest outstanding count the AM asked for at a priority.
func (c *Cluster) MaxAsked(priority int32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxAsked[priority]
}

// MaxGPUsInUse is the largest number of yarn.io/gpu held by containers at once.
func (c *Cluster) MaxGPUsInUse() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxGPUsInUse
}

// Running returns the containers started and not completed.
func (c *Cluster) Running() []records.ContainerID {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []records.ContainerID
	for id, ct := range c.containers {
		if ct.started && !ct.done {
			out = append(out, id)
		}
	}
	return out
}

func gpusOf(r *yarnpb.ResourceProto) int64 {
	for _, ri := range r.GetResourceValueMap() {
		if ri.GetKey() == records.GPU {
			return ri.GetValue()
		}
	}
	return 0
}

// allocate applies heartbeat number n-1 (mutex held).
func (c *Cluster) allocate(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
	n++ // the number of heartbeats with this one
	resp.NumClusterNodes = proto.Int32(int32(len(c.nodes)))
	if c.resync {
		// A restarted RM answers nothing but the command, and forgets the asks.
		c.resync = false
		c.rm.Registered = false
		c.outstanding = map[int32]int{}
		c.racks, c.bound = map[int32]map[string]int{}, map[int32]bool{}
		c.placed = map[placedKey]*yarnpb.SchedulingRequestProto{}
		resp.AMCommand = yarnpb.AMCommandProto_AM_RESYNC.Enum()
		return nil
	}
	if ex := fakeyarn.RefusePlacement(c.opts.PlacementHandler, !c.opts.FairScheduler, req); ex != nil {
		return ex
	}
	for _, sr := range req.GetSchedulingRequests() {
		k := placedKey{sr.GetPriority().GetPriority(), sr.GetAllocationRequestId()}
		if old := c.placed[k]; old != nil && !fakeyarn.SameButSize(old, sr) {
			return &ipctest.Exception{Class: fakeyarn.ExInvalidSchedulingRequest, Message: "Invalid updated SchedulingRequest added to scheduler,  we only allows changing numAllocations for the updated SchedulingRequest."}
		}
		c.placed[k] = sr.CloneVT()
		c.maxAsked[k.prio] = max(c.maxAsked[k.prio], int(sr.GetResourceSizing().GetNumAllocations()))
	}
	for _, a := range req.GetAsk() {
		p := a.GetPriority().GetPriority()
		if name := a.GetResourceName(); name != "*" {
			if strings.HasPrefix(name, "/") {
				if c.racks[p] == nil {
					c.racks[p] = map[string]int{}
				}
				c.racks[p][name] = int(a.GetNumContainers())
			}
			continue
		}
		c.outstanding[p] = int(a.GetNumContainers())
		c.capability[p] = a.GetCapability()
		c.bound[p] = !a.GetRelaxLocality()
		c.maxAsked[p] = max(c.maxAsked[p], int(a.GetNumContainers()))
	}
	for _, pid := range req.GetRelease() {
		id := fakeyarn.ContainerID(pid)
		c.releases = append(c.releases, id)
		if ct := c.containers[id]; ct != nil && !ct.done {
			c.complete(ct, ExitAborted, "Container released by the application")
		}
	}
	// Completions that are due.
	for _, ct := range c.containers {
		if ct.started && !ct.done && ct.outcome.Heartbeats >= 0 && n >= ct.due {
			c.complete(ct, ct.outcome.ExitStatus, ct.outcome.Diagnostics)
		}
	}
	resp.CompletedContainerStatuses, c.pending = c.pending, nil
	resp.UpdatedNodes, c.nodeReports = c.nodeReports, nil
	if len(c.toPreempt) > 0 {
		strict := &yarnpb.StrictPreemptionContractProto{}
		for _, ct := range c.toPreempt {
			if ct.done {
				continue
			}
			strict.Container = append(strict.Container, &yarnpb.PreemptionContainerProto{Id: ct.pb.GetId()})
			ct.outcome = Outcome{ExitStatus: ExitPreempted, Diagnostics: "Container preempted by scheduler", Heartbeats: 1}
			ct.due = n + 1
		}
		c.toPreempt = nil
		resp.Preempt = &yarnpb.PreemptionMessageProto{StrictContract: strict}
	}
	if c.opts.Surplus != nil {
		for p := range c.capability {
			c.outstanding[p] += c.opts.Surplus(n - 1)
			break
		}
	}
	// New containers for outstanding asks, as capacity allows.
	for p, want := range c.outstanding {
		for ; want > 0; want-- {
			capPB := c.capability[p]
			gpus := gpusOf(capPB)
			nd := c.freeNodeWhere(gpus, func(nd *node) bool {
				// relaxLocality false on "*": a node of a rack asked for (the FifoScheduler ignores it).
				return !c.bound[p] || c.opts.FifoScheduler || c.racks[p][nd.rack] > 0
			})
			if nd == nil {
				break
			}
			if c.racks[p][nd.rack] > 0 {
				c.racks[p][nd.rack]--
			}
			ct := c.newContainer(p, capPB, nd, gpus)
			resp.AllocatedContainers = append(resp.AllocatedContainers, ct.pb)
			if c.opts.WithholdNMToken != nil && c.opts.WithholdNMToken(nd.Server.Addr) {
				continue
			}
			if !c.nmTokenSent[nd.Server.Addr] {
				c.nmTokenSent[nd.Server.Addr] = true
				resp.NmTokens = append(resp.NmTokens, fakeyarn.NMToken(nd.Host, nd.Port, nd.Token))
			}
		}
		c.outstanding[p] = want
	}
	c.allocatePlaced(resp)
	return nil
}

// allocatePlaced allocates for the SchedulingRequests, one container at a time, on the first node
// (in the order of freeNode) with room whose tags satisfy the request's constraint. Under
// HandlerProcessor what finds no node is rejected; else it stays pending (mutex held).
func (c *Cluster) allocatePlaced(resp *yarnpb.AllocateResponseProto) {
	keys := slices.SortedFunc(maps.Keys(c.placed), func(a, b placedKey) int {
		return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.id, b.id))
	})
	for _, k := range keys {
		sr := c.placed[k]
		sz := sr.GetResourceSizing()
		for sz.GetNumAllocations() > 0 {
			capPB := sz.GetResources()
			gpus := gpusOf(capPB)
			nd := c.freeNodeWhere(gpus, func(nd *node) bool {
				return fakeyarn.Satisfied(sr.GetPlacementConstraint(), func(scope, tag string) int { return c.tagCount(scope, nd, tag) })
			})
			if nd == nil || c.opts.FairScheduler {
				break
			}
			ct := c.newContainer(k.prio, capPB, nd, gpus)
			ct.tags = slices.Clone(sr.GetAllocationTags())
			ct.pb.AllocationRequestId = proto.Int64(k.id)
			ct.pb.AllocationTags = slices.Clone(ct.tags)
			resp.AllocatedContainers = append(resp.AllocatedContainers, ct.pb)
			if !c.nmTokenSent[nd.Server.Addr] {
				c.nmTokenSent[nd.Server.Addr] = true
				resp.NmTokens = append(resp.NmTokens, fakeyarn.NMToken(nd.Host, nd.Port, nd.Token))
			}
			sz.NumAllocations = proto.Int32(sz.GetNumAllocations() - 1)
		}
		if sz.GetNumAllocations() > 0 && c.opts.PlacementHandler == fakeyarn.HandlerProcessor {
			c.rejected += int(sz.GetNumAllocations())
			resp.RejectedSchedulingRequests = append(resp.RejectedSchedulingRequests, &yarnpb.RejectedSchedulingRequestProto{
				Reason: yarnpb.RejectionReasonProto_RRP_COULD_NOT_PLACE_ON_NODE.Enum(), Request: sr.CloneVT()})
			delete(c.placed, k)
		}
	}
}

// tagCount counts the live containers tagged tag on nd ("node") or anywhere ("rack": the fake's
// nodes share one rack).
func (c *Cluster) tagCount(scope string, nd *node, tag string) int {
	n := 0
	for _, ct := range c.containers {
		if !ct.done && (scope != "node" || ct.node == nd) && slices.Contains(ct.tags, tag) {
			n++
		}
	}
	return n
}

// Pending returns how many containers the SchedulingRequests at priority still wait for.
func (c *Cluster) Pending(priority int32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, sr := range c.placed {
		if k.prio == priority {
			n += int(sr.GetResourceSizing().GetNumAllocations())
		}
	}
	return n
}

// RejectedCount is how many containers of SchedulingRequests were rejected (HandlerProcessor).
func (c *Cluster) RejectedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rejected
}

// Tags returns the allocation tags of a container (nil: none, or not a SchedulingRequest's).
func (c *Cluster) Tags(id records.ContainerID) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ct := c.containers[id]; ct != nil {
		return slices.Clone(ct.tags)
	}
	return nil
}

func (c *Cluster) freeNode(gpus int64) *node {
	return c.freeNodeWhere(gpus, func(*node) bool { return true })
}

// freeNodeWhere is freeNode among the nodes ok accepts.
func (c *Cluster) freeNodeWhere(gpus int64, ok func(*node) bool) *node {
	for i := range c.nodes {
		nd := c.nodes[i]
		if c.opts.RoundRobin {
			nd = c.nodes[(c.lastNode+1+i)%len(c.nodes)]
		}
		used, slots := int64(0), 0
		for _, ct := range c.containers {
			if ct.node == nd && !ct.done {
				used += ct.gpus
				slots++
			}
		}
		if !nd.lost && slots < nd.slots && used+gpus <= nd.gpus && ok(nd) {
			c.lastNode = slices.Index(c.nodes, nd)
			return nd
		}
	}
	return nil
}

func (c *Cluster) newContainer(prio int32, capPB *yarnpb.ResourceProto, nd *node, gpus int64) *container {
	seq := c.nextID
	c.nextID++
	r := proto.CloneOf(capPB)
	strip := c.opts.StripResources != nil && c.opts.StripResources(c.nAllocated)
	c.nAllocated++
	if strip {
		r.ResourceValueMap = nil
		gpus = 0
	}
	pb := fakeyarn.Container(seq, nd.Host, nd.Port, r, prio)
	id := fakeyarn.ContainerID(pb.GetId())
	ct := &container{id: id, pb: pb, node: nd, gpus: gpus}
	c.containers[id] = ct
	c.usedGPUs += gpus
	c.maxGPUsInUse = max(c.maxGPUsInUse, c.usedGPUs)
	return ct
}

// complete marks a container done and queues its status for the next heartbeat (mutex held).
func (c *Cluster) complete(ct *container, exit int32, diag string) {
	ct.done = true
	c.usedGPUs -= ct.gpus
	c.pending = append(c.pending, &yarnpb.ContainerStatusProto{
		ContainerId: ct.pb.GetId(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
		ExitStatus: proto.Int32(exit), Diagnostics: proto.String(diag),
	})
}

// startContainers answers startContainers on node nd.
func (c *Cluster) startContainers(nd *node, req *yarnpb.StartContainersRequestProto) *yarnpb.StartContainersResponseProto {
	resp := &yarnpb.StartContainersResponseProto{}
	for _, r := range req.GetStartContainerRequest() {
		id, _ := records.ParseContainerID(string(r.GetContainerToken().GetIdentifier()))
		c.mu.Lock()
		ct := c.containers[id]
		var fail string
		switch {
		case ct == nil || ct.node != nd:
			fail = "No container " + id.String() + " allocated on this node"
		case ct.started:
			fail = "Container " + id.String() + " has already been started"
		case ct.done:
			fail = "Container " + id.String() + " was released"
		}
		if fail != "" {
			c.mu.Unlock()
			resp.FailedRequests = append(resp.FailedRequests, fakeyarn.Failed(&yarnpb.ContainerIdProto{Id: proto.Int64(0)}, fakeyarn.ExYarn, fail))
			continue
		}
		l := decodeLaunch(id, nd.Server.Addr, r.GetContainerLaunchContext())
		l.Resource = records.NewResources(ct.pb.GetResource().GetMemory(), int64(ct.pb.GetResource().GetVirtualCores()))
		if ct.gpus > 0 {
			l.Resource.Set(records.GPU, records.Quantity{Value: ct.gpus})
		}
		if c.opts.FailStart != nil {
			if msg := c.opts.FailStart(l); msg != "" {
				c.failedStarts = append(c.failedStarts, l)
				c.mu.Unlock()
				resp.FailedRequests = append(resp.FailedRequests, fakeyarn.Failed(ct.pb.GetId(), fakeyarn.ExYarn, msg))
				continue
			}
		}
		ct.started = true
		// Not due until its outcome is known: a heartbeat while Exit decides must not complete it
		// with the zero Outcome (exit 0).
		ct.due = undecided
		c.launches = append(c.launches, l)
		exit := c.opts.Exit
		c.mu.Unlock()
		out := Outcome{}
		if exit != nil {
			out = exit(l) // outside the lock: a test may inspect the cluster
		}
		c.mu.Lock()
		if ct.due == undecided { // else preempted meanwhile: that outcome stands
			ct.outcome = out
			ct.due = len(c.rm.Requests) + max(out.Heartbeats, 1)
		}
		c.mu.Unlock()
		resp.SucceededRequests = append(resp.SucceededRequests, ct.pb.GetId())
	}
	return resp
}

// stopContainers answers stopContainers.
func (c *Cluster) stopContainers(req *yarnpb.StopContainersRequestProto) (*yarnpb.StopContainersResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pid := range req.GetContainerId() {
		id := fakeyarn.ContainerID(pid)
		c.stops = append(c.stops, id)
		if ct := c.containers[id]; ct != nil && !ct.done {
			c.complete(ct, ExitKilledByAppMaster, "Container killed by the ApplicationMaster.")
		}
	}
	return &yarnpb.StopContainersResponseProto{SucceededRequests: req.GetContainerId()}, nil
}

// containerStatuses answers getContainerStatuses.
func (c *Cluster) containerStatuses(req *yarnpb.GetContainerStatusesRequestProto) (*yarnpb.GetContainerStatusesResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &yarnpb.GetContainerStatusesResponseProto{}
	for _, pid := range req.GetContainerId() {
		st := yarnpb.ContainerStateProto_C_RUNNING
		if ct := c.containers[fakeyarn.ContainerID(pid)]; ct != nil && ct.done {
			st = yarnpb.ContainerStateProto_C_COMPLETE
		}
		resp.Status = append(resp.Status, &yarnpb.ContainerStatusProto{ContainerId: pid, State: st.Enum()})
	}
	return resp, nil
}

func decodeLaunch(id records.ContainerID, node string, p *yarnpb.ContainerLaunchContextProto) Launch {
	l := Launch{Container: id, Node: node, Commands: p.GetCommand(), Environment: map[string]string{},
		LocalResources: map[string]LocalResource{}, Tokens: p.GetTokens()}
	for _, kv := range p.GetEnvironment() {
		l.Environment[kv.GetKey()] = kv.GetValue()
	}
	for _, kv := range p.GetLocalResources() {
		r := kv.GetValue()
		u := r.GetResource()
		host := u.GetHost()
		if u.GetPort() >= 0 && host != "" {
			host = net.JoinHostPort(host, strconv.Itoa(int(u.GetPort())))
		}
		uu := url.URL{Scheme: u.GetScheme(), Host: host, Path: u.GetFile()}
		l.LocalResources[kv.GetKey()] = LocalResource{URL: uu.String(), Size: r.GetSize(), Timestamp: r.GetTimestamp(),
			Type: r.GetType().String(), Visibility: r.GetVisibility().String()}
	}
	return l
}
