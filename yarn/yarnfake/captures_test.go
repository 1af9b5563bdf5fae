package yarnfake_test

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// The mini-YARN every recorded set comes from (docker/conf): 2 NodeManagers of 16384 MB,
// 40 vcores, 4 GPUs and 2 FPGAs; docker/conf-misconfigured declares no GPU or FPGA type.
const (
	harnessNodes   = 2
	harnessGPUs    = 4
	harnessFPGAs   = 2
	harnessVCores  = 40
	harnessMemory  = 16384
	derivedVersion = "3.1"
)

// TestEveryCaptureDecodes replays every embedded capture set through package yarn's client and
// checks the values the harness was built with.
func TestEveryCaptureDecodes(t *testing.T) {
	for _, si := range yarnfake.Sets() {
		name := si.Version
		if si.Variant != "" {
			name += "/" + si.Variant
		}
		t.Run(name, func(t *testing.T) {
			opts := []yarnfake.Option{yarnfake.WithVersion(si.Version)}
			if si.Variant == yarnfake.Misconfigured {
				opts = append(opts, yarnfake.WithMisconfigured())
			}
			rm := yarnfake.New(t, opts...)
			c, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "yarner"})
			require.NoError(t, err)
			ctx := context.Background()

			info, err := c.ClusterInfo(ctx)
			require.NoError(t, err)
			assert.Equal(t, "ACTIVE", info.HAState)
			assert.Equal(t, "STARTED", info.State)
			if si.Derived {
				assert.True(t, strings.HasPrefix(info.HadoopVersion, derivedVersion+"."), info.HadoopVersion)
				checkDerivedNodes(t, c)
				return
			}
			assert.Equal(t, si.Version, info.HadoopVersion)
			assert.Equal(t, si.Version, info.ResourceManagerVersion)

			nodes, err := c.Nodes(ctx, yarn.NodesQuery{})
			require.NoError(t, err)
			require.Len(t, nodes, harnessNodes)
			gpus, fpgas := int64(0), int64(0)
			for _, n := range nodes {
				assert.Equal(t, "RUNNING", n.State, n.ID)
				assert.Equal(t, si.Version, n.Version, n.ID)
				// Hadoop 3.2 sends no totalResource (recorded: hadoop-3.2.2/nodes.json); yarn
				// derives the total from used + available. 3.3+ send it.
				assert.Equal(t, !atLeast(si.Version, 3, 3), n.TotalDerived, "%s: total derived", si.Version)
				assert.Equal(t, int64(harnessMemory), n.Total.Value(records.MemoryMB), n.ID)
				assert.Equal(t, int64(harnessVCores), n.Total.Value(records.VCores), n.ID)
				sum, err := n.Used.Add(n.Available)
				require.NoError(t, err)
				assert.Equal(t, n.Total, sum, "used + available = total on %s", n.ID)
				gpus += n.Total.Value(records.GPU)
				fpgas += n.Total.Value(records.FPGA)
			}
			running, err := c.Nodes(ctx, yarn.NodesQuery{States: []string{"RUNNING"}})
			require.NoError(t, err)
			assert.Len(t, running, harnessNodes)
			gone, err := c.Nodes(ctx, yarn.NodesQuery{States: []string{"DECOMMISSIONED"}})
			require.NoError(t, err)
			assert.Empty(t, gone)

			m, err := c.Metrics(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(harnessNodes), m.ActiveNodes)
			assert.Equal(t, int64(harnessNodes*harnessVCores), m.TotalVirtualCores)
			assert.Equal(t, int64(harnessNodes*harnessMemory), m.TotalMB)

			newApp, err := c.NewApplication(ctx)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(newApp.ID, "application_"), newApp.ID)

			sched, err := c.Scheduler(ctx)
			require.NoError(t, err)
			assert.Equal(t, yarn.CapacityScheduler, sched.Type)

			if si.Variant == yarnfake.Misconfigured {
				assert.Zero(t, gpus+fpgas, "no GPU or FPGA type on the misconfigured cluster")
				assert.Zero(t, newApp.MaximumResourceCapability.Value(records.GPU))
				return
			}
			assert.Equal(t, int64(harnessNodes*harnessGPUs), gpus)
			assert.Equal(t, int64(harnessNodes*harnessFPGAs), fpgas)
			assert.Equal(t, int64(harnessGPUs), newApp.MaximumResourceCapability.Value(records.GPU))
			assert.Equal(t, int64(harnessFPGAs), newApp.MaximumResourceCapability.Value(records.FPGA))
			if m.TotalClusterResourcesAcrossPartition.Len() > 0 {
				assert.Equal(t, int64(harnessNodes*harnessGPUs), m.TotalClusterResourcesAcrossPartition.Value(records.GPU))
			}

			n, err := c.Node(ctx, nodes[0].ID)
			require.NoError(t, err, "the node of node.json is the first of nodes.json")
			assert.Equal(t, int64(harnessGPUs), n.Total.Value(records.GPU))

			conf, err := c.Conf(ctx)
			require.NoError(t, err)
			assert.NotEmpty(t, conf.Get("yarn.resource-types"))
		})
	}
}

// checkDerivedNodes checks the hand-derived Hadoop 3.1 nodes: no totalResource, so a RUNNING
// node's total is used + available, and a NEW node has no resources at all.
func checkDerivedNodes(t *testing.T, c *yarn.Client) {
	nodes, err := c.Nodes(context.Background(), yarn.NodesQuery{})
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	assert.True(t, nodes[0].TotalDerived)
	assert.Equal(t, int64(4), nodes[0].Total.Value(records.GPU), "1 used + 3 available")
	assert.Equal(t, int64(8192), nodes[0].Total.Value(records.MemoryMB))
	assert.Equal(t, "NEW", nodes[1].State)
	assert.Zero(t, nodes[1].Total.Value(records.GPU), "a NEW node has no scheduler report")
}

// TestEveryCaptureDecodesApps lists the applications the capture script submitted (/bin/true,
// which fails without registering, and sleep 600, killed later) on every recorded line.
func TestEveryCaptureDecodesApps(t *testing.T) {
	for _, v := range yarnfake.Versions() {
		t.Run(v, func(t *testing.T) {
			rm := yarnfake.New(t, yarnfake.WithVersion(v))
			c, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "yarner"})
			require.NoError(t, err)
			ctx := context.Background()

			empty, err := c.Apps(ctx, yarn.AppsQuery{})
			require.NoError(t, err, "apps-empty.json is the first GET /apps recorded")
			assert.Empty(t, empty)

			require.NoError(t, rm.ReplyCapture("GET /ws/v1/cluster/apps", "apps.json"))
			apps, err := c.Apps(ctx, yarn.AppsQuery{})
			require.NoError(t, err)
			require.Len(t, apps, 2)
			byName := map[string]yarn.App{}
			for _, a := range apps {
				byName[a.Name] = a
				assert.Equal(t, "yarner", a.User)
				assert.Equal(t, "YARN-ER-CAPTURE", a.ApplicationType)
			}
			assert.Equal(t, records.AppFailed, byName["yarn-er-true"].State)
			assert.Equal(t, records.AppAccepted, byName["yarn-er-sleep"].State)
			assert.Equal(t, int64(128), byName["yarn-er-sleep"].Allocated.Value(records.MemoryMB))

			killed, err := yarnfake.LoadCapture(v, "", "app-killed.json")
			require.NoError(t, err)
			// The same path answered app-sleep.json before the kill: route it to the later answer.
			rm.Reply(killed.Route(), killed.Status, killed.ContentType, killed.Body)
			app, err := c.App(ctx, path.Base(killed.Path))
			require.NoError(t, err)
			assert.Equal(t, records.AppKilled, app.State)
			assert.NotEmpty(t, app.ResourceSeconds, "resourceSecondsMap: an array of entries (3.5) or a single entry with a string value (3.4)")

			attemptsCapture, err := yarnfake.LoadCapture(v, "", "appattempts-true.json")
			require.NoError(t, err)
			attempts, err := c.AppAttempts(ctx, path.Base(path.Dir(attemptsCapture.Path)))
			require.NoError(t, err)
			require.Len(t, attempts, 1)
			assert.Equal(t, int64(1), attempts[0].ID)
			assert.True(t, strings.HasPrefix(attempts[0].ContainerID, "container_"), attempts[0].ContainerID)
			if atLeast(v, 3, 4) {
				assert.Equal(t, "FAILED", attempts[0].State)
			} else {
				assert.Empty(t, attempts[0].State, "no appAttemptState before Hadoop 3.4")
			}

			_, err = c.App(ctx, "application_1_0001")
			require.ErrorIs(t, err, yarn.ErrNotFound)
			assert.Contains(t, err.Error(), "app with id: application_1_0001 not found")
		})
	}
}

// atLeast reports whether version (e.g. "3.2.2") is major.minor or newer.
func atLeast(version string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(version, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}
