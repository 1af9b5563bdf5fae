package submit

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/jobspec"
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
