package cmdutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/yarn"
)

// TestRMOptionsFromConf: the Hadoop configuration fills what the flags leave open, and only that.
func TestRMOptionsFromConf(t *testing.T) {
	hc := &conf.HadoopConfig{}
	src := conf.Source{File: "yarn-site.xml", Line: 3}
	for k, v := range map[string]string{
		"yarn.http.policy":                              "HTTPS_ONLY",
		"yarn.resourcemanager.ha.enabled":               "true",
		"yarn.resourcemanager.ha.rm-ids":                "rm1,rm2",
		"yarn.resourcemanager.hostname.rm1":             "a",
		"yarn.resourcemanager.webapp.https.address.rm2": "b:9443",
		"hadoop.http.authentication.type":               "kerberos",
		"yarn.resourcemanager.webapp.spnego-principal":  "HTTP/_HOST@EXAMPLE.COM",
	} {
		hc.Set(k, v, src)
	}
	opts, err := RMOptionsFromConf(yarn.Options{User: "u"}, hc)
	require.NoError(t, err)
	assert.Equal(t, []string{"https://a:8090", "https://b:9443"}, opts.Addresses)
	assert.Equal(t, []string{"rm1", "rm2"}, opts.RMIDs)
	assert.True(t, opts.HTTPS)
	assert.Equal(t, yarn.AuthKerberos, opts.Auth)
	assert.Equal(t, "HTTP/_HOST@EXAMPLE.COM", opts.Kerberos.ServicePrincipal)
	assert.Equal(t, "u", opts.User)

	// Flags win: --rm, --auth simple and a principal are kept; the https policy still applies.
	opts, err = RMOptionsFromConf(yarn.Options{Addresses: []string{"rm:1"}, Auth: yarn.AuthSimple,
		Kerberos: yarn.KerberosOptions{ServicePrincipal: "HTTP/x"}}, hc)
	require.NoError(t, err)
	assert.Equal(t, []string{"rm:1"}, opts.Addresses)
	assert.Nil(t, opts.RMIDs)
	assert.True(t, opts.HTTPS)
	assert.Equal(t, yarn.AuthSimple, opts.Auth)
	assert.Equal(t, "HTTP/x", opts.Kerberos.ServicePrincipal)

	// No configuration: the options as they are.
	opts, err = RMOptionsFromConf(yarn.Options{Addresses: []string{"rm:1"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, yarn.Options{Addresses: []string{"rm:1"}}, opts)

	// A configuration without an address: conf's error.
	_, err = RMOptionsFromConf(yarn.Options{}, &conf.HadoopConfig{})
	assert.ErrorIs(t, err, conf.ErrNoRMAddress)
}
