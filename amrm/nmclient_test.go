package amrm

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/internal/fakeyarn"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/records"
)

type tokenMap map[string]records.Token

func (m tokenMap) NMToken(node string) (records.Token, bool) { t, ok := m[node]; return t, ok }

// fakeNM is a NodeManager that records the starts and starts every container, or fails them
// all with the exception class fail, or drops the connection instead of answering.
type fakeNM struct {
	*fakeyarn.NM
	mu     sync.Mutex
	starts []*yarnpb.StartContainersRequestProto
	fail   string
	drop   bool
}

var nmTok = records.Token{Identifier: []byte("nm-id"), Password: []byte("nm-pw"), Kind: records.KindNMToken}

func newFakeNM(t *testing.T) *fakeNM {
	nm := &fakeNM{}
	nm.NM = fakeyarn.NewNM(t, nmTok, fakeyarn.NMHooks{Lock: &nm.mu, Start: nm.start})
	return nm
}

func (nm *fakeNM) start(req *yarnpb.StartContainersRequestProto) (*yarnpb.StartContainersResponseProto, error) {
	nm.starts = append(nm.starts, req)
	if nm.drop {
		nm.Server.DropConnections()
		return nil, &ipctest.Exception{Class: "x", Message: "never delivered"}
	}
	resp, err := fakeyarn.StartAll(req)
	if err == nil && nm.fail != "" {
		for _, id := range resp.SucceededRequests {
			resp.FailedRequests = append(resp.FailedRequests, fakeyarn.Failed(id, nm.fail, "Container "+fakeyarn.ContainerID(id).String()+" has already been started"))
		}
		resp.SucceededRequests = nil
	}
	return resp, err
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
		token: records.Token{Identifier: []byte(id.String()), Password: []byte("ctpw"), Kind: records.KindContainerToken, Service: node}}
}

func TestStartContainer(t *testing.T) {
	nm := newFakeNM(t)
	nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.Server.Addr: nmTok}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = nmc.Close() })

	creds := records.NewCredentials()
	creds.AddToken("amrm", amrmTok)
	creds.AddToken("hdfs", records.Token{Identifier: []byte("dt"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN"})
	ct := testContainer(t, nm.Server.Addr)
	lc := NewLaunchContext("sleep", "1").WithEnv("X", "1").WithCredentials(creds).
		WithLocalResource("am", records.LocalResource{URL: "file:///bin/am", Size: 10, Timestamp: 1700000000000})
	require.NoError(t, nmc.StartContainer(context.Background(), ct, lc))

	assert.Equal(t, nmTok.Identifier, nm.Server.Logins()[0], "authenticated with the node's NMToken")
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
	st, err := nmc.ContainerStatus(context.Background(), nm.Server.Addr, ct.ID)
	require.NoError(t, err)
	assert.Equal(t, records.ContainerRunning, st.State)
	assert.Equal(t, ct.ID, st.ID)
	require.NoError(t, nmc.StopContainer(context.Background(), nm.Server.Addr, ct.ID))
	assert.Equal(t, 1, nm.Server.Connections(), "one connection per NodeManager")
}

func TestStartContainerFailures(t *testing.T) {
	t.Run("failed request is a ContainerError", func(t *testing.T) {
		nm := newFakeNM(t)
		nm.fail = "org.apache.hadoop.yarn.exceptions.YarnException"
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.Server.Addr: nmTok}})
		require.NoError(t, err)
		ct := testContainer(t, nm.Server.Addr)
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
		err = nmc.StartContainer(context.Background(), testContainer(t, nm.Server.Addr), NewLaunchContext("true"))
		require.ErrorIs(t, err, ErrNoToken)
		assert.ErrorContains(t, err, nm.Server.Addr)
	})
	t.Run("wrong NMToken", func(t *testing.T) {
		nm := newFakeNM(t)
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.Server.Addr: {Identifier: []byte("other"), Password: []byte("x"), Kind: records.KindNMToken}}})
		require.NoError(t, err)
		err = nmc.StartContainer(context.Background(), testContainer(t, nm.Server.Addr), NewLaunchContext("true"))
		assert.ErrorIs(t, err, ErrInvalidToken)
		assert.ErrorIs(t, err, ErrAuthentication)
	})
	t.Run("never resent after a lost connection", func(t *testing.T) {
		nm := newFakeNM(t)
		nm.drop = true
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{nm.Server.Addr: nmTok}})
		require.NoError(t, err)
		err = nmc.StartContainer(context.Background(), testContainer(t, nm.Server.Addr), NewLaunchContext("true"))
		require.ErrorIs(t, err, ErrConnection)
		assert.Len(t, nm.startRequests(), 1)
	})
	t.Run("container not from Allocate", func(t *testing.T) {
		nmc, err := NewNMClient(NMConfig{Tokens: tokenMap{}})
		require.NoError(t, err)
		assert.Error(t, nmc.StartContainer(context.Background(), Container{ID: containerID(t, "container_1_0001_01_000001")}, NewLaunchContext("true")))
	})
}
