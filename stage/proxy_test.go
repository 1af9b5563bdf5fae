package stage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/internal/webhdfs/webhdfstest"
	"github.com/yarn-er/yarn-er/records"
)

func simpleConf(kv ...string) *conf.HadoopConfig {
	c := &conf.HadoopConfig{}
	for i := 0; i < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1], conf.Source{File: "hdfs-site.xml", Line: i/2 + 1})
	}
	return c
}

func hostPort(base string) string { return strings.TrimPrefix(base, "http://") }

// TestProxyUserStaging: on a cluster without security, --do-as bob by alice stages through
// WebHDFS (user.name=alice&doas=bob) into bob's staging directory, which is bob's with the usual
// permissions, and removes it.
func TestProxyUserStaging(t *testing.T) {
	fake := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{"alice"}})
	c, err := Dial(context.Background(), Options{
		HadoopConf: simpleConf("fs.defaultFS", "hdfs://nn:8020", "dfs.namenode.http-address", hostPort(fake.NameNode)),
		User:       "alice", DoAs: "bob",
	})
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "bob", c.User())
	assert.Equal(t, "bob", c.DoAs())
	assert.Equal(t, "/user/bob/.yarn-er", c.BaseDir())
	_, ok := c.HDFS()
	assert.False(t, ok, "no colinmarc/hdfs client as a proxy user")

	local := filepath.Join(t.TempDir(), "data.bin")
	require.NoError(t, os.WriteFile(local, []byte("bob's data"), 0o600))
	dir, files, err := c.Stage(context.Background(), "application_1_0001", []Item{{Local: local, Name: "data.bin"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, "hdfs://nn:8020/user/bob/.yarn-er/application_1_0001", dir.URL)
	require.Len(t, files, 1)
	assert.Equal(t, "hdfs://nn:8020/user/bob/.yarn-er/application_1_0001/data.bin", files[0].URL)
	assert.Equal(t, int64(len("bob's data")), files[0].Size)
	assert.NotZero(t, files[0].MtimeMillis)
	spec, err := dir.Put(context.Background(), "job.json", []byte("{}"))
	require.NoError(t, err)
	assert.Equal(t, int64(2), spec.Size)
	for p, perm := range map[string]uint32{
		"/user/bob/.yarn-er/application_1_0001":          0o700,
		"/user/bob/.yarn-er/application_1_0001/data.bin": 0o600,
		"/user/bob/.yarn-er/application_1_0001/job.json": 0o600,
	} {
		e, ok := fake.Lookup(p)
		require.True(t, ok, p)
		assert.Equal(t, "bob", e.Owner, p)
		assert.Equal(t, perm, e.Perm, p)
	}
	for _, r := range fake.Requests() {
		assert.Equal(t, "alice", r.Login, r)
		assert.Equal(t, "bob", r.DoAs, r)
	}
	require.NoError(t, dir.Remove(context.Background()))
	assert.Equal(t, []string{"/user/bob/.yarn-er"}, fake.Paths("/user/bob/.yarn-er"))
}

// TestProxyUserRefused: a login without proxy-user rights is refused when the client dials,
// before anything is created, with ErrProxyUser and the rights to give.
func TestProxyUserRefused(t *testing.T) {
	fake := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/alice": "alice"}, ProxyUsers: []string{"carol"}})
	_, err := Dial(context.Background(), Options{
		HadoopConf: simpleConf("fs.defaultFS", "hdfs://nn:8020", "dfs.namenode.http-address", hostPort(fake.NameNode)),
		User:       "bob", DoAs: "alice",
	})
	tabletest.WantErr(t, err, "User: bob is not allowed to impersonate alice", ErrProxyUser)
	for _, want := range []string{"hadoop.proxyuser.bob.hosts", "hadoop.proxyuser.bob.users (alice)", "hadoop.proxyuser.bob.groups", "-refreshSuperUserGroupsConfiguration", "without --do-as"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Equal(t, []string{"/user/alice"}, fake.Paths("/user/alice"), "nothing created")
}

func TestProxyUserSettings(t *testing.T) {
	login := krb5test.New(t).Client(t)
	for _, tc := range []struct {
		name     string
		opts     Options
		msg      string
		is       []error
		wantUser string
		wantDoAs string
	}{
		{name: "the login's own user is no proxy", opts: Options{HadoopConf: kerberosConf("fs.defaultFS", "hdfs://nn:8020"), Kerberos: login, DoAs: krb5test.User},
			wantUser: krb5test.User},
		{name: "simple, its own user", opts: Options{HadoopConf: simpleConf("fs.defaultFS", "hdfs://nn:8020"), User: "alice", DoAs: "alice"},
			wantUser: "alice"},
		{name: "a path in the name", opts: Options{HadoopConf: simpleConf("fs.defaultFS", "hdfs://nn:8020"), User: "alice", DoAs: "../bob"},
			msg: `--do-as "../bob": holds a '/'`},
		{name: "a space in the name", opts: Options{HadoopConf: simpleConf("fs.defaultFS", "hdfs://nn:8020"), User: "alice", DoAs: "b ob"},
			msg: "a space"},
		{name: "no WebHDFS address", opts: Options{HadoopConf: simpleConf("fs.defaultFS", "hdfs://nn:8020"), User: "alice", DoAs: "bob"},
			msg: "dfs.namenode.http-address"},
		{name: "Kerberos without SPNEGO", opts: Options{HadoopConf: kerberosConf("fs.defaultFS", "hdfs://127.0.0.1:1", KeyNameNodePrincipal, "nn/_HOST@"+krb5test.Realm,
			"dfs.namenode.http-address", "127.0.0.1:1"), Kerberos: login, DoAs: "bob"},
			msg: "needs the login's SPNEGO", is: []error{ErrUnsupportedAuth}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.msg == "" {
				tc.opts.fs = newMemFS()
			}
			c, err := Dial(context.Background(), tc.opts)
			if tabletest.WantErr(t, err, tc.msg, tc.is...) {
				return
			}
			assert.Equal(t, tc.wantUser, c.User())
			assert.Equal(t, tc.wantDoAs, c.DoAs())
		})
	}
}

func TestCheckUserName(t *testing.T) {
	for name, ok := range map[string]bool{"bob": true, "svc-etl_1": true, "bob@EXAMPLE.COM": true, "": true, ".": false, "..": false,
		"a/b": false, "a:b": false, "a\tb": false, "a\x00b": false, strings.Repeat("x", 256): false, "\xff": false} {
		if name == "" {
			continue // an empty --do-as is no proxy user: Dial never checks it
		}
		err := checkUserName(name)
		assert.Equal(t, ok, err == nil, "%q: %v", name, err)
	}
}

// TestKerberosProxyUser: on a Kerberized cluster, staging as bob goes through WebHDFS with the
// login's SPNEGO (never sent to the DataNode), and the delegation token is asked for as bob over
// the NameNode's RPC; a NameNode that refuses alice's proxy-user rights refuses the token with
// ErrProxyUser.
func TestKerberosProxyUser(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	principal := krb5test.User + "@" + krb5test.Realm
	web := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{principal},
		Authenticate: func(r *http.Request) (string, error) {
			if r.Header.Get("Authorization") != "Negotiate fake" {
				return "", errors.New("no SPNEGO")
			}
			return principal, nil
		}})
	spnego := func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Negotiate fake")
			return next.RoundTrip(r)
		})
	}
	for _, allowed := range []bool{true, false} {
		nn := namenodetest.New(t, namenodetest.Options{})
		nn.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
		if allowed {
			nn.ProxyUsers = []string{principal}
		}
		c, err := Dial(context.Background(), Options{
			HadoopConf: kerberosConf("fs.defaultFS", "hdfs://"+nn.Addr, KeyNameNodePrincipal, "nn/_HOST@"+krb5test.Realm,
				"dfs.namenode.http-address", hostPort(web.NameNode)),
			Kerberos: creds.Client(t), DoAs: "bob", SPNEGO: spnego,
		})
		require.NoError(t, err)
		assert.Equal(t, "bob", c.User())
		tok, err := c.DelegationToken(context.Background(), "rm/localhost@"+krb5test.Realm)
		if !allowed {
			tabletest.WantErr(t, err, "is not allowed to impersonate bob", ErrProxyUser)
			assert.Contains(t, err.Error(), "hadoop.proxyuser."+krb5test.User+".users (bob)")
			assert.Empty(t, nn.Renewers())
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, records.Token{Identifier: []byte("ident"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: nn.Addr}, tok)
		calls := nn.MethodCalls("getDelegationToken")
		require.Len(t, calls, 1)
		assert.Equal(t, "bob", calls[0].User, "the token is bob's")
		require.NoError(t, c.CancelDelegationToken(context.Background(), tok))

		d, err := c.Create(context.Background(), "application_1_0002")
		require.NoError(t, err)
		_, err = d.Put(context.Background(), "job.json", []byte("{}"))
		require.NoError(t, err)
		e, ok := web.Lookup("/user/bob/.yarn-er/application_1_0002/job.json")
		require.True(t, ok)
		assert.Equal(t, "bob", e.Owner)
		assert.Empty(t, web.DataNodeAuthorization(), "the login's SPNEGO goes to the NameNode only")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestProxyUserStagingHTTPS: under dfs.http.policy=HTTPS_ONLY a proxy user stages through the
// NameNode's https address and the https DataNode it redirects to, trusting Options.TLS (the
// ResourceManager client's CAs: --tls-ca); without the cluster's CA Dial fails before anything is
// created, with ErrCertificate and the fix.
func TestProxyUserStagingHTTPS(t *testing.T) {
	fake := webhdfstest.New(t, webhdfstest.Options{TLS: true, Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{"alice"}})
	hc := simpleConf("fs.defaultFS", "hdfs://nn:8020", "dfs.http.policy", "HTTPS_ONLY",
		"dfs.namenode.http-address", "127.0.0.1:1", "dfs.namenode.https-address", strings.TrimPrefix(fake.NameNode, "https://"))
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(fake.CAPEM))

	_, err := Dial(context.Background(), Options{HadoopConf: hc, User: "alice", DoAs: "bob"})
	tabletest.WantErr(t, err, "--tls-ca FILE (PEM) or YARN_ER_TLS_CA", webhdfs.ErrCertificate)
	assert.NotContains(t, err.Error(), "check that HDFS")
	assert.Equal(t, []string{"/user/bob"}, fake.Paths("/user/bob"), "nothing created")

	c, err := Dial(context.Background(), Options{HadoopConf: hc, User: "alice", DoAs: "bob",
		TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}})
	require.NoError(t, err)
	defer c.Close()
	d, err := c.Create(context.Background(), "application_1_0003")
	require.NoError(t, err)
	_, err = d.Put(context.Background(), "job.json", []byte("{}"))
	require.NoError(t, err)
	e, ok := fake.Lookup("/user/bob/.yarn-er/application_1_0003/job.json")
	require.True(t, ok)
	assert.Equal(t, "bob", e.Owner)
	assert.Equal(t, []byte("{}"), e.Data)
	assert.Equal(t, 1, fake.DataNodeRequests(), "written through the https DataNode")
}
