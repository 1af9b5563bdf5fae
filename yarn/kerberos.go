package yarn

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
	// lookupAddr names an IP address: _HOST of an RM reached by IP address is its name, as
	// Kerberos clients canonicalise (MIT's rdns); nil means net.DefaultResolver.LookupAddr.
	lookupAddr func(ctx context.Context, addr string) ([]string, error)
}

// hostName returns the name of host for the service principal: host itself, or for an IP
// address its first name (host when it has none).
func (k *krb5Negotiator) hostName(ctx context.Context, host string) string {
	if net.ParseIP(host) == nil {
		return host
	}
	lookup := k.lookupAddr
	if lookup == nil {
		lookup = net.DefaultResolver.LookupAddr
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names, err := lookup(lctx, host)
	if err != nil || len(names) == 0 {
		return host
	}
	return strings.TrimSuffix(names[0], ".")
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
	spn := servicePrincipal(k.spn, k.hostName(req.Context(), req.URL.Hostname()))
	if err := spnego.SetSPNEGOHeader(k.cl, scratch, spn); err != nil {
		client := ""
		if k.cl.Credentials != nil {
			client = k.cl.Credentials.UserName() + "@" + k.cl.Credentials.Domain()
		}
		if what, fix, ok := explainKerberos(err.Error(), client, spn); ok {
			return "", fmt.Errorf("%w: Kerberos SPNEGO for %s: %s (fix: %s)", ErrAuthentication, spn, what, fix)
		}
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

// NewKerberosClient builds a gokrb5 client from the options as the REST client does (keytab or
// credential cache, krb5.conf from the options, $KRB5_CONFIG or /etc/krb5.conf; files read within
// size limits, parser panics recovered, secrets kept out of errors and logs), for the Hadoop
// services a caller reaches besides the ResourceManager's REST API. opts.Client, when set, is
// returned as it is. getenv defaults to os.Getenv, logger to a discarding one.
func NewKerberosClient(opts KerberosOptions, getenv func(string) string, logger *slog.Logger) (*krb5client.Client, error) {
	if opts.Client != nil {
		return opts.Client, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return newKerberosClient(opts, getenv, logger)
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
	cfg, err := loadKrb5Conf(cfgPath)
	if err != nil {
		return nil, err
	}
	settings := []func(*krb5client.Settings){
		krb5client.DisablePAFXFAST(o.DisablePAFXFAST),
		krb5client.Logger(log.New(redactingWriter{logger: logger, component: "gokrb5"}, "", 0)),
	}
	if o.Keytab != "" {
		kt, err := loadKeytab(o.Keytab)
		if err != nil {
			return nil, err
		}
		user, realm, err := splitPrincipal(o.Principal, cfg.LibDefaults.DefaultRealm)
		if err != nil {
			return nil, err
		}
		if err := keytabHolds(kt, o.Keytab, user, realm); err != nil {
			return nil, err
		}
		return krb5client.NewWithKeytab(user, realm, kt, cfg, settings...), nil
	}
	path, err := ccachePath(o.CCache, getenv)
	if err != nil {
		return nil, err
	}
	cc, err := loadCCache(path)
	if err != nil {
		return nil, err
	}
	cl, err := krb5client.NewFromCCache(cc, cfg, settings...)
	if err != nil {
		return nil, fmt.Errorf("%w: credential cache %s: %s (fix: run kinit, or use a keytab)", ErrAuthentication, path, redactText(err.Error()))
	}
	return cl, nil
}

// Limits on the Kerberos files read: a keytab holds a few keys, a credential cache a few tickets.
const (
	maxKeytabBytes   = 1 << 20
	maxCCacheBytes   = 4 << 20
	maxKrb5ConfBytes = 1 << 20
)

// parseSafely runs a parser of a user's file from a third-party library, turning a panic into an
// error: gokrb5's credential cache reader slices past the end of damaged files.
func parseSafely(parse func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the parser failed on it (%v)", r)
		}
	}()
	return parse()
}

// loadKeytab reads and parses a keytab, within a size limit and without a panic. gokrb5's errors
// quote the bytes they failed on (principal and keys), so they are never repeated: the error only
// says that the file is damaged.
func loadKeytab(path string) (*keytab.Keytab, error) {
	data, err := readUserFile(path, maxKeytabBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: keytab: %w (fix: give a readable keytab, e.g. from ktutil or kadmin ktadd)", ErrAuthentication, err)
	}
	kt := keytab.New()
	if err := parseSafely(func() error { return kt.Unmarshal(data) }); err != nil {
		return nil, fmt.Errorf("%w: keytab %s (%d bytes) is damaged or not a keytab (fix: export it again with ktutil or kadmin ktadd; check it with klist -k %s)",
			ErrAuthentication, path, len(data), path)
	}
	return kt, nil
}

// loadCCache reads and parses a credential cache, within a size limit and without a panic.
func loadCCache(path string) (*credentials.CCache, error) {
	data, err := readUserFile(path, maxCCacheBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: credential cache: %w (fix: run kinit, or use a keytab)", ErrAuthentication, err)
	}
	cc := new(credentials.CCache)
	if err := parseSafely(func() error { return cc.Unmarshal(data) }); err != nil {
		return nil, fmt.Errorf("%w: credential cache %s (%d bytes) is damaged or not a credential cache (fix: kdestroy and kinit again, or use a keytab)",
			ErrAuthentication, path, len(data))
	}
	return cc, nil
}

// loadKrb5Conf reads and parses krb5.conf, within a size limit and without a panic.
func loadKrb5Conf(path string) (*krb5config.Config, error) {
	const fix = "point KRB5_CONFIG or the krb5.conf option at a valid krb5.conf"
	data, err := readUserFile(path, maxKrb5ConfBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: Kerberos configuration: %w (fix: %s)", ErrAuthentication, err, fix)
	}
	var cfg *krb5config.Config
	if err := parseSafely(func() error {
		var perr error
		cfg, perr = krb5config.NewFromString(string(data))
		return perr
	}); err != nil {
		return nil, fmt.Errorf("%w: Kerberos configuration %s: %s (fix: %s)", ErrAuthentication, path, redactText(err.Error()), fix)
	}
	return cfg, nil
}

// keytabHolds checks that the keytab has a key of user@realm, naming the principals it has when
// not (principal names are not secret; the keys are never shown).
func keytabHolds(kt *keytab.Keytab, path, user, realm string) error {
	var have []string
	seen := map[string]bool{}
	for _, e := range kt.Entries {
		name := strings.Join(e.Principal.Components, "/")
		if name == user && e.Principal.Realm == realm {
			return nil
		}
		if p := name + "@" + e.Principal.Realm; !seen[p] && len(have) < 8 {
			seen[p] = true
			have = append(have, p)
		}
	}
	held := "it holds no key at all"
	if len(have) > 0 {
		held = "only of " + strings.Join(have, ", ")
	}
	return fmt.Errorf("%w: the keytab %s holds no key of %s@%s, %s (fix: give the keytab of %s@%s, or the principal of this keytab with --principal or YARN_ER_PRINCIPAL)",
		ErrAuthentication, path, user, realm, redactText(held), user, realm)
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

// SPNEGOTransport returns a RoundTripper that authenticates every request to next with Kerberos
// SPNEGO as the REST client does (the service principal spn, "" meaning HTTP/<host>, _HOST
// replaced by the request's host, an IP address named first; the hadoop.auth cookie reused while
// valid, so give the http.Client a cookie jar), for the Hadoop web services other than the
// ResourceManager's (WebHDFS). logger may be nil.
func SPNEGOTransport(next http.RoundTripper, cl *krb5client.Client, spn string, logger *slog.Logger) http.RoundTripper {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &spnegoTransport{next: next, neg: &krb5Negotiator{cl: cl, spn: strings.TrimSpace(spn)}, logger: logger}
}
