package preflight

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/yarn-er/yarn-er/records"
)

// packing is how many containers of one request the RUNNING nodes hold.
type packing struct {
	// now sums, per node, the containers that fit in what the node has available; empty the same
	// for the node's total (an empty cluster).
	now, empty int64
	// nodesFitting counts the nodes whose total holds at least one container.
	nodesFitting int
	// someNodeHas tells, per resource, whether some node's total has enough of it for one container.
	someNodeHas map[string]bool
	// maxTotal is, per resource, the largest total of any node.
	maxTotal map[string]records.Quantity
}

// packCluster packs containers of req onto the nodes, each node on its own: a node holds
// floor(min over the resources r of have_r / req_r) containers, units converted exactly. Sums
// saturate at MaxInt64.
func packCluster(nodes []node, req []records.Resource) packing {
	p := packing{someNodeHas: map[string]bool{}, maxTotal: map[string]records.Quantity{}}
	for _, n := range nodes {
		total, avail := n.total(), n.available()
		empty := containersIn(total, req)
		now := int64(0)
		if avail.Len() > 0 {
			now = containersIn(avail, req)
		}
		p.empty = satAdd(p.empty, empty)
		p.now = satAdd(p.now, now)
		if empty > 0 {
			p.nodesFitting++
		}
		for _, res := range req {
			q, _ := total.Quantity(res.Name)
			if quotient(q, res.Value, requestUnit(res.Name)) > 0 {
				p.someNodeHas[res.Name] = true
			}
			if cur, ok := p.maxTotal[res.Name]; !ok || cmpQuantity(q, cur) > 0 {
				p.maxTotal[res.Name] = q
			}
		}
	}
	return p
}

// largest renders, per requested resource, the largest node total, marking those below the
// request.
func (p packing) largest(req []records.Resource) string {
	parts := make([]string, 0, len(req))
	for _, res := range req {
		q := p.maxTotal[res.Name]
		s := fmt.Sprintf("%s %d%s", res.Name, q.Value, q.Units)
		if !p.someNodeHas[res.Name] {
			s += fmt.Sprintf(" < %d asked", res.Value)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// containersIn returns how many containers of req fit in have.
func containersIn(have records.Resources, req []records.Resource) int64 {
	n := int64(math.MaxInt64)
	for _, res := range req {
		if res.Value <= 0 {
			continue
		}
		h, _ := have.Quantity(res.Name)
		n = min(n, quotient(h, res.Value, requestUnit(res.Name)))
		if n == 0 {
			return 0
		}
	}
	if n == math.MaxInt64 {
		return 0 // nothing asked: not a container
	}
	return n
}

// quotient returns floor(have / want) with want in unit wantUnit. have is converted into wantUnit
// (truncating, which does not change the floor of the quotient); a have too large for int64 in
// that unit saturates. An unknown unit gives 0.
func quotient(have records.Quantity, want int64, wantUnit string) int64 {
	if have.Value <= 0 || want <= 0 {
		return 0
	}
	h, _, err := have.In(wantUnit)
	if err != nil {
		if errors.Is(err, records.ErrOverflow) {
			return math.MaxInt64
		}
		return 0
	}
	return h / want
}

// cmpQuantity compares two quantities across units; unknown units compare by value.
func cmpQuantity(a, b records.Quantity) int {
	c, err := a.Cmp(b)
	if err != nil {
		return cmp.Compare(a.Value, b.Value)
	}
	return c
}

// satAdd adds non-negative int64s, saturating at MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// minus returns have less one container of req (in the request's units), and whether it fits.
func minus(have records.Resources, req []records.Resource) (records.Resources, bool) {
	rest := records.ResourcesOf(have.All()...)
	for _, res := range req {
		if res.Value <= 0 {
			continue
		}
		unit := requestUnit(res.Name)
		q, _ := have.Quantity(res.Name)
		h, _, err := q.In(unit)
		if err != nil && !errors.Is(err, records.ErrOverflow) {
			return records.Resources{}, false
		}
		if errors.Is(err, records.ErrOverflow) {
			h = math.MaxInt64
		}
		if h < res.Value {
			return records.Resources{}, false
		}
		rest.Set(res.Name, records.Quantity{Value: h - res.Value, Units: unit})
	}
	return rest, true
}

// withJobManager is how many TaskManager containers fit once the JobManager container has a
// node: the JobManager goes where it costs the fewest TaskManagers.
type withJobManager struct {
	// now and empty are the TaskManager containers that fit besides the JobManager, in what the
	// nodes have available and on an empty cluster; -1 when the JobManager fits on no node.
	now, empty int64
}

// packWithJobManager places the JobManager container jm on the node where it leaves room for the
// most TaskManager containers of req, for the nodes' available and total resources.
func packWithJobManager(nodes []node, req, jm []records.Resource) withJobManager {
	best := func(have func(node) records.Resources) int64 {
		per := make([]int64, len(nodes))
		var total int64
		for i, n := range nodes {
			if h := have(n); h.Len() > 0 {
				per[i] = containersIn(h, req)
			}
			total = satAdd(total, per[i])
		}
		result := int64(-1)
		for i, n := range nodes {
			h := have(n)
			if h.Len() == 0 {
				continue
			}
			rest, ok := minus(h, jm)
			if !ok {
				continue
			}
			c := satAdd(total-per[i], containersIn(rest, req))
			if total == math.MaxInt64 {
				c = total
			}
			result = max(result, c)
		}
		return result
	}
	return withJobManager{
		now:   best(func(n node) records.Resources { return n.available() }),
		empty: best(func(n node) records.Resources { return n.total() }),
	}
}
