package stage

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/records"
)

func kerberosConf(kv ...string) *conf.HadoopConfig {
	c := &conf.HadoopConfig{}
	c.Set(KeyAuthentication, "kerberos", conf.Source{File: "core-site.xml", Line: 9})
	for i := 0; i < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1], conf.Source{File: "hdfs-site.xml", Line: 2})
	}
	return c
}

func TestDialKerberosSettings(t *testing.T) {
	login := krb5test.New(t).Client(t)
	for _, tc := range []struct {
		name     string
		opts     Options
		fake     bool
		msg      string
		wantUser string
	}{
		{name: "no login", opts: Options{HadoopConf: kerberosConf("fs.defaultFS", "hdfs://nn:8020")}, fake: true,
			msg: "hadoop.security.authentication is kerberos, and there is no Kerberos login"},
		{name: "user is not the login's", opts: Options{HadoopConf: kerberosConf("fs.defaultFS", "hdfs://nn:8020"), User: "bob", Kerberos: login}, fake: true,
			msg: `HDFS user "bob" is not the Kerberos login's "alice"`},
		{name: "user from the login", opts: Options{HadoopConf: kerberosConf("fs.defaultFS", "hdfs://nn:8020"), Kerberos: login}, fake: true,
			wantUser: krb5test.User},
		{name: "no NameNode principal", opts: Options{HadoopConf: kerberosConf("fs.defaultFS", "hdfs://127.0.0.1:1"), Kerberos: login},
			msg: "dfs.namenode.kerberos.principal is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fake {
				tc.opts.fs = newMemFS()
			}
			c, err := Dial(context.Background(), tc.opts)
			if tabletest.WantErr(t, err, tc.msg, ErrUnsupportedAuth) {
				return
			}
			assert.Equal(t, tc.wantUser, c.User())
			assert.Equal(t, "/user/"+tc.wantUser+"/.yarn-er", c.BaseDir())
		})
	}
}

// TestKerberosNameNode connects colinmarc/hdfs and the delegation-token client to a fake
// Kerberized NameNode: both authenticate as alice through SASL GSSAPI, the principal's _HOST
// resolved to the name of 127.0.0.1 as Hadoop does.
func TestKerberosNameNode(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	nn := namenodetest.New(t, namenodetest.Options{})
	nn.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
	c, err := Dial(context.Background(), Options{
		HadoopConf: kerberosConf("fs.defaultFS", "hdfs://"+nn.Addr, KeyNameNodePrincipal, "nn/_HOST@"+krb5test.Realm),
		Kerberos:   creds.Client(t),
	})
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, c.Kerberized())
	assert.Equal(t, krb5test.User, c.User())

	tok, err := c.DelegationToken(context.Background(), "rm/localhost@"+krb5test.Realm)
	require.NoError(t, err)
	assert.Equal(t, records.Token{Identifier: []byte("ident"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: nn.Addr}, tok)
	assert.Equal(t, []string{"rm/localhost@" + krb5test.Realm}, nn.Renewers())
	who := krb5test.User + "@" + krb5test.Realm
	assert.Equal(t, []string{who, who}, nn.Principals(), "colinmarc/hdfs's connection and the token call")
	for _, ctx := range nn.Contexts() {
		// colinmarc/hdfs names the principal as the effective user; yarn-er's IPC names none.
		if u := ctx.GetUserInfo().EffectiveUser; u != nil {
			assert.Equal(t, who, *u)
		}
	}
}

func TestDelegationTokenNeedsKerberos(t *testing.T) {
	c := testClient(t, newMemFS(), Options{})
	_, err := c.DelegationToken(context.Background(), "rm")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnsupportedAuth)
	assert.NoError(t, c.CancelDelegationToken(context.Background(), records.Token{}), "nothing to cancel without Kerberos")
}
