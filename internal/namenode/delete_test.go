package namenode_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/records"
)

// remove dials cfg and deletes path recursively, as the ApplicationMaster does.
func remove(t *testing.T, cfg namenode.Config, path string, recursive bool) (bool, error) {
	t.Helper()
	c, err := namenode.Dial(context.Background(), cfg)
	if err != nil {
		return false, err
	}
	defer c.Close()
	return c.Delete(context.Background(), path, recursive)
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	tok := records.Token{Identifier: []byte("hdfs-dt"), Password: []byte("secret"), Kind: namenode.KindDelegationToken, Service: "127.0.0.1:8020"}
	for _, tc := range []struct {
		name   string
		simple bool
		cfg    func(addr string) namenode.Config
		login  []byte // the token identifier the server saw, nil: SIMPLE
		user   string // the effective user of a SIMPLE connection
	}{
		{"delegation token", false, func(addr string) namenode.Config {
			return namenode.Config{Addrs: []string{addr}, Token: &tok}
		}, tok.Identifier, ""},
		{"simple as the user", true, func(addr string) namenode.Config {
			return namenode.Config{Addrs: []string{addr}, User: "alice"}
		}, nil, "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nn := namenodetest.New(t, namenodetest.Options{Paths: []string{"/user/alice/.yarn-er/app_1/yarn-er"}})
			nn.Simple = tc.simple
			nn.AddToken(tok.Identifier, tok.Password)
			cfg := tc.cfg(nn.Addr)

			c, err := namenode.Dial(ctx, cfg)
			require.NoError(t, err)
			defer c.Close()
			removed, err := c.Delete(ctx, "/user/alice/.yarn-er/app_1", true)
			require.NoError(t, err)
			assert.True(t, removed)
			// Gone already: no error, nothing removed.
			removed, err = c.Delete(ctx, "/user/alice/.yarn-er/app_1", true)
			require.NoError(t, err)
			assert.False(t, removed)

			assert.Equal(t, []namenodetest.Delete{{Path: "/user/alice/.yarn-er/app_1", Recursive: true}, {Path: "/user/alice/.yarn-er/app_1", Recursive: true}}, nn.Deletes())
			assert.False(t, nn.Exists("/user/alice/.yarn-er/app_1/yarn-er"), "with what it held")
			assert.Equal(t, namenode.Protocol, nn.Calls()[0].Protocol)
			if tc.login != nil {
				assert.Equal(t, [][]byte{tc.login}, nn.Logins(), "one connection for both calls")
			} else {
				assert.Empty(t, nn.Logins())
				require.NotEmpty(t, nn.Contexts())
				assert.Equal(t, tc.user, nn.Contexts()[0].GetUserInfo().GetEffectiveUser())
			}
		})
	}
}

func TestDeleteErrors(t *testing.T) {
	nn := namenodetest.New(t, namenodetest.Options{Paths: []string{"/full/file"}, Denied: []string{"/denied"}})
	nn.Simple = true
	for _, tc := range []struct {
		name string
		cfg  namenode.Config
		path string
		msg  string
	}{
		{"relative path", namenode.Config{Addrs: []string{nn.Addr}, User: "bob"}, "user/bob", "not an absolute path"},
		{"no credentials", namenode.Config{Addrs: []string{nn.Addr}}, "/x", "no credentials"},
		{"no address", namenode.Config{User: "bob"}, "/x", "no NameNode address"},
		{"permission denied", namenode.Config{Addrs: []string{nn.Addr}, User: "bob"}, "/denied", "Permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			removed, err := remove(t, tc.cfg, tc.path, true)
			require.Error(t, err)
			assert.False(t, removed)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	var re *records.RemoteError
	_, err := remove(t, namenode.Config{Addrs: []string{nn.Addr}, User: "bob"}, "/denied", false)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "org.apache.hadoop.security.AccessControlException", re.Class)

	// A directory with something in it goes only with recursive.
	_, err = remove(t, namenode.Config{Addrs: []string{nn.Addr}, User: "bob"}, "/full", false)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, namenodetest.ExNotEmpty, re.Class)
	assert.True(t, nn.Exists("/full/file"))
}

func TestSelectToken(t *testing.T) {
	ctx := context.Background()
	dt := func(service string) records.Token {
		return records.Token{Identifier: []byte(service), Kind: namenode.KindDelegationToken, Service: service}
	}
	amrm := records.Token{Identifier: []byte("amrm"), Kind: "YARN_AM_RM_TOKEN", Service: "127.0.0.1:8020"}
	for _, tc := range []struct {
		name   string
		tokens map[string]records.Token
		addr   string
		want   string // the chosen token's service, "" none
	}{
		{"ip:port", map[string]records.Token{"a": dt("127.0.0.1:9000"), "b": dt("127.0.0.1:8020")}, "127.0.0.1:8020", "127.0.0.1:8020"},
		{"host name resolved as Hadoop's client names it", map[string]records.Token{"a": dt("127.0.0.1:8020")}, "localhost:8020", "127.0.0.1:8020"},
		{"HA nameservice", map[string]records.Token{"a": dt("ha-hdfs:mycluster")}, "mycluster", "ha-hdfs:mycluster"},
		{"other NameNode", map[string]records.Token{"a": dt("10.0.0.9:8020")}, "127.0.0.1:8020", ""},
		{"only a token of another kind", map[string]records.Token{"amrm": amrm}, "127.0.0.1:8020", ""},
		{"none", nil, "127.0.0.1:8020", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, ok := namenode.SelectToken(ctx, tc.tokens, tc.addr)
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, tok.Service)
		})
	}
}
