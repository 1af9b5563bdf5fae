package amkerberos

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/kerberos"
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
