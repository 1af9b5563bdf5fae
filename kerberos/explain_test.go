package kerberos

import (
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExplainKerberos(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		ok         bool
		what, fix  string
	}{
		{"client unknown", "AS Exchange Error: kerberos error response from KDC: KRB Error: (6) KDC_ERR_C_PRINCIPAL_UNKNOWN Client not found", true,
			"does not know the principal carol@EXAMPLE.COM", "YARN_ER_PRINCIPAL"},
		{"service unknown", "TGS Exchange Error: KRB Error: (7) KDC_ERR_S_PRINCIPAL_UNKNOWN Server not found", true,
			"service principal HTTP/10.0.0.1", "_HOST"},
		{"skew", "KRB Error: (37) KRB_AP_ERR_SKEW Clock skew too great", true, "clock", "NTP"},
		{"expired", "KRB Error: (32) KRB_AP_ERR_TKT_EXPIRED Ticket expired", true, "expired", "kinit again"},
		{"preauth", "KRB Error: (24) KDC_ERR_PREAUTH_FAILED", true, "refused the key", "export the keytab again"},
		{"realm", "failed sending AS_REQ to KDC: communication error with KDC via TCP: no KDCs defined in configuration for realm WRONG.COM", true,
			"no KDC for the realm WRONG.COM", "case-sensitive"},
		{"kdc down", "failed sending AS_REQ to KDC: communication error with KDC via TCP: dial tcp 127.0.0.1:88: connect: connection refused", true,
			"no KDC of the realm answered", "reachable"},
		{"unknown", "something else entirely", false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := "carol@EXAMPLE.COM"
			if tc.name == "realm" {
				client = "alice@WRONG.COM"
			}
			what, fix, ok := Explain(tc.text, client, "HTTP/10.0.0.1")
			assert.Equal(t, tc.ok, ok)
			assert.Contains(t, what, tc.what)
			assert.Contains(t, fix, tc.fix)
		})
	}
}

func TestKeytabHolds(t *testing.T) {
	kt := keytab.New()
	require.NoError(t, kt.AddEntry("alice", "EXAMPLE.COM", "pw", time.Unix(0, 0), 1, etypeID.AES256_CTS_HMAC_SHA1_96))
	require.NoError(t, kt.AddEntry("svc/host", "EXAMPLE.COM", "pw", time.Unix(0, 0), 1, etypeID.AES256_CTS_HMAC_SHA1_96))
	assert.NoError(t, keytabHolds(kt, "u.keytab", "alice", "EXAMPLE.COM"))
	assert.NoError(t, keytabHolds(kt, "u.keytab", "svc/host", "EXAMPLE.COM"))
	for _, tc := range []struct{ user, realm string }{{"bob", "EXAMPLE.COM"}, {"alice", "OTHER.ORG"}, {"alice", "example.com"}} {
		err := keytabHolds(kt, "u.keytab", tc.user, tc.realm)
		require.ErrorIs(t, err, ErrAuthentication)
		assert.Contains(t, err.Error(), "holds no key of "+tc.user+"@"+tc.realm)
		assert.Contains(t, err.Error(), "alice@EXAMPLE.COM, svc/host@EXAMPLE.COM")
		assert.NotContains(t, err.Error(), "pw")
	}
	assert.ErrorContains(t, keytabHolds(keytab.New(), "empty.keytab", "alice", "EXAMPLE.COM"), "holds no key at all")
}
