package amrm

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/records"
)

type tokenMap map[string]records.Token

func (m tokenMap) NMToken(node string) (records.Token, bool) { t, ok := m[node]; return t, ok }

type fakeNM struct {
	srv    *ipctest.Server
	mu     sync.Mutex
	starts []*yarnpb.StartContainersRequestProto
	fail   string // exception class to report in failed_requests
	drop   bool   // drop the connection instead of answering
}

var nmTok = records.Token{Identifier: []byte("nm-id"), Password: []byte("nm-pw"), Kind: records.KindNMToken}

func newFakeNM(t *testing.T) *fakeNM {
	nm := &fakeNM{}
	nm.srv = ipctest.NewServer(t, ipctest.NewProtocol(cmProtocol, &nm.mu,
		ipctest.Answer("startContainers", nm.start),
		ipctest.Answer("stopContainers", nm.stop),
		ipctest.Answer("getContainerStatuses", nm.statuses),
	).Handle)
	nm.srv.AddToken(nmTok.Identifier, nmTok.Password)
	return nm
}

// start answers startContainers: every container starts, or fails with nm.fail.
func (nm *fakeNM) start(req *yarnpb.StartContainersRequestProto) (proto.Message, error) {
	nm.starts = append(nm.starts, req)
	if nm.drop {
		nm.srv.DropConnections()
		return nil, &ipctest.Exception{Class: "x", Message: "never delivered"}
	}
	resp := &yarnpb.StartContainersResponseProto{}
	for _, r := range req.GetStartContainerRequest() {
		// The container id travels inside the container token's identifier in Hadoop; the fake
		// encodes it as text in the token's service for simplicity.
		cid, err := records.ParseContainerID(r.GetContainerToken().GetService())
		if err != nil {
			return nil, err
		}
		id, err := containerIDProto(cid)
		if err != nil {
			return nil, err
		}
		if nm.fail != "" {
			resp.FailedRequests = append(resp.FailedRequests, &yarnpb.ContainerExceptionMapProto{
				ContainerId: id,
				Exception: &yarnpb.SerializedExceptionProto{ClassName: proto.String(nm.fail),
					Message: proto.String("Container " + r.GetContainerToken().GetService() + " has already been started")},
			})
			continue
		}
		resp.SucceededRequests = append(resp.SucceededRequests, id)
	}
	return resp, nil
}

// stop answers stopContainers: every container stops.
func (nm *fakeNM) stop(req *yarnpb.StopContainersRequestProto) (proto.Message, error) {
	return &yarnpb.StopContainersResponseProto{SucceededRequests: req.GetContainerId()}, nil
}

// statuses answers getContainerStatuses: every container runs.
func (nm *fakeNM) statuses(req *yarnpb.GetContainerStatusesRequestProto) (proto.Message, error) {
	resp := &yarnpb.GetContainerStatusesResponseProto{}
	for _, id := range req.GetContainerId() {
		resp.Status = append(resp.Status, &yarnpb.ContainerStatusProto{ContainerId: id, State: yarnpb.ContainerStateProto_C_RUNNING.Enum()})
	}
	return resp, nil
}

func (nm *fakeNM) startRequests() []*yarnpb.StartContainersRequestProto {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return append([]*yarnpb.StartContainersRequestProto(nil), nm.starts...)
}

func testContainer(t *testing.T, node string) Container {
	id := containerID(t, "container_e03_1700000000000_0001_01_000002")
	pid, err := containerIDProto(id)
	require.NoError(t, err)
	return Container{ID: id, Node: node, Priority: 1, pid: pid,
		token: records.Token{Identifier: []byte("container-token-identifier"), Password: []byte("ctpw"), Kind: records.KindContainerToken, Service: id.String()}}
}

func TestStartContainer(t *testing.T) {
	nm := newFakeNM(t)
	nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.srv.Addr: nmTok}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = nmc.Close() })

	creds := records.NewCredentials()
	creds.AddToken("amrm", amrmTok)
	creds.AddToken("hdfs", records.Token{Identifier: []byte("dt"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN"})
	ct := testContainer(t, nm.srv.Addr)
	lc := NewLaunchContext("sleep", "1").WithEnv("X", "1").WithCredentials(creds).
		WithLocalResource("am", records.LocalResource{URL: "file:///bin/am", Size: 10, Timestamp: 1700000000000})
	require.NoError(t, nmc.StartContainer(context.Background(), ct, lc))

	assert.Equal(t, nmTok.Identifier, nm.srv.Logins()[0], "authenticated with the node's NMToken")
	starts := nm.startRequests()
	require.Len(t, starts, 1)
	r := starts[0].GetStartContainerRequest()[0]
	assert.Equal(t, tokenProto(ct.token), r.GetContainerToken(), "the container token passes through unchanged")
	clc := r.GetContainerLaunchContext()
	assert.Equal(t, []string{"sleep", "1"}, clc.GetCommand())
	got, err := records.ParseCredentials(clc.GetTokens())
	require.NoError(t, err)
	assert.Contains(t, got.Tokens, "hdfs")
	assert.NotContains(t, got.Tokens, "amrm", "no AMRMToken for containers")

	// Status and stop by node and id.
	st, err := nmc.ContainerStatus(context.Background(), nm.srv.Addr, ct.ID)
	require.NoError(t, err)
	assert.Equal(t, records.ContainerRunning, st.State)
	assert.Equal(t, ct.ID, st.ID)
	require.NoError(t, nmc.StopContainer(context.Background(), nm.srv.Addr, ct.ID))
	assert.Equal(t, 1, nm.srv.Connections(), "one connection per NodeManager")
}

func TestStartContainerFailures(t *testing.T) {
	t.Run("failed request is a ContainerError", func(t *testing.T) {
		nm := newFakeNM(t)
		nm.fail = "org.apache.hadoop.yarn.exceptions.YarnException"
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.srv.Addr: nmTok}})
		require.NoError(t, err)
		ct := testContainer(t, nm.srv.Addr)
		err = nmc.StartContainer(context.Background(), ct, NewLaunchContext("true"))
		var ce *ContainerError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, ct.ID, ce.ID)
		var re *records.RemoteError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "org.apache.hadoop.yarn.exceptions.YarnException", re.Class)
		assert.Contains(t, err.Error(), "has already been started")
	})
	t.Run("no NMToken", func(t *testing.T) {
		nm := newFakeNM(t)
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{}})
		require.NoError(t, err)
		err = nmc.StartContainer(context.Background(), testContainer(t, nm.srv.Addr), NewLaunchContext("true"))
		require.ErrorIs(t, err, ErrNoToken)
		assert.ErrorContains(t, err, nm.srv.Addr)
	})
	t.Run("wrong NMToken", func(t *testing.T) {
		nm := newFakeNM(t)
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.srv.Addr: {Identifier: []byte("other"), Password: []byte("x"), Kind: records.KindNMToken}}})
		require.NoError(t, err)
		err = nmc.StartContainer(context.Background(), testContainer(t, nm.srv.Addr), NewLaunchContext("true"))
		assert.ErrorIs(t, err, ErrInvalidToken)
		assert.ErrorIs(t, err, ErrAuthentication)
	})
	t.Run("never resent after a lost connection", func(t *testing.T) {
		nm := newFakeNM(t)
		nm.drop = true
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.srv.Addr: nmTok}})
		require.NoError(t, err)
		err = nmc.StartContainer(context.Background(), testContainer(t, nm.srv.Addr), NewLaunchContext("true"))
		require.ErrorIs(t, err, ErrConnection)
		assert.Len(t, nm.startRequests(), 1)
	})
	t.Run("container not from Allocate", func(t *testing.T) {
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{}})
		require.NoError(t, err)
		assert.Error(t, nmc.StartContainer(context.Background(), Container{ID: containerID(t, "container_1_0001_01_000001")}, NewLaunchContext("true")))
	})
}
