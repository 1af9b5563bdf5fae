package submit

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
)

// KeyRMPrincipal is the ResourceManager's Kerberos principal, e.g. rm/_HOST@EXAMPLE.COM: the
// renewer of the HDFS delegation token a submission carries.
const KeyRMPrincipal = "yarn.resourcemanager.principal"

// kerberized reports whether the Hadoop configuration asks for Kerberos.
func (c *Client) kerberized() bool {
	return c.opts.Hadoop != nil && strings.EqualFold(strings.TrimSpace(c.opts.Hadoop.Get(stage.KeyAuthentication)), "kerberos")
}

// tokenRenewer returns the renewer of the HDFS delegation token the submission carries: on a
// Kerberos cluster yarn.resourcemanager.principal with _HOST replaced by the RM's host (first
// rm-id under HA), as Hadoop's YarnClientUtils.getRmPrincipal does; "" on a simple cluster
// (no token). It also checks that there is a Kerberos login.
func (c *Client) tokenRenewer() (string, error) {
	if !c.kerberized() {
		return "", nil
	}
	if c.stageOptions(); c.loginErr != nil {
		return "", c.loginErr
	}
	if k := c.opts.Stage.Kerberos; k == nil || k.Credentials == nil {
		return "", &stage.Error{Op: "connect", Err: fmt.Errorf("%w: %s is kerberos, and there is no Kerberos login", stage.ErrUnsupportedAuth, stage.KeyAuthentication),
			Fix: "log in with Kerberos: kinit, or --keytab with --principal, and --auth kerberos"}
	}
	p, ok := c.opts.Hadoop.Lookup(KeyRMPrincipal)
	principal := strings.TrimSpace(p.Value)
	if !ok || principal == "" {
		return "", fmt.Errorf("%s is not set: the HDFS delegation token of a Kerberos submission needs the ResourceManager's principal as its renewer (fix: set %s in yarn-site.xml, e.g. rm/_HOST@EXAMPLE.COM)",
			KeyRMPrincipal, KeyRMPrincipal)
	}
	if !strings.Contains(principal, "_HOST") {
		return principal, nil
	}
	addrs, err := c.opts.Hadoop.RMSchedulerAddresses()
	if err == nil && len(addrs) == 0 {
		err = errors.New("no ResourceManager address")
	}
	if err != nil {
		return "", fmt.Errorf("%s = %s: the RM host for _HOST: %w", KeyRMPrincipal, principal, err)
	}
	return strings.ReplaceAll(principal, "_HOST", strings.ToLower(addrs[0].Host)), nil
}

// stageOptions returns the HDFS client's options with the Kerberos login decided: the one place
// that chooses HDFS's login. On a Kerberized HDFS it is Stage.Kerberos when the caller set one,
// else the REST client's login, else a login of its own from Options.Login; a failed login is
// kept in loginErr (tokenRenewer returns it, before a submission uses an application id) and
// the HDFS client then reports that it has none. A simple HDFS needs no login.
func (c *Client) stageOptions() stage.Options {
	c.loginOnce.Do(func() {
		if c.opts.Stage.Kerberos != nil || !c.kerberized() {
			return
		}
		krb := c.opts.YARN.KerberosClient()
		if krb == nil {
			var err error
			if krb, err = kerberos.Login(c.opts.Login, c.opts.Getenv, c.opts.Logger); err != nil {
				c.loginErr = err
				c.log.Debug("no Kerberos login for HDFS", "err", err)
				return
			}
		}
		c.opts.Stage.Kerberos = krb
	})
	if krb := c.opts.Stage.Kerberos; krb != nil && c.opts.Stage.SPNEGO == nil && c.kerberized() {
		// WebHDFS, where a proxy user stages: the same login's SPNEGO.
		c.opts.Stage.SPNEGO = func(next http.RoundTripper) http.RoundTripper { return yarn.SPNEGOTransport(next, krb, "", c.log) }
	}
	return c.opts.Stage
}

// Names of the files --ship-keytab stages for the ApplicationMaster's container.
const (
	// KeytabFile is the shipped keytab's name.
	KeytabFile = "yarn-er.keytab"
	// Krb5ConfFile is the shipped krb5.conf's name.
	Krb5ConfFile = "yarn-er-krb5.conf"
)

// KeyTokenRenewInterval is the NameNode's renewal interval of delegation tokens, in ms
// (Hadoop's default: a day).
const KeyTokenRenewInterval = "dfs.namenode.delegation.token.renew-interval"

// shipment is what --ship-keytab ships: the login's keytab, its krb5.conf, and what the AM needs
// to log in and reach the NameNode.
type shipment struct {
	keytab, krb5conf string
	tr               jobspec.TokenRefresh
}

// items are the staged files (none without a shipment).
func (s *shipment) items() []stage.Item {
	if s == nil {
		return nil
	}
	out := []stage.Item{{Local: s.keytab, Name: KeytabFile, Type: records.LocalFile}}
	if s.krb5conf != "" {
		out = append(out, stage.Item{Local: s.krb5conf, Name: Krb5ConfFile, Type: records.LocalFile})
	}
	return out
}

// refresh is the spec's token refresh (nil without a shipment).
func (s *shipment) refresh() *jobspec.TokenRefresh {
	if s == nil {
		return nil
	}
	r := s.tr
	return &r
}

// keytabToShip checks a --ship-keytab request against the login and the Hadoop configuration
// and says what to ship; nil without --ship-keytab.
func (c *Client) keytabToShip(req Request) (*shipment, error) {
	if !req.ShipKeytab {
		return nil, nil
	}
	const flag = "--ship-keytab"
	if !c.kerberized() {
		return nil, badRequest(flag, "%s is not kerberos: HDFS tokens and keytabs are for Kerberized clusters", stage.KeyAuthentication)
	}
	l := c.opts.Login
	if doAs := c.opts.Stage.DoAs; doAs != "" && doAs != c.loginUser() {
		return nil, badRequest(flag, "not with --do-as %s: the shipped keytab is the login's (%s), and the tokens the ApplicationMaster would fetch with it %s's, not %s's; submit without --ship-keytab (the job then has %s's delegation token, renewed by the ResourceManager up to its maximum lifetime), or log in as %s to ship that user's keytab",
			doAs, c.loginUser(), c.loginUser(), doAs, doAs, doAs)
	}
	if l.Keytab == "" || strings.TrimSpace(l.Principal) == "" {
		return nil, badRequest(flag, "it ships the login's keytab, and the login has none: give --keytab and --principal (or YARN_ER_KEYTAB and YARN_ER_PRINCIPAL)")
	}
	if fi, err := os.Stat(l.Keytab); err != nil || !fi.Mode().IsRegular() {
		return nil, badRequest(flag, "keytab %s: %v", l.Keytab, orNotRegular(err))
	}
	nnp := strings.TrimSpace(c.opts.Hadoop.Get(stage.KeyNameNodePrincipal))
	if nnp == "" {
		return nil, badRequest(flag, "%s is not set: the ApplicationMaster needs the NameNode's principal (set it in hdfs-site.xml, e.g. nn/_HOST@EXAMPLE.COM)", stage.KeyNameNodePrincipal)
	}
	s := &shipment{keytab: l.Keytab, krb5conf: krb5ConfPath(l.Krb5Conf, c.getenv()),
		tr: jobspec.TokenRefresh{Principal: strings.TrimSpace(l.Principal), KeytabFile: KeytabFile, NameNodePrincipal: nnp}}
	if s.krb5conf != "" {
		s.tr.Krb5ConfFile = Krb5ConfFile
	}
	if v := strings.TrimSpace(c.opts.Hadoop.Get(KeyTokenRenewInterval)); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			p, _ := c.opts.Hadoop.Lookup(KeyTokenRenewInterval)
			return nil, fmt.Errorf("%s = %q (%s): want a positive number of milliseconds", KeyTokenRenewInterval, v, p.Source)
		}
		s.tr.RenewIntervalMillis = ms
	}
	return s, nil
}

// krb5ConfPath is the krb5.conf the login uses: the option, the first existing file of
// $KRB5_CONFIG, else /etc/krb5.conf when it exists ("" when none does: the node's own is used).
func krb5ConfPath(explicit string, getenv func(string) string) string {
	if explicit != "" {
		return explicit
	}
	for _, p := range filepath.SplitList(getenv("KRB5_CONFIG")) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if fi, err := os.Stat("/etc/krb5.conf"); err == nil && fi.Mode().IsRegular() {
		return "/etc/krb5.conf"
	}
	return ""
}

// getenv is Options.Getenv or os.Getenv.
func (c *Client) getenv() func(string) string {
	if c.opts.Getenv != nil {
		return c.opts.Getenv
	}
	return os.Getenv
}
