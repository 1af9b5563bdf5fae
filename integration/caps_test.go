//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/preflight"
)

// rmConfValue returns a key of the real ResourceManager's /conf and where it got it ("" and
// false when /conf does not list it).
func rmConfValue(t *testing.T, ep *Endpoints, key string) (value, resource string, ok bool) {
	t.Helper()
	c, err := yarnClient(t, ep).Conf(context.Background())
	require.NoError(t, err)
	p, ok := c.Lookup(key)
	t.Logf("/conf: %s = %q (%s, listed %v)", key, p.Value, p.Resource, ok)
	return p.Value, p.Resource, ok
}

// checkOf returns the one entry of id in rep.
func checkOf(t *testing.T, rep *preflight.Report, id string) preflight.Check {
	t.Helper()
	var out []preflight.Check
	for _, c := range rep.Checks {
		if c.ID == id {
			out = append(out, c)
		}
	}
	require.Len(t, out, 1, id)
	return out[0]
}

// TestRMCapsOnMiniYARN: the real ResourceManager's /conf shows Hadoop's defaults for the two caps
// (docker/conf sets neither); `submit --priority 5 --max-attempts 3` is warned of both before it
// is submitted, runs anyway, and the RM's application report shows the priority the
// CapacityScheduler really gave it (0). The Flink path reads yarn.application.priority and
// yarn.application-attempts the same way.
func TestRMCapsOnMiniYARN(t *testing.T) {
	ep := cluster(t)
	v, res, ok := rmConfValue(t, ep, "yarn.resourcemanager.am.max-attempts")
	require.True(t, ok, "/conf lists yarn.resourcemanager.am.max-attempts")
	assert.Equal(t, "2", v)
	assert.Equal(t, "yarn-default.xml", res)
	v, res, ok = rmConfValue(t, ep, "yarn.cluster.max-application-priority")
	require.True(t, ok, "/conf lists yarn.cluster.max-application-priority")
	assert.Equal(t, "0", v)
	assert.Equal(t, "yarn-default.xml", res)
	// yarn-default.xml has it with an empty value, which Hadoop's loader drops: /conf omits it.
	_, _, ok = rmConfValue(t, ep, "yarn.resourcemanager.am.global.max-attempts")
	assert.False(t, ok, "an empty default is not listed")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, ep, "submit", "--memory", "128m", "--name", "capped", "--priority", "5", "--max-attempts", "3", "--", "true")
	require.Equal(t, 0, r.code, "a warning does not stop the submission: %s", r.stderr)
	assert.Contains(t, r.stderr, "preflight warning: cluster.priority: --priority 5, above the cluster's highest application priority yarn.cluster.max-application-priority = 0 (yarn-default.xml: Hadoop's default): the CapacityScheduler silently uses priority 0 instead (fix: ask for at most 0 (--priority 0), or raise yarn.cluster.max-application-priority in yarn-site.xml on the ResourceManager and restart it)")
	assert.Contains(t, r.stderr, "preflight warning: cluster.max-attempts: --max-attempts 3, above the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default): the ResourceManager silently uses 2 instead")
	appID := strings.TrimSpace(r.stdout)
	require.True(t, strings.HasPrefix(appID, "application_"), "stdout is the application id: %q", r.stdout)
	app, err := yarnClient(t, ep).App(context.Background(), appID)
	require.NoError(t, err)
	t.Logf("%s: priority %d in the RM's report", appID, app.Priority)
	assert.Equal(t, int64(0), app.Priority, "the CapacityScheduler lowered priority 5 to the cluster's highest, 0")

	// Within the caps: no warning, and the report shows the priority asked for (a priority below
	// the cap is kept as it is: the 0 above is the scheduler's doing).
	r = runCLI(t, ctx, ep, "submit", "--memory", "128m", "--name", "within", "--priority", "-2", "--max-attempts", "2", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "preflight warning: cluster.")
	app, err = yarnClient(t, ep).App(context.Background(), strings.TrimSpace(r.stdout))
	require.NoError(t, err)
	assert.Equal(t, int64(-2), app.Priority)

	// Flink: yarn.application.priority 5 is lowered the same way; high availability asks for 2
	// attempts, which the default cap allows.
	rep := runPreflight(t, preflightInput(t, ep, "flink-conf.yaml", "yarn.application.priority=5", "high-availability.type=zookeeper"))
	e := checkOf(t, rep, preflight.IDPriority)
	assert.Equal(t, preflight.StatusWarn, e.Status, e.Message)
	assert.Contains(t, e.Message, "yarn.application.priority = 5, above the cluster's highest application priority yarn.cluster.max-application-priority = 0")
	assert.Equal(t, "-D yarn.application.priority", e.Source)
	e = checkOf(t, rep, preflight.IDMaxAttempts)
	assert.Equal(t, preflight.StatusPass, e.Status, e.Message)
	assert.Contains(t, e.Message, "high availability is on (high-availability.type = zookeeper), so Flink asks for 2 attempts: within the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 2")
	assert.True(t, rep.OK, "warnings only")

	rep = runPreflight(t, preflightInput(t, ep, "flink-conf.yaml", "yarn.application-attempts=4"))
	e = checkOf(t, rep, preflight.IDMaxAttempts)
	assert.Equal(t, preflight.StatusWarn, e.Status, e.Message)
	assert.Contains(t, e.Fix, "ask for at most 2 (yarn.application-attempts: 2)")
}
