package ipc_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/records"
)

const proto1 = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"

var tok1 = &ipc.Token{Identifier: []byte("id-1"), Password: []byte("secret-1"), Kind: "YARN_AM_RM_TOKEN"}

// echo answers allocate with response_id+1, after an optional delay given in the request's progress.
func echo(c *ipctest.Call) (proto.Message, error) {
	req := &yarnpb.AllocateRequestProto{}
	if err := c.Decode(req); err != nil {
		return nil, err
	}
	if d := req.GetProgress(); d > 0 {
		time.Sleep(time.Duration(d * float32(time.Second)))
	}
	return &yarnpb.AllocateResponseProto{ResponseId: proto.Int32(req.GetResponseId() + 1)}, nil
}

// serve starts a fake server that answers with h and accepts tok1, and a client of it
// (newClient with mod).
func serve(t *testing.T, h ipctest.Handler, mod func(*ipc.Config)) (*ipctest.Server, *ipc.Client) {
	t.Helper()
	s := ipctest.NewServer(t, h)
	s.AddToken(tok1.Identifier, tok1.Password)
	return s, newClient(t, s, mod)
}

func newClient(t *testing.T, s *ipctest.Server, mod func(*ipc.Config)) *ipc.Client {
	t.Helper()
	cfg := ipc.Config{
		Addrs:    []string{s.Addr},
		Protocol: proto1,
		Token:    func() (*ipc.Token, error) { return tok1, nil },
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := ipc.NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func allocate(ctx context.Context, c *ipc.Client, id int32, delay float32, opts ipc.CallOptions) (int32, error) {
	resp := &yarnpb.AllocateResponseProto{}
	err := c.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(id), Progress: proto.Float32(delay)}, resp, opts)
	return resp.GetResponseId(), err
}

func TestCallWithTokenAuth(t *testing.T) {
	for _, variant := range []string{"challenge in NEGOTIATE", "challenge round"} {
		t.Run(variant, func(t *testing.T) {
			s := ipctest.NewServer(t, echo)
			s.NoChallengeInNegotiate = variant == "challenge round"
			s.AddToken(tok1.Identifier, tok1.Password)
			c := newClient(t, s, nil)

			got, err := allocate(context.Background(), c, 41, 0, ipc.CallOptions{})
			require.NoError(t, err)
			assert.Equal(t, int32(42), got)

			require.Len(t, s.Logins(), 1)
			assert.Equal(t, tok1.Identifier, s.Logins()[0])
			ctxs := s.Contexts()
			require.Len(t, ctxs, 1)
			assert.Equal(t, proto1, ctxs[0].GetProtocol())
			require.NotNil(t, ctxs[0].UserInfo, "user info is sent, empty")
			assert.Nil(t, ctxs[0].UserInfo.EffectiveUser, "no effective user under TOKEN")
			calls := s.Calls()
			require.Len(t, calls, 1)
			assert.Equal(t, "allocate", calls[0].Method)
			assert.Equal(t, proto1, calls[0].Protocol)
			assert.Equal(t, int32(0), calls[0].CallID)
			assert.Equal(t, int32(0), calls[0].Retry)
			assert.Len(t, calls[0].ClientID, 16)
		})
	}
}

func TestCallIDsAndClientIDStable(t *testing.T) {
	s, c := serve(t, echo, nil)
	for i := 0; i < 3; i++ {
		_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
		require.NoError(t, err)
	}
	calls := s.Calls()
	require.Len(t, calls, 3)
	for i, call := range calls {
		assert.Equal(t, int32(i), call.CallID)
		assert.Equal(t, calls[0].ClientID, call.ClientID)
	}
	assert.Equal(t, 1, s.Connections(), "one connection for sequential calls")
}

func TestPipelinedCallsAnsweredOutOfOrder(t *testing.T) {
	s, c := serve(t, echo, nil)
	// Warm the connection, then send a slow call and fast calls concurrently.
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make([]int32, 5)
	errs := make([]error, 5)
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			delay := float32(0)
			if i == 0 {
				delay = 0.3
			}
			results[i], errs[i] = allocate(context.Background(), c, int32(100*i), delay, ipc.CallOptions{})
		}()
	}
	wg.Wait()
	for i := range 5 {
		require.NoError(t, errs[i])
		assert.Equal(t, int32(100*i+1), results[i], "call %d got its own response", i)
	}
	assert.Equal(t, 1, s.Connections(), "all calls shared one connection")
}

func TestRemoteErrorKeepsClassAndMessage(t *testing.T) {
	s, c := serve(t, func(c *ipctest.Call) (proto.Message, error) {
		if c.CallID == 0 {
			return nil, &ipctest.Exception{
				Class:   "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException",
				Message: "AM is not registered for known application attempt: appattempt_1_0001_000001\n\tat org.apache...",
			}
		}
		return echo(c)
	}, nil)
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException", re.Class)
	assert.Contains(t, re.Message, "appattempt_1_0001_000001")
	assert.False(t, re.Fatal)
	assert.Equal(t, "ERROR_APPLICATION", re.Code)
	assert.Equal(t, "allocate", re.Method)
	assert.NotContains(t, err.Error(), "\tat ", "the stack trace stays out of Error()")

	// ERROR keeps the connection.
	got, err := allocate(context.Background(), c, 1, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), got)
	assert.Equal(t, 1, s.Connections())
}

// TestWrongProtocolSaysWhichAddress: a server of another protocol on the configured address (a
// ResourceManager's client port given as its scheduler's) is named in the error, with the fix.
func TestWrongProtocolSaysWhichAddress(t *testing.T) {
	other := ipctest.NewProtocol("org.apache.hadoop.yarn.api.ApplicationClientProtocolPB", nil)
	s, c := serve(t, other.Handle, nil)
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{Idempotent: true})
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "org.apache.hadoop.ipc.RpcNoSuchProtocolException", re.Class)
	assert.Contains(t, err.Error(), "fix: "+s.Addr+" serves no "+proto1)
	assert.Equal(t, 1, s.Connections(), "not asked again")
}

func TestFatalErrorReconnects(t *testing.T) {
	s, c := serve(t, func(c *ipctest.Call) (proto.Message, error) {
		if c.Conn == 0 {
			return nil, &ipctest.Exception{Class: "org.apache.hadoop.ipc.RpcServerException", Message: "boom", Fatal: true}
		}
		return echo(c)
	}, nil)
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.True(t, re.Fatal)
	got, err := allocate(context.Background(), c, 5, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(6), got)
	assert.Equal(t, 2, s.Connections())
	assert.Len(t, s.Logins(), 2, "SASL again on the new connection")
}

func TestServerDropsIdleConnection(t *testing.T) {
	s, c := serve(t, echo, nil)
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.NoError(t, err)
	s.DropConnections()
	// Give the client's reader a moment to see the EOF; either way the next call must succeed
	// because the request is never written to a connection known to be closed, and a request written
	// into a dying connection is resent when idempotent.
	time.Sleep(50 * time.Millisecond)
	got, err := allocate(context.Background(), c, 7, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(8), got)
	assert.Equal(t, 2, s.Connections())
	assert.Len(t, s.Logins(), 2)
}

func TestClientClosesIdleConnection(t *testing.T) {
	s, c := serve(t, echo, func(cfg *ipc.Config) { cfg.MaxIdle = 20 * time.Millisecond })
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.OpenConnections() == 0 }, 5*time.Second, 5*time.Millisecond,
		"the client closes its idle connection")
	_, err = allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, c.Dials())

	// A call in flight keeps the connection open past MaxIdle.
	_, err = allocate(context.Background(), c, 0, 0.1, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, c.Dials())
}

func TestDropDuringCall(t *testing.T) {
	var armed atomic.Bool
	armed.Store(true)
	var s *ipctest.Server
	s = ipctest.NewServer(t, func(c *ipctest.Call) (proto.Message, error) {
		if armed.CompareAndSwap(true, false) {
			s.DropConnections()
			return nil, errors.New("never delivered")
		}
		return echo(c)
	})
	s.AddToken(tok1.Identifier, tok1.Password)

	t.Run("idempotent call is resent with the same call id", func(t *testing.T) {
		c := newClient(t, s, nil)
		got, err := allocate(context.Background(), c, 3, 0, ipc.CallOptions{Idempotent: true})
		require.NoError(t, err)
		assert.Equal(t, int32(4), got)
		calls := s.Calls()
		require.Len(t, calls, 2)
		assert.Equal(t, calls[0].CallID, calls[1].CallID)
		assert.Equal(t, calls[0].ClientID, calls[1].ClientID)
		assert.Equal(t, int32(0), calls[0].Retry)
		assert.Equal(t, int32(1), calls[1].Retry)
	})

	t.Run("other calls report the lost connection", func(t *testing.T) {
		armed.Store(true)
		c := newClient(t, s, nil)
		_, err := allocate(context.Background(), c, 3, 0, ipc.CallOptions{})
		require.ErrorIs(t, err, ipc.ErrConnection)
		var ce *ipc.ConnError
		require.ErrorAs(t, err, &ce)
		assert.True(t, ce.Sent)
	})
}

func TestContextCancellation(t *testing.T) {
	_, c := serve(t, echo, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := allocate(ctx, c, 0, 1, ipc.CallOptions{}) // server takes 1s
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// The connection stays usable; the late response is dropped.
	got, err := allocate(context.Background(), c, 9, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(10), got)
}

func TestContextCancelledBeforeConnect(t *testing.T) {
	_, c := serve(t, echo, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := allocate(ctx, c, 0, 0, ipc.CallOptions{})
	require.ErrorIs(t, err, context.Canceled)
}

// TestCallWithTokenIntegrity: a server that requires integrity (hadoop.rpc.protection=integrity:
// qop auth-int) or privacy (auth-conf, rc4) gets every request wrapped and wraps every answer;
// pipelined calls and one larger than a wrapped message go through; with auth offered too, no
// layer is used.
func TestCallWithTokenIntegrity(t *testing.T) {
	for _, tc := range []struct {
		qop     string
		wrapped int
	}{{"auth-int", 1}, {"auth,auth-int", 0}, {"auth-conf", 1}} {
		t.Run(tc.qop, func(t *testing.T) {
			s := ipctest.NewServer(t, echo)
			s.AddToken(tok1.Identifier, tok1.Password)
			s.QOP = tc.qop
			callThroughLayer(t, newClient(t, s, nil), 30000) // about 200 KB: several wrapped messages
			assert.Equal(t, tc.wrapped, s.IntegrityConnections())
			assert.Equal(t, [][]byte{tok1.Identifier}, s.Logins())
		})
	}
}

// callThroughLayer makes one call, 8 pipelined ones and one large one (releases container ids,
// several wrapped messages on a connection with a SASL security layer) and checks the answers.
func callThroughLayer(t *testing.T, c *ipc.Client, releases int) {
	t.Helper()
	got, err := allocate(context.Background(), c, 6, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(7), got)
	var wg sync.WaitGroup
	for i := int32(0); i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := allocate(context.Background(), c, 100+i, 0, ipc.CallOptions{})
			assert.NoError(t, err)
			assert.Equal(t, 101+i, got)
		}()
	}
	wg.Wait()
	big := &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(1)}
	for i := 0; i < releases; i++ {
		big.Release = append(big.Release, &yarnpb.ContainerIdProto{Id: proto.Int64(int64(i))})
	}
	resp := &yarnpb.AllocateResponseProto{}
	require.NoError(t, c.Call(context.Background(), "allocate", big, resp, ipc.CallOptions{}))
	assert.Equal(t, int32(2), resp.GetResponseId())
}

func TestAuthenticationFailures(t *testing.T) {
	// call makes one call to s with a client of the default configuration changed by mod.
	call := func(t *testing.T, s *ipctest.Server, mod func(*ipc.Config)) error {
		_, err := allocate(context.Background(), newClient(t, s, mod), 0, 0, ipc.CallOptions{})
		return err
	}
	t.Run("unknown token", func(t *testing.T) {
		s := ipctest.NewServer(t, echo)
		err := call(t, s, nil)
		require.ErrorIs(t, err, ipc.ErrAuthentication)
		var re *records.RemoteError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "org.apache.hadoop.security.token.SecretManager$InvalidToken", re.Class)
	})
	// Refusals of a server that knows the client's token.
	for _, tc := range []struct {
		name string
		mod  func(*ipctest.Server)
		is   error
		msg  string
	}{
		{"server without the secret", func(s *ipctest.Server) { s.BadRspauth = true }, ipc.ErrAuthentication, "rspauth does not match"},
		{"privacy with block ciphers only", func(s *ipctest.Server) { s.QOP, s.Ciphers = "auth-conf", "3des,des" }, ipc.ErrUnsupportedQOP, "with cipher rc4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ipctest.NewServer(t, echo)
			s.AddToken(tok1.Identifier, tok1.Password)
			tc.mod(s)
			err := call(t, s, nil)
			require.ErrorIs(t, err, tc.is)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	t.Run("no token for a TOKEN-only server", func(t *testing.T) {
		s := ipctest.NewServer(t, echo)
		err := call(t, s, func(cfg *ipc.Config) { cfg.Token = nil })
		var re *records.RemoteError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "org.apache.hadoop.security.AccessControlException", re.Class)
		assert.Contains(t, re.Message, "SIMPLE authentication is not enabled")
	})
}

func TestSimpleServer(t *testing.T) {
	s := ipctest.NewServer(t, echo)
	s.Simple = true
	c := newClient(t, s, func(cfg *ipc.Config) { cfg.User = "alice" })
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, "alice", s.Contexts()[0].GetUserInfo().GetEffectiveUser())
}

func TestTokenRefreshedOnReconnect(t *testing.T) {
	s := ipctest.NewServer(t, echo)
	s.AddToken(tok1.Identifier, tok1.Password)
	tok2 := &ipc.Token{Identifier: []byte("id-2"), Password: []byte("secret-2")}
	s.AddToken(tok2.Identifier, tok2.Password)
	var mu sync.Mutex
	cur := tok1
	c := newClient(t, s, func(cfg *ipc.Config) {
		cfg.Token = func() (*ipc.Token, error) { mu.Lock(); defer mu.Unlock(); return cur, nil }
	})
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.NoError(t, err)
	mu.Lock()
	cur = tok2
	mu.Unlock()
	s.RemoveToken(tok1.Identifier)
	s.DropConnections()
	time.Sleep(20 * time.Millisecond)
	_, err = allocate(context.Background(), c, 0, 0, ipc.CallOptions{Idempotent: true})
	require.NoError(t, err)
	logins := s.Logins()
	require.Len(t, logins, 2)
	assert.Equal(t, tok2.Identifier, logins[1])
}

func TestFailoverToSecondAddress(t *testing.T) {
	s := ipctest.NewServer(t, echo)
	s.AddToken(tok1.Identifier, tok1.Password)
	dead := ipctest.NewServer(t, echo)
	deadAddr := dead.Addr
	dead.Close()
	c := newClient(t, s, func(cfg *ipc.Config) { cfg.Addrs = []string{deadAddr, s.Addr} })
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.NoError(t, err)
	assert.Equal(t, s.Addr, c.Addr())
}

func TestAllAddressesDown(t *testing.T) {
	dead := ipctest.NewServer(t, echo)
	addr := dead.Addr
	dead.Close()
	c := newClient(t, dead, func(cfg *ipc.Config) { cfg.Addrs = []string{addr} })
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.ErrorIs(t, err, ipc.ErrConnection)
	assert.ErrorContains(t, err, addr)
}

func TestClosedClient(t *testing.T) {
	s := ipctest.NewServer(t, echo)
	c := newClient(t, s, nil)
	require.NoError(t, c.Close())
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	assert.ErrorIs(t, err, ipc.ErrClosed)
}

func TestResponseTooLarge(t *testing.T) {
	_, c := serve(t, func(c *ipctest.Call) (proto.Message, error) {
		return &yarnpb.AllocateResponseProto{ResponseId: proto.Int32(1), AllocatedContainers: make([]*yarnpb.ContainerProto, 100)}, nil
	}, func(cfg *ipc.Config) { cfg.MaxResponseSize = 150 })
	_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
	require.ErrorIs(t, err, ipc.ErrResponseTooLarge)
}
