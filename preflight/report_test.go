package preflight

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The public ids of the issue, in its order. Changing this list breaks users' scripts.
var publicIDs = []string{
	"flink.resource-not-listed", "flink.amount-invalid", "flink.no-yarn-config-key", "flink.duplicate-config-key",
	"flink.no-driver-factory", "flink.discovery-script", "flink.coordination-args",
	"yarn.resource-types-invalid", "yarn.resource-type-undeclared", "yarn.calculator-not-dominant",
	"yarn.max-allocation-exceeded", "yarn.nm-resources",
	"cluster.reachable", "cluster.version", "cluster.type-unknown", "cluster.no-node-fits", "cluster.capacity",
	"cluster.queue-max-allocation",
}

func TestIDsArePublicContract(t *testing.T) {
	got := IDs()
	for _, id := range publicIDs {
		assert.Contains(t, got, id)
	}
	// The additions: the TaskManager container check, the unit of a requested type, the GPU
	// plugin jar, node labels, the queue's capacity, and the ResourceManager's caps of the
	// ApplicationMaster attempts and the application priority, the resource profiles' checks and
	// the security area, the placement of a job's role (cluster.placement), the Docker runtime of
	// yarn-er submit --image and MIG slices.
	assert.Len(t, got, len(publicIDs)+18)
	assert.Contains(t, got, IDPlacement)
	assert.Contains(t, got, IDDockerRuntime)
	assert.Contains(t, got, IDMIGResources)
	// The resource profiles' checks, in the Hadoop configuration's group.
	assert.Contains(t, got, IDResourceProfiles)
	assert.Contains(t, got, IDProfileMaxAllocation)
	assert.Contains(t, got, IDMaxAttempts)
	assert.Contains(t, got, IDPriority)
	assert.Equal(t, []string{"security.login", "security.principals", "security.rpc-protection", "security.https",
		"security.container-executor"}, got[len(got)-5:], "the newest ids come last")
	assert.Contains(t, got, IDQueueCapacity)
	assert.Contains(t, got, IDNodeLabel)
	assert.Contains(t, got, IDGPUPluginJar)
	assert.Contains(t, got, IDTaskManagerResources)
	assert.Contains(t, got, IDResourceTypeUnit)
	// Grouped by area, flink first.
	var areas []Area
	for _, id := range got {
		if a := AreaOf(id); len(areas) == 0 || areas[len(areas)-1] != a {
			areas = append(areas, a)
		}
	}
	assert.Equal(t, Areas(), areas)
}

// reports builds reports of very different inputs.
func reports(t *testing.T) map[string]*Report {
	t.Helper()
	good := newFakeRM(t, goodCaptures(t))
	bad := newFakeRM(t, misconfiguredCaptures(t))
	return map[string]*Report{
		"empty Flink configuration": run(t, Input{Flink: flinkConf(t, "")}),
		"offline only":              run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t)}),
		"good cluster":              run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t), Client: rmClient(t, good.URL()), FlinkHome: flinkHome(t, 0o755, false)}),
		"misconfigured cluster": run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, bad.URL()),
			Hadoop: goodHadoop().with("capacity-scheduler.xml", keyCalculator, DefaultCalculator).with("resource-types.xml", "", "").load(t)}),
		"broken everything": run(t, Input{Flink: flinkConf(t, "external-resources: gpu;gpu2\nexternal-resource.gpu.amount: x\nexternal-resource.gpu2.yarn.config-key: memory-mb\n"),
			Hadoop: goodHadoop().with("resource-types.xml", "yarn.resource-types", ",,memory").load(t)}),
	}
}

func TestEveryIDAppearsInOrder(t *testing.T) {
	for name, rep := range reports(t) {
		t.Run(name, func(t *testing.T) {
			var seen []string
			for _, c := range rep.Checks {
				if len(seen) == 0 || seen[len(seen)-1] != c.ID {
					require.NotContains(t, seen, c.ID, "entries of %s are not together", c.ID)
					seen = append(seen, c.ID)
				}
				assert.Contains(t, []Status{StatusPass, StatusWarn, StatusFail, StatusSkip}, c.Status)
				assert.NotEmpty(t, c.Message, "%s", c.ID)
				if c.Status == StatusWarn || c.Status == StatusFail {
					assert.NotEmpty(t, c.Fix, "%s: %s", c.ID, c.Message)
				} else {
					assert.Empty(t, c.Fix, "%s", c.ID)
				}
			}
			assert.Equal(t, IDs(), seen)
			// One pass or skip entry per id, or only problems.
			for _, id := range IDs() {
				st := rep.statuses(id)
				if slices.Contains(st, StatusPass) || slices.Contains(st, StatusSkip) {
					assert.Len(t, rep.entries(id), 1, "%s", id)
				}
			}
		})
	}
}

func TestJSONShape(t *testing.T) {
	rep := reports(t)["misconfigured cluster"]
	raw, err := json.Marshal(rep)
	require.NoError(t, err)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &top))
	assert.ElementsMatch(t, []string{"ok", "checks"}, keys(top))
	assert.Equal(t, "false", string(top["ok"]))
	var checks []map[string]any
	require.NoError(t, json.Unmarshal(top["checks"], &checks))
	require.NotEmpty(t, checks)
	for _, c := range checks {
		assert.ElementsMatch(t, []string{"id", "status", "message", "fix", "source"}, keys(c))
		for _, k := range []string{"id", "status", "message", "fix", "source"} {
			assert.IsType(t, "", c[k], k)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestOKAndStrict(t *testing.T) {
	// A warning only: ok, not with --strict.
	text := withoutLines(goodFlink, "external-resource.fpga.driver-factory.class")
	rep := run(t, Input{Flink: flinkConf(t, text)})
	require.Equal(t, 0, rep.Counts().Fail)
	require.Positive(t, rep.Counts().Warn)
	assert.True(t, rep.OK)
	assert.False(t, rep.Strict())
	rep = run(t, Input{Flink: flinkConf(t, text), Strict: true})
	assert.False(t, rep.OK)
	assert.True(t, rep.Strict())
	assert.Contains(t, rep.Verdict(), "--strict")

	rep = run(t, Input{Flink: flinkConf(t, goodFlink+"external-resource.gpu.amount: 0\n")})
	assert.False(t, rep.OK)
}

func TestVerdict(t *testing.T) {
	r := &Report{resources: []string{"gpu"}, Checks: []Check{
		{Status: StatusFail}, {Status: StatusFail}, {Status: StatusWarn}, {Status: StatusPass}, {Status: StatusSkip},
	}}
	assert.Equal(t, "preflight: 2 failed, 1 warning, 1 passed, 1 skipped — TaskManagers will NOT get their gpu", r.Verdict())
	r = &Report{resources: []string{"gpu", "fpga", "bw"}, Checks: []Check{{Status: StatusPass}, {Status: StatusWarn}, {Status: StatusWarn}}}
	assert.Equal(t, "preflight: 2 warnings, 1 passed — TaskManagers should get their gpu, fpga and bw; review the warnings", r.Verdict())
	r = &Report{resources: []string{"gpu"}, Checks: []Check{{Status: StatusPass}}}
	assert.Equal(t, "preflight: 1 passed — TaskManagers will get their gpu", r.Verdict())
	r = &Report{resources: []string{"gpu"}, Checks: []Check{{Status: StatusPass}, {Status: StatusSkip}}}
	assert.Equal(t, "preflight: 1 passed, 1 skipped — TaskManagers should get their gpu (1 check could not run)", r.Verdict())
	r = &Report{Checks: []Check{{Status: StatusFail}}}
	assert.Equal(t, "preflight: 1 failed, 0 passed — fix the failures before submitting", r.Verdict())
}

func TestCondense(t *testing.T) {
	c := newCollector()
	c.of("x.a").pass("s1", "one")
	c.of("x.a").pass("s2", "two")
	c.of("x.a").pass("s2", "two")
	c.of("x.a").skip("why")
	c.of("x.b").pass("s", "fine")
	c.of("x.b").warn("s3", "do this", "bad %d", 1)
	c.of("x.b").fail("s4", "do that", "worse")
	c.of("x.c").skip("first reason")
	c.of("x.c").skip("second reason")
	got := c.checks()
	assert.Equal(t, []Check{
		{ID: "x.a", Status: StatusPass, Message: "one; two; not checked: why"},
		{ID: "x.b", Status: StatusWarn, Message: "bad 1", Fix: "do this", Source: "s3"},
		{ID: "x.b", Status: StatusFail, Message: "worse", Fix: "do that", Source: "s4"},
		{ID: "x.c", Status: StatusSkip, Message: "first reason"},
	}, got[len(got)-4:])
	// Every known id is there even when nothing reported it.
	for _, id := range IDs() {
		assert.True(t, slices.ContainsFunc(got, func(ch Check) bool { return ch.ID == id }), id)
	}
	assert.Equal(t, "Live cluster", AreaOf(IDCapacity).Title())
	assert.Equal(t, "Hadoop configuration", AreaYarn.Title())
	assert.Equal(t, "Flink configuration", AreaFlink.Title())
}

func TestRunNeedsFlink(t *testing.T) {
	_, err := Run(t.Context(), Input{})
	assert.Error(t, err)
}
