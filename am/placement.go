package am

import (
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/jobspec"
)

// placeMode is how a role's containers are placed.
type placeMode int

const (
	// placeNone: plain asks anywhere (no placement, or placement.fallback relax).
	placeNone placeMode = iota
	// placeRM: SchedulingRequests with the role's allocation tag and a placement constraint; the
	// ResourceManager places (spread: anti-affinity on node; pack: affinity on node).
	placeRM
	// placeAM: plain asks; the AM gives back the containers that land against the placement
	// (the fallback when the ResourceManager cannot place by constraints).
	placeAM
)

func (m placeMode) String() string {
	switch m {
	case placeRM:
		return "ResourceManager (placement constraints)"
	case placeAM:
		return "ApplicationMaster"
	}
	return "none"
}

// Allocation request ids of a pack role's SchedulingRequests: its first container goes anywhere
// (to a node without the role's tag, which is any node then), the others beside it (affinity to
// the tag). Two keys: the ResourceManager accepts no
// change of a request's constraint.
const (
	packFirstID = 0
	packRestID  = 1
)

// PlacementError is a role whose placement the ResourceManager could not serve by placement
// constraints, with placement.fallback fail: the application unregistered FAILED with its message.
type PlacementError struct {
	Role      string
	Placement string
	// Reason is the ResourceManager's refusal or rejection.
	Reason string
}

func (e *PlacementError) Error() string {
	return fmt.Sprintf("yarn-er: role %s: the ResourceManager cannot place %s by placement constraints (placement.fallback: fail): %s; "+
		"set yarn.resourcemanager.placement-constraints.handler to scheduler (CapacityScheduler) on the ResourceManager, or use placement.fallback: am",
		e.Role, e.Placement, e.Reason)
}

// Is makes errors.Is(err, ErrApplicationFailed) true.
func (e *PlacementError) Is(target error) bool { return target == ErrApplicationFailed }

// pack reports a role whose ranks all go on one node.
func (role *roleState) pack() bool {
	return role.spec.Placement != nil && role.spec.Placement.Pack == "node"
}

// placementText is the role's placement as the job file writes it.
func (role *roleState) placementText() string {
	switch {
	case role.spread():
		return "spread: node"
	case role.pack():
		return "pack: node"
	case len(role.nodes()) > 0:
		return "nodes: [" + strings.Join(role.nodes(), ", ") + "]"
	}
	return "none"
}

// tag is the allocation tag of the role's containers: its name (tags count the application's own
// containers only).
func (role *roleState) tag() string { return role.spec.Name }

// initialPlaceMode is where a role starts: the ResourceManager places spread and pack roles, but
// a SchedulingRequest carries no node label expression, so a job with a node label places them
// itself.
func (r *runner) initialPlaceMode(role *roleState) placeMode {
	if len(role.nodes()) > 0 {
		// placement nodes: the AM keeps the ranks on the named NodeManagers (a SchedulingRequest
		// cannot name one NodeManager of a host with two), and spread or pack among them.
		return placeAM
	}
	if !role.spread() && !role.pack() {
		return placeNone
	}
	if r.spec.NodeLabel != "" {
		r.log.Info("am: the ApplicationMaster places the role itself: a SchedulingRequest carries no node label expression",
			"role", role.spec.Name, "placement", role.placementText(), "nodeLabel", r.spec.NodeLabel)
		return placeAM
	}
	return placeRM
}

// ask sets the role's outstanding containers to n (an absolute total), through plain asks or the
// role's SchedulingRequests.
func (r *runner) ask(role *roleState, n int) error {
	if role.mode != placeRM {
		return r.rm.AskWithLabel(role.prio, role.capab, n, r.spec.NodeLabel)
	}
	tag := []string{role.tag()}
	if role.spread() {
		return r.rm.AskPlaced(role.prio, 0, role.capab, n,
			amrm.Placement{Tags: tag, Constraint: &amrm.Constraint{Scope: amrm.ScopeNode, TargetTags: tag}})
	}
	// pack: until a container of the role holds a node, one goes anywhere (anti-affinity to the
	// role's own tag, which no node carries yet: the CapacityScheduler takes no SchedulingRequest
	// without a constraint) and the rest wait.
	first, rest := 0, n
	if len(role.usedNodes()) == 0 && n > 0 {
		first, rest = 1, 0
	}
	if err := r.rm.AskPlaced(role.prio, packFirstID, role.capab, first,
		amrm.Placement{Tags: tag, Constraint: &amrm.Constraint{Scope: amrm.ScopeNode, TargetTags: tag}}); err != nil {
		return err
	}
	return r.rm.AskPlaced(role.prio, packRestID, role.capab, rest,
		amrm.Placement{Tags: tag, Constraint: &amrm.Constraint{Scope: amrm.ScopeNode, In: true, TargetTags: tag}})
}

// packAsks moves the waiting ranks of each pack role placed by the ResourceManager to the
// affinity request once its first container holds a node.
func (r *runner) packAsks() {
	if r.fail != nil {
		return
	}
	for _, role := range r.roles {
		if !role.pack() || role.mode != placeRM || !role.asked {
			continue
		}
		waiting := role.waitingCount()
		anchored := len(role.usedNodes()) > 0
		first := r.rm.OutstandingPlaced(role.prio, packFirstID)
		if (anchored && first > 0) || (!anchored && first == 0 && waiting > 0) || (anchored && r.rm.Outstanding(role.prio) != waiting) {
			if err := r.ask(role, waiting); err != nil && r.fail == nil {
				r.fail = fmt.Errorf("yarn-er: role %s: %w", role.spec.Name, err)
			}
		}
	}
}

// placementRefused applies each placed role's fallback after the ResourceManager refused the
// SchedulingRequests (reason: its message): fail the application, or ask with plain requests
// (the AM placing the ranks itself, or anywhere).
func (r *runner) placementRefused(reason string) {
	r.rm.DropPlaced()
	for _, role := range r.roles {
		if role.mode == placeRM {
			r.fallBack(role, reason)
		}
	}
}

// placementRejected applies the role's fallback after the ResourceManager rejected its
// SchedulingRequest (placement-processor handler: no node satisfied the constraint).
func (r *runner) placementRejected(rj amrm.Rejected) {
	role := r.byPrio[rj.Priority]
	if role == nil || role.mode != placeRM {
		return
	}
	_ = r.ask(role, 0) // withdraw what is left of the role's SchedulingRequests
	r.fallBack(role, fmt.Sprintf("%d container(s) rejected (%s, constraint %s)", rj.Count, rj.Reason, rj.Constraint))
}

// fallBack is placement.fallback for one role.
func (r *runner) fallBack(role *roleState, reason string) {
	fb := role.spec.Placement.Fallback
	if fb == jobspec.FallbackFail {
		r.log.Error("am: the ResourceManager cannot place the role by placement constraints; placement.fallback: fail",
			"role", role.spec.Name, "placement", role.placementText(), "reason", reason)
		if r.fail == nil {
			r.fail = &PlacementError{Role: role.spec.Name, Placement: role.placementText(), Reason: reason}
		}
		return
	}
	role.mode = placeAM
	how := "the ApplicationMaster places the ranks itself with plain asks (placement.fallback: am)"
	if fb == jobspec.FallbackRelax {
		role.mode = placeNone
		how = "the ranks go anywhere (placement.fallback: relax)"
	}
	r.res.PlacementFallbacks++
	by := "placed by the ApplicationMaster"
	if role.mode == placeNone {
		by = "placed anywhere"
	}
	r.fellBack = append(r.fellBack, fmt.Sprintf("role %s (%s, %s)", role.spec.Name, role.placementText(), by))
	r.log.Warn("am: the ResourceManager cannot place the role by placement constraints; "+how,
		"role", role.spec.Name, "placement", role.placementText(), "reason", reason)
	if role.asked && r.fail == nil {
		if err := r.ask(role, role.waitingCount()); err != nil {
			r.fail = fmt.Errorf("yarn-er: role %s: %w", role.spec.Name, err)
		}
	}
}
