package yarn

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/redact"
	"github.com/yarn-er/yarn-er/kerberos"
)

// canaries are secrets fed to the client; none may appear in an error or a log line.
var canaries = []string{
	"CanaryRMPassw0rd", "CanaryDelegationTok", "CanaryEchoedToken", "CanaryNegotiateBlob0123",
	"CanaryHTMLPassword", "CanaryCookieSignature", "canaryprincipal", "canaryccacheprinc",
}

func assertNoCanary(t *testing.T, where, text string) {
	t.Helper()
	for _, c := range canaries {
		assert.NotContains(t, text, c, "%s leaks a secret: %s", where, text)
	}
}

// TestNoSecretInErrorsOrLogs feeds canary secrets through the client, its transport and its Kerberos
// loading, with debug logging as text and as JSON, and checks every error and log line. Errors are
// checked as the library returns them and after redact.Error (what the CLI prints); logs as the
// library writes them (no redacting handler) and through redact.Handler (what the CLI installs).
func TestNoSecretInErrorsOrLogs(t *testing.T) {
	rm := newFakeRM(t)
	rm.ReplyJSON("GET "+pathInfo, http.StatusForbidden,
		`{"RemoteException":{"exception":"AuthorizationException","message":"user alice, token=CanaryEchoedToken, Authorization: Negotiate CanaryNegotiateBlob0123","javaClassName":"org.apache.hadoop.security.authorize.AuthorizationException"}}`)
	rm.Reply("GET "+pathMetrics, http.StatusInternalServerError, "text/html",
		[]byte("<html><body><h2>HTTP ERROR 500</h2><pre>login failed for password=CanaryHTMLPassword</pre></body></html>"))
	rm.Handle("GET "+pathNodes, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", `hadoop.auth="u=alice&t=simple&e=1&s=CanaryCookieSignature"; Path=/; HttpOnly`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"nodes":null}`))
	})
	dir := t.TempDir()

	// A keytab of a canary principal, cut short: gokrb5's error would quote its bytes.
	kt := keytab.New()
	require.NoError(t, kt.AddEntry("canaryprincipal", "EXAMPLE.COM", "CanaryRMPassw0rd", time.Unix(1700000000, 0), 1, 18))
	ktData, err := kt.Marshal()
	require.NoError(t, err)
	ktPath := filepath.Join(dir, "cut.keytab")
	require.NoError(t, os.WriteFile(ktPath, ktData[:len(ktData)-3], 0o600))
	// A credential cache of 70 bytes that makes gokrb5's parser slice out of range.
	cc := append([]byte{5, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 11}, []byte("EXAMPLE.COM\x00\x00\x00\x11canaryccacheprinc")...)
	for len(cc) < 70 {
		cc = append(cc, 0xff)
	}
	ccPath := filepath.Join(dir, "krb5cc_damaged")
	require.NoError(t, os.WriteFile(ccPath, cc, 0o600))
	krb5conf := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(krb5conf, []byte("[libdefaults]\n  default_realm = EXAMPLE.COM\n"), 0o644))

	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var raw, layered bytes.Buffer
			handler := func(w *bytes.Buffer) slog.Handler {
				o := &slog.HandlerOptions{Level: slog.LevelDebug}
				if format == "json" {
					return slog.NewJSONHandler(w, o)
				}
				return slog.NewTextHandler(w, o)
			}
			loggers := []*slog.Logger{slog.New(handler(&raw)), slog.New(redact.Handler(handler(&layered)))}
			var errs []error
			for _, logger := range loggers {
				c := testClient(t, Options{Logger: logger, Retry: RetryPolicy{MaxAttempts: 1}}, rm.URL())
				_, err := c.ClusterInfo(context.Background())
				require.ErrorIs(t, err, ErrForbidden)
				errs = append(errs, err)
				_, err = c.Metrics(context.Background())
				require.Error(t, err)
				errs = append(errs, err)
				_, err = c.Nodes(context.Background(), NodesQuery{})
				require.NoError(t, err)

				for _, k := range []KerberosOptions{
					{Options: kerberos.Options{Keytab: ktPath, Principal: "canaryprincipal@EXAMPLE.COM", Krb5Conf: krb5conf}},
					{Options: kerberos.Options{CCache: ccPath, Krb5Conf: krb5conf}},
				} {
					_, err = NewClient(Options{Addresses: []string{rm.URL()}, Auth: AuthKerberos, Kerberos: k, Logger: logger})
					require.ErrorIs(t, err, ErrAuthentication)
					assert.Contains(t, err.Error(), "is damaged")
					errs = append(errs, err)
				}
			}
			for _, err := range errs {
				assertNoCanary(t, "the error", err.Error())
				assertNoCanary(t, "the redacted error", redact.Error(err).Error())
			}
			assertNoCanary(t, "the library's log", raw.String())
			assertNoCanary(t, "the redacted log", layered.String())
			assert.NotEmpty(t, raw.String())
		})
	}
}

// TestSecretsInAddressesAreNeverPrinted: a password or a token in an RM address is refused, and the
// refusal, once through the redaction layer, does not print it.
func TestSecretsInAddressesAreNeverPrinted(t *testing.T) {
	for _, addr := range []string{
		"http://alice:CanaryRMPassw0rd@rm.example.com:8088",
		"https://CanaryRMPassw0rd@rm.example.com:8090",
	} {
		_, err := NewClient(Options{Addresses: []string{addr}, User: "u"})
		require.Error(t, err)
		assertNoCanary(t, "the redacted error", redact.Error(err).Error())
		assert.True(t, strings.Contains(redact.Error(err).Error(), "rm.example.com"), "the address is still named: %v", redact.Error(err))
	}
}
