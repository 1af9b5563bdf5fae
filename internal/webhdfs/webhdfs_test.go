package webhdfs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/internal/webhdfs/webhdfstest"
)

func client(t *testing.T, fake *webhdfstest.WebHDFS, mod func(*webhdfs.Options)) *webhdfs.Client {
	t.Helper()
	opts := webhdfs.Options{Bases: []string{fake.NameNode}, User: "alice", DoAs: "bob"}
	if mod != nil {
		mod(&opts)
	}
	c, err := webhdfs.New(opts)
	require.NoError(t, err)
	return c
}

// TestProxyUserWrites: every operation staging needs, acting as bob through alice's login: what
// is created is bob's, the data goes to the DataNode with the redirect's token and no login.
func TestProxyUserWrites(t *testing.T) {
	fake := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{"alice"}})
	c := client(t, fake, nil)
	ctx := context.Background()
	assert.Equal(t, "bob", c.User())

	_, err := c.Stat(ctx, "/user/bob/.yarn-er")
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, c.Mkdirs(ctx, "/user/bob/.yarn-er/app_1", 0o700))
	require.NoError(t, c.SetPermission(ctx, "/user/bob/.yarn-er/app_1", 0o700))
	w, err := c.Create(ctx, "/user/bob/.yarn-er/app_1/job.json", 0o600)
	require.NoError(t, err)
	require.NoError(t, w.SetDeadline(time.Now().Add(time.Minute)))
	for _, part := range []string{"hello ", "proxy ", "user"} {
		_, err := w.Write([]byte(part))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	st, err := c.Stat(ctx, "/user/bob/.yarn-er/app_1/job.json")
	require.NoError(t, err)
	assert.Equal(t, int64(len("hello proxy user")), st.Length)
	assert.Equal(t, "bob", st.Owner)
	assert.Equal(t, "600", st.Permission)
	assert.False(t, st.IsDir())
	assert.NotZero(t, st.ModificationTime)
	e, ok := fake.Lookup("/user/bob/.yarn-er/app_1/job.json")
	require.True(t, ok)
	assert.Equal(t, "hello proxy user", string(e.Data))
	d, _ := fake.Lookup("/user/bob/.yarn-er/app_1")
	assert.Equal(t, "bob", d.Owner)
	assert.Equal(t, uint32(0o700), d.Perm)
	assert.Empty(t, fake.DataNodeAuthorization(), "the DataNode gets the redirect's token, never the login")

	_, err = c.Create(ctx, "/user/bob/.yarn-er/app_1/job.json", 0o600)
	assert.ErrorIs(t, err, os.ErrExist)

	removed, err := c.Delete(ctx, "/user/bob/.yarn-er/app_1", true)
	require.NoError(t, err)
	assert.True(t, removed)
	removed, err = c.Delete(ctx, "/user/bob/.yarn-er/app_1", true)
	require.NoError(t, err)
	assert.False(t, removed)
	for _, r := range fake.Requests() {
		assert.Equal(t, "alice", r.Login, r)
		assert.Equal(t, "bob", r.DoAs, r)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		opts    webhdfstest.Options
		mod     func(*webhdfs.Options)
		do      func(c *webhdfs.Client) error
		is      error
		message string
	}{
		{"no proxy-user rights", webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}}, nil,
			func(c *webhdfs.Client) error { _, err := c.Stat(ctx, "/user/bob"); return err },
			webhdfs.ErrProxyUserRefused, "User: alice is not allowed to impersonate bob"},
		{"another user's directory", webhdfstest.Options{Dirs: map[string]string{"/user/carol": "carol"}, ProxyUsers: []string{"alice"}}, nil,
			func(c *webhdfs.Client) error { return c.Mkdirs(ctx, "/user/carol/x", 0o700) },
			os.ErrPermission, "Permission denied: user=bob"},
		{"create below a missing directory", webhdfstest.Options{ProxyUsers: []string{"alice"}}, nil,
			func(c *webhdfs.Client) error { _, err := c.Create(ctx, "/nowhere/f", 0o600); return err },
			os.ErrNotExist, "Parent directory doesn't exist"},
		{"standby only", webhdfstest.Options{Standby: true}, nil,
			func(c *webhdfs.Client) error { _, err := c.Stat(ctx, "/"); return err },
			nil, "no active NameNode answered"},
		{"relative path", webhdfstest.Options{}, nil,
			func(c *webhdfs.Client) error { _, err := c.Stat(ctx, "user/bob"); return err },
			nil, "not an absolute path"},
		{"unauthenticated", webhdfstest.Options{Authenticate: func(*http.Request) (string, error) { return "", errors.New("no Negotiate header") }}, nil,
			func(c *webhdfs.Client) error { _, err := c.Stat(ctx, "/"); return err },
			os.ErrPermission, "no Negotiate header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := webhdfstest.New(t, tc.opts)
			err := tc.do(client(t, fake, tc.mod))
			require.Error(t, err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.Contains(t, err.Error(), tc.message)
		})
	}
}

// TestStandbyThenActive: a standby NameNode is skipped.
func TestStandbyThenActive(t *testing.T) {
	standby := webhdfstest.New(t, webhdfstest.Options{Standby: true})
	active := webhdfstest.New(t, webhdfstest.Options{ProxyUsers: []string{"alice"}})
	c := client(t, active, func(o *webhdfs.Options) { o.Bases = []string{standby.NameNode, active.NameNode} })
	st, err := c.Stat(context.Background(), "/")
	require.NoError(t, err)
	assert.True(t, st.IsDir())
	assert.Len(t, standby.Requests(), 1)
}

// TestAuthenticate: with Authenticate (SPNEGO in yarn-er), the NameNode requests go through its
// transport without user.name, and the DataNode's without it.
func TestAuthenticate(t *testing.T) {
	fake := webhdfstest.New(t, webhdfstest.Options{ProxyUsers: []string{"alice@EXAMPLE.COM"}, Dirs: map[string]string{"/user/bob": "bob"},
		Authenticate: func(r *http.Request) (string, error) {
			if r.URL.Query().Has("user.name") {
				return "", errors.New("user.name beside a login")
			}
			if r.Header.Get("Authorization") != "Negotiate test" {
				return "", errors.New("no Negotiate header")
			}
			return "alice@EXAMPLE.COM", nil
		}})
	c := client(t, fake, func(o *webhdfs.Options) {
		o.User = ""
		o.Authenticate = func(next http.RoundTripper) http.RoundTripper {
			return roundTripper(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Set("Authorization", "Negotiate test")
				return next.RoundTrip(r)
			})
		}
	})
	w, err := c.Create(context.Background(), "/user/bob/f", 0o600)
	require.NoError(t, err)
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Empty(t, fake.DataNodeAuthorization())
	e, ok := fake.Lookup("/user/bob/f")
	require.True(t, ok)
	assert.Equal(t, "bob", e.Owner)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWriteDeadline: a DataNode that never answers ends the write at the deadline, and the
// error names neither the redirect's URL nor its token.
func TestWriteDeadline(t *testing.T) {
	// Fault injection: a DataNode that takes the connection and never answers, which the fake
	// does not model.
	dn := newHungServer(t)
	fake := webhdfstest.New(t, webhdfstest.Options{ProxyUsers: []string{"alice"}, Dirs: map[string]string{"/user/bob": "bob"}})
	c := client(t, fake, func(o *webhdfs.Options) {
		o.Base = roundTripper(func(r *http.Request) (*http.Response, error) {
			if strings.HasPrefix(r.URL.String(), fake.DataNode) {
				r = r.Clone(r.Context())
				r.URL.Host = strings.TrimPrefix(dn, "http://")
			}
			return http.DefaultTransport.RoundTrip(r)
		})
	})
	w, err := c.Create(context.Background(), "/user/bob/f", 0o600)
	require.NoError(t, err)
	require.NoError(t, w.SetDeadline(time.Now().Add(100*time.Millisecond)))
	_, _ = w.Write([]byte("x"))
	err = w.Close()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), webhdfstest.Token)
	assert.NotContains(t, err.Error(), "delegation")
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		opts webhdfs.Options
		msg  string
	}{
		{webhdfs.Options{User: "a"}, "no NameNode web address"},
		{webhdfs.Options{Bases: []string{"nn:9870"}, User: "a"}, "want http(s)://host:port"},
		{webhdfs.Options{Bases: []string{"http://nn:9870"}}, "no authentication"},
	} {
		_, err := webhdfs.New(tc.opts)
		assert.ErrorContains(t, err, tc.msg)
	}
}

// newHungServer accepts HTTP requests and answers none until the test ends.
func newHungServer(t *testing.T) string {
	t.Helper()
	hung := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hung }))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(hung) }) // first: Close waits for the handlers
	return s.URL
}

// TestNoTokenInErrorsOrLogs: the token of CREATE's redirect reaches neither an error (a DataNode
// that echoes the request in its answer) nor a debug log line.
func TestNoTokenInErrorsOrLogs(t *testing.T) {
	const canary = "tok-canary-webhdfs-5d2e"
	fake := webhdfstest.New(t, webhdfstest.Options{ProxyUsers: []string{"alice"}, Dirs: map[string]string{"/user/bob": "bob"},
		Token: canary, DataNodeFault: "cannot write"})
	var logs bytes.Buffer
	c := client(t, fake, func(o *webhdfs.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	w, err := c.Create(context.Background(), "/user/bob/f", 0o600)
	require.NoError(t, err)
	_, _ = w.Write([]byte("data"))
	err = w.Close()
	require.Error(t, err)
	assert.Equal(t, 1, fake.DataNodeRequests(), "the write reached the DataNode")
	assert.Contains(t, err.Error(), "cannot write")
	assert.NotContains(t, err.Error(), canary)
	assert.NotEmpty(t, logs.String())
	assert.NotContains(t, logs.String(), canary)
}

// TestListAndRead: LISTSTATUS and OPEN's ranges as the proxy user; another user's private
// directory is refused.
func TestListAndRead(t *testing.T) {
	fake := webhdfstest.New(t, webhdfstest.Options{ProxyUsers: []string{"alice"}, Dirs: map[string]string{"/tmp/logs/bob": "bob", "/tmp/logs/carol": "carol"}})
	c := client(t, fake, nil)
	ctx := context.Background()
	w, err := c.Create(ctx, "/tmp/logs/bob/node_1", 0o640)
	require.NoError(t, err)
	_, err = w.Write([]byte("0123456789"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	carol := client(t, fake, func(o *webhdfs.Options) { o.DoAs = "carol" })
	require.NoError(t, carol.SetPermission(ctx, "/tmp/logs/carol", 0o700))

	list, err := c.List(ctx, "/tmp/logs/bob")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "node_1", list[0].PathSuffix)
	assert.Equal(t, int64(10), list[0].Length)

	for _, tc := range []struct {
		off     int64
		n       int
		want    string
		wantErr error
	}{
		{0, 4, "0123", nil},
		{6, 4, "6789", nil},
		{8, 4, "89", io.EOF},
	} {
		p := make([]byte, tc.n)
		n, err := c.ReadAt(ctx, "/tmp/logs/bob/node_1", p, tc.off)
		assert.Equal(t, tc.want, string(p[:n]))
		assert.Equal(t, tc.wantErr, err)
	}
	_, err = c.List(ctx, "/tmp/logs/carol")
	assert.ErrorIs(t, err, os.ErrPermission)
	_, err = c.List(ctx, "/tmp/logs/dave")
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = c.ReadAt(ctx, "/tmp/logs/bob/nothing", make([]byte, 1), 0)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Empty(t, fake.DataNodeAuthorization())
}

// caPool is a pool of the fake's CA alone.
func caPool(t *testing.T, fake *webhdfstest.WebHDFS) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(fake.CAPEM))
	return pool
}

// TestHTTPSOnly: under dfs.http.policy=HTTPS_ONLY the NameNode and the DataNode it redirects to
// serve https with a certificate of the cluster's CA. Trusting that CA (Options.TLS, from
// --tls-ca) both hops verify, and writes and reads work; without it, or reaching a server by a
// name its certificate does not hold, the error is ErrCertificate naming the fix, and no token
// shows.
func TestHTTPSOnly(t *testing.T) {
	fake := webhdfstest.New(t, webhdfstest.Options{TLS: true, ProxyUsers: []string{"alice"}, Dirs: map[string]string{"/user/bob": "bob"},
		// The login: user.name, or alice for the clients whose Authenticate sends none.
		Authenticate: func(r *http.Request) (string, error) {
			if u := r.URL.Query().Get("user.name"); u != "" {
				return u, nil
			}
			return "alice", nil
		}})
	require.True(t, strings.HasPrefix(fake.NameNode, "https://"))
	require.True(t, strings.HasPrefix(fake.DataNode, "https://"))
	ctx := context.Background()
	trust := func() *tls.Config { return &tls.Config{RootCAs: caPool(t, fake), MinVersion: tls.VersionTLS12} }
	var logs bytes.Buffer
	trusted := client(t, fake, func(o *webhdfs.Options) {
		o.TLS = trust()
		o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	w, err := trusted.Create(ctx, "/user/bob/f", 0o600)
	require.NoError(t, err)
	_, err = w.Write([]byte("over https"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	p := make([]byte, 5)
	n, err := trusted.ReadAt(ctx, "/user/bob/f", p, 5)
	require.NoError(t, err)
	assert.Equal(t, "https", string(p[:n]))
	assert.Equal(t, 2, fake.DataNodeRequests(), "the write and the read went to the https DataNode")
	assert.Contains(t, logs.String(), `"datanode":"`+fake.DataNode+`"`)
	assert.Contains(t, logs.String(), `"namenode":"`+fake.NameNode+`"`)
	assert.NotContains(t, logs.String(), webhdfstest.Token)

	// The NameNode reached through a transport of its own that trusts the CA, the DataNode's
	// hop on Options' TLS (none): the redirect's hop needs the trust as well, and says so.
	trustedNameNodeOnly := func(o *webhdfs.Options) {
		o.User = ""
		o.Authenticate = func(http.RoundTripper) http.RoundTripper {
			return &http.Transport{TLSClientConfig: trust()}
		}
	}
	for _, tc := range []struct {
		name string
		mod  func(*webhdfs.Options)
		do   func(*webhdfs.Client) error
		want []string
	}{
		{"the system's CAs only", nil,
			func(c *webhdfs.Client) error { _, err := c.Stat(ctx, "/user/bob/f"); return err },
			[]string{fake.NameNode, "certificate signed by unknown authority", "--tls-ca FILE (PEM) or YARN_ER_TLS_CA"}},
		{"a name the certificate does not hold", func(o *webhdfs.Options) {
			o.TLS = trust()
			o.TLS.ServerName = "nn.example.com"
		},
			func(c *webhdfs.Client) error { _, err := c.Stat(ctx, "/user/bob/f"); return err },
			[]string{"nn.example.com", "reach the NameNode by a name its certificate holds"}},
		{"a read's DataNode hop", trustedNameNodeOnly,
			func(c *webhdfs.Client) error { _, err := c.ReadAt(ctx, "/user/bob/f", make([]byte, 4), 0); return err },
			[]string{"read from the DataNode " + strings.TrimPrefix(fake.DataNode, "https://"), "--tls-ca FILE (PEM) or YARN_ER_TLS_CA"}},
		{"a write's DataNode hop", trustedNameNodeOnly,
			func(c *webhdfs.Client) error {
				w, err := c.Create(ctx, "/user/bob/g", 0o600)
				if err != nil {
					return err
				}
				_, _ = w.Write([]byte("x"))
				return w.Close()
			},
			[]string{"write to the DataNode " + strings.TrimPrefix(fake.DataNode, "https://"), "--tls-ca FILE (PEM) or YARN_ER_TLS_CA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(client(t, fake, tc.mod))
			require.Error(t, err)
			t.Log(err)
			assert.ErrorIs(t, err, webhdfs.ErrCertificate)
			for _, want := range tc.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.NotContains(t, err.Error(), webhdfstest.Token)
			assert.NotContains(t, err.Error(), "delegation")
		})
	}

	// --insecure-skip-tls-verify reaches WebHDFS too.
	insecure := client(t, fake, func(o *webhdfs.Options) { o.TLS = &tls.Config{InsecureSkipVerify: true} }) //nolint:gosec // the option under test
	_, err = insecure.Stat(ctx, "/user/bob/f")
	assert.NoError(t, err)
}
