// Package gss is the SASL KERBEROS method with the GSSAPI mechanism (RFC 4752) for Hadoop IPC,
// as a Hadoop client with a Kerberos login speaks it: the AP-REQ, the check of the principal the
// server announces, the security-layer negotiation and the integrity and privacy layers of
// RFC 4121 wrap tokens. It implements ipc.Kerberos with github.com/jcmturner/gokrb5; a program
// that authenticates with tokens only (yarn-er-am) does not import it and so links no Kerberos
// library.
package gss

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	krb5client "github.com/jcmturner/gokrb5/v8/client"
	krbgss "github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/internal/redact"
)

// Kerberos authenticates connections with SASL method KERBEROS, mechanism GSSAPI (RFC 4752), as a
// Hadoop client with a Kerberos login does; it is the ipc.Kerberos of a Config.
type Kerberos struct {
	// Client is the gokrb5 client holding the user's credentials (a keytab login or a credential
	// cache). Required.
	Client *krb5client.Client
	// ServicePrincipal is the server's Kerberos principal as the cluster configures it, e.g.
	// dfs.namenode.kerberos.principal = nn/_HOST@EXAMPLE.COM. _HOST is replaced by the lower-case
	// host of the address dialled (for an IP address, its name; see LookupAddr). The principal
	// the server announces must match it (realm aside), as Hadoop's client checks. Required.
	ServicePrincipal string
	// LookupAddr finds the names of an IP address: _HOST of a server dialled by IP address is its
	// first name, as with Java's canonical host name (default net.DefaultResolver.LookupAddr).
	LookupAddr func(ctx context.Context, addr string) ([]string, error)
}

// HostFor returns the host _HOST stands for when dialling addr (host:port or host): the host
// itself, lower-case, or for an IP address its first reverse-lookup name (the address itself when
// it has none), as Hadoop's client takes an address's canonical host name.
func (k *Kerberos) HostFor(ctx context.Context, addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if net.ParseIP(host) == nil {
		return strings.ToLower(host)
	}
	lookup := k.LookupAddr
	if lookup == nil {
		lookup = net.DefaultResolver.LookupAddr
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if names, err := lookup(ctx, host); err == nil && len(names) > 0 && names[0] != "" {
		return strings.ToLower(strings.TrimSuffix(names[0], "."))
	}
	return host
}

// Security layers of RFC 4752 section 3.1 (the first octet of the last exchange).
const (
	saslLayerNone      = 1 // hadoop.rpc.protection=authentication, SASL qop "auth"
	saslLayerIntegrity = 2 // hadoop.rpc.protection=integrity, "auth-int"
	saslLayerPrivacy   = 4 // hadoop.rpc.protection=privacy, "auth-conf"
)

// GSS wrap token flags (RFC 4121 section 4.2.2).
const (
	wrapFlagSentByAcceptor = 0x01
	wrapFlagSealed         = 0x02
	wrapFlagAcceptorSubkey = 0x04
)

var _ ipc.Kerberos = (*Kerberos)(nil)

// exchange is the initiator side of SASL GSSAPI with Kerberos on one connection: an AP-REQ in
// INITIATE, then the security-layer negotiation.
type exchange struct {
	cl       *krb5client.Client
	spn      string // principal asked a ticket for: service/host
	addr     string // the server dialled
	key      types.EncryptionKey
	complete bool
	layer    byte // the security layer chosen (saslLayerNone, saslLayerIntegrity or saslLayerPrivacy)
	maxBuf   int  // the server's maximum wrapped message, with a layer
}

// ServicePrincipalFor returns the service principal, service/host without realm, that a
// connection to addr authenticates to: ServicePrincipal with _HOST resolved for addr.
func (k *Kerberos) ServicePrincipalFor(ctx context.Context, addr string) (string, error) {
	return resolveServicePrincipal(k.ServicePrincipal, k.HostFor(ctx, addr))
}

// resolveServicePrincipal replaces _HOST in the configured principal by host and drops the
// realm: service/host.
func resolveServicePrincipal(configured, host string) (string, error) {
	p := strings.TrimSpace(configured)
	if p == "" {
		return "", errors.New("no Kerberos service principal for the server (fix: set the server's principal, e.g. dfs.namenode.kerberos.principal = nn/_HOST@REALM)")
	}
	if i := strings.LastIndexByte(p, '@'); i >= 0 {
		p = p[:i]
	}
	p = strings.ReplaceAll(p, "_HOST", strings.ToLower(host))
	if svc, h, ok := strings.Cut(p, "/"); !ok || svc == "" || h == "" {
		return "", fmt.Errorf("Kerberos service principal %q is not service/host[@REALM]", configured)
	}
	return p, nil
}

// Check reports a login without credentials or with a service principal that is not
// service/host[@REALM], before any connection is made.
func (k *Kerberos) Check() error {
	if k == nil || k.Client == nil {
		return errors.New("Kerberos without credentials")
	}
	_, err := resolveServicePrincipal(k.ServicePrincipal, "host")
	return err
}

// Initiate checks the server's offer (its principal as protocol/serverId) against the configured
// principal and builds the initial token (the Kerberos AP-REQ in a GSS-API initial context token).
func (k *Kerberos) Initiate(ctx context.Context, addr, protocol, serverID string) (ipc.GSSExchange, []byte, error) {
	if k.Client == nil {
		return nil, nil, errors.New("no Kerberos credentials")
	}
	want, err := k.ServicePrincipalFor(ctx, addr)
	if err != nil {
		return nil, nil, err
	}
	// Hadoop's server announces its own principal split at '/' and '@': protocol/serverId.
	offered := protocol + "/" + serverID
	if protocol == "" || !strings.EqualFold(offered, want) {
		return nil, nil, fmt.Errorf("%w: the server announces Kerberos principal %q, the configuration expects %q (fix: check the service principal setting, e.g. dfs.namenode.kerberos.principal, and that the address names the server's canonical host)",
			ipc.ErrAuthentication, offered, want)
	}
	g := &exchange{cl: k.Client, spn: want, addr: addr}
	tkt, key, err := g.serviceTicket()
	if err != nil {
		return nil, nil, err
	}
	g.key = key
	// No mutual authentication is requested: the acceptor then goes straight to the security-layer
	// message, whose checksum under the session key proves that it could read the ticket.
	tok, err := spnego.NewKRB5TokenAPREQ(k.Client, tkt, key, []int{krbgss.ContextFlagInteg, krbgss.ContextFlagConf}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("Kerberos AP-REQ for %s: %s", want, redact.Text(err.Error()))
	}
	b, err := tok.Marshal()
	if err != nil {
		return nil, nil, fmt.Errorf("Kerberos AP-REQ for %s: %s", want, redact.Text(err.Error()))
	}
	return g, b, nil
}

// serviceTicket asks the KDC (or the credential cache) for a ticket to the server; gokrb5's
// panics on damaged KDC replies become errors.
func (g *exchange) serviceTicket() (tkt messages.Ticket, key types.EncryptionKey, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: Kerberos service ticket for %s: the Kerberos library failed (%v)", ipc.ErrAuthentication, g.spn, r)
		}
	}()
	tkt, key, err = g.cl.GetServiceTicket(g.spn)
	if err != nil {
		return tkt, key, fmt.Errorf("%w: Kerberos service ticket for %s: %s (fix: check the ticket with klist, kinit again or use a keytab; check the service principal)",
			ipc.ErrAuthentication, g.spn, redact.Text(err.Error()))
	}
	return tkt, key, nil
}

// Respond answers the acceptor's security-layer message (RFC 4752 section 3.1): a wrap token
// whose 4-byte payload holds the layers it offers and its maximum buffer size. The answer picks
// no security layer when offered (hadoop.rpc.protection=authentication), else integrity
// (integrity), else privacy (privacy: sealed wrap tokens).
func (g *exchange) Respond(challenge []byte) ([]byte, error) {
	if g.complete {
		return nil, errors.New("GSSAPI: unexpected challenge after the security layer was chosen")
	}
	var wt krbgss.WrapToken
	if err := wt.Unmarshal(challenge, true); err != nil {
		return nil, fmt.Errorf("GSSAPI: the server's security-layer message: %v", err)
	}
	if wt.Flags&(wrapFlagSealed|wrapFlagAcceptorSubkey) != 0 {
		return nil, fmt.Errorf("GSSAPI: the server's security-layer message is sealed or uses an acceptor subkey (flags %#x), which was not negotiated", wt.Flags)
	}
	if ok, err := wt.Verify(g.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		// The checksum error quotes both checksums; they are not secret but say nothing useful.
		_ = err
		return nil, fmt.Errorf("%w: GSSAPI: the server's security-layer message does not verify under the session key: it is not %s", ipc.ErrAuthentication, g.spn)
	}
	if len(wt.Payload) != 4 {
		return nil, fmt.Errorf("GSSAPI: the server's security-layer message has %d bytes, want 4", len(wt.Payload))
	}
	layers := wt.Payload[0]
	answer := []byte{saslLayerNone, 0, 0, 0} // RFC 4752: maxbuf may be 0 without a layer
	switch {
	case layers&saslLayerNone != 0:
	case layers&(saslLayerIntegrity|saslLayerPrivacy) != 0:
		chosen := byte(saslLayerIntegrity)
		if layers&saslLayerIntegrity == 0 {
			chosen = saslLayerPrivacy
		}
		answer = []byte{chosen, ipc.ClientMaxBuffer >> 16 & 0xff, ipc.ClientMaxBuffer >> 8 & 0xff, ipc.ClientMaxBuffer & 0xff}
		g.maxBuf = int(wt.Payload[1])<<16 | int(wt.Payload[2])<<8 | int(wt.Payload[3])
	default:
		return nil, fmt.Errorf("%w: the server offers %s (hadoop.rpc.protection=%s); yarn-er speaks Hadoop RPC with authentication, integrity or privacy",
			ipc.ErrUnsupportedQOP, describeLayers(layers), rpcProtection(layers))
	}
	g.layer = answer[0]
	// No authorization id: the server takes the authenticated principal, as with Hadoop's client.
	out, err := krbgss.NewInitiatorWrapToken(answer, g.key)
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: wrap the security-layer answer: %v", err)
	}
	b, err := out.Marshal()
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: wrap the security-layer answer: %v", err)
	}
	g.complete = true
	return b, nil
}

// Established says whether Respond has chosen the security layer.
func (g *exchange) Established() bool { return g.complete }

// Principal is the service principal (service/host) the exchange authenticates to.
func (g *exchange) Principal() string { return g.spn }

// SecurityLayer returns the layer Respond chose, nil for none (hadoop.rpc.protection =
// authentication), and the largest payload of one wrap token within the server's maximum buffer.
func (g *exchange) SecurityLayer() (ipc.SecurityLayer, int, error) {
	switch {
	case !g.complete:
		return nil, 0, errors.New("GSSAPI: no security layer was negotiated")
	case g.layer == saslLayerIntegrity:
		return newIntegrity(g.key, g.maxBuf, g.addr)
	case g.layer == saslLayerPrivacy:
		return newPrivacy(g.key, g.maxBuf, g.addr)
	}
	return nil, 0, nil
}

// securityLayer is an RFC 4752 layer: its bit, its description and its hadoop.rpc.protection value.
type securityLayer struct {
	bit         byte
	description string
	protection  string
}

// securityLayers are the RFC 4752 layers.
var securityLayers = []securityLayer{
	{saslLayerNone, "no security layer", "authentication"},
	{saslLayerIntegrity, "integrity protection", "integrity"},
	{saslLayerPrivacy, "privacy protection", "privacy"},
}

// describeLayers names the security layers of an RFC 4752 bit mask.
func describeLayers(mask byte) string {
	s := layerNames(mask, func(l securityLayer) string { return l.description })
	if len(s) == 0 {
		return fmt.Sprintf("unknown security layers (%#x)", mask)
	}
	return strings.Join(s, " or ")
}

// rpcProtection names the hadoop.rpc.protection values behind an RFC 4752 bit mask.
func rpcProtection(mask byte) string {
	s := layerNames(mask, func(l securityLayer) string { return l.protection })
	if len(s) == 0 {
		return "?"
	}
	return strings.Join(s, ",")
}

// layerNames returns the name of each layer set in an RFC 4752 bit mask, in securityLayers' order.
func layerNames(mask byte, name func(securityLayer) string) []string {
	var s []string
	for _, l := range securityLayers {
		if mask&l.bit != 0 {
			s = append(s, name(l))
		}
	}
	return s
}
