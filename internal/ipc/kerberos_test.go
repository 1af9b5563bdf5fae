package ipc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/internal/ipc/gss"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/records"
)

// kerberized starts a fake server announcing nn/localhost and returns it with a client login
// holding a ticket for it. Clients dial it at 127.0.0.1, whose name is localhost (krb5test.LookupLocalhost).
func kerberized(t *testing.T, mod func(*ipctest.Kerberos)) (*ipctest.Server, *krb5test.Creds) {
	t.Helper()
	creds := krb5test.New(t, "nn/localhost")
	s := ipctest.NewServer(t, echo)
	s.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
	if mod != nil {
		mod(s.Kerberos)
	}
	return s, creds
}

func kerberosAuth(t *testing.T, creds *krb5test.Creds, spn string) *gss.Kerberos {
	return &gss.Kerberos{Client: creds.Client(t), ServicePrincipal: spn, LookupAddr: krb5test.LookupLocalhost}
}

// kerberosClient is a client of s that authenticates with Kerberos only (no token), as the login
// of creds asking for a ticket to spn.
func kerberosClient(t *testing.T, s *ipctest.Server, creds *krb5test.Creds, spn string) *ipc.Client {
	return newClient(t, s, func(cfg *ipc.Config) {
		cfg.Token = nil
		cfg.Kerberos = kerberosAuth(t, creds, spn)
	})
}

func TestCallWithKerberos(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spn    string
		layers byte
	}{
		{"_HOST and realm", "nn/_HOST@" + krb5test.Realm, 0},
		{"explicit host", "nn/localhost", 0},
		{"authentication among others", "nn/_HOST@" + krb5test.Realm, 1 | 4},
		{"integrity (hadoop.rpc.protection=integrity)", "nn/_HOST", 2},
		{"integrity among others", "nn/_HOST", 2 | 4},
		{"privacy (hadoop.rpc.protection=privacy)", "nn/_HOST", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, creds := kerberized(t, func(k *ipctest.Kerberos) { k.Layers = tc.layers })
			c := kerberosClient(t, s, creds, tc.spn)
			callThroughLayer(t, c, 3000)
			wantWrapped := 0
			if tc.layers&1 == 0 && tc.layers&(2|4) != 0 {
				wantWrapped = 1
			}
			assert.Equal(t, wantWrapped, s.IntegrityConnections(), "a security layer only when the server offers no plain one")
			assert.Equal(t, []string{krb5test.User + "@" + krb5test.Realm}, s.Principals())
			assert.Empty(t, s.Logins(), "no token login")
			ctxs := s.Contexts()
			require.Len(t, ctxs, 1)
			assert.Nil(t, ctxs[0].GetUserInfo().EffectiveUser, "the Kerberos login is the user: no effective user (that would ask for proxy-user rights)")
		})
	}
}

func TestCallWithKerberosRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spn     string
		mod     func(*ipctest.Kerberos)
		is      error
		message string
	}{
		{"server announces another principal", "nn/other.example.com", nil, ipc.ErrAuthentication,
			`the server announces Kerberos principal "nn/localhost", the configuration expects "nn/other.example.com"`},
		{"server announces another host than _HOST resolves to", "nn/_HOST", func(k *ipctest.Kerberos) { k.Principal = "nn/127.0.0.2" }, ipc.ErrAuthentication,
			`the server announces Kerberos principal "nn/127.0.0.2", the configuration expects "nn/localhost"`},
		{"no layer the client knows", "nn/_HOST", func(k *ipctest.Kerberos) { k.Layers = 8 }, ipc.ErrUnsupportedQOP,
			"unknown security layers"},
		{"server without the session key", "nn/_HOST", func(k *ipctest.Kerberos) { k.BadKey = true }, ipc.ErrAuthentication,
			"does not verify under the session key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, creds := kerberized(t, tc.mod)
			_, err := allocate(context.Background(), kerberosClient(t, s, creds, tc.spn), 1, 0, ipc.CallOptions{})
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			assert.Contains(t, err.Error(), tc.message)
			assert.Empty(t, s.Calls(), "no call reaches an unauthenticated connection")
		})
	}
}

func TestKerberosServerWithoutKerberos(t *testing.T) {
	// A TOKEN-only server (the RM's scheduler port): Kerberos cannot be used there.
	creds := krb5test.New(t, "nn/localhost")
	s := ipctest.NewServer(t, echo)
	_, err := allocate(context.Background(), kerberosClient(t, s, creds, "nn/_HOST"), 1, 0, ipc.CallOptions{})
	require.Error(t, err)
	assert.ErrorIs(t, err, ipc.ErrAuthentication)
	assert.Contains(t, err.Error(), "offers TOKEN/DIGEST-MD5, not KERBEROS/GSSAPI")
}

func TestKerberosNoTicketNoKDC(t *testing.T) {
	// The cache has no ticket for the service and the KDC is unreachable: a typed error that
	// says what to check, and the connection is not used.
	creds := krb5test.New(t, "other/127.0.0.1")
	s, _ := kerberized(t, nil)
	_, err := allocate(context.Background(), kerberosClient(t, s, creds, "nn/_HOST"), 1, 0, ipc.CallOptions{})
	require.Error(t, err)
	assert.ErrorIs(t, err, ipc.ErrAuthentication)
	assert.Contains(t, err.Error(), "Kerberos service ticket for nn/localhost")
	var re *records.RemoteError
	assert.False(t, errors.As(err, &re), "refused on the client side")
}

func TestKerberosConfigErrors(t *testing.T) {
	creds := krb5test.New(t)
	for _, tc := range []struct {
		name string
		k    *gss.Kerberos
		msg  string
	}{
		{"no client", &gss.Kerberos{ServicePrincipal: "nn/_HOST"}, "without credentials"},
		{"no principal", &gss.Kerberos{Client: creds.Client(t)}, "no Kerberos service principal"},
		{"no host part", &gss.Kerberos{Client: creds.Client(t), ServicePrincipal: "nn@R"}, "is not service/host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ipc.NewClient(ipc.Config{Addrs: []string{"127.0.0.1:1"}, Protocol: proto1, Kerberos: tc.k})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestProxyUser: DoAs sends the effective user in the connection context (KERBEROS: the
// principal is the real user; SIMPLE: User is sent as the real user), as Hadoop's client does for
// a proxy UserGroupInformation; the server refuses a real user without proxy-user rights with
// its FATAL AuthorizationException, which the call returns.
func TestProxyUser(t *testing.T) {
	principal := krb5test.User + "@" + krb5test.Realm
	for _, tc := range []struct {
		name       string
		kerberos   bool
		proxyUsers []string
		wantUser   string
		wantReal   string
		wantErr    string
	}{
		{"kerberos, allowed", true, []string{principal}, "bob", "", ""},
		{"kerberos, refused", true, nil, "", "", "User: " + principal + " is not allowed to impersonate bob"},
		{"simple, allowed", false, []string{"alice"}, "bob", "alice", ""},
		{"simple, refused", false, []string{"carol"}, "", "alice", "User: alice is not allowed to impersonate bob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s *ipctest.Server
			var c *ipc.Client
			if tc.kerberos {
				var creds *krb5test.Creds
				s, creds = kerberized(t, nil)
				c = newClient(t, s, func(cfg *ipc.Config) {
					cfg.Token, cfg.Kerberos, cfg.DoAs = nil, kerberosAuth(t, creds, "nn/_HOST"), "bob"
				})
			} else {
				s = ipctest.NewServer(t, echo)
				s.Simple = true
				c = newClient(t, s, func(cfg *ipc.Config) { cfg.Token, cfg.User, cfg.DoAs = nil, "alice", "bob" })
			}
			s.ProxyUsers = tc.proxyUsers
			_, err := allocate(context.Background(), c, 0, 0, ipc.CallOptions{})
			ctxs := s.Contexts()
			require.NotEmpty(t, ctxs)
			assert.Equal(t, "bob", ctxs[0].GetUserInfo().GetEffectiveUser())
			assert.Equal(t, tc.wantReal, ctxs[0].GetUserInfo().GetRealUser())
			if tc.wantErr != "" {
				var re *records.RemoteError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, "org.apache.hadoop.security.authorize.AuthorizationException", re.Class)
				assert.Contains(t, re.Message, tc.wantErr)
				assert.Empty(t, s.Calls(), "no call runs on a refused connection")
				return
			}
			require.NoError(t, err)
			calls := s.Calls()
			require.Len(t, calls, 1)
			assert.Equal(t, tc.wantUser, calls[0].User, "the call runs as the proxy user")
		})
	}
}

func TestProxyUserWithTokenRefused(t *testing.T) {
	_, err := ipc.NewClient(ipc.Config{Addrs: []string{"127.0.0.1:1"}, Protocol: "p", DoAs: "bob",
		Token: func() (*ipc.Token, error) { return tok1, nil }})
	assert.ErrorContains(t, err, "no proxy user (DoAs) with a token")
}
