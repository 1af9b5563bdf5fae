package am

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

var (
	noGPU  = []jobspec.Quantity{{Name: records.MemoryMB, Value: 256, Units: "Mi"}, {Name: records.VCores, Value: 1}}
	oneGPU = []jobspec.Quantity{{Name: records.MemoryMB, Value: 512, Units: "Mi"}, {Name: records.VCores, Value: 1}, {Name: records.GPU, Value: 1}}
	twoGPU = []jobspec.Quantity{{Name: records.MemoryMB, Value: 512, Units: "Mi"}, {Name: records.VCores, Value: 1}, {Name: records.GPU, Value: 2}}
)

// withRoles turns the fixture's spec into a format-2 spec of these roles (priorities 1, 2, ...).
func (f *fixture) withRoles(roles ...jobspec.Role) {
	s := f.spec
	s.Resource, s.Devices, s.Command, s.Restarts = nil, nil, nil, 0
	s.Containers = 0
	for i := range roles {
		roles[i].Priority = int32(i + 1)
		s.Containers += roles[i].Containers
	}
	s.Roles = roles
}

func byRole(t *testing.T, ls []amrmfake.Launch) map[string][]amrmfake.Launch {
	t.Helper()
	out := map[string][]amrmfake.Launch{}
	for _, l := range ls {
		out[l.Environment[jobspec.EnvRole]] = append(out[l.Environment[jobspec.EnvRole]], l)
	}
	return out
}

// peerLines returns the peers file's lines the launch command writes.
func peerLines(l amrmfake.Launch) []string {
	var out []string
	for _, w := range l.Commands[2:] {
		if strings.HasPrefix(w, ">") {
			break
		}
		out = append(out, strings.Trim(w, "'"))
	}
	return out
}

// The example: a coordinator (1, no GPU) and a gang of 2 one-GPU workers that depend on it.
func TestRolesDependsOnAndRendezvous(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{Exit: func(l amrmfake.Launch) amrmfake.Outcome {
		if l.Environment[jobspec.EnvRole] == "coordinator" {
			return amrmfake.Outcome{Heartbeats: 8}
		}
		return amrmfake.Outcome{Heartbeats: 2}
	}})
	f.withRoles(
		jobspec.Role{Name: "coordinator", Containers: 1, Resource: noGPU, Command: []string{"/bin/sh", "-c", "serve"}},
		jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Devices: &jobspec.Devices{Kind: "gpu", Amount: 1},
			Command: []string{"python3", "train.py"}, Gang: "workers", DependsOn: []string{"coordinator"}, Framework: jobspec.FrameworkPyTorch,
			Env: map[string]string{"TRAIN_MODE": "role"}},
	)
	res, err := f.run(t, f.options(t))
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	assert.Equal(t, "coordinator", ls[0].Environment[jobspec.EnvRole], "the workers wait for the coordinator to run")
	roles := byRole(t, ls)
	require.Len(t, roles["worker"], 2)
	c := roles["coordinator"][0]
	assert.Equal(t, "0", c.Environment[jobspec.EnvTorchRank])
	assert.Equal(t, "1", c.Environment[jobspec.EnvTorchWorld])
	assert.Equal(t, "fast", c.Environment["TRAIN_MODE"])
	w0port := strconv.Itoa(RankPort(amrmfake.AppID, 1))
	for _, l := range roles["worker"] {
		rank := l.Environment[jobspec.EnvRank]
		assert.Equal(t, rank, l.Environment[jobspec.EnvTorchRank])
		assert.Equal(t, "2", l.Environment[jobspec.EnvTorchWorld])
		assert.Equal(t, "2", l.Environment[jobspec.EnvWorldSize])
		assert.Equal(t, "role", l.Environment["TRAIN_MODE"], "a role's env wins over the job's")
		assert.Equal(t, "127.0.0.1", l.Environment[jobspec.EnvMasterAddr])
		assert.Equal(t, w0port, l.Environment[jobspec.EnvMasterPort], "worker rank 0's port, not the coordinator's")
		assert.Equal(t, rank, l.Environment[jobspec.EnvLocalRank])
		assert.Equal(t, "2", l.Environment[jobspec.EnvLocalWorldSize])
		assert.Equal(t, "0", l.Environment[jobspec.EnvNodeRank])
		assert.NotContains(t, l.Environment, jobspec.EnvTFConfig)
		// The gang started together: each worker sees the coordinator and both workers.
		assert.Equal(t, []string{
			"coordinator 0 127.0.0.1 " + strconv.Itoa(RankPort(amrmfake.AppID, 0)),
			"worker 0 127.0.0.1 " + w0port,
			"worker 1 127.0.0.1 " + strconv.Itoa(RankPort(amrmfake.AppID, 2)),
		}, peerLines(l))
	}
	assert.Len(t, res.Ranks, 3)
	assert.Equal(t, "worker", res.Ranks[2].Role)
	assert.Equal(t, 1, res.Ranks[2].Rank)
}

// No rank of a gang starts before all its containers are allocated: a job whose first role holds
// half the node's GPUs leaves room for one of the two workers only until it ends.
func TestGangStartsOnlyWhenComplete(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{Nodes: 1, GPUsPerNode: 4, Exit: func(l amrmfake.Launch) amrmfake.Outcome {
		if l.Environment[jobspec.EnvRole] == "prep" {
			return amrmfake.Outcome{Heartbeats: 6}
		}
		return amrmfake.Outcome{}
	}})
	f.withRoles(
		jobspec.Role{Name: "prep", Containers: 1, Resource: twoGPU, Command: []string{"prep"}},
		// (asked once prep runs, so that prep's container comes first)
		jobspec.Role{Name: "worker", Containers: 2, Resource: twoGPU, Command: []string{"train"}, Gang: "g", DependsOn: []string{"prep"}},
	)
	res, err := f.run(t, f.options(t))
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	assert.Equal(t, "prep", ls[0].Environment[jobspec.EnvRole])
	for _, l := range ls[1:] {
		assert.Equal(t, "worker", l.Environment[jobspec.EnvRole])
		assert.Len(t, peerLines(l), 2, "the workers start together, both known (prep had ended)")
	}
	assert.Empty(t, f.cluster.Releases(), "the held worker container was kept, not given back")
}

// A gang that cannot get all its containers gives back what it holds after the gang timeout and
// fails the application, saying what was missing; none of its ranks ever started.
func TestGangTimeoutReleasesAndFails(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{})
	f.withRoles(jobspec.Role{Name: "worker", Containers: 10, Resource: oneGPU, Command: []string{"train"}, Gang: "all"})
	f.spec.GangTimeoutMillis = 200
	res, err := f.run(t, f.options(t))
	var ge *GangError
	require.ErrorAs(t, err, &ge)
	assert.ErrorIs(t, err, ErrApplicationFailed)
	assert.Equal(t, records.FinalFailed, res.Status)
	assert.Empty(t, f.cluster.Launches(), "no rank of an incomplete gang starts")
	assert.Len(t, f.cluster.Releases(), 8, "the 8 containers the 2 nodes could give were given back")
	assert.Empty(t, f.cluster.Running())
	fin := f.cluster.Finishes()
	require.Len(t, fin, 1)
	for _, want := range []string{"gang all", "200ms", "8 of 10 worker container(s) <memory-mb:512, vcores:1, yarn.io/gpu:1> allocated", "given back"} {
		assert.Contains(t, fin[0].Diagnostics, want)
	}
}

// A restarted rank keeps its rank and port, and sees the current peers.
func TestRestartedRankRejoins(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{Exit: func(l amrmfake.Launch) amrmfake.Outcome {
		if l.Environment[jobspec.EnvRank] == "1" && !strings.Contains(l.Container.String(), "000004") {
			return amrmfake.Outcome{ExitStatus: 1}
		}
		return amrmfake.Outcome{Heartbeats: 4}
	}})
	f.withRoles(jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Command: []string{"train"}, Restarts: 1, Gang: "g"})
	res, err := f.run(t, f.options(t))
	require.NoError(t, err)
	assert.Equal(t, 1, res.Restarts)
	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	first, again := ls[1], ls[2]
	if first.Environment[jobspec.EnvRank] != "1" {
		first = ls[0]
	}
	assert.Equal(t, "1", again.Environment[jobspec.EnvRank])
	assert.Equal(t, first.Environment[jobspec.EnvPort], again.Environment[jobspec.EnvPort])
	assert.Equal(t, first.Environment[jobspec.EnvMasterPort], again.Environment[jobspec.EnvMasterPort])
	assert.Len(t, peerLines(again), 2)
}

func TestTFConfig(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{})
	f.withRoles(
		jobspec.Role{Name: "ps", Containers: 1, Resource: noGPU, Command: []string{"ps"}, Framework: jobspec.FrameworkTensorFlow, Gang: "tf"},
		jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Command: []string{"w"}, Framework: jobspec.FrameworkTensorFlow, Gang: "tf"},
	)
	_, err := f.run(t, f.options(t))
	require.NoError(t, err)
	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	for _, l := range ls {
		i := slices.IndexFunc(l.Commands, func(w string) bool { return strings.HasPrefix(w, "TF_CONFIG=") })
		require.GreaterOrEqual(t, i, 0, "TF_CONFIG is set by the launch command")
		// Undo the two quotings (bash single quotes, the script's double quotes).
		v := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(l.Commands[i], "TF_CONFIG="), "'"), "'")
		v = strings.ReplaceAll(v, `\"`, `"`)
		var tf struct {
			Cluster map[string][]string `json:"cluster"`
			Task    struct {
				Type  string `json:"type"`
				Index int    `json:"index"`
			} `json:"task"`
		}
		require.NoError(t, json.Unmarshal([]byte(v), &tf), v)
		assert.Len(t, tf.Cluster["ps"], 1)
		assert.Len(t, tf.Cluster["worker"], 2)
		assert.Equal(t, l.Environment[jobspec.EnvRole], tf.Task.Type)
		assert.Equal(t, l.Environment[jobspec.EnvRank], strconv.Itoa(tf.Task.Index))
		assert.Equal(t, "127.0.0.1:"+strconv.Itoa(RankPort(amrmfake.AppID, 1)), tf.Cluster["worker"][0])
	}
}

func TestRankPort(t *testing.T) {
	seen := map[int]bool{}
	for i := range PortSpan {
		p := RankPort("application_1_0001", i)
		require.GreaterOrEqual(t, p, PortBase)
		require.Less(t, p, PortBase+PortSpan)
		require.False(t, seen[p], "rank %d's port %d is another rank's", i, p)
		seen[p] = true
	}
	assert.Equal(t, RankPort("application_1_0001", 5), RankPort("application_1_0001", 5))
}

// placement spread: node: at most one rank of the role per node. The third rank of three on two
// nodes waits (its container on an occupied node is given back) until a node is free of the role.
func TestSpreadNode(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{RoundRobin: true, Exit: func(l amrmfake.Launch) amrmfake.Outcome {
		return amrmfake.Outcome{Heartbeats: 5}
	}})
	f.withRoles(jobspec.Role{Name: "worker", Containers: 3, Resource: oneGPU, Command: []string{"train"},
		Placement: &jobspec.Placement{Spread: "node"}})
	res, err := f.run(t, f.options(t))
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	assert.NotEqual(t, ls[0].Node, ls[1].Node, "the first two ranks on two nodes")
	assert.NotEmpty(t, f.cluster.Releases(), "the container that landed beside a rank was given back")
	assert.GreaterOrEqual(t, res.Released, 1)
	// The third started only once a node was free of the role: after the first two had ended.
	assert.Equal(t, "2", ls[2].Environment[jobspec.EnvRank])
	assert.Equal(t, "1", ls[2].Environment[jobspec.EnvLocalWorldSize])
}

// placement nodes: the ranks run only on the NodeManagers named; a container elsewhere is given
// back. With spread: node too, one rank per named node.
func TestPlacementNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spread string
		ranks  int
		byHost bool
	}{
		{name: "one node by host:port", ranks: 2},
		{name: "one node, spread", spread: "node", ranks: 1},
		{name: "by host: every NodeManager of the host", ranks: 3, byHost: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 0, amrmfake.Options{RoundRobin: true, Nodes: 3})
			// The fake's NodeManagers are all on one host (127.0.0.1), told apart by their ports.
			target := f.cluster.NodeAddr(1)
			name := target
			if tc.byHost {
				h, _, err := net.SplitHostPort(target)
				require.NoError(t, err)
				name = h
			}
			f.withRoles(jobspec.Role{Name: "probe", Containers: tc.ranks, Resource: oneGPU, Command: []string{"probe"},
				Placement: &jobspec.Placement{Spread: tc.spread, Nodes: []string{name}}})
			res, err := f.run(t, f.options(t))
			require.NoError(t, err)
			assert.Equal(t, records.FinalSucceeded, res.Status)
			ls := f.cluster.Launches()
			require.Len(t, ls, tc.ranks)
			if tc.byHost {
				return // every node of the fake is on that host
			}
			for _, l := range ls {
				assert.Equal(t, target, l.Node, "rank %s", l.Environment[jobspec.EnvRank])
			}
			if tc.ranks > 1 {
				assert.NotEmpty(t, f.cluster.Releases(), "round robin put a container on another node: given back")
			}
		})
	}
}

func TestProfileCapability(t *testing.T) {
	gpu := records.ResourcesOf(records.Resource{Name: records.MemoryMB, Value: 4096, Units: "Mi"}, records.Resource{Name: records.VCores, Value: 2},
		records.Resource{Name: records.GPU, Value: 1})
	reg := &amrm.Registration{ResourceProfiles: map[string]records.Resources{"default": records.NewResources(1024, 1), "gpu": gpu}}
	v, err := ProfileCapability("gpu", reg)
	require.NoError(t, err)
	assert.Equal(t, gpu, v)
	_, err = ProfileCapability("huge", reg)
	assert.ErrorIs(t, err, ErrNoProfile)
	assert.ErrorContains(t, err, `profile "huge", and the ResourceManager's profiles are default, gpu`)
	_, err = ProfileCapability("gpu", &amrm.Registration{})
	assert.ErrorContains(t, err, "has no resource profiles")
}

// A job asking by a profile the ResourceManager does not hand over fails at once, saying so.
func TestUnknownProfileFails(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{})
	f.withRoles(jobspec.Role{Name: "worker", Containers: 1, Resource: oneGPU, Command: []string{"train"}, Profile: "gpu"})
	res, err := f.run(t, f.options(t))
	assert.ErrorIs(t, err, ErrNoProfile)
	assert.Equal(t, records.FinalFailed, res.Status)
	fin := f.cluster.Finishes()
	require.Len(t, fin, 1)
	assert.Contains(t, fin[0].Diagnostics, `role worker: am: no such resource profile: the job asks by profile "gpu"`)
	assert.Empty(t, f.cluster.Launches())
}

// Gang timeout action "wait": after each timeout the gang gives back what it holds and asks again,
// holding nothing past the timeout; it starts nothing until it is complete.
func TestGangTimeoutWaitsAgain(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{})
	f.withRoles(jobspec.Role{Name: "worker", Containers: 10, Resource: oneGPU, Command: []string{"train"}, Gang: "all"})
	f.spec.GangTimeoutMillis = 100
	f.spec.GangTimeoutAction = jobspec.GangWait
	// Stopped as the NodeManager stops an AM (SIGTERM: its context is cancelled).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(550*time.Millisecond, cancel)
	opts := f.options(t)
	res, err := Run(ctx, f.spec, opts)
	assert.ErrorIs(t, err, ErrKilled, "it waits until stopped")
	assert.Empty(t, f.cluster.Launches(), "no rank of an incomplete gang starts")
	assert.GreaterOrEqual(t, res.Released, 16, "the 8 containers it could get, given back after each timeout (at least twice)")
	assert.GreaterOrEqual(t, len(f.cluster.Releases()), 16)
}

// BenchmarkRanks100k: the AM's record of a job at yarn-er's hard bound (jobspec.MaxContainers
// ranks, two roles): what it allocates for them before any container is asked for. The asks are
// counts per role (amrm), so this is the AM's memory that grows with the spec's count.
func BenchmarkRanks100k(b *testing.B) {
	spec := &jobspec.Spec{Version: jobspec.Version, Containers: jobspec.MaxContainers, Roles: []jobspec.Role{
		{Name: "ps", Containers: 1, Priority: 1}, {Name: "worker", Containers: jobspec.MaxContainers - 1, Priority: 2, Gang: "g"},
	}}
	b.ReportAllocs()
	for b.Loop() {
		r := &runner{spec: spec, byPrio: map[int32]*roleState{}}
		r.setupRoles()
		if len(r.slots) != jobspec.MaxContainers {
			b.Fatal(len(r.slots))
		}
	}
}
