package yarn

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func TestSimpleAuthUser(t *testing.T) {
	osUser, err := user.Current()
	require.NoError(t, err)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name   string
		opt    string
		getenv func(string) string
		want   string
	}{
		{"option wins", "alice", env(map[string]string{"HADOOP_USER_NAME": "bob"}), "alice"},
		{"HADOOP_USER_NAME", "", env(map[string]string{"HADOOP_USER_NAME": " bob "}), "bob"},
		{"operating-system user", "", env(nil), osUser.Username},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t)
			replyCapture(t, rm, "GET /ws/v1/cluster/info", "info.json")
			c, err := NewClient(Options{Addresses: []string{rm.URL()}, User: tc.opt, Getenv: tc.getenv})
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.User())
			assert.Equal(t, AuthSimple, c.Auth())
			_, err = c.ClusterInfo(context.Background())
			require.NoError(t, err)
			assert.Equal(t, []string{tc.want}, rm.Requests()[0].Query["user.name"])
		})
	}
}

func TestDoAsAndStaticUserWarning(t *testing.T) {
	var logs bytes.Buffer
	rm := newFakeRM(t)
	replyCapture(t, rm, "GET /ws/v1/cluster/info", "info.json")
	c := testClient(t, Options{User: "dr.who", DoAs: "flink", Logger: slog.New(slog.NewTextHandler(&logs, nil))}, rm.URL())
	_, err := c.ClusterInfo(context.Background())
	require.NoError(t, err)
	q := rm.Requests()[0].Query
	assert.Equal(t, []string{"dr.who"}, q["user.name"])
	assert.Equal(t, []string{"flink"}, q["doAs"])
	assert.Contains(t, logs.String(), "anonymous static user", "an explicit dr.who is allowed but never silent")
}

func TestUnauthorizedIsTyped(t *testing.T) {
	rm, c := replayRM(t, "GET /ws/v1/cluster/info", "error-401-anonymous.txt")
	_, err := c.ClusterInfo(context.Background())
	require.ErrorIs(t, err, ErrUnauthorized)
	assert.Equal(t, 1, len(rm.Requests()), "401 is not retried")

	// The HTML variant Jetty sends to clients that do not ask for JSON.
	html := `<html><head><title>Error 401 Authentication required</title></head><body><h2>HTTP ERROR 401 Authentication required</h2></body></html>`
	re := DecodeRemoteError(401, "text/html;charset=iso-8859-1", []byte(html))
	assert.Equal(t, "Error 401 Authentication required", re.Message)
	assert.ErrorIs(t, re, ErrUnauthorized)
}

// fakeNegotiator stands in for gokrb5: it hands out numbered tokens.
type fakeNegotiator struct {
	n   atomic.Int32
	err error
}

func (f *fakeNegotiator) negotiate(*http.Request) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	return fmt.Sprintf("Negotiate c2VjcmV0LXRva2VuLW%d", f.n.Add(1)), nil
}

// kerberosRM demands SPNEGO like Hadoop's AuthenticationFilter: a valid hadoop.auth cookie or an
// Authorization: Negotiate header, else 401 WWW-Authenticate: Negotiate. A negotiation sets the
// cookie. Bumping generation expires every cookie handed out before.
func kerberosRM(t *testing.T, generation *atomic.Int32) (*yarnfake.RM, *atomic.Int32) {
	rm := newFakeRM(t)
	var negotiations atomic.Int32
	info := loadCapture(t, "info.json").body
	rm.Handle("GET /ws/v1/cluster/info", func(w http.ResponseWriter, r *http.Request) {
		valid := fmt.Sprintf("u=alice&t=kerberos&g=%d", generation.Load())
		if c, err := r.Cookie(hadoopAuthCookie); err == nil && c.Value == valid {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(info)
			return
		}
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "Negotiate ") {
			w.Header().Set("WWW-Authenticate", "Negotiate")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		negotiations.Add(1)
		http.SetCookie(w, &http.Cookie{Name: hadoopAuthCookie, Value: valid, Path: "/", HttpOnly: true})
		w.Header().Set("WWW-Authenticate", "Negotiate oRQwEqADCgEAoQsGCSqGSIb3EgECAg==")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(info)
	})
	return rm, &negotiations
}

func TestKerberosNegotiateFlow(t *testing.T) {
	var generation atomic.Int32
	rm, negotiations := kerberosRM(t, &generation)
	var logs bytes.Buffer
	neg := &fakeNegotiator{}
	c := testClient(t, Options{
		Auth:     AuthKerberos,
		Kerberos: KerberosOptions{negotiator: neg},
		Logger:   slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, rm.URL())
	assert.Empty(t, c.User())
	ctx := context.Background()
	for range 3 {
		_, err := c.ClusterInfo(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1), negotiations.Load(), "the hadoop.auth cookie saves a ticket per request")
	assert.Equal(t, int32(1), neg.n.Load())
	reqs := rm.Requests()
	require.Len(t, reqs, 3)
	assert.NotContains(t, reqs[0].Query, "user.name", "no user.name with Kerberos")
	assert.True(t, strings.HasPrefix(reqs[0].Header.Get("Authorization"), "Negotiate "))
	assert.Empty(t, reqs[1].Header.Get("Authorization"), "the cookie alone authenticates")
	assert.Contains(t, reqs[1].Header.Get("Cookie"), "hadoop.auth=")

	// The cookie expires: the RM answers 401 Negotiate and the client negotiates again, once.
	generation.Add(1)
	_, err := c.ClusterInfo(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(2), negotiations.Load())

	out := logs.String()
	assert.Contains(t, out, "SPNEGO negotiation")
	for _, secret := range []string{"c2VjcmV0LXRva2Vu", "u=alice", "oRQwEqAD"} {
		assert.NotContains(t, out, secret, "credentials never reach the log")
	}
}

func TestKerberosClientFailure(t *testing.T) {
	rm, _ := kerberosRM(t, new(atomic.Int32))
	c := testClient(t, Options{
		Auth:     AuthKerberos,
		Kerberos: KerberosOptions{negotiator: &fakeNegotiator{err: fmt.Errorf("%w: no TGT", ErrAuthentication)}},
	}, rm.URL())
	_, err := c.ClusterInfo(context.Background())
	require.ErrorIs(t, err, ErrAuthentication)
	assert.Empty(t, rm.Requests(), "nothing is sent without a token")
}

func TestKerberosOptions(t *testing.T) {
	dir := t.TempDir()
	getenv := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	_, err := NewClient(Options{Addresses: []string{"rm:8088"}, Auth: AuthKerberos,
		Kerberos: KerberosOptions{Options: kerberos.Options{Krb5Conf: filepath.Join(dir, "missing.conf")}}, Getenv: getenv(nil)})
	require.ErrorIs(t, err, ErrAuthentication)
	assert.Contains(t, err.Error(), "missing.conf")

	krb5 := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(krb5, []byte("[libdefaults]\n default_realm = EXAMPLE.COM\n"), 0o600))
	_, err = NewClient(Options{Addresses: []string{"rm:8088"}, Auth: AuthKerberos,
		Kerberos: KerberosOptions{Options: kerberos.Options{Krb5Conf: krb5, Keytab: filepath.Join(dir, "none.keytab"), Principal: "flink"}}, Getenv: getenv(nil)})
	require.ErrorIs(t, err, ErrAuthentication)
	assert.Contains(t, err.Error(), "none.keytab")

	_, err = NewClient(Options{Addresses: []string{"rm:8088"},
		Kerberos: KerberosOptions{Options: kerberos.Options{Krb5Conf: krb5, CCache: filepath.Join(dir, "krb5cc")}}, Getenv: getenv(nil)})
	require.ErrorIs(t, err, ErrAuthentication, "a ccache option selects Kerberos")
	assert.Contains(t, err.Error(), "run kinit")

	_, err = NewClient(Options{Addresses: []string{"rm:8088"}, Auth: AuthKerberos,
		Kerberos: KerberosOptions{Options: kerberos.Options{Krb5Conf: krb5}}, Getenv: getenv(map[string]string{"KRB5CCNAME": "KEYRING:persistent:0"})})
	require.ErrorIs(t, err, ErrAuthentication)
	assert.Contains(t, err.Error(), "KEYRING")

	assert.Equal(t, "HTTP/rm1.example.com", servicePrincipal("", "RM1.example.com"))
	assert.Equal(t, "HTTP/rm1.example.com", servicePrincipal("HTTP/_HOST@EXAMPLE.COM", "rm1.example.com"))
	assert.Equal(t, "HTTP/fixed", servicePrincipal("HTTP/fixed", "rm1"))

	_, err = NewClient(Options{Addresses: []string{"rm:8088"}, Auth: "ntlm"})
	assert.ErrorContains(t, err, "want simple or kerberos")
}

func TestRedaction(t *testing.T) {
	assert.Equal(t, "http://rm:8088/ws?delegation=REDACTED&user.name=bob",
		redactURL(mustURL(t, "http://u:pw@rm:8088/ws?delegation=abc&user.name=bob")))
	assert.Equal(t, "http://rm/x?my_token=REDACTED", redactURL(mustURL(t, "http://rm/x?my_token=s3cr3t")))
	for in, want := range map[string]string{
		"Authorization: Negotiate YIIabc123==":           "Authorization: REDACTED",
		"cookie: hadoop.auth=u=a&s=xyz":                  "cookie: REDACTED",
		"GET /x?delegation=tok123&a=1 failed":            "GET /x?delegation=REDACTED&a=1 failed",
		`Set-Cookie: hadoop.auth="u=root&s=abc"; Path=/`: "Set-Cookie: REDACTED",
		"header Negotiate oRQwEqADCgEAoQsGCSqGSIb3":      "header Negotiate REDACTED",
		"password=hunter2 and secret_key=42":             "password=REDACTED and secret_key=REDACTED",
		"plain message":                                  "plain message",
	} {
		assert.Equal(t, want, redactText(in), in)
	}

	var logs bytes.Buffer
	restyLogger{l: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}.Errorf("failed %s", "GET /x?delegation=abc")
	assert.NotContains(t, logs.String(), "abc")
	assert.Contains(t, logs.String(), "delegation=REDACTED")
}
