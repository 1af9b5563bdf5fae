package submit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/internal/webhdfs/webhdfstest"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// proxyClient is a submit client of rm as alice acting as doAs, on a cluster without security
// whose WebHDFS is web.
func proxyClient(t *testing.T, rm *yarnfake.RM, web *webhdfstest.WebHDFS, doAs string) *Client {
	t.Helper()
	hc := testHadoop(t, map[string]string{"dfs.namenode.http-address": strings.TrimPrefix(web.NameNode, "http://")})
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice", DoAs: doAs,
		Retry: yarn.RetryPolicy{MaxAttempts: 1, FailoverTimeout: -1}, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "yarn-er")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700))
	c, err := New(Options{YARN: yc, Hadoop: hc, Executable: func() (string, error) { return bin, nil }})
	require.NoError(t, err)
	return c
}

// TestSubmitAsProxyUser: --do-as bob by alice on a cluster without security: the application is
// submitted with ?doAs=bob, staged into bob's staging directory (bob's, through WebHDFS with
// doas=bob), and its spec names bob as its user.
func TestSubmitAsProxyUser(t *testing.T) {
	rm := newFakeRM(t, "")
	var submitted struct {
		ID string `json:"application-id"`
	}
	rm.Handle("POST /ws/v1/cluster/apps", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &submitted)
		appAs(rm, submitted.ID, "bob")
		w.WriteHeader(http.StatusAccepted)
	})
	web := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{"alice"}})
	c := proxyClient(t, rm, web, "bob")
	sub, err := c.Submit(context.Background(), Request{GPUs: 1, Command: []string{"true"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, rm.Count("GET /ws/v1/cluster/apps/"+sub.AppID), "the application's user checked")
	assert.Zero(t, rm.Count("PUT /ws/v1/cluster/apps/"+sub.AppID+"/state"))
	assert.True(t, strings.HasPrefix(sub.StagingDir, "hdfs://127.0.0.1:1/user/bob/.yarn-er/"+sub.AppID), sub.StagingDir)
	assert.Equal(t, "bob", sub.Spec.User)
	assert.Equal(t, sub.AppID, submitted.ID)
	e, ok := web.Lookup("/user/bob/.yarn-er/" + sub.AppID + "/" + jobspec.FileName)
	require.True(t, ok, "the job spec is staged")
	assert.Equal(t, "bob", e.Owner)
	for _, r := range rm.Requests() {
		assert.Equal(t, "bob", r.Query.Get("doAs"), "%s %s", r.Method, r.Path)
		assert.Equal(t, "alice", r.Query.Get("user.name"), "%s %s", r.Method, r.Path)
	}
	for _, r := range web.Requests() {
		assert.Equal(t, "bob", r.DoAs)
	}
}

// appAs makes rm answer for the application id as user's, and take its kill.
func appAs(rm *yarnfake.RM, id, user string) {
	rm.ReplyJSON("GET /ws/v1/cluster/apps/"+id, http.StatusOK,
		`{"app":{"id":"`+id+`","user":"`+user+`","name":"x","queue":"default","state":"ACCEPTED","finalStatus":"UNDEFINED","applicationType":"YARN-ER"}}`)
	rm.ReplyJSON("PUT /ws/v1/cluster/apps/"+id+"/state", http.StatusOK, `{"state":"KILLED"}`)
}

// TestSubmitProxyUserIgnoredByRM: a ResourceManager that ignores ?doAs= (no proxy-user filter
// on its REST API) makes the application the login's: it is killed at once, its staging directory
// removed, and the error says why.
func TestSubmitProxyUserIgnoredByRM(t *testing.T) {
	rm := newFakeRM(t, "")
	var id string
	rm.Handle("POST /ws/v1/cluster/apps", func(w http.ResponseWriter, r *http.Request) {
		var submitted struct {
			ID string `json:"application-id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &submitted)
		id = submitted.ID
		appAs(rm, id, "alice")
		w.WriteHeader(http.StatusAccepted)
	})
	web := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{"alice"}})
	c := proxyClient(t, rm, web, "bob")
	_, err := c.Submit(context.Background(), Request{GPUs: 1, Command: []string{"true"}}, nil)
	require.ErrorIs(t, err, ErrProxyUser)
	assert.Contains(t, err.Error(), "it ignored ?doAs=bob and made "+id+" alice's, so it was killed")
	assert.Equal(t, 1, rm.Count("PUT /ws/v1/cluster/apps/"+id+"/state"), "killed")
	_, staged := web.Lookup("/user/bob/.yarn-er/" + id)
	assert.False(t, staged, "the staging directory is removed")
}

// TestSubmitProxyUserRefusedByHDFS: a NameNode that does not let alice act as bob refuses the
// submission before an application id is asked for, with the rights to give.
func TestSubmitProxyUserRefusedByHDFS(t *testing.T) {
	rm := newFakeRM(t, "")
	web := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}})
	c := proxyClient(t, rm, web, "bob")
	_, err := c.Submit(context.Background(), Request{GPUs: 1, Command: []string{"true"}}, nil)
	require.ErrorIs(t, err, ErrProxyUser)
	assert.Contains(t, err.Error(), "proxy user refused by HDFS: WebHDFS GETFILESTATUS /user/bob: HTTP 403: SecurityException: Failed to obtain user group information: org.apache.hadoop.security.authorize.AuthorizationException: User: alice is not allowed to impersonate bob")
	assert.Contains(t, err.Error(), "hadoop.proxyuser.alice.users (bob)")
	assert.Zero(t, rm.Count("POST /ws/v1/cluster/apps/new-application"), "no application id used up")
	assert.Equal(t, []string{"/user/bob"}, web.Paths("/user/bob"), "nothing staged")
}

// TestSubmitProxyUserRefusedByRM: the ResourceManager's refusal of ?doAs= (Hadoop's
// AuthorizationException, HTTP 403) names the proxy-user rights, before anything is staged.
func TestSubmitProxyUserRefusedByRM(t *testing.T) {
	rm := newFakeRM(t, "")
	refusal := `{"RemoteException":{"exception":"AuthorizationException","message":"User: alice is not allowed to impersonate bob","javaClassName":"org.apache.hadoop.security.authorize.AuthorizationException"}}`
	for _, route := range []string{"GET /ws/v1/cluster/info", "POST /ws/v1/cluster/apps/new-application"} {
		rm.ReplyJSON(route, http.StatusForbidden, refusal)
	}
	web := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{"alice"}})
	c := proxyClient(t, rm, web, "bob")
	for _, force := range []bool{false, true} {
		_, err := c.Submit(context.Background(), Request{GPUs: 1, Command: []string{"true"}, Force: force}, nil)
		require.ErrorIs(t, err, ErrProxyUser, "force=%t", force)
		assert.ErrorIs(t, err, yarn.ErrForbidden)
		assert.Contains(t, err.Error(), "proxy user refused by the ResourceManager: it does not let alice act as bob")
		assert.Contains(t, err.Error(), "hadoop.proxyuser.alice.hosts")
	}
	assert.Equal(t, []string{"/user/bob"}, web.Paths("/user/bob"), "nothing staged")
}

func TestShipKeytabRefusedWithDoAs(t *testing.T) {
	dir := t.TempDir()
	kt := filepath.Join(dir, "alice.keytab")
	require.NoError(t, os.WriteFile(kt, []byte("keytab"), 0o600))
	hc := testHadoop(t, map[string]string{"hadoop.security.authentication": "kerberos", stage.KeyNameNodePrincipal: "nn/_HOST@EXAMPLE.COM"})
	for _, tc := range []struct {
		doAs, err string
	}{
		{"bob", "--ship-keytab: not with --do-as bob: the shipped keytab is the login's (alice)"},
		{"alice", ""}, // acting as oneself is no proxy user
	} {
		c := &Client{opts: Options{Hadoop: hc, Login: kerberos.Options{Keytab: kt, Principal: "alice@EXAMPLE.COM"},
			Stage: stage.Options{DoAs: tc.doAs}, Getenv: func(string) string { return "" }}}
		_, err := c.keytabToShip(Request{ShipKeytab: true})
		if tc.err == "" {
			assert.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, ErrRequest)
		assert.Contains(t, err.Error(), tc.err)
	}
}

// TestProxyLogFS: with --do-as, the aggregated logs are listed and read through WebHDFS as the
// proxy user (their directory is that user's, private).
func TestProxyLogFS(t *testing.T) {
	web := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob", "/tmp/logs/bob": "bob"}, ProxyUsers: []string{"alice"}})
	bob, err := webhdfs.New(webhdfs.Options{Bases: []string{web.NameNode}, User: "bob"})
	require.NoError(t, err)
	ctx := context.Background()
	w, err := bob.Create(ctx, "/tmp/logs/bob/node_1_8041", 0o640)
	require.NoError(t, err)
	_, err = w.Write([]byte("aggregated log bytes"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, bob.SetPermission(ctx, "/tmp/logs/bob", 0o770))

	hc := testHadoop(t, map[string]string{"dfs.namenode.http-address": strings.TrimPrefix(web.NameNode, "http://")})
	c := &Client{opts: Options{Hadoop: hc, Stage: stage.Options{HadoopConf: hc, User: "alice", DoAs: "bob"}}, log: slog.New(slog.DiscardHandler)}
	fs, err := c.openLogFS(ctx)
	require.NoError(t, err)
	defer fs.Close()
	fis, err := fs.ReadDir("/tmp/logs/bob")
	require.NoError(t, err)
	require.Len(t, fis, 1)
	assert.Equal(t, "node_1_8041", fis[0].Name())
	assert.Equal(t, int64(20), fis[0].Size())
	f, err := fs.Open("/tmp/logs/bob/node_1_8041")
	require.NoError(t, err)
	p := make([]byte, 8)
	n, err := f.ReadAt(p, 11)
	require.NoError(t, err)
	assert.Equal(t, "log byte", string(p[:n]))
	_, err = fs.ReadDir("/tmp/logs/nobody")
	assert.ErrorIs(t, err, os.ErrNotExist)
	for _, r := range web.Requests() {
		if r.Login == "alice" {
			assert.Equal(t, "bob", r.DoAs, "%s %s", r.Op, r.Path)
		}
	}
}
