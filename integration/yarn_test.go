//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// Tests of package yarn (the RM REST client) against the real mini-YARN of TestMain.

// rmClientFromConf is a yarn.Client for the mini-YARN, addressed through its client Hadoop
// configuration (hadoop-conf/yarn-site.xml) as a user would, not through the known URL.
func rmClientFromConf(t testing.TB, ep *Endpoints) *yarn.Client {
	t.Helper()
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: ep.HadoopConfDir})
	require.NoError(t, err)
	addrs, err := hc.RMWebAddresses()
	require.NoError(t, err)
	opts := yarn.Options{HTTPS: hc.YARNHTTPSOnly(), User: ep.User}
	for _, a := range addrs {
		opts.Addresses = append(opts.Addresses, a.URL())
	}
	c, err := yarn.NewClient(opts)
	require.NoError(t, err)
	require.Equal(t, []string{ep.RMWebAddress}, c.Addresses(), "the address comes from yarn-site.xml")
	return c
}

func yarnITContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestYarnClientClusterInfo(t *testing.T) {
	ep := cluster(t)
	c := rmClientFromConf(t, ep)
	ctx := yarnITContext(t, time.Minute)

	info, err := c.ClusterInfo(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ACTIVE", info.HAState)
	assert.Equal(t, "STARTED", info.State)
	assert.Equal(t, ep.HadoopVersion, info.HadoopVersion)
	assert.Equal(t, ep.RMWebAddress, info.RMAddress)
	assert.False(t, info.StartedOn.IsZero())

	m, err := c.Metrics(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(len(ep.NodeManagers)), m.ActiveNodes)
	for name, v := range ep.ClusterResource {
		assert.Equal(t, v, m.TotalClusterResourcesAcrossPartition.Value(name), name)
	}

	rc, err := c.Conf(ctx)
	require.NoError(t, err)
	assert.Contains(t, rc.Get("yarn.resource-types"), records.GPU)
	assert.Equal(t, "true", rc.Get("yarn.webapp.enable-rest-app-submissions"))
}

func TestYarnClientNodesWithGPU(t *testing.T) {
	ep := cluster(t)
	c := rmClientFromConf(t, ep)
	ctx := yarnITContext(t, time.Minute)

	nodes, err := c.Nodes(ctx, yarn.NodesQuery{States: []string{"RUNNING"}})
	require.NoError(t, err)
	require.Len(t, nodes, len(ep.NodeManagers))
	ids := map[string]bool{}
	for _, nm := range ep.NodeManagers {
		ids[nm.ID] = true
	}
	for _, n := range nodes {
		assert.True(t, ids[n.ID], "node %s is one of the mini-YARN's", n.ID)
		assert.Equal(t, "RUNNING", n.State)
		// Hadoop 3.2 sends no totalResource: the client derives it (docs/hadoop-versions.md).
		assert.Equal(t, !ep.HadoopAtLeast(3, 3), n.TotalDerived, "Hadoop 3.3+ send totalResource")
		mem, _ := n.Total.Quantity(records.MemoryMB)
		assert.Equal(t, records.Quantity{Value: 16384, Units: "Mi"}, mem)
		assert.Equal(t, int64(40), n.Total.Value(records.VCores))
		assert.Equal(t, int64(4), n.Total.Value(records.GPU))
		assert.Equal(t, int64(2), n.Total.Value(records.FPGA))
		sum, err := n.Used.Add(n.Available)
		require.NoError(t, err)
		assert.Equal(t, n.Total, sum, "used + available = total on %s", n.ID)

		one, err := c.Node(ctx, n.ID)
		require.NoError(t, err)
		assert.Equal(t, n.Total, one.Total)
	}
	_, err = c.Node(ctx, "no-such-node:1")
	assert.ErrorIs(t, err, yarn.ErrNotFound)

	none, err := c.Nodes(ctx, yarn.NodesQuery{States: []string{"DECOMMISSIONED"}})
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestYarnClientQueues(t *testing.T) {
	ep := cluster(t)
	c := rmClientFromConf(t, ep)
	s, err := c.Scheduler(yarnITContext(t, time.Minute))
	require.NoError(t, err)
	assert.Equal(t, yarn.CapacityScheduler, s.Type)
	def := s.Queue("root.default")
	require.NotNil(t, def)
	assert.True(t, def.Leaf)
	assert.Equal(t, "RUNNING", def.State)
	assert.Equal(t, int64(16384), def.MaximumAllocation.Value(records.MemoryMB))
	_, listed := def.MaximumAllocation.Get(records.GPU)
	assert.True(t, listed, "queues list the extended types: %s", def.MaximumAllocation)
	assert.Equal(t, int64(2*4), def.MaxEffectiveCapacity.Value(records.GPU))
}

// yarnITSubmit asks for a new application and submits an AM running command.
func yarnITSubmit(t *testing.T, c *yarn.Client, ctx context.Context, name string, command string, spec yarn.ContainerLaunchContext) string {
	t.Helper()
	na, err := c.NewApplication(ctx)
	require.NoError(t, err)
	_, listed := na.MaximumResourceCapability.Get(records.GPU)
	require.True(t, listed, "new-application lists the extended types: %s", na.MaximumResourceCapability)
	assert.GreaterOrEqual(t, na.MaximumResourceCapability.Value(records.GPU), int64(4))
	spec.Commands = []string{command}
	err = c.SubmitApplication(ctx, yarn.ApplicationSubmissionContext{
		ApplicationID:   na.ID,
		ApplicationName: name,
		Queue:           "default",
		ApplicationType: "YARN-ER-IT",
		ApplicationTags: []string{"yarn-er-it"},
		MaxAppAttempts:  1,
		Resource:        records.NewResources(128, 1),
		AMContainerSpec: spec,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _, _ = c.KillApplication(context.Background(), na.ID)
	})
	return na.ID
}

// TestYarnClientTrivialApp submits an AM that is only /bin/true, with a local file resource, an
// environment variable and a secret, and watches it end. An AM that never registers with the RM
// is a failed attempt, however it exits: YARN 3.5 reports FAILED/FAILED with "exited with
// exitCode: 0 ... Failing this attempt".
func TestYarnClientTrivialApp(t *testing.T) {
	ep := cluster(t)
	c := rmClientFromConf(t, ep)
	ctx := yarnITContext(t, 4*time.Minute)

	file := filepath.Join(t.TempDir(), "payload.txt")
	require.NoError(t, os.WriteFile(file, []byte("yarn-er\n"), 0o644))
	id := yarnITSubmit(t, c, ctx, "yarn-er-it-true", "/bin/true", yarn.ContainerLaunchContext{
		LocalResources: map[string]records.LocalResource{"payload.txt": localFileResource(t, file)},
		Environment:    map[string]string{"YARN_ER_IT": "1"},
		Credentials:    &records.Credentials{Secrets: map[string][]byte{"yarn-er.it": []byte("not-a-real-secret")}},
	})

	app, err := c.WaitApp(ctx, id, 500*time.Millisecond, nil)
	require.NoError(t, err)
	assert.Equal(t, records.AppFailed, app.State)
	assert.Equal(t, records.FinalFailed, app.FinalStatus)
	assert.Contains(t, app.Diagnostics, "exited with  exitCode: 0")
	assert.Contains(t, app.Diagnostics, "Failing this attempt")
	assert.Equal(t, "YARN-ER-IT", app.ApplicationType)
	assert.Equal(t, []string{"yarn-er-it"}, app.ApplicationTags)
	assert.Equal(t, ep.User, app.User)

	attempts, err := c.AppAttempts(ctx, id)
	require.NoError(t, err)
	require.Len(t, attempts, 1)
	if ep.HadoopAtLeast(3, 4) {
		assert.Equal(t, "FAILED", attempts[0].State)
	} else {
		// Hadoop 3.3 and older send no appAttemptState in /appattempts (recorded:
		// yarn/yarnfake/captures/hadoop-3.3.6/appattempts-true.json, docs/hadoop-versions.md).
		assert.Empty(t, attempts[0].State)
	}
	assert.True(t, strings.HasPrefix(attempts[0].ContainerID, "container_"))

	state, err := c.AppState(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, records.AppFailed, state)

	// Killing an application that has ended reports its final state.
	state, inProgress, err := c.KillApplication(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, records.AppFailed, state)
	assert.False(t, inProgress)

	apps, err := c.Apps(ctx, yarn.AppsQuery{States: []string{"FAILED"}, ApplicationTypes: []string{"YARN-ER-IT"}})
	require.NoError(t, err)
	found := false
	for _, a := range apps {
		found = found || a.ID == id
	}
	assert.True(t, found, "%s in the FAILED apps", id)
}

func TestYarnClientKillApp(t *testing.T) {
	ep := cluster(t)
	c := rmClientFromConf(t, ep)
	ctx := yarnITContext(t, 4*time.Minute)
	id := yarnITSubmit(t, c, ctx, "yarn-er-it-sleep", "sleep 600", yarn.ContainerLaunchContext{})

	// The AM container is launched but never registers: the app stays ACCEPTED.
	app, err := c.WaitApp(ctx, id, 250*time.Millisecond, func(a *yarn.App) bool {
		return a.State == records.AppAccepted && a.RunningContainers > 0 || a.State.Terminal()
	})
	require.NoError(t, err)
	require.Equal(t, records.AppAccepted, app.State, app.Diagnostics)
	assert.Equal(t, int64(128), app.Allocated.Value(records.MemoryMB))

	_, _, err = c.KillApplication(ctx, id)
	require.NoError(t, err)
	app, err = c.WaitApp(ctx, id, 250*time.Millisecond, nil)
	require.NoError(t, err)
	assert.Equal(t, records.AppKilled, app.State)
	assert.Equal(t, records.FinalKilled, app.FinalStatus)
	assert.Contains(t, app.Diagnostics, "was killed by user "+ep.User)
}

func TestYarnClientErrors(t *testing.T) {
	ep := cluster(t)
	c := rmClientFromConf(t, ep)
	ctx := yarnITContext(t, time.Minute)

	_, err := c.App(ctx, "application_1_0001")
	require.ErrorIs(t, err, yarn.ErrNotFound)
	assert.Contains(t, err.Error(), "app with id: application_1_0001 not found")

	na, err := c.NewApplication(ctx)
	require.NoError(t, err)
	err = c.SubmitApplication(ctx, yarn.ApplicationSubmissionContext{
		ApplicationID:   na.ID,
		Resource:        records.NewResources(1<<20, 1),
		AMContainerSpec: yarn.ContainerLaunchContext{Commands: []string{"/bin/true"}},
	})
	require.ErrorIs(t, err, yarn.ErrBadRequest)
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	want := "Requested more memory than configured max"
	if ep.Jersey1() {
		// Hadoop 3.4 and older (Jersey 1) send the wrapped exception's toString():
		// "java.lang.Exception: Requested more memory than configured max" (docs/hadoop-versions.md).
		want = "java.lang.Exception: " + want
	}
	assert.Equal(t, want, re.Message)
	assert.Equal(t, "org.apache.hadoop.yarn.webapp.BadRequestException", re.Class)
}
