package kerberos

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoginErrors(t *testing.T) {
	dir := t.TempDir()
	getenv := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	krb5 := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(krb5, []byte("[libdefaults]\n default_realm = EXAMPLE.COM\n"), 0o600))
	for _, tc := range []struct {
		name string
		opts Options
		env  map[string]string
		want string
	}{
		{"no krb5.conf", Options{Krb5Conf: filepath.Join(dir, "missing.conf")}, nil, "missing.conf"},
		{"no keytab", Options{Krb5Conf: krb5, Keytab: filepath.Join(dir, "none.keytab"), Principal: "flink"}, nil, "none.keytab"},
		{"keytab without principal", Options{Krb5Conf: krb5, Keytab: krb5}, nil, "damaged or not a keytab"},
		{"no cache", Options{Krb5Conf: krb5, CCache: filepath.Join(dir, "krb5cc")}, nil, "run kinit"},
		{"keyring cache", Options{Krb5Conf: krb5}, map[string]string{"KRB5CCNAME": "KEYRING:persistent:0"}, "KEYRING"},
		{"krb5.conf from the environment", Options{CCache: filepath.Join(dir, "krb5cc")}, map[string]string{"KRB5_CONFIG": filepath.Join(dir, "env.conf")}, "/etc/krb5.conf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Login(tc.opts, getenv(tc.env), nil)
			require.ErrorIs(t, err, ErrAuthentication)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestOptionsSet(t *testing.T) {
	assert.False(t, Options{}.Set())
	assert.True(t, Options{Keytab: "k"}.Set())
	assert.True(t, Options{CCache: "c"}.Set())
}

func TestPrincipalAndCache(t *testing.T) {
	getenv := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	p, err := ccachePath("", getenv(map[string]string{"KRB5CCNAME": "FILE:/tmp/cc"}))
	require.NoError(t, err)
	assert.Equal(t, "/tmp/cc", p)
	p, err = ccachePath("FILE:/x/cc", getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, "/x/cc", p)

	for _, tc := range []struct {
		in, realm, user, wantRealm string
		err                        bool
	}{
		{"flink@OTHER.ORG", "EXAMPLE.COM", "flink", "OTHER.ORG", false},
		{"flink", "EXAMPLE.COM", "flink", "EXAMPLE.COM", false},
		{"svc/host@R", "", "svc/host", "R", false},
		{"flink", "", "", "", true},
		{"", "EXAMPLE.COM", "", "", true},
		{"@R", "EXAMPLE.COM", "", "", true},
	} {
		u, r, err := splitPrincipal(tc.in, tc.realm)
		if tc.err {
			assert.ErrorIs(t, err, ErrAuthentication, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, [2]string{tc.user, tc.wantRealm}, [2]string{u, r}, tc.in)
	}
}

func TestRedactingWriter(t *testing.T) {
	var logs bytes.Buffer
	w := redactingWriter{logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), component: "gokrb5"}
	line := []byte("Authorization: Negotiate YIIGxwYJKoZIhvcSAQICAQBuggY2MIIGMqADAgEFoQMCAQ6iBwMFACAAAACjggQ\n")
	n, err := w.Write(line)
	require.NoError(t, err)
	assert.Equal(t, len(line), n)
	assert.Contains(t, logs.String(), "component=gokrb5")
	assert.NotContains(t, logs.String(), "YIIGxwYJ")
}

func TestDamagedKerberosFilesAreClearErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		load func(string) error
	}{
		{"empty keytab", nil, func(p string) error { _, err := loadKeytab(p); return err }},
		{"garbage keytab", []byte("not a keytab at all"), func(p string) error { _, err := loadKeytab(p); return err }},
		{"ccache of 70 bytes", append([]byte{5, 4, 0, 0}, bytes.Repeat([]byte{0xff}, 66)...), func(p string) error { _, err := loadCCache(p); return err }},
		{"ccache of 20 bytes", append([]byte{5, 4}, bytes.Repeat([]byte{0xff}, 18)...), func(p string) error { _, err := loadCCache(p); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			require.NoError(t, os.WriteFile(p, tc.data, 0o600))
			err := tc.load(p)
			require.ErrorIs(t, err, ErrAuthentication)
			assert.Contains(t, err.Error(), p, "the error names the file")
			assert.Contains(t, err.Error(), "fix:")
		})
	}
	for _, load := range []func(string) error{
		func(p string) error { _, err := loadCCache(p); return err },
		func(p string) error { _, err := loadKeytab(p); return err },
		func(p string) error { _, err := loadKrb5Conf(p); return err },
	} {
		err := load("/dev/zero")
		require.ErrorIs(t, err, ErrAuthentication)
		assert.Contains(t, err.Error(), "/dev/zero: not a regular file")
	}
}
