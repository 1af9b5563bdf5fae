package am

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// roleState is one role of the job while the AM runs it: its asks (one priority, one resource
// vector, counted by the amrm client, never one record per pending rank) and its ranks.
type roleState struct {
	spec  jobspec.Role
	idx   int
	prio  int32
	capab records.Resources
	// slots are the role's ranks, slots[i].rank == i; first is rank 0's index in runner.slots.
	slots []*slot
	first int
	// asked says the role's containers were asked for (its dependencies were running).
	asked bool
	// cursor is the lowest rank that may be waiting (ranks below it have had a container).
	cursor int
	gang   *gangState
	// misplaced counts the containers given back for landing beside another rank (spread);
	// spreadWarned says the ranks that wait for a node were logged.
	misplaced    int
	spreadWarned bool
	// missRun counts the containers given back in a row (none kept between them); a role with
	// racks whose run reaches missLimit stops asking until pauseUntil (placement.go).
	missRun    int
	pauseUntil time.Time
	// mode is how the role's containers are placed (placement.go).
	mode placeMode
}

// gangState is a set of roles that start together: no rank of it starts until every container of
// every role of it is allocated (held).
type gangState struct {
	name  string
	roles []*roleState
	// asked is when the gang's containers were asked for (zero: not yet).
	asked time.Time
	// started: every rank of the gang had its container and was started; a rank restarted later
	// starts on its own.
	started bool
	// waits counts the timeouts after which the gang gave back its containers and asked again.
	waits int
}

// GangError is a gang that did not get all its containers within the spec's gang timeout: the AM
// gave back what it held and unregistered FAILED with its message.
type GangError struct {
	Gang    string
	Waited  time.Duration
	Missing []string // "2 of 3 worker containers <memory-mb:…>"
}

func (e *GangError) Error() string {
	return fmt.Sprintf("yarn-er: gang %s got not all its containers within %v (the gang timeout); missing: %s; the containers it held were given back",
		e.Gang, e.Waited, strings.Join(e.Missing, "; "))
}

// Is makes errors.Is(err, ErrApplicationFailed) true.
func (e *GangError) Is(target error) bool { return target == ErrApplicationFailed }

// setupRoles builds the roles, their ranks and gangs from the spec.
func (r *runner) setupRoles() {
	gangs := map[string]*gangState{}
	for i, rs := range r.spec.RoleList() {
		role := &roleState{spec: rs, idx: i, prio: rs.Priority, first: len(r.slots)}
		for k := range rs.Containers {
			s := &slot{rank: k, global: len(r.slots), role: role, exit: -1000}
			role.slots = append(role.slots, s)
			r.slots = append(r.slots, s)
		}
		if rs.Gang != "" {
			g := gangs[rs.Gang]
			if g == nil {
				g = &gangState{name: rs.Gang}
				gangs[rs.Gang] = g
				r.gangs = append(r.gangs, g)
			}
			g.roles = append(g.roles, role)
			role.gang = g
		}
		role.mode = r.initialPlaceMode(role)
		r.roles = append(r.roles, role)
		r.byPrio[role.prio] = role
	}
}

// nextWaiting returns the lowest waiting rank of the role, or nil.
func (role *roleState) nextWaiting() *slot {
	for ; role.cursor < len(role.slots); role.cursor++ {
		if s := role.slots[role.cursor]; s.state == waiting {
			return s
		}
	}
	return nil
}

// toWaiting makes a rank wait for a (new) container.
func (s *slot) toWaiting() {
	s.state = waiting
	s.role.cursor = min(s.role.cursor, s.rank)
}

// waitingCount is how many of the role's ranks wait for a container.
func (role *roleState) waitingCount() int {
	n := 0
	for _, s := range role.slots {
		if s.state == waiting {
			n++
		}
	}
	return n
}

// allRunning reports every rank of the role running (or done).
func (role *roleState) allRunning() bool {
	for _, s := range role.slots {
		if s.state != running && s.state != succeeded {
			return false
		}
	}
	return true
}

// askRoles asks for the containers of every role not asked for yet whose dependencies all run
// (a gang's roles together, once every one of them may be asked for). It returns an error when
// an ask is refused.
func (r *runner) askRoles() error {
	ready := func(role *roleState) bool {
		for _, d := range role.spec.DependsOn {
			for _, o := range r.roles {
				if o.spec.Name == d && !o.allRunning() {
					return false
				}
			}
		}
		return true
	}
	for _, role := range r.roles {
		if role.asked || !ready(role) {
			continue
		}
		members := []*roleState{role}
		if g := role.gang; g != nil {
			members = g.roles
			all := true
			for _, m := range members {
				all = all && (m.asked || ready(m))
			}
			if !all {
				continue
			}
			if g.asked.IsZero() {
				g.asked = r.opts.Now()
			}
		}
		for _, m := range members {
			if m.asked {
				continue
			}
			m.asked = true
			want := m.waitingCount()
			if want == 0 {
				continue
			}
			if err := r.ask(m, want); err != nil {
				return fmt.Errorf("role %s: cannot ask for %d container(s) of %s: %w", m.spec.Name, want, m.capab.String(), err)
			}
			r.log.Info("am: asked", "role", m.spec.Name, "containers", want, "resource", m.capab.String(), "priority", m.prio,
				"nodeLabel", r.spec.NodeLabel, "gang", m.spec.Gang, "placedBy", m.mode.String())
		}
	}
	return nil
}

// hold keeps an allocated container for a rank of a gang that has not started yet.
func (r *runner) hold(s *slot, c amrm.Container) {
	s.state, s.container, s.exit, s.diag = held, c, -1000, ""
	r.byID[c.ID] = s
	r.log.Info("am: holding a container for the gang", "gang", s.role.gang.name, "role", s.role.spec.Name, "rank", s.rank,
		"container", c.ID.String(), "node", c.Node)
}

// gangComplete reports every rank of the gang holding its container.
func (g *gangState) complete() bool {
	for _, role := range g.roles {
		for _, s := range role.slots {
			if s.state != held && s.state != running && s.state != succeeded {
				return false
			}
		}
	}
	return true
}

// startGangs starts every gang whose ranks all hold their containers, and fails the application
// for a gang past its timeout (giving back what it held, asking for nothing more).
func (r *runner) startGangs() {
	timeout := time.Duration(r.spec.GangTimeout()) * time.Millisecond
	for _, g := range r.gangs {
		if g.started || g.asked.IsZero() {
			continue
		}
		if g.complete() {
			g.started = true
			r.log.Info("am: gang complete; starting its ranks", "gang", g.name, "after", r.opts.Now().Sub(g.asked))
			for _, role := range g.roles {
				for _, s := range role.slots {
					if s.state == held {
						r.launch1(s)
					}
				}
			}
			continue
		}
		waited := r.opts.Now().Sub(g.asked)
		if waited < timeout || r.fail != nil {
			continue
		}
		if r.spec.GangTimeoutAction == jobspec.GangWait {
			r.regang(g, waited)
			continue
		}
		ge := &GangError{Gang: g.name, Waited: timeout}
		for _, role := range g.roles {
			have := r.releaseHeld(role)
			_ = r.ask(role, 0)
			if have < len(role.slots) {
				ge.Missing = append(ge.Missing, fmt.Sprintf("%d of %d %s container(s) %s allocated", have, len(role.slots), role.spec.Name, role.capab.String()))
			}
		}
		r.log.Error("am: gang timed out", "gang", g.name, "waited", waited, "missing", ge.Missing)
		r.fail = ge
	}
}

// spread reports a role whose ranks go at most one per node.
func (role *roleState) spread() bool {
	return role.spec.Placement != nil && role.spec.Placement.Spread == "node"
}

// nodes are the hosts the role's ranks may land on (placement nodes; nil: any).
func (role *roleState) nodes() []string {
	if role.spec.Placement == nil {
		return nil
	}
	return role.spec.Placement.Nodes
}

// allowedOn reports whether a rank of the role may run on node (a NodeManager's host:port): any
// node when the role names none, else a node named by its host:port or by its host alone.
func (role *roleState) allowedOn(node string) bool {
	names := role.nodes()
	if len(names) == 0 {
		return true
	}
	host := node
	if h, _, err := net.SplitHostPort(node); err == nil {
		host = h
	}
	for _, n := range names {
		if n == node || n == host {
			return true
		}
	}
	return false
}

// usedNodes are the nodes where the role's ranks have (or hold) containers.
func (role *roleState) usedNodes() map[string]bool {
	used := map[string]bool{}
	for _, s := range role.slots {
		if s.hasContainer() {
			used[s.container.Node] = true
		}
	}
	return used
}

// misplaced gives back a container that landed against the role's placement, and asks for
// another in its place: for spread, on a node that already has a rank of the role (spreadAsks
// bounds the ask by the nodes left); for pack, on another node than the role's first. When the
// ResourceManager places by constraints this does not happen; as the fallback (placeAM) the AM
// places the ranks itself, through any scheduler and any placement-constraints handler: the
// ResourceManager places a ResourceRequest anywhere.
//
// A container on a node the role's placement does not name (placement nodes) is given back the
// same way: the AM keeps the restriction itself rather than through locality asks, which name
// hosts only and so cannot tell apart two NodeManagers of one host.
func (r *runner) misplaced(role *roleState, c amrm.Container) bool {
	used := role.usedNodes()
	rack, rackKnown := r.nodeRacks[c.Node]
	switch {
	case len(role.racks()) > 0 && rackKnown && !slices.Contains(role.racks(), rack):
		// The scheduler keeps a rack-bound ask on the racks (the FifoScheduler does not); the AM
		// checks what it knows: the racks of the nodes the ResourceManager reported.
		r.log.Warn("am: giving back a container on a node off the role's racks (placement racks)",
			"role", role.spec.Name, "container", c.ID.String(), "node", c.Node, "rack", rack, "racks", strings.Join(role.racks(), ","))
	case role.mode == placeNone || role.mode == placeRacks:
		role.missRun = 0
		return false
	case !role.allowedOn(c.Node):
		r.log.Info("am: giving back a container on a node the role's placement does not name (placement nodes)",
			"role", role.spec.Name, "container", c.ID.String(), "node", c.Node, "nodes", strings.Join(role.nodes(), ","))
	case role.spread() && used[c.Node]:
		r.log.Info("am: giving back a container on a node that has a rank of the role already (placement spread: node)",
			"role", role.spec.Name, "container", c.ID.String(), "node", c.Node)
	case role.pack() && len(used) > 0 && !used[c.Node]:
		r.log.Info("am: giving back a container on another node than the role's (placement pack: node)",
			"role", role.spec.Name, "container", c.ID.String(), "node", c.Node)
	default:
		role.missRun = 0
		return false
	}
	_ = r.rm.Release(c.ID)
	r.res.Released++
	role.misplaced++
	role.missRun++
	r.pauseIfStuck(role)
	if r.fail == nil {
		_ = r.ask(role, r.rm.Outstanding(role.prio)+1)
	}
	return true
}

// spreadAsks bounds the ask of each spread role by the nodes without a rank of it: the ranks
// beyond wait (and the AM says so once) until a node frees or joins.
func (r *runner) spreadAsks() {
	if r.clusterNodes <= 0 || r.fail != nil {
		return
	}
	for _, role := range r.roles {
		if !role.spread() || !role.asked || role.mode == placeNone || role.paused(r.opts.Now()) {
			continue
		}
		nodes := r.clusterNodes
		if n := len(role.nodes()); n > 0 {
			nodes = min(nodes, n)
		}
		free := max(nodes-len(role.usedNodes()), 0)
		want := min(role.waitingCount(), free)
		if role.mode == placeAM {
			if out := r.rm.Outstanding(role.prio); out != want {
				_ = r.ask(role, want)
			}
		}
		if waiting := role.waitingCount(); waiting > want && !role.spreadWarned {
			// Placed by the ResourceManager, the ranks beyond stay pending there (anti-affinity:
			// no node without the role's tag); placed by the AM, they are not asked for yet.
			role.spreadWarned = true
			r.log.Warn("am: ranks wait: placement spread: node puts at most one rank of the role on each node, and every node has one",
				"role", role.spec.Name, "waiting", waiting-want, "nodes", r.clusterNodes, "placedBy", role.mode.String())
		}
	}
}

// releaseHeld gives back the containers the role's slots hold for their gang, each slot waiting
// again, and returns how many there were.
func (r *runner) releaseHeld(role *roleState) int {
	have := 0
	for _, s := range role.slots {
		if s.state == held {
			have++
			delete(r.byID, s.container.ID)
			_ = r.rm.Release(s.container.ID)
			r.res.Released++
			s.container = amrm.Container{}
			s.toWaiting()
		}
	}
	return have
}

// regang gives back what an incomplete gang holds, past its timeout, and asks for all of it again
// (gang timeout action "wait"): no container is held idle past the timeout, and the gang waits
// another timeout.
func (r *runner) regang(g *gangState, waited time.Duration) {
	var missing []string
	for _, role := range g.roles {
		have := r.releaseHeld(role)
		if have < len(role.slots) {
			missing = append(missing, fmt.Sprintf("%d of %d %s container(s) allocated", have, len(role.slots), role.spec.Name))
		}
		if err := r.ask(role, role.waitingCount()); err != nil {
			r.fail = fmt.Errorf("yarn-er: role %s: cannot ask again for the gang %s: %w", role.spec.Name, g.name, err)
			return
		}
	}
	g.asked = r.opts.Now()
	g.waits++
	r.log.Warn("am: gang incomplete after the gang timeout; gave back what it held and asks again", "gang", g.name,
		"waited", waited, "missing", strings.Join(missing, "; "), "round", g.waits+1)
}
