package yarn

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jcmturner/goidentity/v6"
	krb5config "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This test runs real SPNEGO without a KDC: it plays the KDC's part by minting a TGT and an
// HTTP/127.0.0.1 service ticket with gokrb5, writes them into an MIT credential cache file (the
// file kinit + kvno would leave), and points the client at it. The fake RM verifies every
// Negotiate token with gokrb5's acceptor and the service keytab, as Hadoop's
// KerberosAuthenticationHandler does with the RM's spnego keytab.

const testRealm = "YARN-ER.TEST"

// ccacheWriter writes the MIT credential cache format, version 4 (big-endian).
type ccacheWriter struct{ bytes.Buffer }

func (w *ccacheWriter) u16(v uint16) { _ = binary.Write(&w.Buffer, binary.BigEndian, v) }
func (w *ccacheWriter) u32(v uint32) { _ = binary.Write(&w.Buffer, binary.BigEndian, v) }
func (w *ccacheWriter) data(b []byte) {
	w.u32(uint32(len(b)))
	w.Write(b)
}
func (w *ccacheWriter) principal(p types.PrincipalName, realm string) {
	w.u32(uint32(p.NameType))
	w.u32(uint32(len(p.NameString)))
	w.data([]byte(realm))
	for _, s := range p.NameString {
		w.data([]byte(s))
	}
}
func (w *ccacheWriter) credential(client, server types.PrincipalName, tkt messages.Ticket, key types.EncryptionKey, start, end time.Time) error {
	raw, err := tkt.Marshal()
	if err != nil {
		return err
	}
	w.principal(client, testRealm)
	w.principal(server, testRealm)
	w.u16(uint16(key.KeyType))
	w.data(key.KeyValue)
	for _, ts := range []time.Time{start, start, end, end} { // auth, start, end, renew-till
		w.u32(uint32(ts.Unix()))
	}
	w.WriteByte(0)              // is_skey
	w.Write([]byte{0, 0, 0, 0}) // ticket flags
	w.u32(0)                    // addresses
	w.u32(0)                    // authdata
	w.data(raw)
	w.data(nil) // second ticket
	return nil
}

// fakeKerberos mints tickets for alice@YARN-ER.TEST and returns the ccache path, the krb5.conf path
// and the service keytab.
func fakeKerberos(t *testing.T, service string) (ccache, krb5conf string, kt *keytab.Keytab) {
	t.Helper()
	kt = keytab.New()
	now := time.Now().UTC()
	require.NoError(t, kt.AddEntry(service, testRealm, "service-secret", now, 1, etypeID.AES256_CTS_HMAC_SHA1_96))
	require.NoError(t, kt.AddEntry("krbtgt/"+testRealm, testRealm, "kdc-secret", now, 1, etypeID.AES256_CTS_HMAC_SHA1_96))

	client := types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, "alice")
	tgtName := types.NewPrincipalName(nametype.KRB_NT_SRV_INST, "krbtgt/"+testRealm)
	svcName := types.NewPrincipalName(nametype.KRB_NT_SRV_INST, service)
	start, end := now.Add(-time.Minute), now.Add(time.Hour)
	flags := types.NewKrbFlags()

	tgt, tgtKey, err := messages.NewTicket(client, testRealm, tgtName, testRealm, flags, kt, etypeID.AES256_CTS_HMAC_SHA1_96, 1, start, start, end, end)
	require.NoError(t, err)
	svc, svcKey, err := messages.NewTicket(client, testRealm, svcName, testRealm, flags, kt, etypeID.AES256_CTS_HMAC_SHA1_96, 1, start, start, end, end)
	require.NoError(t, err)

	var w ccacheWriter
	w.Write([]byte{5, 4})
	w.u16(0) // no header fields
	w.principal(client, testRealm)
	require.NoError(t, w.credential(client, tgtName, tgt, tgtKey, start, end))
	require.NoError(t, w.credential(client, svcName, svc, svcKey, start, end))

	dir := t.TempDir()
	ccache = filepath.Join(dir, "krb5cc_test")
	require.NoError(t, os.WriteFile(ccache, w.Bytes(), 0o600))
	cc, err := credentials.LoadCCache(ccache)
	require.NoError(t, err, "the written cache must parse")
	require.Equal(t, "alice", cc.GetClientPrincipalName().PrincipalNameString())

	krb5conf = filepath.Join(dir, "krb5.conf")
	cfg := "[libdefaults]\n default_realm = " + testRealm + "\n dns_lookup_kdc = false\n" +
		"[realms]\n " + testRealm + " = {\n  kdc = 127.0.0.1:1\n }\n"
	require.NoError(t, os.WriteFile(krb5conf, []byte(cfg), 0o600))
	_, err = krb5config.Load(krb5conf)
	require.NoError(t, err)
	return ccache, krb5conf, kt
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
		Kerberos: KerberosOptions{CCache: ccache, Krb5Conf: krb5conf},
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
		Kerberos: KerberosOptions{CCache: ccache, Krb5Conf: krb5conf, ServicePrincipal: "HTTP/other.example.com"},
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
		Kerberos: KerberosOptions{CCache: ccache, Krb5Conf: krb5conf, ServicePrincipal: " HTTP/rm.yarn-er.test@" + testRealm + " "},
		Retry:    RetryPolicy{MaxAttempts: 1}})
	require.NoError(t, err)
	_, err = c.ClusterInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int32(1), sent.Load())
	assert.Greater(t, len(auth.Load().(string)), len("Negotiate "), "a token for the configured principal")
}
