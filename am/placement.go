package am

import (
	"fmt"
	"strings"
	"time"

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
	// placeRacks: plain asks bound to the role's racks (relaxLocality false on "*"): the
	// scheduler places them on the racks' nodes.
	placeRacks
)

func (m placeMode) String() string {
	switch m {
	case placeRM:
		return "ResourceManager (placement constraints)"
	case placeAM:
		return "ApplicationMaster"
	case placeRacks:
		return "ResourceManager (rack requests, relaxLocality false)"
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
	case len(role.racks()) > 0:
		return "racks: [" + strings.Join(role.racks(), ", ") + "]"
	}
	return "none"
}

// racks are the racks the role's ranks may land on (placement racks; nil: any).
func (role *roleState) racks() []string {
	if role.spec.Placement == nil {
		return nil
	}
	return role.spec.Placement.Racks
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
	if len(role.racks()) > 0 {
		// placement racks: rack requests keep the ranks on the racks (a SchedulingRequest names
		// no rack); the AM spreads or packs them there itself.
		if role.spread() || role.pack() {
			return placeAM
		}
		return placeRacks
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
		if role.paused(r.opts.Now()) {
			n = 0 // the role's asks wait (racks: its containers kept landing against its placement)
		}
		return r.rm.AskOnRacks(role.prio, role.capab, n, r.spec.NodeLabel, role.racks())
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

// racksPause is how long a role with racks stops asking after missLimit containers in a row
// landed against its placement (spread or pack among the racks' nodes).
const racksPause = 30 * time.Second

// missLimit is how many containers in a row may land against a role's placement before a role
// with racks pauses its asks: twice the cluster's nodes. The AM does not know how many nodes
// the racks have (an allocated container carries no rack), so a spread role may ask for more
// ranks than the racks have nodes; then every container lands beside a rank and is given back,
// and the pause keeps that from going on at every heartbeat.
func (r *runner) missLimit() int { return 2 * max(r.clusterNodes, 1) }

// paused reports a role whose asks wait until pauseUntil.
func (role *roleState) paused(now time.Time) bool { return now.Before(role.pauseUntil) }

// pauseIfStuck pauses the asks of a role with racks whose last containers all landed against
// its placement.
func (r *runner) pauseIfStuck(role *roleState) {
	if len(role.racks()) == 0 || role.missRun < r.missLimit() {
		return
	}
	role.missRun = 0
	role.pauseUntil = r.opts.Now().Add(racksPause)
	r.res.PlacementPauses++
	r.log.Warn("am: ranks wait: the containers of the role keep landing against its placement on its racks (more ranks than the racks have nodes free for them?); the ApplicationMaster asks again later",
		"role", role.spec.Name, "placement", role.placementText(), "given back in a row", r.missLimit(), "pause", racksPause)
}

// resumeAsks asks again for the waiting ranks of each role whose pause is over.
func (r *runner) resumeAsks() {
	now := r.opts.Now()
	for _, role := range r.roles {
		if role.pauseUntil.IsZero() || role.paused(now) || r.fail != nil {
			continue
		}
		role.pauseUntil = time.Time{}
		if role.asked {
			if err := r.ask(role, role.waitingCount()); err != nil {
				r.fail = fmt.Errorf("yarn-er: role %s: %w", role.spec.Name, err)
			}
		}
	}
}
