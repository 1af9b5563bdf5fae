package amkerberos

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/internal/ipc/gss"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/records"
)

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"alice@EXAMPLE.COM": "alice", "alice": "alice", "flink/host.example.com@EXAMPLE.COM": "flink", "": "",
	} {
		assert.Equal(t, want, ShortName(in), in)
	}
}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	krb5 := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(krb5, []byte("[libdefaults]\n default_realm = EXAMPLE.COM\n"), 0o600))
	tr := &jobspec.TokenRefresh{Principal: "alice@EXAMPLE.COM", KeytabFile: filepath.Join(dir, "missing.keytab"), Krb5ConfFile: krb5,
		NameNodePrincipal: "nn/_HOST@EXAMPLE.COM"}
	for _, tc := range []struct {
		name string
		spec *jobspec.Spec
		want string
	}{
		{"no refresh asked", &jobspec.Spec{StagingDir: "hdfs://nn:8020/x/app_1"}, "asks for no token refresh"},
		{"file staging", &jobspec.Spec{StagingDir: "file:///tmp/app_1", Tokens: tr}, "hdfs:// staging directory"},
		{"keytab missing", &jobspec.Spec{StagingDir: "hdfs://nn:8020/x/app_1", Tokens: tr}, "missing.keytab"},
		{"nameservice without its NameNodes", &jobspec.Spec{StagingDir: "hdfs://ns1/x/app_1", Tokens: tr}, "lists no NameNodes (stagingNameNodes) of that nameservice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.spec, Options{Getenv: func(string) string { return "" }})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.name == "keytab missing" {
				assert.ErrorIs(t, err, kerberos.ErrAuthentication)
			}
		})
	}
}

// Refresh asks the NameNode for a new token under the old one's alias, learns its life by
// renewing it once, and says to come back when a third of that life is over; Publish puts the
// tokens, without the AMRMToken, on the staging directory's extended attribute. Under HA (a
// staging directory on a nameservice) the standby NameNode is skipped and the token keeps the
// nameservice's service.
func TestRefreshAndPublish(t *testing.T) {
	for _, ha := range []bool{false, true} {
		t.Run(fmt.Sprintf("ha=%t", ha), func(t *testing.T) {
			creds := krb5test.New(t, "nn/localhost")
			nn := namenodetest.New(t, namenodetest.Options{Numbered: true, RenewInterval: 90 * time.Second, Paths: []string{"/user/alice/.yarn-er/application_1_0001"}})
			nn.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
			host, addrs, service := nn.Addr, []string{nn.Addr}, nn.Addr
			if ha {
				standby := namenodetest.New(t, namenodetest.Options{Standby: true})
				standby.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
				host, addrs, service = "ns1", []string{standby.Addr, nn.Addr}, "ha-hdfs:ns1"
			}
			start := time.Now() // the fake renews by its own clock
			r := &Refresher{
				spec:    &jobspec.TokenRefresh{Principal: krb5test.User + "@" + krb5test.Realm},
				nn:      host,
				addrs:   addrs,
				dir:     "/user/alice/.yarn-er/application_1_0001",
				krb:     &gss.Kerberos{Client: creds.Client(t), ServicePrincipal: "nn/_HOST@" + krb5test.Realm, LookupAddr: krb5test.LookupLocalhost},
				renewer: krb5test.User,
				log:     slog.New(slog.DiscardHandler),
				now:     func() time.Time { return start },
			}
			current := records.NewCredentials()
			current.AddToken("hdfs-alias", records.Token{Identifier: []byte("old"), Password: []byte("old-pw"), Kind: namenode.KindDelegationToken, Service: service})
			current.AddToken(records.KindAMRMToken, records.Token{Identifier: []byte("am"), Password: []byte("am-pw"), Kind: records.KindAMRMToken})
			ctx := context.Background()

			fresh, next, err := r.Refresh(ctx, current)
			require.NoError(t, err)
			require.Len(t, fresh, 1)
			tok, ok := fresh["hdfs-alias"]
			require.True(t, ok, "the fresh token takes the old one's alias")
			assert.Equal(t, "ident-1", string(tok.Identifier))
			assert.Equal(t, service, tok.Service)
			assert.Equal(t, []string{krb5test.User}, nn.Renewers(), "the renewer is the principal's short name")
			assert.Equal(t, [][]byte{[]byte("ident-1")}, nn.Renewed(), "renewed once to learn its life")
			// A third of the 90 s the renewal reported.
			life := next.Sub(start)
			assert.Greater(t, life, 25*time.Second)
			assert.LessOrEqual(t, life, 30*time.Second+time.Second)

			published := records.NewCredentials()
			published.AddToken("hdfs-alias", tok)
			published.AddToken(records.KindAMRMToken, current.Tokens[records.KindAMRMToken])
			require.NoError(t, r.Publish(ctx, published))
			b, ok := nn.XAttr(r.dir, am.TokenXAttr)
			require.True(t, ok)
			got, err := records.ParseCredentials(b)
			require.NoError(t, err)
			assert.Len(t, got.Tokens, 1, "no AMRMToken on the staging directory")
			assert.Equal(t, tok.Identifier, got.Tokens["hdfs-alias"].Identifier)

			// No HDFS token for this NameNode among the current ones: nothing to replace.
			_, _, err = r.Refresh(ctx, records.NewCredentials())
			assert.ErrorContains(t, err, "holds no HDFS delegation token for "+host)
		})
	}
}
