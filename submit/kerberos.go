package submit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/stage"
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
		if krb := c.opts.YARN.KerberosClient(); krb != nil {
			c.opts.Stage.Kerberos = krb
			return
		}
		krb, err := kerberos.Login(c.opts.Login, c.opts.Getenv, c.opts.Logger)
		if err != nil {
			c.loginErr = err
			c.log.Debug("no Kerberos login for HDFS", "err", err)
			return
		}
		c.opts.Stage.Kerberos = krb
	})
	return c.opts.Stage
}
