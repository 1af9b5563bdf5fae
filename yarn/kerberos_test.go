package yarn

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/jcmturner/goidentity/v6"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/kerberos"
)

// This test runs real SPNEGO without a KDC: it plays the KDC's part by minting a TGT and an
// HTTP/127.0.0.1 service ticket with gokrb5, writes them into an MIT credential cache file (the
// file kinit + kvno would leave), and points the client at it. The fake RM verifies every
// Negotiate token with gokrb5's acceptor and the service keytab, as Hadoop's
// KerberosAuthenticationHandler does with the RM's spnego keytab.

const testRealm = krb5test.Realm

// fakeKerberos mints tickets for alice@YARN-ER.TEST and returns the ccache path, the krb5.conf path
// and the service keytab.
func fakeKerberos(t *testing.T, service string) (ccache, krb5conf string, kt *keytab.Keytab) {
	t.Helper()
	c := krb5test.New(t, service)
	return c.CCache, c.Krb5Conf, c.Keytab
}

func TestKerberosSPNEGOWithCredentialCache(t *testing.T) {
	var negotiations, served atomic.Int32
	var who atomic.Value
	info := loadCapture(t, "info.json").body
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		negotiations.Add(1)
		if id := goidentity.FromHTTPRequestContext(r); id != nil {
			who.Store(id.UserName())
		}
		http.SetCookie(w, &http.Cookie{Name: hadoopAuthCookie, Value: "u=alice&t=kerberos", Path: "/"})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(info)
	})
	var acceptor http.Handler
	// Fault injection: SPNEGO negotiation and the hadoop.auth cookie, which yarnfake does not model.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if c, err := r.Cookie(hadoopAuthCookie); err == nil && c.Value == "u=alice&t=kerberos" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(info)
			return
		}
		acceptor.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	ccache, krb5conf, kt := fakeKerberos(t, "HTTP/"+u.Hostname())
	acceptor = spnego.SPNEGOKRB5Authenticate(inner, kt)

	var logs bytes.Buffer
	c := testClient(t, Options{
		Auth:     AuthKerberos,
		Kerberos: KerberosOptions{Options: kerberos.Options{CCache: ccache, Krb5Conf: krb5conf}, lookupAddr: noNames},
		Logger:   newDebugLogger(&logs),
	}, srv.URL)
	for range 3 {
		info, err := c.ClusterInfo(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "ACTIVE", info.HAState)
	}
	assert.Equal(t, int32(1), negotiations.Load(), "one SPNEGO exchange, then the hadoop.auth cookie")
	assert.Equal(t, int32(3), served.Load())
	assert.Equal(t, "alice", who.Load(), "the RM authenticated the ticket's client")
	assert.NotContains(t, logs.String(), "Negotiate ")

	// A service principal the cache holds no ticket for needs the (unreachable) KDC: a typed
	// authentication error, no request sent.
	c = testClient(t, Options{
		Auth:     AuthKerberos,
		Kerberos: KerberosOptions{Options: kerberos.Options{CCache: ccache, Krb5Conf: krb5conf}, ServicePrincipal: "HTTP/other.example.com"},
		Retry:    RetryPolicy{MaxAttempts: 1},
	}, srv.URL)
	before := served.Load()
	_, err = c.ClusterInfo(context.Background())
	require.ErrorIs(t, err, ErrAuthentication)
	assert.Equal(t, before, served.Load())
}

func TestServicePrincipalOption(t *testing.T) {
	info := loadCapture(t, "info.json").body
	var sent atomic.Int32
	var auth atomic.Value
	// Records the Authorization header of the SPNEGO exchange, which yarnfake does not model.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(info)
	}))
	t.Cleanup(srv.Close)
	// The cache holds a ticket for HTTP/rm.yarn-er.test only, which the configured principal names;
	// for HTTP/127.0.0.1 the client would need the (unreachable) KDC.
	ccache, krb5conf, _ := fakeKerberos(t, "HTTP/rm.yarn-er.test")
	c, err := NewClient(Options{Addresses: []string{srv.URL}, Auth: AuthKerberos,
		Kerberos: KerberosOptions{Options: kerberos.Options{CCache: ccache, Krb5Conf: krb5conf}, ServicePrincipal: " HTTP/rm.yarn-er.test@" + testRealm + " "},
		Retry:    RetryPolicy{MaxAttempts: 1}})
	require.NoError(t, err)
	_, err = c.ClusterInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int32(1), sent.Load())
	assert.Greater(t, len(auth.Load().(string)), len("Negotiate "), "a token for the configured principal")
}

// noNames is a resolver that knows no name for any address: the service principal keeps the IP.
func noNames(context.Context, string) ([]string, error) { return nil, errors.New("no name") }

// TestKerberosSPNEGONamesAnIPAddress: an RM reached by IP address is asked for the service
// principal of its name (the resolver's first, trailing dot dropped), as Kerberos clients
// canonicalise, not HTTP/<ip>.
func TestKerberosSPNEGONamesAnIPAddress(t *testing.T) {
	info := loadCapture(t, "info.json").body
	var kt *keytab.Keytab
	// Fault injection: SPNEGO negotiation, which yarnfake does not model.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spnego.SPNEGOKRB5Authenticate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(info)
		}), kt).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ccache, krb5conf, k := fakeKerberos(t, "HTTP/rm.example.com")
	kt = k
	var asked []string
	c := testClient(t, Options{
		Auth: AuthKerberos,
		Kerberos: KerberosOptions{Options: kerberos.Options{CCache: ccache, Krb5Conf: krb5conf}, lookupAddr: func(_ context.Context, addr string) ([]string, error) {
			asked = append(asked, addr)
			return []string{"RM.example.com.", "other.example.com."}, nil
		}},
	}, srv.URL)
	info2, err := c.ClusterInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "ACTIVE", info2.HAState)
	assert.Equal(t, []string{"127.0.0.1"}, asked)
}
