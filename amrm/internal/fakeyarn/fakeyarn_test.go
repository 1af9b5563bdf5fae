package fakeyarn

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/records"
)

var testToken = records.Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: records.KindAMRMToken}

func dial(t *testing.T, addr, protocol string, tok records.Token) *ipc.Client {
	t.Helper()
	c, err := ipc.NewClient(ipc.Config{Addrs: []string{addr}, Protocol: protocol, Token: func() (*ipc.Token, error) {
		it := ipc.Token(tok)
		return &it, nil
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func remoteClass(t *testing.T, err error) string {
	t.Helper()
	var re *records.RemoteError
	require.True(t, errors.As(err, &re), "%v", err)
	return re.Class
}

// TestRMRules: the scheduler's 3.x rules as the fakes' owners rely on them, over real IPC.
func TestRMRules(t *testing.T) {
	ctx := context.Background()
	rm := NewRM(t, testToken, RMHooks{Allocate: func(n int, _ *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
		resp.AllocatedContainers = []*yarnpb.ContainerProto{Container(int64(n+2), "nm", 1, &yarnpb.ResourceProto{}, 1)}
		return nil
	}})
	c := dial(t, rm.Server.Addr, SchedulerProtocol, testToken)
	allocate := func(id int32) (*yarnpb.AllocateResponseProto, error) {
		resp := &yarnpb.AllocateResponseProto{}
		return resp, c.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(id)}, resp, ipc.CallOptions{})
	}
	register := func() error {
		return c.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{Host: proto.String("am")},
			&yarnpb.RegisterApplicationMasterResponseProto{}, ipc.CallOptions{})
	}

	_, err := allocate(0)
	assert.Equal(t, ExNotRegistered, remoteClass(t, err), "no heartbeat before registering")
	require.NoError(t, register())
	assert.Equal(t, ExInvalidRequest, remoteClass(t, register()), "one registration per attempt")

	first, err := allocate(0)
	require.NoError(t, err)
	assert.Equal(t, int32(1), first.GetResponseId())
	again, err := allocate(0)
	require.NoError(t, err)
	assert.True(t, first.EqualVT(again), "the last id again gets the last answer again")
	_, err = allocate(5)
	assert.Equal(t, ExInvalidRequest, remoteClass(t, err))
	next, err := allocate(1)
	require.NoError(t, err)
	assert.Equal(t, "container_1700000000000_0001_01_000003", ContainerID(next.GetAllocatedContainers()[0].GetId()).String())
	assert.Len(t, rm.AllocateRequests(), 2, "a resend is not a new heartbeat")

	rm.Mu.Lock()
	rm.UnregisterAfter = 2
	rm.Mu.Unlock()
	finish := func() bool {
		resp := &yarnpb.FinishApplicationMasterResponseProto{}
		require.NoError(t, c.Call(ctx, "finishApplicationMaster", &yarnpb.FinishApplicationMasterRequestProto{}, resp, ipc.CallOptions{}))
		return resp.GetIsUnregistered()
	}
	assert.False(t, finish())
	assert.True(t, finish())

	rm.Forget()
	c.Reset() // the connection was dropped: the next call connects again
	_, err = allocate(2)
	assert.Equal(t, ExNotRegistered, remoteClass(t, err), "forgotten: register again")
	rm.Mu.Lock()
	defer rm.Mu.Unlock()
	assert.Equal(t, 1, rm.Registers)
}

// TestNMDefaults: a NodeManager without hooks starts, stops and reports every container of its
// token's identifier; a token naming none is a failed request.
func TestNMDefaults(t *testing.T) {
	ctx := context.Background()
	nm := NewNM(t, records.Token{}, NMHooks{})
	assert.Contains(t, string(nm.Token.Identifier), nm.Server.Addr)
	c := dial(t, nm.Server.Addr, ContainerProtocol, nm.Token)

	ct := Container(7, nm.Host, nm.Port, &yarnpb.ResourceProto{}, 1)
	resp := &yarnpb.StartContainersResponseProto{}
	require.NoError(t, c.Call(ctx, "startContainers", &yarnpb.StartContainersRequestProto{StartContainerRequest: []*yarnpb.StartContainerRequestProto{
		{ContainerToken: ct.GetContainerToken()},
		{ContainerToken: &commonpb.TokenProto{Identifier: []byte("garbage"), Password: []byte("x"), Kind: proto.String(records.KindContainerToken), Service: proto.String(nm.Server.Addr)}},
	}}, resp, ipc.CallOptions{}))
	require.Len(t, resp.GetSucceededRequests(), 1)
	assert.Equal(t, "container_1700000000000_0001_01_000007", ContainerID(resp.GetSucceededRequests()[0]).String())
	require.Len(t, resp.GetFailedRequests(), 1)
	assert.Contains(t, resp.GetFailedRequests()[0].GetException().GetMessage(), "not a container token")

	st := &yarnpb.GetContainerStatusesResponseProto{}
	require.NoError(t, c.Call(ctx, "getContainerStatuses", &yarnpb.GetContainerStatusesRequestProto{ContainerId: []*yarnpb.ContainerIdProto{ct.GetId()}}, st, ipc.CallOptions{}))
	require.Len(t, st.GetStatus(), 1)
	assert.Equal(t, yarnpb.ContainerStateProto_C_RUNNING, st.GetStatus()[0].GetState())
}

// TestRMResponseIDRule: ApplicationMasterService.allocate's responseId rule, message and
// wrap-around (Hadoop 3.1 to 3.5), over real IPC.
func TestRMResponseIDRule(t *testing.T) {
	ctx := context.Background()
	rm := NewRM(t, testToken, RMHooks{})
	c := dial(t, rm.Server.Addr, SchedulerProtocol, testToken)
	allocate := func(id int32) (*yarnpb.AllocateResponseProto, error) {
		resp := &yarnpb.AllocateResponseProto{}
		return resp, c.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(id)}, resp, ipc.CallOptions{})
	}
	require.NoError(t, c.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{},
		&yarnpb.RegisterApplicationMasterResponseProto{}, ipc.CallOptions{}))

	reg, err := allocate(-1)
	require.NoError(t, err, "the id before 0 gets the registration's empty answer")
	assert.Equal(t, int32(0), reg.GetResponseId())
	assert.Empty(t, rm.AllocateRequests())

	_, err = allocate(3)
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, ExInvalidRequest, re.Class)
	assert.Equal(t, "Invalid responseId in AllocateRequest from application attempt: appattempt_1700000000000_0001_000001 expect responseId to be 0 but get 3"+
		"\n\tat org.apache.hadoop.yarn.server.resourcemanager.ApplicationMasterService.allocate(ApplicationMasterService.java:428)", re.Message)
	rm.Mu.Lock()
	rm.Hadoop31 = true
	rm.Mu.Unlock()
	_, err = allocate(3)
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(re.Message,
		"Invalid responseId in AllocateRequest from application attempt: appattempt_1700000000000_0001_000001, expect responseId to be 0, but get 3\n\tat "), re.Message)

	// An RM that went on: the id before its last gets an (empty) last answer, its last is a heartbeat.
	rm.Mu.Lock()
	rm.LastID = math.MaxInt32 - 1
	rm.Mu.Unlock()
	last, err := allocate(math.MaxInt32 - 2)
	require.NoError(t, err)
	assert.Equal(t, int32(math.MaxInt32-1), last.GetResponseId())
	assert.Empty(t, rm.AllocateRequests())

	var got []int32
	for _, id := range []int32{math.MaxInt32 - 1, math.MaxInt32, math.MaxInt32, 0} {
		resp, err := allocate(id)
		require.NoError(t, err, "id %d", id)
		got = append(got, resp.GetResponseId())
	}
	assert.Equal(t, []int32{math.MaxInt32, 0, 0, 1}, got, "2147483647 is answered with 0; sent again, it gets that answer again")
	assert.Len(t, rm.AllocateRequests(), 3)
	_, err = allocate(math.MaxInt32)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Message, "expect responseId to be 1, but get 2147483647")

	assert.Equal(t, int32(0), NextResponseID(math.MaxInt32))
	assert.Equal(t, int32(0), NextResponseID(-1))
	assert.Equal(t, int32(8), NextResponseID(7))
}

func TestSatisfied(t *testing.T) {
	simple := func(scope string, lo, hi int32, tags ...string) *yarnpb.PlacementConstraintProto {
		return &yarnpb.PlacementConstraintProto{SimpleConstraint: &yarnpb.SimplePlacementConstraintProto{
			Scope: proto.String(scope), MinCardinality: proto.Int32(lo), MaxCardinality: proto.Int32(hi),
			TargetExpressions: []*yarnpb.PlacementConstraintTargetProto{{
				TargetType: yarnpb.PlacementConstraintTargetProto_ALLOCATION_TAG.Enum(), TargetValues: tags}},
		}}
	}
	counts := map[string]int{"node/w": 1, "rack/w": 2, "rack/ps": 1}
	count := func(scope, tag string) int { return counts[scope+"/"+tag] }
	for _, tc := range []struct {
		name string
		c    *yarnpb.PlacementConstraintProto
		want bool
	}{
		{"none", nil, true},
		{"anti-affinity, tag on the node", simple("node", 0, 0, "w"), false},
		{"anti-affinity, tag elsewhere", simple("node", 0, 0, "ps"), true},
		{"affinity, tag on the node", simple("node", 1, math.MaxInt32, "w"), true},
		{"affinity, tag nowhere near", simple("node", 1, math.MaxInt32, "ps"), false},
		{"affinity in the rack", simple("rack", 1, math.MaxInt32, "ps"), true},
		{"cardinality at most 1 in the rack", simple("rack", 0, 1, "w"), false},
		{"composite (not decoded)", &yarnpb.PlacementConstraintProto{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Satisfied(tc.c, count))
		})
	}
}
