package amrm

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/records"
)

// Scopes of a placement constraint, as Hadoop's PlacementConstraints.NODE and RACK spell them.
const (
	ScopeNode = "node"
	ScopeRack = "rack"
)

// ErrPlacementRefused: the ResourceManager refused an allocate that carried SchedulingRequests:
// its yarn.resourcemanager.placement-constraints.handler is disabled (the default), or it is
// "scheduler" under a scheduler other than the CapacityScheduler, or the scheduler found a
// SchedulingRequest invalid. The asks with a placement were not taken; DropPlaced takes them
// back so that the caller can ask otherwise.
var ErrPlacementRefused = errors.New("amrm: the ResourceManager refused the SchedulingRequests (placement constraints)")

// Placement is what a SchedulingRequest carries beside its size: the allocation tags of its
// containers and an optional constraint on where they may land.
type Placement struct {
	// Tags are the allocation tags of the ask's containers; constraints (this ask's own included)
	// count the containers that carry them.
	Tags []string
	// Constraint is where the containers may land. It is required: Hadoop 3.5.0's CapacityScheduler
	// fails an allocate whose SchedulingRequest has none (a NullPointerException in
	// SingleConstraintAppPlacementAllocator, seen on the mini-YARN); anti-affinity to a tag no
	// container carries yet places anywhere.
	Constraint *Constraint
}

// Constraint is a simple placement constraint: within Scope, a container lands only where a
// container with one of TargetTags runs (In: affinity, Hadoop's targetIn) or only where none runs
// (!In: anti-affinity, targetNotIn). Tags count the application's own containers.
type Constraint struct {
	// Scope is ScopeNode or ScopeRack.
	Scope string
	// In selects affinity (targetIn); false is anti-affinity (targetNotIn).
	In bool
	// TargetTags are the allocation tags the constraint counts.
	TargetTags []string
}

// String writes the constraint as Hadoop's placement spec does, e.g. "notin,node,worker".
func (c *Constraint) String() string {
	if c == nil {
		return "none"
	}
	op := "notin"
	if c.In {
		op = "in"
	}
	return op + "," + c.Scope + "," + strings.Join(c.TargetTags, "|")
}

// Rejected is a SchedulingRequest the ResourceManager gave up placing (under the
// placement-processor handler, after its retry attempts); the ask's outstanding count went down
// by Count.
type Rejected struct {
	Priority            int32
	AllocationRequestID int64
	// Count is how many containers of the request were not placed.
	Count int
	// Reason is Hadoop's RejectionReason: RRP_COULD_NOT_PLACE_ON_NODE or RRP_COULD_NOT_SCHEDULE_ON_NODE.
	Reason string
	// Constraint is the request's constraint as sent.
	Constraint string
}

// placedKey is a SchedulingRequest's scheduler key.
type placedKey struct {
	prio int32
	id   int64
}

// AskPlaced sets, as an absolute total like Ask, the number of containers wanted by a
// SchedulingRequest at priority and allocation request id id (together the scheduler key: a key
// carries either plain asks or one SchedulingRequest; use another id for another constraint at the
// same priority). The ResourceManager accepts no change of a SchedulingRequest but its count: to
// change the placement, ask 0 and use a new key. The capability is checked as Ask checks it.
//
// SchedulingRequests carry no node label expression; the containers are GUARANTEED. A call that
// changes nothing (the same count as outstanding, or 0 for a key never asked) sends nothing.
func (c *Client) AskPlaced(priority int32, id int64, capability records.Resources, count int, pl Placement) error {
	if count < 0 || count > math.MaxInt32 {
		return fmt.Errorf("amrm: ask for %d containers at priority %d: count out of range", count, priority)
	}
	if id < 0 {
		return fmt.Errorf("amrm: allocation request id %d at priority %d: want 0 or more", id, priority)
	}
	if err := pl.check(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reg == nil {
		return fmt.Errorf("%w: call Register before AskPlaced (the asked resource types are checked against the registration)", ErrNotRegistered)
	}
	if err := c.checkCapability(capability); err != nil {
		return err
	}
	k := placedKey{priority, id}
	a, ok := c.placed[k]
	if (!ok && count == 0) || (ok && !a.dirty && a.outstanding == count && sameResource(a.capability, capability) && a.placement.equal(pl)) {
		// Nothing to tell the ResourceManager. Hadoop 3.2.2's CapacityScheduler refuses any
		// update of a SchedulingRequest, even one that changes nothing ("Invalid updated
		// SchedulingRequest", seen on the mini-YARN), so none is sent without a change.
		return nil
	}
	if ok && a.outstanding > 0 && (!sameResource(a.capability, capability) || !a.placement.equal(pl)) {
		return fmt.Errorf("amrm: priority %d, allocation request id %d already asks for %d containers of %s (%s); ask 0 first, or use another id",
			priority, id, a.outstanding, a.capability, a.placement.Constraint)
	}
	if !ok {
		a = &askState{}
		c.placed[k] = a
	}
	a.capability = records.ResourcesOf(capability.All()...)
	a.placement = pl.clone()
	a.outstanding = count
	a.dirty = true
	a.version++
	return nil
}

// OutstandingPlaced returns how many containers the SchedulingRequest at priority and allocation
// request id id still wants.
func (c *Client) OutstandingPlaced(priority int32, id int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.placed[placedKey{priority, id}]; ok {
		return a.outstanding
	}
	return 0
}

// DropPlaced forgets every SchedulingRequest not answered yet and returns how many containers
// each priority still wanted through them: after ErrPlacementRefused the caller asks for them
// otherwise (plain asks at the same priority are allowed: the ResourceManager took none of them).
func (c *Client) DropPlaced() map[int32]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int32]int{}
	for k, a := range c.placed {
		out[k.prio] += a.outstanding
		delete(c.placed, k)
	}
	return out
}

func (p Placement) check() error {
	for _, t := range p.Tags {
		if t == "" {
			return errors.New("amrm: an empty allocation tag")
		}
	}
	if p.Constraint == nil {
		return errors.New("amrm: a SchedulingRequest without a placement constraint (the CapacityScheduler refuses it)")
	}
	if c := p.Constraint; c != nil {
		if c.Scope != ScopeNode && c.Scope != ScopeRack {
			return fmt.Errorf("amrm: placement scope %q: want %s or %s", c.Scope, ScopeNode, ScopeRack)
		}
		if len(c.TargetTags) == 0 {
			return errors.New("amrm: a placement constraint without target tags")
		}
	}
	return nil
}

func (p Placement) clone() Placement {
	out := Placement{Tags: slices.Clone(p.Tags)}
	if p.Constraint != nil {
		cc := *p.Constraint
		cc.TargetTags = slices.Clone(cc.TargetTags)
		out.Constraint = &cc
	}
	return out
}

func (p Placement) equal(o Placement) bool {
	if !slices.Equal(p.Tags, o.Tags) || (p.Constraint == nil) != (o.Constraint == nil) {
		return false
	}
	if p.Constraint == nil {
		return true
	}
	a, b := p.Constraint, o.Constraint
	return a.Scope == b.Scope && a.In == b.In && slices.Equal(a.TargetTags, b.TargetTags)
}

// schedulingRequestProto encodes a SchedulingRequest: targetIn is cardinality [1, MaxInt32],
// targetNotIn [0, 0], both over allocation tags, as Hadoop's PlacementConstraints builds them.
func schedulingRequestProto(k placedKey, a *askState, types map[string]ResourceType) (*yarnpb.SchedulingRequestProto, error) {
	res, err := resourceProto(a.capability, types)
	if err != nil {
		return nil, err
	}
	sr := &yarnpb.SchedulingRequestProto{
		AllocationRequestId: proto.Int64(k.id),
		Priority:            &yarnpb.PriorityProto{Priority: proto.Int32(k.prio)},
		ExecutionType: &yarnpb.ExecutionTypeRequestProto{
			ExecutionType:        yarnpb.ExecutionTypeProto_GUARANTEED.Enum(),
			EnforceExecutionType: proto.Bool(true),
		},
		AllocationTags: slices.Clone(a.placement.Tags),
		ResourceSizing: &yarnpb.ResourceSizingProto{NumAllocations: proto.Int32(int32(a.outstanding)), Resources: res},
	}
	if c := a.placement.Constraint; c != nil {
		minC, maxC := int32(0), int32(0)
		if c.In {
			minC, maxC = 1, math.MaxInt32
		}
		sr.PlacementConstraint = &yarnpb.PlacementConstraintProto{SimpleConstraint: &yarnpb.SimplePlacementConstraintProto{
			Scope: proto.String(c.Scope),
			TargetExpressions: []*yarnpb.PlacementConstraintTargetProto{{
				TargetType:   yarnpb.PlacementConstraintTargetProto_ALLOCATION_TAG.Enum(),
				TargetValues: slices.Clone(c.TargetTags),
			}},
			MinCardinality: proto.Int32(minC),
			MaxCardinality: proto.Int32(maxC),
		}}
	}
	return sr, nil
}

// constraintText describes a received SchedulingRequest's constraint (a rejection's), e.g.
// "notin,node,worker"; a composite constraint yarn-er does not decode is "composite".
func constraintText(sr *yarnpb.SchedulingRequestProto) string {
	pc := sr.GetPlacementConstraint()
	if pc == nil {
		return "none"
	}
	sc := pc.GetSimpleConstraint()
	if sc == nil {
		return "composite"
	}
	c := &Constraint{Scope: sc.GetScope(), In: sc.GetMinCardinality() > 0}
	for _, t := range sc.GetTargetExpressions() {
		c.TargetTags = append(c.TargetTags, t.GetTargetValues()...)
	}
	return c.String()
}

// isPlacementRefusal reports a ResourceManager's refusal of SchedulingRequests: the placement
// processors' "Found non empty SchedulingRequest ..." (handler disabled, or "scheduler" under a
// scheduler that cannot place them) and the CapacityScheduler's SchedulerInvalidResoureRequestException
// about a SchedulingRequest.
func isPlacementRefusal(err error) bool {
	var re *records.RemoteError
	if !errors.As(err, &re) {
		return false
	}
	return strings.Contains(re.Message, "SchedulingRequest") || strings.Contains(re.Message, "placement constraint") ||
		strings.HasSuffix(re.Class, "SchedulerInvalidResoureRequestException")
}

func comparePlacedKeys(a, b placedKey) int {
	return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.id, b.id))
}
