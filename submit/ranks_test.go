package submit

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// gpuHadoop is a Hadoop configuration declaring yarn.io/gpu.
func gpuHadoop(t *testing.T) *conf.HadoopConfig {
	t.Helper()
	hc := &conf.HadoopConfig{}
	hc.Set("yarn.resource-types", "yarn.io/gpu", conf.Source{File: "resource-types.xml", Line: 1})
	return hc
}

// A running job of roles: its AM's log names each rank start with its role; app logs --role and
// --rank select by them, and Ranks gives each rank's latest container with its restarts.
func TestRolesInLogsAndRanks(t *testing.T) {
	nm := yarnfake.NewNodeManager(t)
	const am = "container_1_0001_01_000001"
	amLog := `time=t level=INFO msg="am: starting rank" role=coordinator rank=0 container=container_1_0001_01_000002 node=nm:1 resource="<>" launch=1
time=t level=INFO msg="am: starting rank" role=worker rank=0 container=container_1_0001_01_000003 node=nm:1 resource="<>" launch=1
time=t level=INFO msg="am: starting rank" role=worker rank=1 container=container_1_0001_01_000004 node=nm:2 resource="<>" launch=1
time=t level=INFO msg="am: starting rank" role=worker rank=1 container=container_1_0001_01_000005 node=nm:1 resource="<>" launch=2
`
	nm.SetLog(am, "stderr", amLog)
	for i, who := range []string{"", "coordinator 0", "worker 0", "worker 1 first", "worker 1 again"} {
		if i > 0 {
			nm.SetLog(fmt.Sprintf("container_1_0001_01_%06d", i+1), "stdout", who+"\n")
		}
	}
	nmAddr := nm.Addr()
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001", http.StatusOK,
		`{"app":{"id":"application_1_0001","state":"RUNNING","finalStatus":"UNDEFINED","applicationType":"YARN-ER"}}`)
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts", http.StatusOK,
		fmt.Sprintf(`{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1_0001_000001","containerId":"%s","nodeId":"nm:1","nodeHttpAddress":"%s"}]}}`, am, nmAddr))
	var cs []string
	for _, id := range []int{1, 2, 3, 5} {
		cs = append(cs, fmt.Sprintf(`{"containerId":"container_1_0001_01_%06d","nodeId":"nm:1","nodeHttpAddress":"http://%s"}`, id, nmAddr))
	}
	rm.ReplyJSON("GET /ws/v1/cluster/apps/application_1_0001/appattempts/appattempt_1_0001_000001/containers", http.StatusOK,
		`{"container":[`+join(cs)+`]}`)
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	c, err := New(Options{YARN: yc})
	require.NoError(t, err)
	ctx := context.Background()

	one := 1
	var out bytes.Buffer
	require.NoError(t, c.Logs(ctx, "application_1_0001", LogsOptions{Role: "worker", Rank: &one, Files: []string{"stdout"}}, &out))
	assert.Equal(t, "==> container_1_0001_01_000005 (worker rank 1) on nm:1: stdout <==\nworker 1 again\n", out.String(),
		"the live container of worker 1 (its first ended)")

	out.Reset()
	require.NoError(t, c.Logs(ctx, "application_1_0001", LogsOptions{Role: "worker", Files: []string{"stdout"}}, &out))
	assert.Contains(t, out.String(), "(worker rank 0)")
	assert.Contains(t, out.String(), "(worker rank 1)")
	assert.NotContains(t, out.String(), "coordinator")

	zero := 0
	out.Reset()
	require.NoError(t, c.Logs(ctx, "application_1_0001", LogsOptions{Rank: &zero, Files: []string{"stdout"}}, &out))
	assert.Contains(t, out.String(), "(coordinator rank 0)", "--rank alone: that rank of every role")
	assert.Contains(t, out.String(), "(worker rank 0)")

	err = c.Logs(ctx, "application_1_0001", LogsOptions{Role: "ps"}, &out)
	assert.ErrorIs(t, err, ErrNoLogs)
	assert.ErrorContains(t, err, "no container of role ps")

	st, err := c.Status(ctx, "application_1_0001")
	require.NoError(t, err)
	ranks, err := c.Ranks(ctx, st)
	require.NoError(t, err)
	assert.Equal(t, []RankState{
		{Role: "coordinator", Rank: 0, Container: "container_1_0001_01_000002", Node: "nm:1", Launches: 1, Live: true},
		{Role: "worker", Rank: 0, Container: "container_1_0001_01_000003", Node: "nm:1", Launches: 1, Live: true},
		{Role: "worker", Rank: 1, Container: "container_1_0001_01_000005", Node: "nm:1", Launches: 2, Live: true},
	}, ranks)
}

func join(parts []string) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(p)
	}
	return b.String()
}

func TestPlanByProfile(t *testing.T) {
	types, problems := profile.LoadResourceTypes(gpuHadoop(t))
	require.Empty(t, problems)
	profiles, err := profile.ParseResourceProfiles("rp.json", []byte(`{"default": {"memory-mb": 1024, "vcores": 1},
		"gpu": {"memory-mb": 4096, "vcores": 2, "yarn.io/gpu": 1}}`), types)
	require.NoError(t, err)
	req := Request{Profile: "gpu", Containers: 2, Command: []string{"true"}}
	plan, err := req.Plan(nil, profiles)
	require.NoError(t, err)
	assert.Equal(t, "<memory-mb:4096, vcores:2, yarn.io/gpu:1>", plan.Roles[0].Resource.String())
	require.NotNil(t, plan.Roles[0].Devices, "exec locks the profile's GPU")
	assert.Equal(t, int64(1), plan.Roles[0].Devices.Amount)

	for _, tc := range []struct {
		req  Request
		prof bool
		msg  string
	}{
		{Request{Profile: "huge", Command: []string{"true"}}, true, `--profile: "huge" is not a resource profile of the ResourceManager (rp.json has: default, gpu)`},
		{Request{Profile: "gpu", Command: []string{"true"}}, false, "does not enable resource profiles"},
		{Request{Profile: "gpu", GPUs: 1, Command: []string{"true"}}, true, "--profile: gives the whole container"},
		{Request{Roles: []RoleRequest{{Name: "w", Profile: "nope", Command: []string{"x"}}}}, true, `role w.profile: "nope" is not a resource profile`},
		{Request{Roles: []RoleRequest{{Name: "w", Profile: "gpu", Memory: "1g", Command: []string{"x"}}}}, true, "give the profile alone"},
	} {
		p := profiles
		if !tc.prof {
			p = nil
		}
		_, err := tc.req.Plan(nil, p)
		assert.ErrorIs(t, err, ErrRequest)
		assert.ErrorContains(t, err, tc.msg)
	}
}

// TestPlacementRacks: racks alone or with spread or pack are planned; bad rack names and racks
// with nodes are refused naming the field.
func TestPlacementRacks(t *testing.T) {
	for _, tc := range []struct {
		name string
		pl   jobspec.Placement
		msg  string // "": planned
	}{
		{name: "default rack", pl: jobspec.Placement{Racks: []string{"/default-rack"}}},
		{name: "two racks, nested", pl: jobspec.Placement{Racks: []string{"/dc1/rack7", "/dc2/rack1"}}},
		{name: "with spread", pl: jobspec.Placement{Spread: "node", Racks: []string{"/r"}}},
		{name: "with pack", pl: jobspec.Placement{Pack: "node", Racks: []string{"/r"}, Fallback: jobspec.FallbackFail}},
		{name: "spread alone", pl: jobspec.Placement{Spread: "node"}},
		{name: "nodes", pl: jobspec.Placement{Spread: "node", Nodes: []string{"h1:8041", "h2"}}},
		{name: "relative", pl: jobspec.Placement{Racks: []string{"/a", "rack1"}}, msg: `role w.placement.racks[1]: "rack1" does not start with /: a rack is an absolute network location, e.g. /rack1`},
		{name: "empty", pl: jobspec.Placement{Racks: []string{""}}, msg: "role w.placement.racks[0]: empty"},
		{name: "root", pl: jobspec.Placement{Racks: []string{"/"}}, msg: `role w.placement.racks[0]: "/" has an empty part`},
		{name: "trailing slash", pl: jobspec.Placement{Racks: []string{"/r/"}}, msg: "has an empty part"},
		{name: "double slash", pl: jobspec.Placement{Racks: []string{"/dc//r"}}, msg: "has an empty part"},
		{name: "space", pl: jobspec.Placement{Racks: []string{"/r 1"}}, msg: "has a space, a control character, a comma or *"},
		{name: "comma", pl: jobspec.Placement{Racks: []string{"/r1,/r2"}}, msg: "a comma"},
		{name: "star", pl: jobspec.Placement{Racks: []string{"/*"}}, msg: "or *"},
		{name: "too long", pl: jobspec.Placement{Racks: []string{"/" + strings.Repeat("r", 300)}}, msg: "301 bytes, more than 255"},
		{name: "with nodes", pl: jobspec.Placement{Racks: []string{"/r"}, Nodes: []string{"h1"}}, msg: "role w.placement.racks: with placement.nodes: the nodes name the NodeManagers already; keep nodes or racks, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := tc.pl
			req := Request{Roles: []RoleRequest{{Name: "w", Command: []string{"x"}, Placement: &pl}}}
			_, err := req.Plan(nil, nil)
			if tc.msg == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrRequest)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestPlacementNodesMustBeNames(t *testing.T) {
	for _, n := range []string{"", "a b", "h1,h2", "h\x7f"} {
		req := Request{Roles: []RoleRequest{{Name: "w", Command: []string{"x"}, Placement: &jobspec.Placement{Nodes: []string{"h0", n}}}}}
		_, err := req.Plan(nil, nil)
		assert.ErrorIs(t, err, ErrRequest, "%q", n)
		assert.ErrorContains(t, err, "role w.placement.nodes[1]", "%q", n)
	}
}

func TestNoDeviceLockRunsWithoutExec(t *testing.T) {
	for _, tc := range []struct {
		lock    bool
		devices *jobspec.Devices
	}{
		{lock: true, devices: &jobspec.Devices{Kind: "gpu", Amount: 1}},
		{lock: false},
	} {
		req := Request{Roles: []RoleRequest{{Name: "w", GPUs: 1, Command: []string{"x"}, NoDeviceLock: !tc.lock}}}
		p, err := req.Plan(nil, nil)
		require.NoError(t, err)
		require.Len(t, p.Roles, 1)
		assert.Equal(t, tc.devices, p.Roles[0].Devices)
		v, ok := p.Roles[0].Resource.Get(records.GPU)
		assert.True(t, ok)
		assert.Equal(t, int64(1), v, "the container asks for its GPU either way")
	}
}
