package fakeyarn

import (
	"math"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
)

// Values of yarn.resourcemanager.placement-constraints.handler.
const (
	HandlerDisabled  = "disabled"
	HandlerScheduler = "scheduler"
	HandlerProcessor = "placement-processor"
)

// ExInvalidSchedulingRequest is the CapacityScheduler's refusal of a SchedulingRequest (Hadoop
// spells the class so).
const ExInvalidSchedulingRequest = "org.apache.hadoop.yarn.exceptions.SchedulerInvalidResoureRequestException"

// RefusePlacement is the ResourceManager's refusal of an allocate that carries SchedulingRequests
// under handler ("" is the default, disabled) and a scheduler that can (CapacityScheduler) or
// cannot place them, with the messages of Hadoop 3.2–3.5's DisabledPlacementProcessor and
// SchedulerPlacementProcessor; nil when the allocate is accepted. Under placement-processor a
// scheduler that cannot place them accepts the allocate and rejects each request (see
// RejectAll).
func RefusePlacement(handler string, capacityScheduler bool, req *yarnpb.AllocateRequestProto) *ipctest.Exception {
	if len(req.GetSchedulingRequests()) == 0 {
		return nil
	}
	switch handler {
	case "", HandlerDisabled:
		return &ipctest.Exception{Class: ExYarn, Message: "Found non empty SchedulingRequest in AllocateRequest for application=" +
			AttemptID + ", but the configured yarn.resourcemanager.placement-constraints.handler=disabled cannot handle placement constraints. Rejecting this allocate operation"}
	case HandlerScheduler:
		if !capacityScheduler {
			return &ipctest.Exception{Class: ExYarn, Message: "Found non empty SchedulingRequest of AllocateRequest for application=" +
				AttemptID + ", however the configured scheduler=org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler cannot handle placement constraints, rejecting this allocate operation"}
		}
	}
	for _, sr := range req.GetSchedulingRequests() {
		if sr.GetPlacementConstraint() == nil && handler == HandlerScheduler {
			// Hadoop 3.5.0's SingleConstraintAppPlacementAllocator, as the mini-YARN answered.
			return &ipctest.Exception{Class: "java.lang.NullPointerException", Message: `Cannot invoke "org.apache.hadoop.yarn.api.resource.PlacementConstraint.equals(Object)" because the return value of "org.apache.hadoop.yarn.api.records.impl.pb.SchedulingRequestPBImpl.getPlacementConstraint()" is null`}
		}
		if et := sr.GetExecutionType(); et != nil && et.GetExecutionType() != yarnpb.ExecutionTypeProto_GUARANTEED {
			return &ipctest.Exception{Class: ExInvalidSchedulingRequest, Message: "Only GUARANTEED execution type is supported."}
		}
		if sr.GetResourceSizing() == nil {
			return &ipctest.Exception{Class: ExInvalidSchedulingRequest, Message: "No ResourceSizing found in the scheduling request, please double check"}
		}
		for _, rr := range req.GetAsk() {
			if rr.GetPriority().GetPriority() == sr.GetPriority().GetPriority() && rr.GetAllocationRequestId() == sr.GetAllocationRequestId() {
				return &ipctest.Exception{Class: ExInvalidSchedulingRequest, Message: "ResourceRequest and SchedulingRequest share the scheduler key: please send ResourceRequest with a different allocationId and priority"}
			}
		}
	}
	return nil
}

// SameButSize reports whether an updated SchedulingRequest changes nothing but its count: the
// CapacityScheduler refuses any other change of a key's request ("Invalid updated
// SchedulingRequest added to scheduler, we only allows changing numAllocations").
func SameButSize(old, upd *yarnpb.SchedulingRequestProto) bool {
	a, b := old.CloneVT(), upd.CloneVT()
	a.ResourceSizing.NumAllocations, b.ResourceSizing.NumAllocations = nil, nil
	return a.EqualVT(b)
}

// Satisfied reports whether a container may land on a node under the constraint c (nil: yes),
// given how many live containers carry each allocation tag in the constraint's scope around that
// node (count(scope, tag)): the node itself for "node", its rack for "rack". A target matches
// when any of its values does; the count of the matching tags must lie in [min, max], max 0
// meaning none (anti-affinity) and min 1 at least one (affinity). A composite constraint (which
// the subset does not decode) is never satisfied.
func Satisfied(c *yarnpb.PlacementConstraintProto, count func(scope, tag string) int) bool {
	if c == nil {
		return true
	}
	sc := c.GetSimpleConstraint()
	if sc == nil {
		return false
	}
	n := 0
	for _, t := range sc.GetTargetExpressions() {
		if t.GetTargetType() != yarnpb.PlacementConstraintTargetProto_ALLOCATION_TAG {
			return false
		}
		for _, v := range t.GetTargetValues() {
			n += count(sc.GetScope(), v)
		}
	}
	lo, hi := int(sc.GetMinCardinality()), int(sc.GetMaxCardinality())
	if sc.MaxCardinality == nil {
		hi = math.MaxInt32
	}
	return n >= lo && n <= hi
}
