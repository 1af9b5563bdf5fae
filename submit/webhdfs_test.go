package submit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
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

func TestWebHDFSBases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kv      []string
		want    []string
		wantErr string
	}{
		{"one NameNode", []string{"dfs.namenode.http-address", "nn:9870"}, []string{"http://nn:9870"}, ""},
		{"https", []string{"dfs.http.policy", "HTTPS_ONLY", "dfs.namenode.https-address", "nn:9871", "dfs.namenode.http-address", "nn:9870"},
			[]string{"https://nn:9871"}, ""},
		{"HA nameservice", []string{"fs.defaultFS", "hdfs://ns1", "dfs.ha.namenodes.ns1", "a, b",
			"dfs.namenode.http-address.ns1.a", "nn1:9870", "dfs.namenode.http-address.ns1.b", "nn2:9870"},
			[]string{"http://nn1:9870", "http://nn2:9870"}, ""},
		{"wildcard only", []string{"dfs.namenode.http-address", "0.0.0.0:9870"}, nil, "no NameNode web address"},
		{"none", nil, nil, "set dfs.namenode.http-address"},
		{"bad", []string{"dfs.namenode.http-address", "nn"}, nil, "write host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := webHDFSBases(hconf(tc.kv...))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// fakeWebHDFS is a NameNode and a DataNode of WebHDFS serving one file: the NameNode redirects
// OPEN with a delegation token in the URL, the DataNode checks it and serves the range.
func fakeWebHDFS(t *testing.T, name string, content []byte) *webHDFS {
	t.Helper()
	// Fault injection: WebHDFS's redirect, which no fake of the project models.
	dn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("delegation") != "SECRET-TOKEN" || r.Header.Get("Authorization") != "" {
			http.Error(w, `{"RemoteException":{"exception":"SecurityException","message":"no token"}}`, http.StatusForbidden)
			return
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		n, _ := strconv.Atoi(r.URL.Query().Get("length"))
		end := min(off+n, len(content))
		_, _ = w.Write(content[off:end])
	}))
	t.Cleanup(dn.Close)
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/webhdfs/v1"+name {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: `+r.URL.Path[len("/webhdfs/v1"):]+`"}}`)
			return
		}
		q := r.URL.Query()
		q.Set("delegation", "SECRET-TOKEN")
		http.Redirect(w, r, dn.URL+r.URL.Path+"?"+q.Encode(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(nn.Close)
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &webHDFS{bases: []string{nn.URL}, nn: &http.Client{CheckRedirect: noFollow}, dn: &http.Client{CheckRedirect: noFollow}}
}

func TestWebHDFSReadAt(t *testing.T) {
	content := []byte(strings.Repeat("0123456789", 100))
	w := fakeWebHDFS(t, "/tmp/logs/alice/f", content)
	ctx := context.Background()
	p := make([]byte, 25)
	n, err := w.readAt(ctx, "/tmp/logs/alice/f", p, 13)
	require.NoError(t, err)
	assert.Equal(t, 25, n)
	assert.Equal(t, content[13:38], p)

	// The end of the file: fewer bytes and io.EOF, as io.ReaderAt says.
	n, err = w.readAt(ctx, "/tmp/logs/alice/f", p, 990)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 10, n)
	assert.Equal(t, content[990:], p[:n])

	// A missing file matches os.ErrNotExist and names the path; no token in any error.
	_, err = w.readAt(ctx, "/tmp/logs/alice/gone", p, 0)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, "File does not exist: /tmp/logs/alice/gone")
	assert.NotContains(t, err.Error(), "SECRET")

	// Through the LogFile: the whole file in reads of the reader's choosing.
	file := &webHDFSFile{fs: webHDFSLogFS{web: w, ctx: ctx}, name: "/tmp/logs/alice/f", fi: fakeInfo{size: int64(len(content))}}
	all := make([]byte, len(content))
	n, err = file.ReadAt(all, 0)
	require.NoError(t, err)
	assert.Equal(t, len(content), n)
	assert.Equal(t, content, all)
	n, err = file.ReadAt(all, int64(len(content)))
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)
}

func TestWebHDFSErrorsKeepTokensOut(t *testing.T) {
	// Fault injection: a DataNode that refuses the redirect's token.
	dn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"RemoteException":{"exception":"InvalidToken","message":"token expired"}}`)
	}))
	t.Cleanup(dn.Close)
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, dn.URL+r.URL.Path+"?op=OPEN&delegation=SECRET-TOKEN", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(nn.Close)
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	w := &webHDFS{bases: []string{nn.URL}, nn: &http.Client{CheckRedirect: noFollow}, dn: &http.Client{CheckRedirect: noFollow}}
	_, err := w.readAt(context.Background(), "/f", make([]byte, 4), 0)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.Contains(t, err.Error(), "InvalidToken: token expired")
	assert.NotContains(t, err.Error(), "SECRET")
}

// fakeInfo is an os.FileInfo of a size.
type fakeInfo struct {
	os.FileInfo
	size int64
}

func (f fakeInfo) Size() int64 { return f.size }
