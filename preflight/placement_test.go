package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cluster.placement against the live ResourceManager's /conf (and its scheduler): whether the
// handler places the SchedulingRequests of spread and pack, and what the fallback makes of it.
func TestPlacementCheckLive(t *testing.T) {
	const key = "yarn.resourcemanager.placement-constraints.handler"
	fair := []byte(`{"scheduler":{"schedulerInfo":{"type":"fairScheduler","rootQueue":{"queueName":"root","childQueues":{"queue":[
		{"type":"fairSchedulerLeafQueueInfo","queueName":"root.default","maxResources":{"memory":16384,"vCores":32}}]}}}}}`)
	for _, tc := range []struct {
		name   string
		props  map[string]string // nil: the captured /conf (Hadoop 3.5.0's default: disabled)
		sched  []byte            // nil: the captured CapacityScheduler
		pl     *Placement
		status Status
		parts  []string
		fix    string
	}{
		{name: "captured default, no placement", pl: nil, status: StatusPass,
			parts: []string{"no placement asked for; " + key + " is disabled with the CapacityScheduler: placement spread/pack would be placed by the ApplicationMaster"}},
		{name: "captured default, spread: the AM places", pl: &Placement{Kind: "spread"}, status: StatusWarn,
			parts: []string{"placement spread: node cannot be placed by the ResourceManager (" + key + " is disabled: it refuses every allocate that carries a SchedulingRequest)",
				"the ApplicationMaster places the ranks itself"},
			fix: "set " + key + " to scheduler in yarn-site.xml on the ResourceManager (with the CapacityScheduler) and restart it"},
		{name: "disabled, fallback fail", props: map[string]string{key: "disabled"}, pl: &Placement{Kind: "pack", Fallback: "fail"}, status: StatusFail,
			parts: []string{"placement pack: node cannot be placed by the ResourceManager", "placement.fallback is fail: the application will fail"},
			fix:   "or drop placement.fallback: fail"},
		{name: "disabled, fallback relax", props: map[string]string{key: "disabled"}, pl: &Placement{Kind: "spread", Fallback: "relax"}, status: StatusWarn,
			parts: []string{"placement.fallback relax: the ranks go anywhere"}},
		{name: "key absent: Hadoop's default", props: map[string]string{}, pl: &Placement{Kind: "spread"}, status: StatusWarn,
			parts: []string{key + " is disabled"}},
		{name: "scheduler", props: map[string]string{key: "scheduler"}, pl: &Placement{Kind: "spread", Fallback: "fail"}, status: StatusPass,
			parts: []string{"placement spread: node is placed by the ResourceManager: " + key + " is scheduler with the CapacityScheduler (/ws/v1/cluster/scheduler)"}},
		{name: "placement-processor, spread", props: map[string]string{key: "placement-processor"}, pl: &Placement{Kind: "spread"}, status: StatusPass,
			parts: []string{"is placement-processor with the CapacityScheduler", "rejects what it cannot place at once"}},
		{name: "scheduler under the FairScheduler", props: map[string]string{key: "scheduler"}, sched: fair, pl: &Placement{Kind: "pack", Fallback: "fail"}, status: StatusFail,
			parts: []string{"places SchedulingRequests in the CapacityScheduler only, and the ResourceManager runs FairScheduler"}},
		{name: "placement-processor under the FairScheduler", props: map[string]string{key: "placement-processor"}, sched: fair, pl: &Placement{Kind: "spread"}, status: StatusWarn,
			parts: []string{"runs FairScheduler"}},
		{name: "unknown value", props: map[string]string{key: "smart"}, pl: &Placement{Kind: "spread"}, status: StatusWarn,
			parts: []string{`is "smart", which Hadoop does not know`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bodies := goodCaptures(t)
			if tc.props != nil {
				bodies["/conf"] = confBody(t, tc.props)
			}
			if tc.sched != nil {
				bodies["/ws/v1/cluster/scheduler"] = tc.sched
			}
			rm := newFakeRM(t, bodies)
			rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()), Placement: tc.pl})
			e := requireOne(t, rep, IDPlacement, tc.status, tc.parts...)
			if tc.fix == "" && tc.status == StatusPass {
				assert.Empty(t, e.Fix)
			} else if tc.fix != "" {
				assert.Contains(t, e.Fix, tc.fix)
			}
			assert.Contains(t, e.Source, rm.URL()+"/conf")
			assert.Equal(t, tc.status != StatusFail, rep.OK, "only placement.fallback fail fails the preflight: %v", rep.failing())
		})
	}
}

// Without a ResourceManager the check reads the Hadoop configuration.
func TestPlacementCheckFromHadoopConf(t *testing.T) {
	hc := goodHadoop().with("yarn-site.xml", "yarn.resourcemanager.placement-constraints.handler", "scheduler").load(t)
	rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Hadoop: hc, Placement: &Placement{Kind: "spread"}})
	e := requireOne(t, rep, IDPlacement, StatusPass, "placement spread: node is placed by the ResourceManager", "is scheduler with the CapacityScheduler")
	assert.Contains(t, e.Source, "yarn-site.xml")

	rep = run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Placement: &Placement{Kind: "spread"}})
	require.NotNil(t, rep)
	requireOne(t, rep, IDPlacement, StatusSkip, "neither the ResourceManager's /conf nor a Hadoop configuration says")
}

// cluster.placement for a role with racks: the captured cluster has its two NodeManagers on
// /default-rack; the FifoScheduler ignores relaxLocality; with spread or pack the AM places them
// whatever the handler says.
func TestPlacementCheckRacks(t *testing.T) {
	fifo := []byte(`{"scheduler":{"schedulerInfo":{"type":"fifoScheduler","capacity":1.0,"usedCapacity":0.0,"qstate":"RUNNING"}}}`)
	for _, tc := range []struct {
		name   string
		sched  []byte
		pl     Placement
		status Status
		parts  []string
		fix    string
	}{
		{name: "the default rack", pl: Placement{Racks: []string{"/default-rack"}}, status: StatusPass,
			parts: []string{"placement racks [/default-rack]: 2 RUNNING NodeManager(s) on them, with the CapacityScheduler: the scheduler keeps the containers there (rack requests, relaxLocality false on *)"}},
		{name: "one rack of two empty", pl: Placement{Racks: []string{"/default-rack", "/rack-z"}}, status: StatusPass,
			parts: []string{"2 RUNNING NodeManager(s) on them; no RUNNING NodeManager is on /rack-z"}},
		{name: "spread among the racks, handler disabled", pl: Placement{Kind: "spread", Fallback: "fail", Racks: []string{"/default-rack"}}, status: StatusPass,
			parts: []string{"the ApplicationMaster places spread: node among the racks' nodes itself"}},
		{name: "a rack nobody is on", pl: Placement{Racks: []string{"/nowhere"}}, status: StatusWarn,
			parts: []string{"placement racks [/nowhere]: no RUNNING NodeManager is on /nowhere: the containers wait at the ResourceManager until one joins"},
			fix:   "the RUNNING nodes' racks: /default-rack"},
		{name: "FifoScheduler", sched: fifo, pl: Placement{Racks: []string{"/default-rack"}}, status: StatusFail,
			parts: []string{"the ResourceManager runs the FifoScheduler, which ignores relaxLocality"},
			fix:   "or drop placement.racks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bodies := goodCaptures(t)
			if tc.sched != nil {
				bodies["/ws/v1/cluster/scheduler"] = tc.sched
			}
			rm := newFakeRM(t, bodies)
			pl := tc.pl
			rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()), Placement: &pl})
			e := requireOne(t, rep, IDPlacement, tc.status, tc.parts...)
			if tc.fix != "" {
				assert.Contains(t, e.Fix, tc.fix)
			}
			assert.Equal(t, tc.status != StatusFail, rep.OK, "%v", rep.failing())
		})
	}
}
