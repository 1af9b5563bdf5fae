package submit

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/internal/webhdfs/webhdfstest"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
)

func hconf(kv ...string) *conf.HadoopConfig {
	c := &conf.HadoopConfig{}
	for i := 0; i < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1], conf.Source{File: "hdfs-site.xml", Line: i/2 + 1})
	}
	return c
}

func TestNeedsWebHDFS(t *testing.T) {
	for _, tc := range []struct {
		kv   []string
		want bool
	}{
		{nil, false},
		{[]string{"hadoop.security.authentication", "kerberos"}, false},
		{[]string{"hadoop.security.authentication", "kerberos", "dfs.data.transfer.protection", "authentication"}, false},
		{[]string{"hadoop.security.authentication", "kerberos", "dfs.data.transfer.protection", "integrity"}, true},
		{[]string{"hadoop.security.authentication", "Kerberos", "dfs.data.transfer.protection", "authentication, Privacy"}, true},
		{[]string{"hadoop.security.authentication", "simple", "dfs.data.transfer.protection", "privacy"}, false},
	} {
		assert.Equal(t, tc.want, needsWebHDFS(hconf(tc.kv...)), "%v", tc.kv)
	}
}

// kerberizedLogs is a Kerberized HDFS with dfs.data.transfer.protection privacy and
// dfs.http.policy HTTPS_ONLY: a fake NameNode's RPC (Kerberos) and a fake WebHDFS serving https
// with a certificate of its own CA, holding alice's aggregated log file.
type kerberizedLogs struct {
	hc      *conf.HadoopConfig
	web     *webhdfstest.WebHDFS
	creds   *krb5test.Creds
	caFile  string
	content []byte
}

const logFile = "/tmp/logs/alice/bucket-logs-tfile/0001/application_1_0001/localhost_8041"

func newKerberizedLogs(t *testing.T) *kerberizedLogs {
	t.Helper()
	creds := krb5test.New(t, "nn/localhost")
	nn := namenodetest.New(t, namenodetest.Options{})
	nn.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
	web := webhdfstest.New(t, webhdfstest.Options{TLS: true, Dirs: map[string]string{"/tmp/logs/alice": "alice"},
		Authenticate: func(r *http.Request) (string, error) {
			// The login's SPNEGO (fakeSPNEGO), never user.name.
			if r.Header.Get("Authorization") != "Negotiate fake" || r.URL.Query().Has("user.name") {
				return "", errors.New("no SPNEGO")
			}
			return "alice", nil
		}})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, web.CAPEM, 0o600))
	k := &kerberizedLogs{web: web, creds: creds, caFile: caFile, content: []byte(strings.Repeat("aggregated log bytes\n", 500))}
	k.hc = testHadoop(t, map[string]string{
		"fs.defaultFS": "hdfs://" + nn.Addr, "hadoop.security.authentication": "kerberos",
		stage.KeyNameNodePrincipal: "nn/_HOST@" + krb5test.Realm, "dfs.data.transfer.protection": "privacy",
		"dfs.http.policy": "HTTPS_ONLY", "dfs.namenode.http-address": "127.0.0.1:1",
		"dfs.namenode.https-address": strings.TrimPrefix(web.NameNode, "https://"),
	})
	// The NodeManager's upload, written as alice through the fake's DataNode.
	up, err := webhdfs.New(webhdfs.Options{Bases: []string{web.NameNode}, TLS: k.tls(t), Authenticate: fakeSPNEGO})
	require.NoError(t, err)
	require.NoError(t, up.Mkdirs(context.Background(), filepath.Dir(logFile), 0o770))
	w, err := up.Create(context.Background(), logFile, 0o640)
	require.NoError(t, err)
	_, err = w.Write(k.content)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return k
}

// tls is a client configuration trusting the fake's CA, through yarn's --tls-ca.
func (k *kerberizedLogs) tls(t *testing.T) *tls.Config {
	t.Helper()
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{"https://rm:8090"}, User: "alice", TLS: yarn.TLSOptions{CAFile: k.caFile}})
	require.NoError(t, err)
	return yc.TLSConfig()
}

// client is a submit client whose ResourceManager client trusts tlsCA (--tls-ca; "" none), and
// whose HDFS login is alice's with the fake SPNEGO.
func (k *kerberizedLogs) client(t *testing.T, tlsCA string, log *slog.Logger) *Client {
	t.Helper()
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{"https://rm:8090"}, User: "alice", TLS: yarn.TLSOptions{CAFile: tlsCA},
		Retry: yarn.RetryPolicy{MaxAttempts: 1, FailoverTimeout: -1}, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	c, err := New(Options{YARN: yc, Hadoop: k.hc, Logger: log,
		Stage: stage.Options{Kerberos: k.creds.Client(t), SPNEGO: fakeSPNEGO}})
	require.NoError(t, err)
	return c
}

// fakeSPNEGO stands for yarn.SPNEGOTransport: the fake WebHDFS takes its header as alice's login.
func fakeSPNEGO(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Negotiate fake")
		return next.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLogsThroughWebHDFSOverHTTPS: on a Kerberized HDFS with a DataNode security layer and
// dfs.http.policy=HTTPS_ONLY, app logs lists and reads the aggregated logs through WebHDFS as the
// login, over https on both hops, trusting the CA the ResourceManager's client trusts (--tls-ca);
// without it the error is the certificate's and names the fix; no token in any log or error.
func TestLogsThroughWebHDFSOverHTTPS(t *testing.T) {
	k := newKerberizedLogs(t)
	ctx := context.Background()
	var logs bytes.Buffer
	c := k.client(t, k.caFile, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	fs, err := c.openLogFS(ctx)
	require.NoError(t, err)
	defer fs.Close()
	fis, err := fs.ReadDir(filepath.Dir(logFile))
	require.NoError(t, err)
	require.Len(t, fis, 1)
	assert.Equal(t, filepath.Base(logFile), fis[0].Name())
	assert.Equal(t, int64(len(k.content)), fis[0].Size())
	f, err := fs.Open(logFile)
	require.NoError(t, err)
	all := make([]byte, len(k.content)+10)
	n, err := f.ReadAt(all, 0)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, k.content, all[:n])
	p := make([]byte, 10)
	n, err = f.ReadAt(p, 21)
	require.NoError(t, err)
	assert.Equal(t, "aggregated", string(p[:n]))
	_, err = fs.Open(filepath.Dir(logFile) + "/gone")
	assert.ErrorIs(t, err, os.ErrNotExist)

	assert.Positive(t, k.web.DataNodeRequests())
	assert.Empty(t, k.web.DataNodeAuthorization(), "the login's SPNEGO goes to the NameNode only")
	for _, r := range k.web.Requests() {
		assert.Equal(t, "alice", r.Login, "%s %s", r.Op, r.Path)
		assert.Empty(t, r.DoAs, "%s %s", r.Op, r.Path)
	}
	assert.Regexp(t, `"msg":"reading aggregated logs through WebHDFS".*"namenodes":\["`+regexp.QuoteMeta(k.web.NameNode)+`"\]`, logs.String())
	assert.Contains(t, logs.String(), `"datanode":"`+k.web.DataNode+`"`)
	assert.NotContains(t, logs.String(), webhdfstest.Token)

	// The ResourceManager's client without the CA: neither does WebHDFS trust the cluster.
	c = k.client(t, "", nil)
	fs, err = c.openLogFS(ctx)
	require.NoError(t, err)
	defer fs.Close()
	_, err = fs.ReadDir(filepath.Dir(logFile))
	require.Error(t, err)
	assert.ErrorIs(t, err, webhdfs.ErrCertificate)
	for _, want := range []string{k.web.NameNode, "certificate signed by unknown authority", "--tls-ca FILE (PEM) or YARN_ER_TLS_CA"} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestWebLogFileErrors: a DataNode that refuses the redirect's token: os.ErrPermission with what
// to check, and neither the token nor the redirect's URL in the error.
func TestWebLogFileErrors(t *testing.T) {
	// Fault injection: a DataNode that refuses the token, which the fake does not model for reads.
	dn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"RemoteException":{"exception":"InvalidToken","message":"token expired: `+r.URL.Query().Get("delegation")+`"}}`)
	}))
	t.Cleanup(dn.Close)
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, dn.URL+r.URL.Path+"?op=OPEN&delegation=SECRET-TOKEN", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(nn.Close)
	web, err := webhdfs.New(webhdfs.Options{Bases: []string{nn.URL}, Authenticate: fakeSPNEGO})
	require.NoError(t, err)
	f := &webLogFile{fs: webLogFS{web: web, ctx: context.Background(), login: true}, name: "/f",
		fi: webFileInfo{name: "f", st: webhdfs.FileStatus{Type: "FILE", Length: 100}}}
	_, err = f.ReadAt(make([]byte, 4), 0)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.Contains(t, err.Error(), "InvalidToken: token expired: [token]")
	assert.Contains(t, err.Error(), "check the Kerberos login")
	assert.NotContains(t, err.Error(), "SECRET")

	// Past the end: io.EOF, without a request.
	n, err := f.ReadAt(make([]byte, 4), 100)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)
}
