package preflight

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// queueCapacityCheck reports cluster.queue-capacity: whether the target queue's maximum capacity
// (the CapacityScheduler's maxEffectiveCapacity, the FairScheduler's maxResources) can hold the
// JobManager container and --containers TaskManager containers (one without the flag), in the
// units of each type; and how many fit in what the queue has left now.
func (f *facts) queueCapacityCheck(_ context.Context, out *results) {
	if !f.needsLive(out) {
		return
	}
	live := f.live
	q, name, from, ok := f.schedulerTarget(out)
	if !ok {
		return
	}
	if q == nil || !q.Leaf {
		out.skip("queue %q (from %s) takes no applications: see %s", name, from, IDQueueMaxAllocation)
		return
	}
	pool := q.MaxEffectiveCapacity
	poolName := "maxEffectiveCapacity"
	guaranteed := q.MinEffectiveCapacity
	if pool.Len() == 0 {
		pool, poolName = q.MaxResources, "maxResources"
	}
	tmLabel := f.tmLabel()
	partition := ""
	if tmLabel.label != "" {
		// The TaskManagers go to the label's partition: its capacity, not the default one's.
		p := q.Partition(tmLabel.label)
		if p == nil || p.EffectiveMax.Len() == 0 {
			out.skip("queue %s reports no capacity in partition %s (%s = %s, %s)", q.Path, tmLabel.label, tmLabel.key, tmLabel.label, orUnknown(live.sched.Type))
			return
		}
		pool, guaranteed = p.EffectiveMax, p.EffectiveMin
		poolName = "effectiveMaxResource in partition " + tmLabel.label
		partition = tmLabel.label
	}
	if pool.Len() == 0 {
		out.skip("queue %s reports no maximum capacity (%s)", q.Path, orUnknown(live.sched.Type))
		return
	}
	req, _ := f.request()
	if len(req) == 0 {
		out.skip("the %s could not be computed", f.subj.container)
		return
	}
	var jm []records.Resource
	besides := ""
	if f.jm != nil {
		jm = f.normalized(f.jm.Request())
		besides = " besides the JobManager container " + formatRequest(jm)
	}
	// The JobManager in another partition takes nothing from the TaskManagers' pool; it is
	// checked against its own partition (the default one's AM limits below).
	poolJM := jm
	if f.jm != nil && f.jmLabel().label != partition {
		poolJM, besides = nil, ""
	}
	want := int64(max(f.in.Containers, 1))
	shown := formatRequest(req)
	limits := describePool(pool, req)

	empty, jmFits := poolContainers(pool, req, poolJM)
	if !jmFits {
		out.fail(live.rm, fmt.Sprintf("give the JobManager less (%s, %s), use a queue with more capacity, or raise its maximum capacity", profile.KeyJMProcessSize, profile.KeyAppMasterVCores),
			"queue %s (from %s): its maximum capacity (%s: %s) cannot hold the JobManager container %s: the application never starts", q.Path, from, poolName, limits, formatRequest(jm))
		return
	}
	if len(jm) > 0 && !f.amLimitCheck(out, q, from, jm) {
		return
	}
	if kindOfType(live.sched.Type) == schedCapacity && !f.userLimitCheck(out, q, from, partition, guaranteed, pool, req, poolJM, want, empty) {
		return
	}
	if empty < want && f.in.Container != nil {
		// Containers given directly (yarn-er submit) are ranks of a batch job: those beyond what
		// the queue holds start as others finish, so this only slows the job down.
		out.warn(live.rm, fmt.Sprintf("use a queue with more capacity, %s, or ask for fewer or smaller containers", raiseQueueCapacity(live.sched.Type, q.Path)),
			"queue %s (from %s) holds at most %d %s %s (its %s: %s) at once, %d wanted: the others start as earlier ones finish",
			q.Path, from, empty, f.subj.containers, shown, poolName, limits, want)
		return
	}
	if empty < want {
		out.fail(live.rm, fmt.Sprintf("use a queue with more capacity, %s, or ask for fewer or smaller %s", raiseQueueCapacity(live.sched.Type, q.Path), f.subj.many),
			"queue %s (from %s) holds at most %d %s %s%s (its %s: %s), %d wanted: the job waits forever",
			q.Path, from, empty, f.subj.containers, shown, besides, poolName, limits, want)
		return
	}
	if partition != "" {
		// resourcesUsed is the default partition's: what is left in the label's is not known.
		out.pass(live.rm, "queue %s (from %s) holds %s %s %s%s in partition %s (its %s: %s)",
			q.Path, from, countText(empty), f.subj.containers, shown, besides, partition, poolName, limits)
		return
	}
	now, jmNow := poolContainers(remaining(pool, q.Used), req, poolJM)
	if !jmNow || now < want {
		if !jmNow {
			now = 0
		}
		out.warn(live.rm, "wait for the queue's applications to finish, or use another queue",
			"queue %s (from %s): %d of the %d %s %s fit%s in what it has left now; %d when it is empty (its %s: %s)",
			q.Path, from, now, want, f.subj.containers, shown, besides, empty, poolName, limits)
		return
	}
	out.pass(live.rm, "queue %s (from %s) holds %s %s %s%s (its %s: %s), %d fit now",
		q.Path, from, countText(empty), f.subj.containers, shown, besides, poolName, limits, now)
}

// poolContainers returns how many containers of req a queue's capacity holds once jm (if any) is
// taken out, counting only the types the queue reports, and whether jm fits at all.
func poolContainers(pool records.Resources, req, jm []records.Resource) (int64, bool) {
	have := pool
	if len(jm) > 0 {
		reported := onlyReported(pool, jm)
		rest, ok := minus(pool, reported)
		if !ok {
			return 0, false
		}
		have = rest
	}
	reported := onlyReported(have, req)
	if len(reported) == 0 {
		return math.MaxInt64, true
	}
	return containersIn(have, reported), true
}

// remaining returns what limit leaves once used is taken out, per type of limit in limit's unit
// (never below zero); a type used does not report, or in a unit that does not convert, stays at
// its limit.
func remaining(limit, used records.Resources) records.Resources {
	var left records.Resources
	for _, l := range limit.All() {
		q := l.Quantity()
		if u, ok := used.Quantity(l.Name); ok {
			if v, _, err := u.In(q.Units); err == nil {
				q.Value = max(q.Value-v, 0)
			}
		}
		left.Set(l.Name, q)
	}
	return left
}

func onlyReported(pool records.Resources, req []records.Resource) []records.Resource {
	var out []records.Resource
	for _, res := range req {
		if _, ok := pool.Quantity(res.Name); ok {
			out = append(out, res)
		}
	}
	return out
}

func describePool(pool records.Resources, req []records.Resource) string {
	var parts []string
	for _, res := range req {
		if q, ok := pool.Quantity(res.Name); ok {
			parts = append(parts, res.Name+" "+fmtAmount(q.Value, q.Units))
		}
	}
	return strings.Join(parts, ", ")
}

func countText(n int64) string {
	if n == math.MaxInt64 {
		return "any number of"
	}
	return fmt.Sprint(n)
}

// raiseQueueCapacity says where the queue's maximum capacity is configured.
func raiseQueueCapacity(scheduler, path string) string {
	if strings.Contains(strings.ToLower(scheduler), "fair") {
		return "raise <maxResources> of " + path + " in fair-scheduler.xml"
	}
	return "raise yarn.scheduler.capacity." + path + ".maximum-capacity (capacity-scheduler.xml)"
}

// amLimitCheck fails when the queue's ApplicationMaster limits (maximum-am-resource-percent:
// AMResourceLimit, and per user userAMResourceLimit) cannot hold the JobManager container; then
// the application stays ACCEPTED and never runs. It reports whether the check passed.
func (f *facts) amLimitCheck(out *results, q *yarn.Queue, from string, jm []records.Resource) bool {
	shown := formatRequest(jm)
	fix := fmt.Sprintf("raise yarn.scheduler.capacity.%s.maximum-am-resource-percent (capacity-scheduler.xml), or give the JobManager less (%s)", q.Path, profile.KeyJMProcessSize)
	for _, lim := range []struct {
		name string
		res  records.Resources
	}{{"AMResourceLimit", q.AMResourceLimit}, {"userAMResourceLimit", q.UserAMResourceLimit}} {
		reported := onlyReported(lim.res, jm)
		if len(reported) == 0 {
			continue
		}
		if _, ok := minus(lim.res, reported); !ok {
			out.fail(f.live.rm, fix,
				"queue %s (from %s) lets ApplicationMasters use at most %s (%s, from maximum-am-resource-percent), less than the JobManager container %s: the application stays ACCEPTED and never runs",
				q.Path, from, describePool(lim.res, jm), lim.name, shown)
			return false
		}
	}
	if reported := onlyReported(q.AMResourceLimit, jm); len(reported) > 0 && q.UsedAMResource.Len() > 0 {
		if _, ok := minus(remaining(q.AMResourceLimit, q.UsedAMResource), reported); !ok {
			out.warn(f.live.rm, "wait for other applications of the queue to finish, or "+fix,
				"queue %s (from %s): its ApplicationMasters already use %s of %s (AMResourceLimit): the JobManager container %s waits in ACCEPTED until others finish",
				q.Path, from, describePool(q.UsedAMResource, jm), describePool(q.AMResourceLimit, jm), shown)
			return false
		}
	}
	return true
}
