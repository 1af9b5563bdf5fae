package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/yarn"
)

// rmFlags are the flags that say how to reach the ResourceManager's REST API: --rm, --user and the
// authentication, TLS and timeout flags. Every command that talks to the RM registers them with
// addRMFlags (through clusterConn: cluster, preflight) and builds its client with client, or with
// optionalClient when it can run without an RM (preflight).
type rmFlags struct {
	addrs    []string
	user     string
	doAs     string
	auth     string
	krb      yarn.KerberosOptions
	tls      yarn.TLSOptions
	timeout  time.Duration
	failover time.Duration
}

// addRMFlags registers the RM flags on fs.
func addRMFlags(cmd *cobra.Command, fs *pflag.FlagSet, f *rmFlags) {
	fs.StringSliceVar(&f.addrs, "rm", nil,
		"ResourceManager web address(es), http://host:8088 or host:port; several (comma-separated or repeated) for HA (default: from the Hadoop configuration)")
	fs.StringVar(&f.user, "user", "",
		"user for simple authentication, sent as ?user.name= (default $HADOOP_USER_NAME, then the OS user)")
	fs.StringVar(&f.doAs, "do-as", "", "act as this user (?doAs=; needs proxy-user rights on the RM)")
	fs.StringVar(&f.auth, "auth", "auto",
		"authentication: auto (Kerberos when a keytab or ccache is given or hadoop.http.authentication.type=kerberos), simple or kerberos")
	fs.StringVar(&f.krb.Principal, "principal", "", "Kerberos principal for --keytab, e.g. flink@EXAMPLE.COM")
	fs.StringVar(&f.krb.Keytab, "keytab", "", "Kerberos keytab file to log in with")
	fs.StringVar(&f.krb.CCache, "krb5-ccache", "", "Kerberos credential cache (default $KRB5CCNAME, then /tmp/krb5cc_<uid>)")
	fs.StringVar(&f.krb.Krb5Conf, "krb5-conf", "", "krb5.conf (default $KRB5_CONFIG, then /etc/krb5.conf)")
	fs.StringVar(&f.krb.ServicePrincipal, "spnego-principal", "",
		"the RM's HTTP service principal (default HTTP/<RM host>; _HOST is replaced by the RM host)")
	fs.StringVar(&f.tls.CAFile, "tls-ca", "", "PEM file of CAs to trust for https RMs, besides the system's")
	fs.StringVar(&f.tls.CertFile, "tls-cert", "", "PEM client certificate for RMs that ask for one")
	fs.StringVar(&f.tls.KeyFile, "tls-key", "", "PEM key of --tls-cert")
	fs.BoolVar(&f.tls.InsecureSkipVerify, "insecure-skip-tls-verify", false,
		"do not verify the RM's certificate (tests only: anyone on the path can pose as the RM)")
	fs.DurationVar(&f.timeout, "rm-timeout", 30*time.Second, "timeout of each request to the RM")
	fs.DurationVar(&f.failover, "rm-failover-timeout", 60*time.Second,
		"how long to wait for an active RM while all are standby (0: do not wait)")
	_ = cmd.RegisterFlagCompletionFunc("auth", fixedCompletion("auto", "simple", "kerberos"))
	for _, name := range []string{"keytab", "krb5-ccache", "krb5-conf", "tls-ca", "tls-cert", "tls-key"} {
		_ = cmd.MarkFlagFilename(name)
	}
}

// options turns the flags into client options; hc may be nil.
func (f *rmFlags) options(a *app, hc *conf.HadoopConfig) (yarn.Options, error) {
	var auth yarn.AuthMethod
	switch strings.ToLower(strings.TrimSpace(f.auth)) {
	case "", "auto":
		auth = yarn.AuthAuto
	case "simple":
		auth = yarn.AuthSimple
	case "kerberos":
		auth = yarn.AuthKerberos
	default:
		return yarn.Options{}, usageErrorf("--auth %q: want auto, simple or kerberos", f.auth)
	}
	if f.krb.Keytab != "" && f.krb.Principal == "" {
		return yarn.Options{}, usageErrorf("--keytab needs --principal (e.g. --principal flink@EXAMPLE.COM)")
	}
	if (f.tls.CertFile == "") != (f.tls.KeyFile == "") {
		return yarn.Options{}, usageErrorf("--tls-cert and --tls-key go together")
	}
	if f.timeout <= 0 {
		return yarn.Options{}, usageErrorf("--rm-timeout %v: want a positive duration, e.g. 30s", f.timeout)
	}
	failover := f.failover
	if failover <= 0 {
		failover = -1 // yarn: negative means do not wait
	}
	if f.tls.InsecureSkipVerify {
		a.logger.Warn("--insecure-skip-tls-verify: the ResourceManager's certificate is not checked")
	}
	return rmOptionsFromConf(yarn.Options{
		Addresses: f.addrs,
		User:      f.user,
		DoAs:      f.doAs,
		Auth:      auth,
		Kerberos:  f.krb,
		TLS:       f.tls,
		Timeout:   f.timeout,
		Retry:     yarn.RetryPolicy{FailoverTimeout: failover},
		Logger:    a.logger,
		Getenv:    a.getenv,
	}, hc)
}

// rmOptionsFromConf completes opts from the Hadoop configuration (nil: opts as they are): https
// per yarn.http.policy, the RM web addresses with their rm-ids when opts has none, Kerberos when
// opts.Auth is auto and hadoop.http.authentication.type is kerberos, and the SPNEGO principal
// when opts gives none. Address errors match conf.ErrNoRMAddress.
func rmOptionsFromConf(opts yarn.Options, hc *conf.HadoopConfig) (yarn.Options, error) {
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

// errNoRM is matched (errors.Is) by optionalClient's error when neither --rm nor the Hadoop
// configuration names a ResourceManager. The error also matches yarn.ErrNoAddress (nothing given)
// or conf.ErrNoRMAddress (the configuration names none) and says which flag or file would give one.
var errNoRM = errors.New("no ResourceManager known")

// noRMError is optionalClient's "no RM configured": its text says how to name one; it matches
// errNoRM and the yarn error behind it.
type noRMError struct {
	msg   string
	cause error
}

func (e *noRMError) Error() string   { return e.msg }
func (e *noRMError) Unwrap() []error { return []error{errNoRM, e.cause} }

// optionalClient builds the RM client for commands that can run without a ResourceManager
// (preflight): "no RM configured" is then an error matching errNoRM, not a usage error, and the
// caller decides. Bad flags are usage errors; a client that cannot be built (a bad TLS file, a
// failed Kerberos login) is an error. hc is the loaded Hadoop configuration, nil when none is
// configured.
func (f *rmFlags) optionalClient(a *app, hc *conf.HadoopConfig) (*yarn.Client, error) {
	opts, err := f.options(a, hc)
	if err != nil && !errors.Is(err, conf.ErrNoRMAddress) {
		return nil, err
	}
	var c *yarn.Client
	if err == nil {
		c, err = yarn.NewClient(opts)
	}
	switch {
	case errors.Is(err, yarn.ErrNoAddress) && hc == nil:
		return nil, &noRMError{cause: err,
			msg: errNoRM.Error() + ": give --rm URL, or --hadoop-conf DIR (or HADOOP_CONF_DIR) with the cluster's yarn-site.xml"}
	case errors.Is(err, yarn.ErrNoAddress), errors.Is(err, conf.ErrNoRMAddress):
		return nil, &noRMError{cause: err,
			msg: fmt.Sprintf("%s from the Hadoop configuration in %s: %v; or give --rm URL", errNoRM, hc.Dir(), err)}
	case err != nil:
		return nil, fmt.Errorf("ResourceManager client: %w", err)
	}
	return c, nil
}

// client builds the RM client for commands that need one (cluster): "no RM address" is a usage
// error that says which flag or file would give one.
func (f *rmFlags) client(a *app, hc *conf.HadoopConfig) (*yarn.Client, error) {
	c, err := f.optionalClient(a, hc)
	if errors.Is(err, errNoRM) {
		return nil, usageErrorf("%w", err)
	}
	return c, err
}
