package yarn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/yarn-er/yarn-er/kerberos"

	krb5client "github.com/jcmturner/gokrb5/v8/client"

	"github.com/yarn-er/yarn-er/internal/ctxsleep"
	"github.com/yarn-er/yarn-er/records"
)

// Client talks to the ResourceManager REST API. It is safe for concurrent use.
type Client struct {
	addrs        []rmAddress
	sender       *httpSender
	auth         AuthMethod
	user         string
	doAs         string
	timeout      time.Duration
	deadline     time.Time
	probeTimeout time.Duration
	retry        RetryPolicy
	logger       *slog.Logger
	krb          *krb5client.Client // the SPNEGO login, nil without Kerberos
	tls          *tls.Config        // Options.TLS made into a configuration

	mu     sync.Mutex
	active *rmAddress // the RM requests go to; nil until found
	hint   *url.URL   // where the last standby redirected to
}

// NewClient returns a client for the ResourceManager(s) named by opts. It does no network I/O:
// the active RM is found on the first request.
func NewClient(opts Options) (*Client, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "yarn")
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	addrs, err := parseAddresses(opts.Addresses, opts.RMIDs, opts.HTTPS)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: give one (--rm) or a Hadoop configuration directory (HADOOP_CONF_DIR)", ErrNoAddress)
	}
	auth, err := resolveAuth(opts)
	if err != nil {
		return nil, err
	}
	c := &Client{
		addrs:        addrs,
		auth:         auth,
		doAs:         strings.TrimSpace(opts.DoAs),
		timeout:      opts.Timeout,
		deadline:     opts.Deadline,
		probeTimeout: opts.ProbeTimeout,
		retry:        opts.Retry.withDefaults(),
		logger:       logger,
	}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	if c.probeTimeout <= 0 {
		c.probeTimeout = defaultProbeTimeout
	}
	if c.tls, err = tlsConfig(opts.TLS); err != nil {
		return nil, err
	}
	rt := opts.Transport
	if rt == nil {
		rt = newBaseTransport(c.tls)
	}
	switch auth {
	case AuthSimple:
		user, from, err := resolveUser(opts.User, getenv)
		if err != nil {
			return nil, err
		}
		if user == staticUser {
			logger.Warn("user is Hadoop's anonymous static user; secure clusters refuse writes by it", "user", user)
		}
		logger.Debug("simple authentication", "user", user, "from", from)
		c.user = user
	case AuthKerberos:
		neg := opts.Kerberos.negotiator
		if neg == nil {
			cl := opts.Kerberos.Client
			if cl == nil {
				if cl, err = kerberos.Login(opts.Kerberos.Options, getenv, logger); err != nil {
					return nil, err
				}
			}
			neg = &krb5Negotiator{cl: cl, spn: strings.TrimSpace(opts.Kerberos.ServicePrincipal), lookupAddr: opts.Kerberos.lookupAddr}
			c.krb = cl
		}
		rt = &spnegoTransport{next: rt, neg: neg, logger: logger}
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c.sender = newHTTPSender(rt, jar, logger)
	if len(addrs) == 1 {
		a := addrs[0]
		c.active = &a
	}
	return c, nil
}

// TLSConfig returns a copy of the TLS configuration made from Options.TLS (the CAs of --tls-ca
// besides the system's, the client certificate, InsecureSkipVerify), for the cluster's other
// https endpoints: WebHDFS under dfs.http.policy=HTTPS_ONLY trusts what the ResourceManager's
// client trusts.
func (c *Client) TLSConfig() *tls.Config {
	return c.tls.Clone()
}

// Addresses returns the configured ResourceManager base URLs, in order.
func (c *Client) Addresses() []string {
	out := make([]string, len(c.addrs))
	for i, a := range c.addrs {
		out[i] = a.base.String()
	}
	return out
}

// User returns the user sent with simple authentication, "" with Kerberos.
func (c *Client) User() string { return c.user }

// DoAs returns the user the client acts as (Options.DoAs, sent as ?doAs=), "" when none.
func (c *Client) DoAs() string { return c.doAs }

// KerberosClient returns the gokrb5 client SPNEGO uses (nil without Kerberos), so that the other
// Hadoop services of the same submission (HDFS over IPC) use the same login.
func (c *Client) KerberosClient() *krb5client.Client { return c.krb }

// Auth returns the authentication scheme in use.
func (c *Client) Auth() AuthMethod { return c.auth }

// ActiveRM returns the base URL of the active ResourceManager: it finds the active RM when not yet
// known and asks it for /ws/v1/cluster/info.
func (c *Client) ActiveRM(ctx context.Context) (string, error) {
	var base string
	err := c.do(ctx, call{method: http.MethodGet, path: pathInfo, want: []int{http.StatusOK}},
		func(a rmAddress, r *rawResponse) error {
			base = a.base.String()
			return nil
		})
	return base, err
}

// call is one REST request.
type call struct {
	method string
	path   string // escaped path, e.g. /ws/v1/cluster/apps/application_1_0001
	query  url.Values
	body   []byte
	want   []int // success statuses; default 200
	accept string
	// resendable marks a POST or PUT that may be sent again after an answer was lost, because the
	// RM takes a repeat as the same request (a submission carries its application id).
	resendable bool
}

// getDecoded GETs path (with query) from the active RM and decodes the answer with decode.
func getDecoded[T any](ctx context.Context, c *Client, path string, query url.Values, decode func(io.Reader) (T, error)) (T, error) {
	var v T
	err := c.do(ctx, call{method: http.MethodGet, path: path, query: query}, func(_ rmAddress, r *rawResponse) error {
		var err error
		v, err = decode(r.Body)
		return err
	})
	return v, err
}

func (cl call) idempotent() bool {
	return cl.method == http.MethodGet || cl.method == http.MethodHead || cl.resendable
}

func (cl call) success(status int) bool {
	if len(cl.want) == 0 {
		return status == http.StatusOK
	}
	for _, w := range cl.want {
		if w == status {
			return true
		}
	}
	return false
}

// outcome classifies one attempt.
type outcome int

const (
	outcomeDone      outcome = iota // finished, successfully or with a final error
	outcomeStandby                  // a standby redirected: find the active RM and send again
	outcomeNoActive                 // no active RM right now: wait, then look again
	outcomeNotSent                  // the connection failed before the request was sent
	outcomeRetryable                // failed in a way worth retrying if the request is idempotent
)

// do runs cl against the active RM, finding it, following failovers and retrying as the policy
// allows. read receives a successful response; it must read what it needs from the body.
func (c *Client) do(ctx context.Context, cl call, read func(rmAddress, *rawResponse) error) error {
	if c.deadline.IsZero() {
		return c.doRetrying(ctx, cl, read)
	}
	dctx, cancel := context.WithDeadline(ctx, c.deadline)
	defer cancel()
	err := c.doRetrying(dctx, cl, read)
	if err != nil && ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
		return &DeadlineError{Deadline: c.deadline, Err: err}
	}
	return err
}

// doRetrying is do without the overall deadline.
func (c *Client) doRetrying(ctx context.Context, cl call, read func(rmAddress, *rawResponse) error) error {
	var (
		attempts      int // attempts that count against MaxAttempts
		redirects     int
		failoverStart time.Time
		failoverWaits int
	)
	waitForFailover := func(cause error) error {
		if failoverStart.IsZero() {
			failoverStart = time.Now()
		}
		elapsed := time.Since(failoverStart)
		if elapsed >= c.retry.FailoverTimeout {
			return fmt.Errorf("%w within %s: %w", ErrNoActiveRM, c.retry.FailoverTimeout.Round(time.Millisecond), cause)
		}
		failoverWaits++
		d := min(c.backoff(failoverWaits), c.retry.FailoverTimeout-elapsed)
		c.logger.Debug("no active ResourceManager, waiting", "wait", d, "cause", cause)
		return ctxsleep.Sleep(ctx, d)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		addr, err := c.activeRM(ctx)
		if err != nil {
			switch {
			case errors.Is(err, ErrNoActiveRM):
				if werr := waitForFailover(err); werr != nil {
					return werr
				}
				continue
			case errors.Is(err, ErrUnreachable) && attempts+1 < c.retry.MaxAttempts:
				attempts++
				if err := c.retryAfter(ctx, attempts, c.backoff(attempts), err); err != nil {
					return err
				}
				continue
			}
			return err
		}
		out, err := c.attempt(ctx, addr, cl, read)
		switch out {
		case outcomeDone:
			return err
		case outcomeStandby:
			c.invalidate(addr)
			redirects++
			if redirects <= len(c.addrs)+1 {
				continue
			}
			// Bounced between RMs without reaching an active one: treat as a failover in progress.
			if werr := waitForFailover(err); werr != nil {
				return werr
			}
			redirects = 0
		case outcomeNoActive:
			c.invalidate(addr)
			if werr := waitForFailover(err); werr != nil {
				return werr
			}
		case outcomeNotSent:
			c.invalidate(addr)
			attempts++
			if attempts >= c.retry.MaxAttempts {
				return err
			}
			var wait time.Duration
			if len(c.addrs) == 1 {
				wait = c.backoff(attempts)
			}
			if serr := c.retryAfter(ctx, attempts, wait, err); serr != nil {
				return serr
			}
		case outcomeRetryable:
			attempts++
			if !cl.idempotent() || attempts >= c.retry.MaxAttempts {
				return err
			}
			if serr := c.retryAfter(ctx, attempts, c.backoff(attempts), err); serr != nil {
				return serr
			}
		}
	}
}

// retryAfter tells the OnRetry hook about the retry, then waits for it; a hook's error or the
// context's ends the retries.
func (c *Client) retryAfter(ctx context.Context, attempts int, wait time.Duration, cause error) error {
	if hook := c.retry.OnRetry; hook != nil {
		if err := hook(attempts, wait, cause); err != nil {
			return err
		}
	}
	return ctxsleep.Sleep(ctx, wait)
}

// attempt sends cl once to addr.
func (c *Client) attempt(ctx context.Context, addr rmAddress, cl call, read func(rmAddress, *rawResponse) error) (outcome, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.requestURL(addr.base, cl.path, cl.query)
	header := http.Header{}
	accept := cl.accept
	if accept == "" {
		accept = "application/json"
	}
	header.Set("Accept", accept)
	start := time.Now()
	resp, err := c.sender.send(actx, cl.method, u, header, cl.body)
	if err != nil {
		c.logger.Debug("request failed", "method", cl.method, "url", redactURL(u), "error", redactText(err.Error()), "elapsed", time.Since(start))
		return c.classifyTransportError(ctx, actx, cl, u, err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
	}()
	c.logger.Debug("request", "method", cl.method, "url", redactURL(u), "status", resp.StatusCode, "elapsed", time.Since(start))
	switch {
	case cl.success(resp.StatusCode):
		if err := read(addr, resp); err != nil {
			if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
				return outcomeDone, &RequestError{Method: cl.method, URL: redactURL(u), Err: &timeoutError{err: err}}
			}
			return outcomeDone, err
		}
		return outcomeDone, nil
	case isRedirect(resp.StatusCode):
		return c.standby(addr, cl, u, resp)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	rerr := DecodeRemoteError(resp.StatusCode, resp.Header.Get("Content-Type"), body)
	rerr.Method, rerr.URL = cl.method, redactURL(u)
	if resp.StatusCode >= 500 {
		return outcomeRetryable, rerr
	}
	return outcomeDone, rerr
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// standby interprets a redirect from an RM: a standby pointing at the active RM (Location), or a
// standby that knows no active RM (no Location; "There is no active RM right now.", a Refresh
// header). Hadoop's standby never acts on a redirected request, so re-sending is safe.
func (c *Client) standby(addr rmAddress, cl call, u *url.URL, resp *rawResponse) (outcome, error) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg := bodyText(resp.Header.Get("Content-Type"), body)
	loc := resp.Header.Get("Location")
	if loc != "" {
		target, err := u.Parse(loc)
		if err == nil && (target.Scheme == "http" || target.Scheme == "https") && target.Host != "" {
			c.mu.Lock()
			c.hint = &url.URL{Scheme: target.Scheme, Host: target.Host}
			c.mu.Unlock()
			c.logger.Debug("standby ResourceManager redirected", "rm", addr.String(), "to", c.hint.String())
			return outcomeStandby, fmt.Errorf("%s is standby (%s)", addr, msg)
		}
	}
	detail := msg
	if r := resp.Header.Get("Refresh"); r != "" {
		detail += " (Refresh: " + redactText(r) + ")"
	}
	if detail == "" {
		detail = fmt.Sprintf("HTTP %d without a Location", resp.StatusCode)
	}
	return outcomeNoActive, fmt.Errorf("%s %s: %s", cl.method, redactURL(u), detail)
}

// classifyTransportError sorts a failed send into retryable or final.
func (c *Client) classifyTransportError(ctx, actx context.Context, cl call, u *url.URL, err error) (outcome, error) {
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.Err != nil {
		err = uerr.Err // RequestError names the method and URL itself
	}
	rerr := &RequestError{Method: cl.method, URL: redactURL(u), Err: err}
	switch {
	case ctx.Err() != nil:
		return outcomeDone, ctx.Err()
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		rerr.Err = &timeoutError{err: err}
		return outcomeRetryable, rerr
	case errors.Is(err, ErrAuthentication):
		return outcomeDone, err
	case tlsVerifyError(err) != "":
		// The server's certificate is not trusted: retrying cannot help.
		return outcomeDone, &RequestError{Method: cl.method, URL: redactURL(u),
			Err: fmt.Errorf("%w: %w (fix: %s)", ErrAuthentication, err, tlsVerifyError(err))}
	case notSent(err):
		rerr.Err = fmt.Errorf("%w: %w", ErrUnreachable, err)
		return outcomeNotSent, rerr
	}
	return outcomeRetryable, rerr
}

// tlsVerifyError returns how to fix a failed verification of the server's certificate, or "" when
// err is no such failure.
func tlsVerifyError(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		return "trust the CA that signed the ResourceManager's certificate: --tls-ca FILE (PEM) or YARN_ER_TLS_CA; the cluster's administrators have it (Hadoop's ssl-client.xml trust store holds it)"
	case errors.As(err, &host):
		return "reach the ResourceManager by a name its certificate holds (yarn.resourcemanager.webapp.https.address, or --rm), or have the certificate reissued with this name"
	case errors.As(err, &invalid):
		return "the certificate is expired, not yet valid or not for a server: have it reissued, and check this host's clock"
	case errors.As(err, &verify):
		return "check the ResourceManager's certificate and the CA given with --tls-ca or YARN_ER_TLS_CA"
	}
	return ""
}

// notSent reports whether err proves the request never reached the server (the connection
// could not be made), so even a POST can be sent again.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

// requestURL builds base + path with the call's query and the authentication parameters.
func (c *Client) requestURL(base *url.URL, path string, query url.Values) *url.URL {
	q := url.Values{}
	for k, vs := range query {
		q[k] = vs
	}
	if c.auth == AuthSimple && c.user != "" {
		q.Set("user.name", c.user)
	}
	if c.doAs != "" {
		q.Set("doAs", c.doAs)
	}
	u := *base
	u.Path = ""
	u.RawPath = ""
	if p, err := url.PathUnescape(path); err == nil {
		u.Path = p
		if p != path {
			u.RawPath = path
		}
	} else {
		u.Path = path
	}
	u.RawQuery = q.Encode()
	return &u
}

// activeRM returns the RM requests go to, finding it when unknown.
func (c *Client) activeRM(ctx context.Context) (rmAddress, error) {
	c.mu.Lock()
	if c.active != nil {
		a := *c.active
		c.mu.Unlock()
		return a, nil
	}
	cands := c.candidatesLocked()
	c.mu.Unlock()
	if len(cands) == 1 {
		c.setActive(cands[0])
		return cands[0], nil
	}
	statuses := c.probeAll(ctx, cands)
	if err := ctx.Err(); err != nil {
		return rmAddress{}, err
	}
	var (
		details     []string
		answered    bool
		authErr     error
		unreachable []error
	)
	for _, s := range statuses {
		switch {
		case s.Err == nil && isActive(s.HAState):
			c.setActive(s.addr)
			c.logger.Debug("active ResourceManager", "rm", s.addr.String())
			return s.addr, nil
		case s.Err == nil:
			answered = true
			details = append(details, fmt.Sprintf("%s is %s", s.addr, s.HAState))
		case IsAuthError(s.Err):
			if authErr == nil {
				authErr = s.Err
			}
		case errors.Is(s.Err, ErrNoActiveRM):
			answered = true
			details = append(details, fmt.Sprintf("%s: %v", s.addr, s.Err))
		default:
			var re *records.RemoteError
			if errors.As(s.Err, &re) {
				answered = true
			} else {
				unreachable = append(unreachable, s.Err)
			}
			details = append(details, fmt.Sprintf("%s: %v", s.addr, s.Err))
		}
	}
	switch {
	case authErr != nil:
		return rmAddress{}, authErr
	case answered:
		return rmAddress{}, fmt.Errorf("%w: %s", ErrNoActiveRM, strings.Join(details, "; "))
	}
	return rmAddress{}, fmt.Errorf("%w: %w", ErrUnreachable, errors.Join(unreachable...))
}

func isActive(haState string) bool {
	// A non-HA RM reports ACTIVE too; an RM too old to report haState is taken as active.
	return haState == "" || strings.EqualFold(haState, "ACTIVE")
}

// candidatesLocked lists the RMs to probe: the last standby's redirect target first, then the
// configured ones. c.mu must be held.
func (c *Client) candidatesLocked() []rmAddress {
	cands := make([]rmAddress, 0, len(c.addrs)+1)
	if c.hint != nil {
		var found *rmAddress
		for i := range c.addrs {
			if c.addrs[i].base.String() == c.hint.String() {
				found = &c.addrs[i]
			}
		}
		if found != nil {
			cands = append(cands, *found)
		} else {
			cands = append(cands, rmAddress{base: c.hint})
		}
	}
	for _, a := range c.addrs {
		if c.hint == nil || a.base.String() != c.hint.String() {
			cands = append(cands, a)
		}
	}
	return cands
}

func (c *Client) setActive(a rmAddress) {
	c.mu.Lock()
	c.active = &a
	c.hint = nil
	c.mu.Unlock()
}

// invalidate forgets addr as the active RM.
func (c *Client) invalidate(addr rmAddress) {
	c.mu.Lock()
	if c.active != nil && c.active.base.String() == addr.base.String() {
		c.active = nil
	}
	c.mu.Unlock()
}

// RMStatus is what one ResourceManager says about itself.
type RMStatus struct {
	// ID is the HA rm-id ("rm1") when Options.RMIDs names the address.
	ID string
	// Address is the RM's base URL.
	Address string
	// HAState is ACTIVE, STANDBY, INITIALIZING or STOPPED (empty when Err is set).
	HAState string
	// Info is the RM's cluster info (nil when Err is set).
	Info *ClusterInfo
	// Err is why the RM could not be asked.
	Err error

	addr rmAddress
}

// RMs asks every configured ResourceManager for its state, in configuration order. It does not
// fail as a whole: each RMStatus carries its own error.
func (c *Client) RMs(ctx context.Context) []RMStatus {
	return c.probeAll(ctx, append([]rmAddress(nil), c.addrs...))
}

// probeAll asks each RM for /ws/v1/cluster/info, concurrently.
func (c *Client) probeAll(ctx context.Context, addrs []rmAddress) []RMStatus {
	out := make([]RMStatus, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() {
			out[i] = c.probe(ctx, a)
		})
	}
	wg.Wait()
	return out
}

// probe asks one RM for its cluster info (a standby answers this itself).
func (c *Client) probe(ctx context.Context, a rmAddress) RMStatus {
	st := RMStatus{ID: a.id, Address: a.base.String(), addr: a}
	pctx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	cl := call{method: http.MethodGet, path: pathInfo}
	var info *ClusterInfo
	out, err := c.attempt(pctx, a, cl, func(_ rmAddress, r *rawResponse) error {
		var derr error
		info, derr = decodeClusterInfo(r.Body)
		return derr
	})
	switch {
	case err == nil && out == outcomeDone:
		st.Info = info
		st.HAState = info.HAState
	case out == outcomeStandby || out == outcomeNoActive:
		st.Err = fmt.Errorf("%w: %w", ErrNoActiveRM, err)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		st.Err = &RequestError{Method: http.MethodGet, URL: redactURL(c.requestURL(a.base, pathInfo, nil)),
			Err: &timeoutError{err: err}}
	default:
		st.Err = err
	}
	return st
}

// backoff returns the wait before retry n (1-based): exponential from InitialBackoff up to
// MaxBackoff, with jitter in [d/2, d].
func (c *Client) backoff(n int) time.Duration {
	d := c.retry.InitialBackoff
	for i := 1; i < n && d < c.retry.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.retry.MaxBackoff)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half+1)
}
