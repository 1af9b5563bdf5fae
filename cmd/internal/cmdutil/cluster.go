package cmdutil

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/yarn"
)

// HadoopFlags is the flag that says where Hadoop's configuration is: --hadoop-conf.
type HadoopFlags struct {
	// Dir is --hadoop-conf.
	Dir string
	// WarningsInOutput is set by a command that prints the load warnings in its own output: they
	// are then not logged as well (each finding once).
	WarningsInOutput bool
}

// AddHadoopFlags registers --hadoop-conf on cmd, bound to fl.
func AddHadoopFlags(cmd *cobra.Command, fl *HadoopFlags) {
	cmd.Flags().StringVar(&fl.Dir, "hadoop-conf", "",
		"Hadoop configuration directory with yarn-site.xml, resource-types.xml, ... (default $HADOOP_CONF_DIR, then $HADOOP_HOME/etc/hadoop)")
	_ = cmd.MarkFlagDirname("hadoop-conf")
}

// LoadHadoop reads Hadoop's configuration from --hadoop-conf, else $HADOOP_CONF_DIR or
// $HADOOP_HOME/etc/hadoop. It returns nil, nil when none of these is set.
func (f *Factory) LoadHadoop(fl *HadoopFlags) (*conf.HadoopConfig, error) {
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: fl.Dir, Getenv: f.Env.Getenv, Logger: f.loadLogger(fl.WarningsInOutput)})
	if errors.Is(err, conf.ErrNotConfigured) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return hc, nil
}

// RMFlags are the flags that say how to reach the ResourceManager's REST API: --rm, --user and the
// authentication, TLS and timeout flags.
type RMFlags struct {
	// Addrs is --rm: the RM web addresses (several for HA).
	Addrs []string
	// User is --user, DoAs --do-as.
	User string
	DoAs string
	// Auth is --auth: auto, simple or kerberos.
	Auth string
	// Kerberos are --principal, --keytab, --krb5-ccache, --krb5-conf and --spnego-principal.
	Kerberos yarn.KerberosOptions
	// TLS are --tls-ca, --tls-cert, --tls-key and --insecure-skip-tls-verify.
	TLS yarn.TLSOptions
	// Timeout is --rm-timeout.
	Timeout time.Duration
	// Failover is --rm-failover-timeout.
	Failover time.Duration
}

// AddRMFlags registers the RM flags on cmd, bound to fl.
func AddRMFlags(cmd *cobra.Command, fl *RMFlags) {
	fs := cmd.Flags()
	fs.StringSliceVar(&fl.Addrs, "rm", nil,
		"ResourceManager web address(es), http://host:8088 or host:port; several (comma-separated or repeated) for HA (default: from the Hadoop configuration)")
	fs.StringVar(&fl.User, "user", "",
		"user for simple authentication, sent as ?user.name= (default $HADOOP_USER_NAME, then the OS user)")
	fs.StringVar(&fl.DoAs, "do-as", "", "act as this user, a proxy user: ?doAs= at the RM and, for submit, the user's staging directory and HDFS token (needs hadoop.proxyuser.<login>.* rights on the RM and the NameNode)")
	fs.StringVar(&fl.Auth, "auth", "auto",
		"authentication: auto (Kerberos when a keytab or ccache is given or hadoop.http.authentication.type=kerberos), simple or kerberos")
	fs.StringVar(&fl.Kerberos.Principal, "principal", "", "Kerberos principal for --keytab, e.g. flink@EXAMPLE.COM")
	fs.StringVar(&fl.Kerberos.Keytab, "keytab", "", "Kerberos keytab file to log in with")
	fs.StringVar(&fl.Kerberos.CCache, "krb5-ccache", "", "Kerberos credential cache (default $KRB5CCNAME, then /tmp/krb5cc_<uid>)")
	fs.StringVar(&fl.Kerberos.Krb5Conf, "krb5-conf", "", "krb5.conf (default $KRB5_CONFIG, then /etc/krb5.conf)")
	fs.StringVar(&fl.Kerberos.ServicePrincipal, "spnego-principal", "",
		"the RM's HTTP service principal (default HTTP/<RM host>; _HOST is replaced by the RM host)")
	fs.StringVar(&fl.TLS.CAFile, "tls-ca", "", "PEM file of CAs to trust for https RMs and WebHDFS (NameNodes, DataNodes), besides the system's")
	fs.StringVar(&fl.TLS.CertFile, "tls-cert", "", "PEM client certificate for RMs and WebHDFS servers that ask for one")
	fs.StringVar(&fl.TLS.KeyFile, "tls-key", "", "PEM key of --tls-cert")
	fs.BoolVar(&fl.TLS.InsecureSkipVerify, "insecure-skip-tls-verify", false,
		"do not verify the certificates of the RM and of WebHDFS (tests only: anyone on the path can pose as them)")
	fs.DurationVar(&fl.Timeout, "rm-timeout", 30*time.Second,
		"how long to wait for the RM: bounds the whole command, retries included (commands that follow an application: each request)")
	fs.DurationVar(&fl.Failover, "rm-failover-timeout", 60*time.Second,
		"how long to wait for an active RM while all are standby (0: do not wait)")
	_ = cmd.RegisterFlagCompletionFunc("auth", FixedCompletion("auto", "simple", "kerberos"))
	for _, name := range []string{"keytab", "krb5-ccache", "krb5-conf", "tls-ca", "tls-cert", "tls-key"} {
		_ = cmd.MarkFlagFilename(name)
	}
}

// ClientOptions turns the RM flags into client options; hc may be nil.
func (f *Factory) ClientOptions(fl *RMFlags, hc *conf.HadoopConfig) (yarn.Options, error) {
	var auth yarn.AuthMethod
	switch strings.ToLower(strings.TrimSpace(fl.Auth)) {
	case "", "auto":
		auth = yarn.AuthAuto
	case "simple":
		auth = yarn.AuthSimple
	case "kerberos":
		auth = yarn.AuthKerberos
	default:
		return yarn.Options{}, Usagef("--auth %q: want auto, simple or kerberos", fl.Auth)
	}
	if fl.Kerberos.Keytab != "" && fl.Kerberos.Principal == "" {
		return yarn.Options{}, Usagef("--keytab needs --principal (e.g. --principal flink@EXAMPLE.COM)")
	}
	if (fl.TLS.CertFile == "") != (fl.TLS.KeyFile == "") {
		return yarn.Options{}, Usagef("--tls-cert and --tls-key go together")
	}
	if fl.Timeout <= 0 {
		return yarn.Options{}, Usagef("--rm-timeout %v: want a positive duration, e.g. 30s", fl.Timeout)
	}
	failover := fl.Failover
	if failover <= 0 {
		failover = -1 // yarn: negative means do not wait
	}
	log := f.Logger()
	if fl.TLS.InsecureSkipVerify {
		log.Warn("--insecure-skip-tls-verify: the certificates of the ResourceManager and of WebHDFS (NameNodes, DataNodes) are not checked")
	}
	return RMOptionsFromConf(yarn.Options{
		Addresses: fl.Addrs,
		User:      fl.User,
		DoAs:      fl.DoAs,
		Auth:      auth,
		Kerberos:  fl.Kerberos,
		TLS:       fl.TLS,
		Timeout:   fl.Timeout,
		Retry:     yarn.RetryPolicy{FailoverTimeout: failover, OnRetry: retryReporter(log, fl.Timeout, time.Now())},
		Logger:    log,
		Getenv:    f.Env.Getenv,
	}, hc)
}

// RMOptionsFromConf completes opts from the Hadoop configuration (nil: opts as they are): https
// per yarn.http.policy, the RM web addresses with their rm-ids when opts has none, Kerberos when
// opts.Auth is auto and hadoop.http.authentication.type is kerberos, and the SPNEGO principal
// when opts gives none. Address errors match conf.ErrNoRMAddress.
func RMOptionsFromConf(opts yarn.Options, hc *conf.HadoopConfig) (yarn.Options, error) {
	if hc == nil {
		return opts, nil
	}
	opts.HTTPS = hc.YARNHTTPSOnly()
	if len(opts.Addresses) == 0 {
		addrs, err := hc.RMWebAddresses()
		if err != nil {
			return opts, err
		}
		for _, a := range addrs {
			opts.Addresses = append(opts.Addresses, a.URL())
			opts.RMIDs = append(opts.RMIDs, a.RMID)
		}
	}
	if opts.Auth == yarn.AuthAuto && hc.RMWebKerberos() {
		opts.Auth = yarn.AuthKerberos
	}
	if opts.Kerberos.ServicePrincipal == "" {
		opts.Kerberos.ServicePrincipal = hc.RMWebSPNEGOPrincipal()
	}
	return opts, nil
}

// retryReporter is the RM client's retry hook: it logs each retry as a warning (an interactive
// command is not silent while it retries) and ends the retries once the command has spent
// --rm-timeout on the RM since start, so that a hung RM costs one --rm-timeout, not one per try.
func retryReporter(log *slog.Logger, timeout time.Duration, start time.Time) func(int, time.Duration, error) error {
	return func(attempt int, wait time.Duration, err error) error {
		if elapsed := time.Since(start); elapsed+wait >= timeout {
			return &RMTimeoutError{Timeout: timeout, Err: err}
		}
		log.Warn("ResourceManager request failed, retrying", "attempt", attempt, "wait", wait.Round(time.Millisecond),
			"error", err)
		return nil
	}
}

// RMTimeoutError is a request to the ResourceManager that still failed when the command's
// --rm-timeout was spent.
type RMTimeoutError struct {
	// Timeout is --rm-timeout.
	Timeout time.Duration
	// Err is why the last attempt failed.
	Err error
}

// Error names the flag that sets the budget.
func (e *RMTimeoutError) Error() string {
	return fmt.Sprintf("%v; no answer within --rm-timeout %s, retries included (raise it with --rm-timeout)", e.Err, e.Timeout)
}

// Unwrap returns the last attempt's error.
func (e *RMTimeoutError) Unwrap() error { return e.Err }

// ErrNoRM is matched (errors.Is) by ClusterConn.OptionalRMClient's error when neither --rm nor the
// Hadoop configuration names a ResourceManager. The error also matches yarn.ErrNoAddress and says
// which flag or file would give one.
var ErrNoRM = errors.New("no ResourceManager known")

// noRMError is "no RM configured": its text says how to name one; it matches ErrNoRM and the yarn
// error behind it.
type noRMError struct {
	msg   string
	cause error
}

func (e *noRMError) Error() string   { return e.msg }
func (e *noRMError) Unwrap() []error { return []error{ErrNoRM, e.cause} }

// ClusterConn is what a command that talks to the cluster registers: the Hadoop and RM flags, and
// the Hadoop configuration and RM client built from them on first use (once per run).
type ClusterConn struct {
	// Hadoop are the Hadoop flags.
	Hadoop HadoopFlags
	// RM are the ResourceManager flags.
	RM RMFlags
	// LongRunning is set by the commands that follow an application (submit, app wait, app
	// kill, app logs -f) before their first RMClient: their requests are each bounded by
	// --rm-timeout but the command is not. Every other command's whole use of the RM,
	// retries included, is bounded by one --rm-timeout from the client's creation
	// (yarn.Options.Deadline).
	LongRunning bool

	f        *Factory
	hc       *conf.HadoopConfig
	hcErr    error
	hcLoaded bool
	client   *yarn.Client
	clErr    error
	clBuilt  bool
}

// NewClusterConn registers --hadoop-conf and the RM flags on cmd and returns the connection they
// describe.
func (f *Factory) NewClusterConn(cmd *cobra.Command) *ClusterConn {
	cc := &ClusterConn{f: f}
	AddHadoopFlags(cmd, &cc.Hadoop)
	AddRMFlags(cmd, &cc.RM)
	return cc
}

// HadoopConfig is the Hadoop configuration the flags name, read on first use; nil when none is
// configured.
func (cc *ClusterConn) HadoopConfig() (*conf.HadoopConfig, error) {
	if !cc.hcLoaded {
		cc.hc, cc.hcErr = cc.f.LoadHadoop(&cc.Hadoop)
		cc.hcLoaded = true
	}
	return cc.hc, cc.hcErr
}

// OptionalRMClient builds the RM client for commands that can run without a ResourceManager
// (preflight): "no RM configured" is then an error matching ErrNoRM, not a usage error, and the
// caller decides. Bad flags are usage errors; a client that cannot be built (a bad TLS file, a
// failed Kerberos login) is an error.
func (cc *ClusterConn) OptionalRMClient() (*yarn.Client, error) {
	if cc.clBuilt {
		return cc.client, cc.clErr
	}
	cc.client, cc.clErr = cc.buildClient()
	cc.clBuilt = true
	return cc.client, cc.clErr
}

func (cc *ClusterConn) buildClient() (*yarn.Client, error) {
	hc, err := cc.HadoopConfig()
	if err != nil {
		return nil, err
	}
	opts, err := cc.f.ClientOptions(&cc.RM, hc)
	if err != nil && !errors.Is(err, conf.ErrNoRMAddress) {
		return nil, err
	}
	var c *yarn.Client
	if err == nil {
		if !cc.LongRunning {
			opts.Deadline = time.Now().Add(opts.Timeout)
		}
		c, err = yarn.NewClient(opts)
	}
	switch {
	case errors.Is(err, yarn.ErrNoAddress) && hc == nil:
		return nil, &noRMError{cause: err,
			msg: ErrNoRM.Error() + ": give --rm URL, or --hadoop-conf DIR (or HADOOP_CONF_DIR) with the cluster's yarn-site.xml"}
	case errors.Is(err, yarn.ErrNoAddress), errors.Is(err, conf.ErrNoRMAddress):
		return nil, &noRMError{cause: err,
			msg: fmt.Sprintf("%s from the Hadoop configuration in %s: %v; or give --rm URL", ErrNoRM, hc.Dir(), err)}
	case err != nil:
		return nil, fmt.Errorf("ResourceManager client: %w", err)
	}
	return c, nil
}

// RMClient builds the RM client for commands that need one (cluster): "no RM address" is a usage
// error that says which flag or file would give one.
func (cc *ClusterConn) RMClient() (*yarn.Client, error) {
	c, err := cc.OptionalRMClient()
	if errors.Is(err, ErrNoRM) {
		return nil, Usagef("%w", err)
	}
	return c, err
}
