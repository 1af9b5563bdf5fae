package preflight

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// Hadoop's per-queue user-limit keys (capacity-scheduler.xml) and their defaults.
const (
	userLimitFactorSuffix  = "user-limit-factor"
	userLimitPercentSuffix = "minimum-user-limit-percent"
	defaultUserLimitFactor = 1.0
	defaultUserLimitPct    = 100.0
)

// userLimit is how much of a queue's partition one user may hold, as the CapacityScheduler
// computes it (UsersManager.computeUserLimit) for a user who is alone in the queue:
// min(queue capacity × user-limit-factor, the queue's maximum capacity), memory and vcores rounded
// up to multiples of the minimum allocation. With several active users each one's limit is
// max(current capacity / users, current capacity × minimum-user-limit-percent / 100), capped the
// same way. A user-limit-factor of -1 (Hadoop 3.3+) removes the limit below the maximum capacity.
type userLimit struct {
	// limit is the most one user holds; nil: no user limit below the queue's maximum capacity.
	limit records.Resources
	// guaranteed is the queue's capacity in the partition (effectiveMinResource).
	guaranteed              records.Resources
	factor, percent         float64
	factorFrom, percentFrom string
	// lifted: the factor is -1 or the queue has no guaranteed capacity, and the RM (3.4+) then
	// lets one user have the maximum capacity.
	lifted bool
}

// userLimitLifted reports whether the RM runs Hadoop 3.4 or later (unknown versions count as
// later).
func (f *facts) userLimitLifted() bool {
	if f.live.usable() == nil || f.live.info == nil {
		return true
	}
	v, err := ParseHadoopVersion(f.live.info.HadoopVersion)
	return err != nil || !v.Less(HadoopVersion{3, 4, 0})
}

func allZero(v records.Resources) bool {
	for _, q := range v.All() {
		if q.Value > 0 {
			return false
		}
	}
	return true
}

// queueValue returns a per-queue capacity-scheduler.xml value of q (yarn.scheduler.capacity.
// <path>.<suffix>) and its source, from the Hadoop configuration.
func (f *facts) queueValue(path, suffix string) (string, string, bool) {
	if f.in.Hadoop == nil {
		return "", "", false
	}
	p, ok := f.in.Hadoop.Lookup("yarn.scheduler.capacity." + path + "." + suffix)
	if !ok || strings.TrimSpace(p.Value) == "" {
		return "", "", false
	}
	return strings.TrimSpace(p.Value), p.Source.String(), true
}

// userLimits returns the user limit of queue q in the partition (node label, "" the default one)
// whose guaranteed capacity is guaranteed and maximum capacity pool; ok is false when the RM
// reports no guaranteed capacity, or a configured factor is not a number (bad says which).
func (f *facts) userLimits(q *yarn.Queue, guaranteed, pool records.Resources) (ul userLimit, bad string, ok bool) {
	ul.factor, ul.percent = defaultUserLimitFactor, defaultUserLimitPct
	ul.factorFrom, ul.percentFrom = "Hadoop's default", "Hadoop's default"
	if q.UserLimitsReported {
		ul.factor, ul.percent = q.UserLimitFactor, q.UserLimitPercent
		ul.factorFrom, ul.percentFrom = f.live.rm+" (userLimitFactor)", f.live.rm+" (userLimit)"
	} else {
		for _, v := range []struct {
			suffix   string
			dst      *float64
			from     *string
			min, max float64
		}{
			{userLimitFactorSuffix, &ul.factor, &ul.factorFrom, -1, math.MaxFloat64},
			{userLimitPercentSuffix, &ul.percent, &ul.percentFrom, 0, 100},
		} {
			text, src, found := f.queueValue(q.Path, v.suffix)
			if !found {
				continue
			}
			f, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsNaN(f) || f < v.min || f > v.max {
				return ul, fmt.Sprintf("%s: yarn.scheduler.capacity.%s.%s = %q is not a number from %g to %g", src, q.Path, v.suffix, text, v.min, v.max), false
			}
			*v.dst, *v.from = f, src
		}
	}
	if guaranteed.Len() == 0 {
		return ul, "", false
	}
	ul.guaranteed = guaranteed
	// Hadoop 3.4 and later lift the limit to the maximum capacity for a factor of -1 and for a
	// queue with no guaranteed capacity (UsersManager: getEffectiveMaxCapacityDown); earlier
	// lines multiply the guaranteed capacity by the factor whatever it is.
	if f.userLimitLifted() && (ul.factor == -1 || allZero(guaranteed)) {
		ul.lifted = true
		return ul, "", true
	}
	if ul.factor < 0 {
		return ul, fmt.Sprintf("%s: user-limit-factor %g of queue %s is understood from Hadoop 3.4 on; this ResourceManager multiplies the queue's capacity by it", ul.factorFrom, ul.factor, q.Path), false
	}
	for _, e := range guaranteed.All() {
		name, g := e.Name, e.Quantity()
		v := scaleDown(g.Value, ul.factor)
		if m, okm := pool.Quantity(name); okm && cmpQuantity(records.Quantity{Value: v, Units: g.Units}, m) > 0 {
			ul.limit.Set(name, m)
			continue
		}
		ul.limit.Set(name, records.Quantity{Value: f.roundUpToMinimum(name, v), Units: g.Units})
	}
	return ul, "", true
}

// scaleDown is floor(v × f) for non-negative v and f, saturating at MaxInt64.
func scaleDown(v int64, f float64) int64 {
	x := math.Floor(float64(v) * f)
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	if x < 0 {
		return 0
	}
	return int64(x)
}

// roundUpToMinimum rounds memory-mb and vcores up to a multiple of the CapacityScheduler's minimum
// allocation when the Hadoop configuration gives it (Resources.roundUp of the user limit).
func (f *facts) roundUpToMinimum(name string, v int64) int64 {
	if f.types == nil || (name != records.MemoryMB && name != records.VCores) {
		return v
	}
	rt, ok := f.types.Lookup(name)
	if !ok || rt.Minimum <= 0 || v%rt.Minimum == 0 {
		return v
	}
	return (v/rt.Minimum + 1) * rt.Minimum
}

// userContainers returns how many containers of req one user holds under limit with jm (if any)
// already running: the scheduler gives the user another container while what the user uses is
// not above the limit (LeafQueue.canAssignToUser: a > check), so the last container may go past
// it. Only the types the limit reports count; MaxInt64 when none does.
func userContainers(limit records.Resources, req, jm []records.Resource) int64 {
	have := limit
	if reported := onlyReported(limit, jm); len(reported) > 0 {
		rest, ok := minus(limit, reported)
		if !ok {
			return 0
		}
		have = rest
	}
	reported := onlyReported(have, req)
	if len(reported) == 0 {
		return math.MaxInt64
	}
	return satAdd(containersIn(have, reported), 1)
}

// factorFor returns the smallest user-limit-factor (to one decimal) under which one user holds
// want containers of req besides jm, with guaranteed the queue's capacity; 0 when no factor
// helps (a type the queue is guaranteed none of).
func factorFor(guaranteed records.Resources, req, jm []records.Resource, want int64) float64 {
	need := 0.0
	for _, res := range onlyReported(guaranteed, req) {
		g, _ := guaranteed.Quantity(res.Name)
		gv, _, err := g.In(requestUnit(res.Name))
		if err != nil {
			return 0
		}
		total := float64(res.Value) * float64(want-1)
		for _, j := range jm {
			if j.Name == res.Name {
				total += float64(j.Value)
			}
		}
		if total <= 0 {
			continue
		}
		if gv <= 0 {
			return 0
		}
		need = max(need, total/float64(gv))
	}
	return math.Ceil(need*10) / 10
}

// activeOthers counts the users of q with running or pending applications.
func activeUsers(q *yarn.Queue) int {
	n := 0
	for _, u := range q.Users {
		if u.ActiveApplications > 0 || u.PendingApplications > 0 {
			n++
		}
	}
	return n
}

// userLimitCheck reports, as cluster.queue-capacity, a queue whose user limit holds fewer of the
// wanted containers than its maximum capacity (empty of them): Flink's TaskManagers then wait
// forever (fail), containers given directly start as earlier ones finish (warn). With other
// users' applications in the queue, minimum-user-limit-percent shares it now (warn). It reports
// whether the queue check goes on.
func (f *facts) userLimitCheck(out *results, q *yarn.Queue, from, partition string, guaranteed, pool records.Resources, req, jm []records.Resource, want, empty int64) bool {
	ul, bad, ok := f.userLimits(q, guaranteed, pool)
	factorKey := "yarn.scheduler.capacity." + q.Path + "." + userLimitFactorSuffix
	if bad != "" {
		out.warn(ul.factorFrom, fmt.Sprintf("set %s to a positive number (capacity-scheduler.xml)", factorKey), "%s", bad)
		return true
	}
	if !ok || ul.limit.Len() == 0 {
		return true
	}
	src := ul.factorFrom
	if q.UserLimitsReported {
		src = f.live.rm
	}
	in := ""
	if partition != "" {
		in = " in partition " + partition
	}
	besides := ""
	if len(jm) > 0 {
		besides = " besides the JobManager container " + formatRequest(jm)
	}
	shown := formatRequest(req)
	n := userContainers(ul.limit, req, jm)
	why := fmt.Sprintf("one user may hold at most %s%s (user-limit-factor %g, from %s, × its guaranteed capacity %s)",
		describePool(ul.limit, req), in, ul.factor, ul.factorFrom, describePool(ul.guaranteed, req))
	if n < want && n < empty {
		fix := "ask for fewer or smaller " + f.subj.many + ", or use a queue with more guaranteed capacity"
		if factor := factorFor(ul.guaranteed, req, jm, want); factor > 0 {
			fix = fmt.Sprintf("raise %s to %g or more (capacity-scheduler.xml; -1 lifts the user limit on Hadoop 3.4+), raise the queue's capacity, or %s",
				factorKey, factor, "ask for fewer or smaller "+f.subj.many)
		}
		if f.in.Container != nil {
			out.warn(src, fix,
				"queue %s (from %s): %s: %s %s at once, %d wanted: the others start as earlier ones finish",
				q.Path, from, why, f.subj.count(n), shown, want)
			return false
		}
		out.fail(src, fix,
			"queue %s (from %s): %s: %s %s%s, %d wanted (its maximum capacity would hold %s): the job waits forever",
			q.Path, from, why, f.subj.count(n), shown, besides, want, countText(empty))
		return false
	}
	others := activeUsers(q)
	if others == 0 || partition != "" || ul.percent >= 100 {
		return true
	}
	// Several active users: each is held to max(capacity / users, capacity × percent / 100).
	share := max(1/float64(others+1), ul.percent/100)
	var nowLimit records.Resources
	for _, e := range ul.limit.All() {
		name, l := e.Name, e.Quantity()
		g, _ := ul.guaranteed.Quantity(name)
		v := f.roundUpToMinimum(name, scaleDown(g.Value, share))
		if cmpQuantity(records.Quantity{Value: v, Units: g.Units}, l) < 0 {
			l = records.Quantity{Value: v, Units: g.Units}
		}
		nowLimit.Set(name, l)
	}
	if now := userContainers(nowLimit, req, jm); now < want {
		out.warn(src, "wait for the queue's other users' applications to finish, or use another queue",
			"queue %s (from %s): %s applications in it: with minimum-user-limit-percent %g (from %s) each user is held to about %s while they compete: %d of the %d %s %s fit%s",
			q.Path, from, plural(others, "other user has", "other users have"), ul.percent, ul.percentFrom, describePool(nowLimit, req), now, want, f.subj.containers, shown, besides)
		return false
	}
	return true
}

// count is "1 TaskManager container" or "N TaskManager containers" (of the subject's containers).
func (s subject) count(n int64) string {
	if n == 1 {
		return "1 " + s.container
	}
	return countText(n) + " " + s.containers
}
