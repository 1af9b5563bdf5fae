package submit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/stage"
)

func TestTokenRenewer(t *testing.T) {
	login := krb5test.New(t).Client(t)
	for _, tc := range []struct {
		name   string
		hadoop map[string]string
		want   string
		err    string
	}{
		{name: "simple cluster: no token", hadoop: map[string]string{}, want: ""},
		{name: "_HOST is the RM's host", hadoop: map[string]string{"hadoop.security.authentication": "kerberos",
			KeyRMPrincipal: "rm/_HOST@EXAMPLE.COM", "yarn.resourcemanager.scheduler.address": "RM1.example.com:8030"},
			want: "rm/rm1.example.com@EXAMPLE.COM"},
		{name: "HA: the first rm-id", hadoop: map[string]string{"hadoop.security.authentication": "kerberos",
			KeyRMPrincipal: "rm/_HOST@EXAMPLE.COM", "yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm2,rm1",
			"yarn.resourcemanager.hostname.rm1": "a.example.com", "yarn.resourcemanager.hostname.rm2": "b.example.com"},
			want: "rm/b.example.com@EXAMPLE.COM"},
		{name: "no _HOST", hadoop: map[string]string{"hadoop.security.authentication": "kerberos", KeyRMPrincipal: "yarn@EXAMPLE.COM"},
			want: "yarn@EXAMPLE.COM"},
		{name: "no RM principal", hadoop: map[string]string{"hadoop.security.authentication": "kerberos"},
			err: "yarn.resourcemanager.principal is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := testHadoop(t, tc.hadoop)
			c := &Client{opts: Options{Hadoop: hc, Stage: stage.Options{Kerberos: login}}}
			got, err := c.tokenRenewer()
			if tabletest.WantErr(t, err, tc.err) {
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAMContextCarriesTheDelegationToken(t *testing.T) {
	spec := &jobspec.Spec{Name: "n", Binary: jobspec.LocalFile{Name: "yarn-er", URL: "hdfs://nn/b", Size: 1, MtimeMillis: 1, Type: "FILE", Visibility: "APPLICATION"}}
	amc := amContext(Request{}, "application_1_0001", spec, jobspec.LocalFile{Name: jobspec.FileName, URL: "hdfs://nn/s", Size: 1, MtimeMillis: 1, Type: "FILE", Visibility: "APPLICATION"}, nil)
	tok := records.Token{Identifier: []byte{0, 1, 2}, Password: []byte("secret"), Kind: "HDFS_DELEGATION_TOKEN", Service: "10.0.0.1:8020"}
	addToken(&amc, tok)
	b, err := json.Marshal(amc)
	require.NoError(t, err)
	var got struct {
		AM struct {
			Credentials struct {
				Tokens struct {
					Entry []struct{ Key, Value string } `json:"entry"`
				} `json:"tokens"`
			} `json:"credentials"`
		} `json:"am-container-spec"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	entries := got.AM.Credentials.Tokens.Entry
	require.Len(t, entries, 1)
	assert.Equal(t, "10.0.0.1:8020", entries[0].Key, "the alias is the service")
	back, err := records.DecodeTokenURLString(entries[0].Value)
	require.NoError(t, err)
	assert.Equal(t, tok, back, "Hadoop's URL-safe token encoding")
}

func TestKeytabToShip(t *testing.T) {
	dir := t.TempDir()
	kt := filepath.Join(dir, "alice.keytab")
	require.NoError(t, os.WriteFile(kt, []byte("keytab"), 0o600))
	krb5 := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(krb5, []byte("[libdefaults]\n"), 0o600))
	secure := map[string]string{"hadoop.security.authentication": "kerberos", stage.KeyNameNodePrincipal: "nn/_HOST@EXAMPLE.COM"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range secure {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		hadoop map[string]string
		login  kerberos.Options
		env    map[string]string
		want   *jobspec.TokenRefresh
		items  []string
		err    string
	}{
		{name: "keytab, krb5.conf from KRB5_CONFIG, renew interval", hadoop: with(map[string]string{KeyTokenRenewInterval: "30000"}),
			login: kerberos.Options{Keytab: kt, Principal: " alice@EXAMPLE.COM "}, env: map[string]string{"KRB5_CONFIG": "/nonexistent:" + krb5},
			want: &jobspec.TokenRefresh{Principal: "alice@EXAMPLE.COM", KeytabFile: KeytabFile, Krb5ConfFile: Krb5ConfFile,
				NameNodePrincipal: "nn/_HOST@EXAMPLE.COM", RenewIntervalMillis: 30000},
			items: []string{kt + "#" + KeytabFile, krb5 + "#" + Krb5ConfFile}},
		{name: "explicit krb5.conf", hadoop: secure, login: kerberos.Options{Keytab: kt, Principal: "alice", Krb5Conf: krb5},
			want:  &jobspec.TokenRefresh{Principal: "alice", KeytabFile: KeytabFile, Krb5ConfFile: Krb5ConfFile, NameNodePrincipal: "nn/_HOST@EXAMPLE.COM"},
			items: []string{kt + "#" + KeytabFile, krb5 + "#" + Krb5ConfFile}},
		{name: "simple cluster", hadoop: map[string]string{}, login: kerberos.Options{Keytab: kt, Principal: "alice"}, err: "not kerberos"},
		{name: "a ticket cache only", hadoop: secure, login: kerberos.Options{CCache: "/tmp/krb5cc_1"}, err: "give --keytab and --principal"},
		{name: "missing keytab", hadoop: secure, login: kerberos.Options{Keytab: filepath.Join(dir, "none"), Principal: "alice"}, err: "keytab " + filepath.Join(dir, "none")},
		{name: "no NameNode principal", hadoop: map[string]string{"hadoop.security.authentication": "kerberos"},
			login: kerberos.Options{Keytab: kt, Principal: "alice"}, err: stage.KeyNameNodePrincipal + " is not set"},
		{name: "bad renew interval", hadoop: with(map[string]string{KeyTokenRenewInterval: "1d"}),
			login: kerberos.Options{Keytab: kt, Principal: "alice"}, err: KeyTokenRenewInterval + ` = "1d" (yarn-site.xml:1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = map[string]string{"KRB5_CONFIG": krb5}
			}
			c := &Client{opts: Options{Hadoop: testHadoop(t, tc.hadoop), Login: tc.login, Getenv: func(k string) string { return env[k] }}}
			s, err := c.keytabToShip(Request{ShipKeytab: true})
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.refresh())
			var items []string
			for _, it := range s.items() {
				items = append(items, it.Local+"#"+it.Name)
			}
			assert.Equal(t, tc.items, items)
		})
	}
	none, err := (&Client{}).keytabToShip(Request{})
	require.NoError(t, err)
	assert.Nil(t, none.refresh())
	assert.Empty(t, none.items())
}
