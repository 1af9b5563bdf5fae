package yarn

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/yarn-er/yarn-er/kerberos"

	"github.com/yarn-er/yarn-er/internal/defaults"
)

// Options configure a Client. The zero value of every field means its documented default.
type Options struct {
	// Addresses are the ResourceManager web addresses, "http://host:8088", "https://host:8090" or
	// "host:port" (scheme per HTTPS). With more than one, the client finds the active RM of an HA
	// set. Required: the caller resolves them, from its flags or from the Hadoop configuration
	// (conf.HadoopConfig.RMWebAddresses).
	Addresses []string
	// RMIDs, when set, names each of Addresses (the HA rm-ids, "rm1"), in the same order; they
	// appear in RMStatus and in logs.
	RMIDs []string
	// HTTPS makes addresses without a scheme https (yarn.http.policy=HTTPS_ONLY); default http.
	HTTPS bool

	// User is the user name sent as ?user.name= with simple authentication. Empty: $HADOOP_USER_NAME,
	// then the operating-system user. The client never falls back to an anonymous dr.who.
	User string
	// DoAs, when set, is sent as ?doAs= to act as another user, a proxy user: the RM checks the
	// login's proxy-user rights (measured without Kerberos on 3.2.2 and 3.5.0, with it on 3.5.0).
	DoAs string

	// Auth selects the authentication scheme. AuthAuto (the zero value) uses Kerberos when
	// Kerberos.Keytab, Kerberos.CCache or Kerberos.Client is set, simple otherwise (a caller that
	// reads hadoop.http.authentication.type=kerberos sets AuthKerberos).
	Auth AuthMethod
	// Kerberos configures SPNEGO when Kerberos is used.
	Kerberos KerberosOptions

	// TLS configures https connections.
	TLS TLSOptions

	// Timeout bounds each HTTP request attempt, reading the response included. Default 30s.
	Timeout time.Duration
	// Deadline, when set, bounds the client's whole use of the ResourceManager: no request of
	// this client runs past it, retries, failover waits and an attempt in flight included; a
	// request it cuts short fails with a *DeadlineError. Short commands set it (one overall
	// deadline per command, with Timeout bounding each attempt); long-running programs that
	// follow an application leave it zero, so that only Timeout bounds each request.
	Deadline time.Time
	// ProbeTimeout bounds each probe of an RM's /ws/v1/cluster/info while looking for the active
	// RM. Default 5s.
	ProbeTimeout time.Duration
	// Retry is the retry policy.
	Retry RetryPolicy

	// Logger receives debug records of requests (never credentials). Default: discard.
	Logger *slog.Logger
	// Transport, when set, replaces the client's own HTTP transport (tests inject one). The TLS
	// options then do not apply; SPNEGO still wraps it.
	Transport http.RoundTripper
	// Getenv reads environment variables ($HADOOP_USER_NAME, $KRB5CCNAME, $KRB5_CONFIG). Default
	// os.Getenv.
	Getenv func(string) string
}

// AuthMethod is an HTTP authentication scheme of the RM.
type AuthMethod string

// Authentication schemes.
const (
	// AuthAuto picks Kerberos or simple from the Kerberos options.
	AuthAuto AuthMethod = ""
	// AuthSimple is Hadoop's pseudo authentication: ?user.name=<user> on every request.
	AuthSimple AuthMethod = "simple"
	// AuthKerberos is SPNEGO with a Kerberos ticket (Authorization: Negotiate).
	AuthKerberos AuthMethod = "kerberos"
)

// KerberosOptions configure SPNEGO: the Kerberos login and the RM's service principal.
type KerberosOptions struct {
	// Options are the login (package kerberos).
	kerberos.Options
	// ServicePrincipal is the RM's HTTP service principal; "_HOST" is replaced by the host of the RM
	// being addressed and an "@REALM" suffix is dropped. Empty: "HTTP/<RM host>" (callers pass
	// yarn.resourcemanager.webapp.spnego-principal here).
	ServicePrincipal string

	// negotiator replaces gokrb5 in tests.
	negotiator negotiator
	// lookupAddr replaces the resolver that names an RM reached by IP address, in tests.
	lookupAddr func(ctx context.Context, addr string) ([]string, error)
}

// TLSOptions configure https.
type TLSOptions struct {
	// CAFile is a PEM bundle of CAs trusted in addition to the system pool.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and key, for RMs that ask for one.
	CertFile string
	KeyFile  string
	// InsecureSkipVerify turns off server certificate verification. Only for tests: anyone on the
	// network path can then impersonate the RM.
	InsecureSkipVerify bool
}

// RetryPolicy says how failed requests are retried. Only requests that cannot have taken effect
// are retried: GET and HEAD after connection errors and 5xx answers, any method after a refused
// connection or a standby's 307 (the request did not reach an active RM).
type RetryPolicy struct {
	// MaxAttempts is how many times one request is tried. Default 4; 1 turns retries off.
	MaxAttempts int
	// InitialBackoff is the first wait; it doubles up to MaxBackoff, with jitter. Defaults 200ms, 5s.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// FailoverTimeout is how long the client keeps looking for an active RM while every RM is
	// standby or says "There is no active RM right now.". Default 60s; negative: do not wait.
	FailoverTimeout time.Duration
	// OnRetry, when set, is called before each retry of a failed request (not before the waits
	// for a failover): attempt is the number of attempts made so far, wait the pause before the
	// next one, err why the last one failed. A non-nil result stops the retries: the request
	// fails with that error.
	OnRetry func(attempt int, wait time.Duration, err error) error
}

// Defaults.
const (
	defaultTimeout         = 30 * time.Second
	defaultProbeTimeout    = 5 * time.Second
	defaultMaxAttempts     = 4
	defaultInitialBackoff  = 200 * time.Millisecond
	defaultMaxBackoff      = 5 * time.Second
	defaultFailoverTimeout = 60 * time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	p.MaxAttempts = defaults.Positive(p.MaxAttempts, defaultMaxAttempts)
	p.InitialBackoff = defaults.Positive(p.InitialBackoff, defaultInitialBackoff)
	p.MaxBackoff = defaults.Positive(p.MaxBackoff, defaultMaxBackoff)
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = p.InitialBackoff
	}
	switch {
	case p.FailoverTimeout == 0:
		p.FailoverTimeout = defaultFailoverTimeout
	case p.FailoverTimeout < 0:
		p.FailoverTimeout = 0
	}
	return p
}
