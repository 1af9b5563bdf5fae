package yarn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/kerberos"

	krb5client "github.com/jcmturner/gokrb5/v8/client"
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
		if what, fix, ok := kerberos.Explain(err.Error(), client, spn); ok {
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
