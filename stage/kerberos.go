package stage

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/yarn-er/yarn-er/internal/ipc/gss"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/records"
)

// Keys of the Hadoop configuration that Kerberos staging reads.
const (
	// KeyAuthentication is hadoop.security.authentication: simple or kerberos.
	KeyAuthentication = "hadoop.security.authentication"
	// KeyNameNodePrincipal is the NameNode's Kerberos principal, e.g. nn/_HOST@EXAMPLE.COM.
	KeyNameNodePrincipal = "dfs.namenode.kerberos.principal"
	// KeyDataTransferProtection is the SASL protection of DataNode connections (authentication,
	// integrity, privacy); unset: none (privileged DataNode ports).
	KeyDataTransferProtection = "dfs.data.transfer.protection"
)

// kerberize sets up ho for a Kerberos HDFS: the login, the NameNode principal (with _HOST
// resolved here for a NameNode given by IP address, as Hadoop resolves it to the canonical
// host name), and what DelegationToken needs.
func (c *Client) kerberize(ctx context.Context, ho *hdfs.ClientOptions, opts Options, hc hadoopconf.HadoopConf, u *url.URL,
	dial func(ctx context.Context, network, addr string) (net.Conn, error)) error {
	spn := strings.TrimSpace(hc[KeyNameNodePrincipal])
	if spn == "" {
		return &Error{Op: "connect", Path: u.String(), Err: fmt.Errorf("%w: %s is kerberos, and %s is not set", ErrUnsupportedAuth, KeyAuthentication, KeyNameNodePrincipal),
			Fix: "set " + KeyNameNodePrincipal + " in hdfs-site.xml to the NameNode's principal, e.g. nn/_HOST@EXAMPLE.COM"}
	}
	krb := &gss.Kerberos{Client: opts.Kerberos, ServicePrincipal: spn}
	ho.KerberosClient = opts.Kerberos
	ho.KerberosServicePrincipleName, _, _ = strings.Cut(spn, "@")
	if len(ho.Addresses) == 1 && strings.Contains(spn, "_HOST") {
		// colinmarc/hdfs puts the address's host in for _HOST; Hadoop's client puts the
		// canonical name of an IP address. One NameNode: resolve it here the way ipc does.
		p, err := krb.ServicePrincipalFor(ctx, ho.Addresses[0])
		if err != nil {
			return &Error{Op: "connect", Path: u.String(), Err: fmt.Errorf("%w: %s: %w", ErrUnsupportedAuth, KeyNameNodePrincipal, err),
				Fix: "set " + KeyNameNodePrincipal + " to service/host@REALM, e.g. nn/_HOST@EXAMPLE.COM"}
		}
		ho.KerberosServicePrincipleName = p
	} else if strings.Contains(spn, "_HOST") {
		// Several NameNodes (HA): colinmarc/hdfs puts each address's host in for _HOST, so a
		// NameNode given by IP address is dialled by its canonical name instead, whose principal
		// Hadoop's client would ask for.
		for i, a := range ho.Addresses {
			if host, port, err := net.SplitHostPort(a); err == nil && net.ParseIP(host) != nil {
				ho.Addresses[i] = net.JoinHostPort(krb.HostFor(ctx, a), port)
			}
		}
	}
	c.namenodes = append([]string(nil), ho.Addresses...)
	c.krb = krb
	c.dial = dial
	if isLogical(hc, u.Hostname()) {
		// Hadoop's HAUtil.buildTokenServiceForLogicalUri.
		c.service = "ha-hdfs:" + u.Hostname()
	}
	return nil
}

// Kerberized reports whether the client authenticates with Kerberos.
func (c *Client) Kerberized() bool { return c.krb != nil }

// DelegationToken asks the active NameNode for an HDFS delegation token that renewer (the
// ResourceManager's principal) may renew, named as Hadoop's client names it (service
// ha-hdfs:<nameservice> under HA, else the NameNode's ip:port). It needs Kerberos.
func (c *Client) DelegationToken(ctx context.Context, renewer string) (records.Token, error) {
	if c.krb == nil {
		return records.Token{}, &Error{Op: "get a delegation token", Err: fmt.Errorf("%w: delegation tokens need Kerberos", ErrUnsupportedAuth),
			Fix: "HDFS issues delegation tokens to Kerberos logins only; simple clusters need none"}
	}
	tok, err := namenode.GetDelegationToken(ctx, c.nnConfig(), renewer)
	if err != nil && isProxyRefusal(err) {
		return records.Token{}, &Error{Op: "get an HDFS delegation token as " + c.doAs, Path: strings.Join(c.namenodes, ","),
			Err: fmt.Errorf("%w by HDFS: %w", ErrProxyUser, err), Fix: ProxyUserFix(c.login, c.doAs)}
	}
	if err != nil {
		return records.Token{}, &Error{Op: "get an HDFS delegation token", Path: strings.Join(c.namenodes, ","), Err: err,
			Fix: "check the Kerberos login (klist) and that the NameNode issues delegation tokens (dfs.namenode.delegation.token.*)"}
	}
	c.log.Debug("HDFS delegation token", "token", tok, "renewer", renewer)
	return tok, nil
}

// CancelDelegationToken cancels a token DelegationToken returned (a submission that failed).
func (c *Client) CancelDelegationToken(ctx context.Context, tok records.Token) error {
	if c.krb == nil {
		return nil
	}
	if err := namenode.CancelDelegationToken(ctx, c.nnConfig(), tok); err != nil {
		return &Error{Op: "cancel the HDFS delegation token", Path: strings.Join(c.namenodes, ","), Err: err}
	}
	return nil
}

func (c *Client) nnConfig() namenode.Config {
	return namenode.Config{Addrs: c.namenodes, Kerberos: c.krb, Service: c.service, Dial: c.dial, Logger: c.log, DoAs: c.doAs}
}
