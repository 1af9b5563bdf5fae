package preflight

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// IDPlacement: the containers' placement (yarn-er's placement spread: node or pack: node) and
// what the ResourceManager's yarn.resourcemanager.placement-constraints.handler (read from its
// /conf, else the Hadoop configuration) makes of the SchedulingRequests yarn-er sends for it:
// disabled (Hadoop's default) refuses them; scheduler places them in the CapacityScheduler only
// (any other scheduler refuses them); placement-processor places them before the scheduler,
// which must be the CapacityScheduler (the others' attemptAllocationOnNode places nothing), and
// rejects what it cannot place at once. Pass when the ResourceManager places them; warn when
// the ApplicationMaster falls back (placement.fallback am: it places the ranks itself, or relax:
// anywhere); fail with placement.fallback fail, which fails the application.
const IDPlacement = "cluster.placement"

// Keys and values of the placement-constraints handler.
const (
	keyPlacementHandler = "yarn.resourcemanager.placement-constraints.handler"
	handlerDisabled     = "disabled"
	handlerScheduler    = "scheduler"
	handlerProcessor    = "placement-processor"
)

// Placement is where the checked containers must land: a role's placement in yarn-er's job file.
type Placement struct {
	// Kind is "spread" (at most one container of the role per node) or "pack" (all on one node),
	// or "" (racks alone).
	Kind string
	// Racks are the only racks the containers may land on (placement racks): plain asks on
	// those racks with relaxLocality false on "*", which the CapacityScheduler and the
	// FairScheduler keep there and the FifoScheduler ignores; with a Kind the ApplicationMaster
	// spreads or packs the containers among the racks' nodes itself.
	Racks []string
	// Fallback is what the ApplicationMaster does when the ResourceManager cannot place by
	// constraints: "am" ("" too), "relax" or "fail".
	Fallback string
}

// placementHandler returns the handler the ResourceManager runs and where that was read: its
// /conf, else the Hadoop configuration, else Hadoop's default (disabled).
func (f *facts) placementHandler() (value, from string) {
	if f.live != nil && f.live.rmConf != nil {
		if p, ok := f.live.rmConf.Lookup(keyPlacementHandler); ok && strings.TrimSpace(p.Value) != "" {
			return strings.TrimSpace(p.Value), f.live.rm + "/conf"
		}
		return handlerDisabled, f.live.rm + "/conf (not set: Hadoop's default)"
	}
	if hc := f.in.Hadoop; hc != nil {
		if p, ok := hc.Lookup(keyPlacementHandler); ok && strings.TrimSpace(p.Value) != "" {
			return strings.TrimSpace(p.Value), p.Source.String()
		}
		return handlerDisabled, "the Hadoop configuration (not set: Hadoop's default)"
	}
	return "", ""
}

// placementScheduler is the scheduler kind and where it was read: live, else the Hadoop
// configuration's scheduler class, else Hadoop 3's default.
func (f *facts) placementScheduler() (schedKind, string) {
	if f.live != nil && f.live.infoErr == nil {
		return f.schedulerKind()
	}
	if hc := f.in.Hadoop; hc != nil {
		if p, ok := hc.Lookup(keySchedulerClass); ok && strings.TrimSpace(p.Value) != "" {
			return kindOfClass(p.Value), fmt.Sprintf("%s = %s", keySchedulerClass, strings.TrimSpace(p.Value))
		}
	}
	return schedCapacity, "Hadoop's default scheduler"
}

// placementCheck reports cluster.placement; for Flink's TaskManagers, which carry no placement,
// it does not apply.
func (f *facts) placementCheck(_ context.Context, out *results) {
	if f.in.Container == nil {
		out.notApplicable("Flink's TaskManagers ask for no placement (placement: spread/pack is yarn-er submit's)")
		return
	}
	if pl := f.in.Placement; pl != nil && len(pl.Racks) > 0 {
		f.racksCheck(pl, out)
		return
	}
	handler, from := f.placementHandler()
	if handler == "" {
		out.skip("neither the ResourceManager's /conf nor a Hadoop configuration says %s", keyPlacementHandler)
		return
	}
	sched, schedFrom := f.placementScheduler()
	served, why := placementServed(handler, sched)
	pl := f.in.Placement
	if pl == nil || pl.Kind == "" {
		verdict := "placement spread/pack would be placed by the ResourceManager"
		if !served {
			verdict = "placement spread/pack would be placed by the ApplicationMaster (" + why + ")"
		}
		out.pass(from, "no placement asked for; %s is %s with the %s: %s", keyPlacementHandler, handler, sched, verdict)
		return
	}
	what := fmt.Sprintf("placement %s: node", pl.Kind)
	if served {
		note := ""
		if handler == handlerProcessor && pl.Kind == "spread" {
			note = "; the placement-processor rejects what it cannot place at once (ranks beyond the nodes): those fall back as placement.fallback says"
		}
		out.pass(from, "%s is placed by the ResourceManager: %s is %s with the %s (%s)%s", what, keyPlacementHandler, handler, sched, schedFrom, note)
		return
	}
	fix := fmt.Sprintf("set %s to scheduler in yarn-site.xml on the ResourceManager (with the CapacityScheduler) and restart it", keyPlacementHandler)
	switch pl.Fallback {
	case "fail":
		out.fail(from, fix+", or drop placement.fallback: fail (the ApplicationMaster then places the ranks itself)",
			"%s cannot be placed by the ResourceManager (%s) and placement.fallback is fail: the application will fail", what, why)
	case "relax":
		out.warn(from, fix+", or drop placement.fallback: relax (the ApplicationMaster then places the ranks itself)",
			"%s cannot be placed by the ResourceManager (%s); placement.fallback relax: the ranks go anywhere", what, why)
	default:
		out.warn(from, fix,
			"%s cannot be placed by the ResourceManager (%s); the ApplicationMaster places the ranks itself: it gives back the containers that land against the placement and asks again, which is slower", what, why)
	}
}

// placementServed says whether the handler serves SchedulingRequests with simple affinity and
// anti-affinity under the scheduler (Hadoop 3.2–3.5), and why not.
func placementServed(handler string, sched schedKind) (bool, string) {
	switch handler {
	case handlerDisabled:
		return false, keyPlacementHandler + " is disabled: it refuses every allocate that carries a SchedulingRequest"
	case handlerScheduler, handlerProcessor:
		if sched != schedCapacity {
			name := string(sched)
			if name == "" {
				name = "a scheduler yarn-er does not know"
			}
			return false, fmt.Sprintf("%s %s places SchedulingRequests in the CapacityScheduler only, and the ResourceManager runs %s", keyPlacementHandler, handler, name)
		}
		return true, ""
	}
	return false, fmt.Sprintf("%s is %q, which Hadoop does not know (disabled, scheduler or placement-processor): yarn-er does not count on it placing SchedulingRequests", keyPlacementHandler, handler)
}

// racksCheck is cluster.placement for a role with racks: the scheduler must keep an ask with
// relaxLocality false on "*" to the racks (the FifoScheduler places it anywhere), and a rack no
// RUNNING NodeManager is on leaves the ranks waiting.
func (f *facts) racksCheck(pl *Placement, out *results) {
	what := "placement racks [" + strings.Join(pl.Racks, ", ") + "]"
	how := "the scheduler keeps the containers there (rack requests, relaxLocality false on *)"
	if pl.Kind != "" {
		how += fmt.Sprintf("; the ApplicationMaster places %s: node among the racks' nodes itself (a SchedulingRequest names no rack), whatever %s says", pl.Kind, keyPlacementHandler)
	}
	sched, schedFrom := f.placementScheduler()
	if sched == schedFifo {
		out.fail(schedFrom, "run the CapacityScheduler or the FairScheduler (yarn.resourcemanager.scheduler.class), or drop placement.racks",
			"%s: the ResourceManager runs the FifoScheduler, which ignores relaxLocality: the containers would land on any rack (the ApplicationMaster gives back those on a node it knows to be elsewhere, but an allocation names no rack)", what)
		return
	}
	if f.live == nil || f.live.nodesErr != nil {
		out.pass(schedFrom, "%s with the %s: %s (the racks' nodes were not checked: no node list from the ResourceManager)", what, sched, how)
		return
	}
	on := map[string]int{}
	var all []string
	for _, n := range f.live.running() {
		rack := n.rack()
		if !slices.Contains(all, rack) {
			all = append(all, rack)
		}
		if slices.Contains(pl.Racks, rack) {
			on[rack]++
		}
	}
	slices.Sort(all)
	var empty []string
	total := 0
	for _, r := range pl.Racks {
		if on[r] == 0 {
			empty = append(empty, r)
		}
		total += on[r]
	}
	src := f.live.rm + "/ws/v1/cluster/nodes"
	if total == 0 {
		out.warn(src, "name a rack `yarn-er cluster nodes` lists (the RUNNING nodes' racks: "+strings.Join(all, ", ")+"), or start NodeManagers on the racks",
			"%s: no RUNNING NodeManager is on %s: the containers wait at the ResourceManager until one joins (`yarn-er app why` names the rack)", what, strings.Join(empty, ", "))
		return
	}
	note := ""
	if len(empty) > 0 {
		note = fmt.Sprintf("; no RUNNING NodeManager is on %s", strings.Join(empty, ", "))
	}
	out.pass(src, "%s: %d RUNNING NodeManager(s) on them%s, with the %s: %s", what, total, note, sched, how)
}
