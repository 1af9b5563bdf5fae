package yarn

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	krb5client "github.com/jcmturner/gokrb5/v8/client"
	krb5config "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/spnego"
)

// hadoopAuthCookie is the cookie Hadoop's AuthenticationFilter sets after a successful
// negotiation; while it is valid no new Kerberos service ticket is needed.
const hadoopAuthCookie = "hadoop.auth"

// negotiator produces the value of an "Authorization: Negotiate ..." header for a request.
type negotiator interface {
	negotiate(req *http.Request) (string, error)
}

// krb5Negotiator makes SPNEGO tokens with a gokrb5 client.
type krb5Negotiator struct {
	cl  *krb5client.Client
	spn string // configured service principal, may hold _HOST and @REALM
}

// servicePrincipal returns the SPN for a request: the configured one with _HOST replaced by the
// RM's host (and any @REALM dropped: gokrb5 asks the client's realm), else HTTP/<host>.
func servicePrincipal(configured, host string) string {
	spn := configured
	if spn == "" {
		spn = "HTTP/_HOST"
	}
	if i := strings.LastIndexByte(spn, '@'); i >= 0 {
		spn = spn[:i]
	}
	return strings.ReplaceAll(spn, "_HOST", strings.ToLower(host))
}

func (k *krb5Negotiator) negotiate(req *http.Request) (string, error) {
	scratch := &http.Request{Header: http.Header{}, URL: req.URL, Host: req.Host}
	spn := servicePrincipal(k.spn, req.URL.Hostname())
	if err := spnego.SetSPNEGOHeader(k.cl, scratch, spn); err != nil {
		return "", fmt.Errorf("%w: Kerberos SPNEGO for %s: %s (fix: check the ticket with klist, kinit again or use a keytab; check the service principal)",
			ErrAuthentication, spn, redactText(err.Error()))
	}
	return scratch.Header.Get("Authorization"), nil
}

// spnegoTransport adds SPNEGO to every request that carries no hadoop.auth cookie yet, and
// negotiates again when the RM rejects an expired cookie. It never modifies the caller's request.
type spnegoTransport struct {
	next   http.RoundTripper
	neg    negotiator
	logger *slog.Logger
}

// RoundTrip implements http.RoundTripper.
func (t *spnegoTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if c, err := req.Cookie(hadoopAuthCookie); err == nil && c.Value != "" {
		resp, err := t.next.RoundTrip(req)
		if err != nil || !wantsNegotiate(resp) || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		// The cookie expired; the RM asks for a new negotiation.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		t.logger.Debug("hadoop.auth cookie rejected, negotiating again", "host", req.URL.Host)
	}
	auth, err := t.neg.negotiate(req)
	if err != nil {
		return nil, err
	}
	r2 := req.Clone(req.Context())
	if req.Body != nil && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r2.Body = body
	}
	r2.Header.Set("Authorization", auth)
	t.logger.Debug("SPNEGO negotiation", "host", req.URL.Host)
	return t.next.RoundTrip(r2)
}

// wantsNegotiate reports whether resp is a 401 asking for SPNEGO.
func wantsNegotiate(resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized {
		return false
	}
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "negotiate") {
			return true
		}
	}
	return false
}

// newKerberosClient builds the gokrb5 client from the options. It does not contact the KDC: a
// keytab client logs in on its first negotiation.
func newKerberosClient(o KerberosOptions, getenv func(string) string, logger *slog.Logger) (*krb5client.Client, error) {
	cfgPath := o.Krb5Conf
	if cfgPath == "" {
		for _, p := range filepath.SplitList(getenv("KRB5_CONFIG")) {
			if _, err := os.Stat(p); err == nil {
				cfgPath = p
				break
			}
		}
	}
	if cfgPath == "" {
		cfgPath = "/etc/krb5.conf"
	}
	cfg, err := krb5config.Load(cfgPath)
	if err != nil {
		return nil, fmt.Errorf("%w: Kerberos configuration %s: %v (fix: point KRB5_CONFIG or the krb5.conf option at a valid krb5.conf)",
			ErrAuthentication, cfgPath, err)
	}
	settings := []func(*krb5client.Settings){
		krb5client.DisablePAFXFAST(o.DisablePAFXFAST),
		krb5client.Logger(log.New(redactingWriter{logger: logger, component: "gokrb5"}, "", 0)),
	}
	if o.Keytab != "" {
		kt, err := keytab.Load(o.Keytab)
		if err != nil {
			return nil, fmt.Errorf("%w: keytab %s: %v (fix: give a readable keytab, e.g. from ktutil or kadmin ktadd)", ErrAuthentication, o.Keytab, err)
		}
		user, realm, err := splitPrincipal(o.Principal, cfg.LibDefaults.DefaultRealm)
		if err != nil {
			return nil, err
		}
		return krb5client.NewWithKeytab(user, realm, kt, cfg, settings...), nil
	}
	path, err := ccachePath(o.CCache, getenv)
	if err != nil {
		return nil, err
	}
	cc, err := credentials.LoadCCache(path)
	if err != nil {
		return nil, fmt.Errorf("%w: credential cache %s: %v (fix: run kinit, or use a keytab)", ErrAuthentication, path, err)
	}
	cl, err := krb5client.NewFromCCache(cc, cfg, settings...)
	if err != nil {
		return nil, fmt.Errorf("%w: credential cache %s: %v (fix: run kinit, or use a keytab)", ErrAuthentication, path, err)
	}
	return cl, nil
}

// splitPrincipal splits "user@REALM" (or "user", with the default realm).
func splitPrincipal(p, defaultRealm string) (user, realm string, err error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", "", fmt.Errorf("%w: a keytab needs a principal (fix: give the principal, e.g. flink@EXAMPLE.COM)", ErrAuthentication)
	}
	user, realm = p, defaultRealm
	if i := strings.LastIndexByte(p, '@'); i >= 0 {
		user, realm = p[:i], p[i+1:]
	}
	if user == "" || realm == "" {
		return "", "", fmt.Errorf("%w: principal %q has no realm and krb5.conf names no default_realm (fix: write user@REALM)", ErrAuthentication, p)
	}
	return user, realm, nil
}

// ccachePath finds the credential cache: the option, $KRB5CCNAME (FILE: caches only), then
// /tmp/krb5cc_<uid> as MIT Kerberos does.
func ccachePath(explicit string, getenv func(string) string) (string, error) {
	if explicit != "" {
		return strings.TrimPrefix(explicit, "FILE:"), nil
	}
	if env := getenv("KRB5CCNAME"); env != "" {
		if i := strings.IndexByte(env, ':'); i > 0 && !strings.HasPrefix(env, "FILE:") {
			return "", fmt.Errorf("%w: KRB5CCNAME=%s is a %s cache, which cannot be read (fix: KRB5CCNAME=FILE:/tmp/krb5cc_$(id -u) kinit, or use a keytab)",
				ErrAuthentication, env, env[:i])
		}
		return strings.TrimPrefix(env, "FILE:"), nil
	}
	return filepath.Join(os.TempDir(), "krb5cc_"+strconv.Itoa(os.Getuid())), nil
}
