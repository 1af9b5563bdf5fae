// Package namenode calls the few ClientNamenodeProtocol methods yarn-er needs over its own Hadoop
// IPC (internal/ipc): HDFS delegation tokens for the applications yarn-er submits to a Kerberized
// cluster (which github.com/colinmarc/hdfs does not expose), and delete (Conn.Delete), with which the
// ApplicationMaster removes its staging directory authenticated by such a token (a YARN
// container has no Kerberos login) or, on a cluster without security, as the application's user.
package namenode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/hdfspb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/records"
)

// Protocol is the NameNode client protocol's name (HdfsConstants.CLIENT_NAMENODE_PROTOCOL_NAME);
// its protocol version is 1 (ipc.ProtocolVersion).
const Protocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// KindDelegationToken is the kind of an HDFS delegation token.
const KindDelegationToken = "HDFS_DELEGATION_TOKEN"

// standbyException is what a standby NameNode answers to calls of the active's categories.
const standbyException = "org.apache.hadoop.ipc.StandbyException"

// ErrProxyUserRefused: the NameNode refused to let the real user act as Config.DoAs (no
// hadoop.proxyuser.<real user>.users/groups/hosts rights for that user from this host).
var ErrProxyUserRefused = errors.New("the NameNode refused the proxy user")

// ErrNoToken: the NameNode issued no token (it does not use Kerberos or tokens are disabled).
var ErrNoToken = errors.New("the NameNode issued no delegation token")

// Config says how to reach the NameNodes.
type Config struct {
	// Addrs are the NameNode RPC addresses, host:port; under HA every NameNode of the nameservice
	// (a standby is skipped).
	Addrs []string
	// Kerberos authenticates the connections (required for delegation tokens: a NameNode only
	// issues them to Kerberos logins).
	Kerberos ipc.Kerberos
	// Token, when Kerberos is nil, authenticates with an HDFS delegation token (SASL
	// TOKEN/DIGEST-MD5), as a YARN container does (see SelectToken).
	Token *records.Token
	// TokenFunc, when set and Kerberos is nil, gives the token for each new connection instead of
	// Token: a long-running process whose tokens are replaced (submit --ship-keytab) connects with
	// the newest.
	TokenFunc func() (records.Token, error)
	// User is the user to act as when neither Kerberos nor Token is set (SIMPLE authentication,
	// a cluster without security).
	User string
	// DoAs, when set with Kerberos or User, is the user to act as: a proxy-user request (the
	// login, or User under SIMPLE, is the real user), which the NameNode allows only with
	// hadoop.proxyuser.<real user>.* rights (ErrProxyUserRefused otherwise). Delegation tokens
	// issued then are DoAs's. Ignored with a token, which acts as its owner.
	DoAs string
	// Service is the token's service as Hadoop's client sets it: "ha-hdfs:<nameservice>" under
	// HA, else the NameNode's ip:port (TokenService). Empty: TokenService of Addrs[0].
	Service string
	// Dial opens TCP connections (default: ipc's).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives debug records (never token bytes). Default: discard.
	Logger *slog.Logger
}

// TokenService returns the service of a token for the NameNode at addr (host:port), as Hadoop's
// SecurityUtil.buildTokenService does with hadoop.security.token.service.use_ip=true (the
// default): the resolved IP address and the port.
func TokenService(ctx context.Context, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("NameNode address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip != nil {
		return net.JoinHostPort(ip.String(), port), nil
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return "", fmt.Errorf("NameNode address %q: cannot resolve %s: %w", addr, host, err)
	}
	return net.JoinHostPort(ips[0].String(), port), nil
}

// GetDelegationToken asks the active NameNode for a delegation token that renewer (a principal,
// e.g. the ResourceManager's, or its short name) may renew. The token's service is
// cfg.Service.
func GetDelegationToken(ctx context.Context, cfg Config, renewer string) (records.Token, error) {
	if strings.TrimSpace(renewer) == "" {
		return records.Token{}, errors.New("delegation token: no renewer (fix: set yarn.resourcemanager.principal)")
	}
	if cfg.Kerberos == nil {
		return records.Token{}, errors.New("namenode: delegation tokens need a Kerberos login (fix: kinit, or give --keytab and --principal)")
	}
	resp := &commonpb.GetDelegationTokenResponseProto{}
	if err := call(ctx, cfg, "getDelegationToken", &commonpb.GetDelegationTokenRequestProto{Renewer: proto.String(renewer)}, resp); err != nil {
		return records.Token{}, err
	}
	tp := resp.GetToken()
	if tp == nil {
		return records.Token{}, ErrNoToken
	}
	service := cfg.Service
	if service == "" {
		var err error
		if service, err = TokenService(ctx, cfg.Addrs[0]); err != nil {
			return records.Token{}, err
		}
	}
	tok := records.Token{
		Identifier: tp.GetIdentifier(), Password: tp.GetPassword(), Kind: tp.GetKind(), Service: service,
	}
	logger(cfg).Debug("HDFS delegation token issued", "token", tok, "renewer", renewer)
	return tok, nil
}

// CancelDelegationToken cancels a token (an application that was never submitted).
func CancelDelegationToken(ctx context.Context, cfg Config, tok records.Token) error {
	if cfg.Kerberos == nil {
		return errors.New("namenode: cancelling a delegation token needs a Kerberos login (fix: kinit, or give --keytab and --principal)")
	}
	return call(ctx, cfg, "cancelDelegationToken", &commonpb.CancelDelegationTokenRequestProto{Token: tokenProto(tok)},
		&commonpb.CancelDelegationTokenResponseProto{})
}

// RenewDelegationToken renews tok, which the caller's Kerberos login must be the renewer of, and
// returns when it expires now: the renewal interval from now, at most the token's maximum
// lifetime. Hadoop's NameNode refuses the renewal of a token past that lifetime.
func RenewDelegationToken(ctx context.Context, cfg Config, tok records.Token) (time.Time, error) {
	if cfg.Kerberos == nil {
		return time.Time{}, errors.New("namenode: renewing a delegation token needs a Kerberos login (fix: kinit, or give --keytab and --principal)")
	}
	resp := &commonpb.RenewDelegationTokenResponseProto{}
	if err := call(ctx, cfg, "renewDelegationToken", &commonpb.RenewDelegationTokenRequestProto{Token: tokenProto(tok)}, resp); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(resp.GetNewExpiryTime())), nil
}

func tokenProto(tok records.Token) *commonpb.TokenProto {
	return &commonpb.TokenProto{Identifier: nonNil(tok.Identifier), Password: nonNil(tok.Password), Kind: proto.String(tok.Kind), Service: proto.String(tok.Service)}
}

func deleteRequest(path string, recursive bool) (*hdfspb.DeleteRequestProto, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("namenode: delete %q: not an absolute path", path)
	}
	return &hdfspb.DeleteRequestProto{Src: proto.String(path), Recursive: proto.Bool(recursive)}, nil
}

// Conn is an open, authenticated connection to a NameNode, for a caller that must make its call
// quickly later (see Dial). Under HA (several Config.Addrs) a call that the NameNode refuses as a
// standby goes to the others in turn, as Hadoop's failover proxy does.
type Conn struct {
	mu    sync.Mutex
	cl    *ipc.Client
	icfg  ipc.Config
	addrs []string
	doAs  string
	log   *slog.Logger
}

// Dial connects and authenticates to the first of cfg.Addrs that accepts, now: one that cannot
// be reached, or a standby that refuses the login (a standby cannot check a delegation token), is
// skipped.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	icfg, err := ipcConfig(cfg)
	if err != nil {
		return nil, err
	}
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("namenode: no NameNode address")
	}
	log := logger(cfg)
	var errs []error
	for _, a := range cfg.Addrs {
		one := icfg
		one.Addrs = []string{a}
		cl, err := ipc.NewClient(one)
		if err != nil {
			return nil, fmt.Errorf("namenode: %w", err)
		}
		err = cl.Connect(ctx)
		if err == nil {
			return &Conn{cl: cl, icfg: icfg, addrs: slices.Clone(cfg.Addrs), doAs: cfg.DoAs, log: log}, nil
		}
		_ = cl.Close()
		if isImpersonationRefusal(err) {
			return nil, fmt.Errorf("namenode %s: %w", a, refusal(cfg.DoAs, err))
		}
		if ctx.Err() != nil || len(cfg.Addrs) == 1 || !failOver(err, ipc.CallOptions{Idempotent: true}) {
			return nil, fmt.Errorf("namenode: %w", err)
		}
		log.Debug("NameNode is a standby or unreachable, trying the next", "addr", a, "err", err)
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("namenode: no active NameNode accepted the connection: %w", errors.Join(errs...))
}

// call makes the call on the NameNode of the connection; when that one answers as a standby
// (or, for an idempotent call, cannot be reached) it tries each other NameNode once, and keeps
// the first that answers otherwise. When every NameNode is a standby (or unreachable) the error
// says "no active NameNode answered"; a refused proxy user is ErrProxyUserRefused.
func (c *Conn) call(ctx context.Context, method string, req, resp proto.Message, opts ipc.CallOptions) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.cl.Addr()
	err := c.cl.Call(ctx, method, req, resp, opts)
	if !failOver(err, opts) || ctx.Err() != nil {
		return refusal(c.doAs, err)
	}
	errs := []error{fmt.Errorf("%s: %w", cur, err)}
	for _, a := range c.addrs {
		if a == cur {
			continue
		}
		if ctx.Err() != nil {
			return err
		}
		c.log.Debug("NameNode is a standby or unreachable, trying the next", "addr", cur, "next", a, "method", method)
		icfg := c.icfg
		icfg.Addrs = []string{a}
		cl, nerr := ipc.NewClient(icfg)
		if nerr != nil {
			return nerr
		}
		cerr := cl.Call(ctx, method, req, resp, opts)
		if cerr == nil || !failOver(cerr, opts) {
			_ = c.cl.Close()
			c.cl = cl
			return refusal(c.doAs, cerr)
		}
		_ = cl.Close()
		errs = append(errs, fmt.Errorf("%s: %w", a, cerr))
		cur = a
	}
	return fmt.Errorf("no active NameNode answered: %w", errors.Join(errs...))
}

// refusal marks a refused request to act as doAs as ErrProxyUserRefused; other errors pass as
// they are.
func refusal(doAs string, err error) error {
	if isImpersonationRefusal(err) {
		return fmt.Errorf("as %s: %w: %w", doAs, ErrProxyUserRefused, err)
	}
	return err
}

// failOver reports whether a call's error sends it to the next NameNode: a standby's refusal,
// or a lost connection (without an answer) for a call that may be sent again.
func failOver(err error, opts ipc.CallOptions) bool {
	if err == nil {
		return false
	}
	var re *records.RemoteError
	if errors.As(err, &re) {
		// The server answered, even if it then closed the connection (FATAL: a refused proxy
		// user): another NameNode would answer the same unless this one is a standby.
		return re.Class == standbyException
	}
	return opts.Idempotent && errors.Is(err, ipc.ErrConnection)
}

// addr is the address of the NameNode the connection uses now.
func (c *Conn) addr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cl.Addr()
}

// Delete removes path on HDFS (a directory with everything under it when recursive is set) over
// this connection, reconnecting if the NameNode closed it. It reports whether anything was
// removed: false, without an error, when path did not exist.
func (c *Conn) Delete(ctx context.Context, path string, recursive bool) (bool, error) {
	req, err := deleteRequest(path, recursive)
	if err != nil {
		return false, err
	}
	resp := &hdfspb.DeleteResponseProto{}
	// Sending it again after a lost connection is harmless: the second answer is "nothing removed".
	if err := c.call(ctx, "delete", req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
		return false, fmt.Errorf("namenode %s: delete: %w", c.addr(), err)
	}
	return resp.GetResult(), nil
}

// Mkdirs makes the directory path, and its missing parents, with permission perm (less the
// NameNode's umask). An existing directory is no error.
func (c *Conn) Mkdirs(ctx context.Context, path string, perm uint32) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("namenode: mkdirs %q: not an absolute path", path)
	}
	req := &hdfspb.MkdirsRequestProto{Src: proto.String(path), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(perm & 0o7777)},
		CreateParent: proto.Bool(true)}
	resp := &hdfspb.MkdirsResponseProto{}
	// Making a directory again is harmless: idempotent.
	if err := c.call(ctx, "mkdirs", req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
		return fmt.Errorf("namenode %s: mkdirs %s: %w", c.addr(), path, err)
	}
	if !resp.GetResult() {
		return fmt.Errorf("namenode %s: mkdirs %s: refused", c.addr(), path)
	}
	return nil
}

// maxListing bounds the entries List reads: a directory that holds more is refused, not read
// into memory.
const maxListing = 1 << 20

// List returns the names of the entries of the directory path, in the NameNode's order (by
// name), reading page after page; os.ErrNotExist (wrapped) when path does not exist.
func (c *Conn) List(ctx context.Context, path string) ([]string, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("namenode: list %q: not an absolute path", path)
	}
	var names []string
	after := []byte{}
	for {
		req := &hdfspb.GetListingRequestProto{Src: proto.String(path), StartAfter: after, NeedLocation: proto.Bool(false)}
		resp := &hdfspb.GetListingResponseProto{}
		if err := c.call(ctx, "getListing", req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
			return nil, fmt.Errorf("namenode %s: list %s: %w", c.addr(), path, err)
		}
		dl := resp.GetDirList()
		if dl == nil {
			return nil, fmt.Errorf("namenode %s: list %s: %w", c.addr(), path, os.ErrNotExist)
		}
		page := dl.GetPartialListing()
		for _, st := range page {
			names = append(names, string(st.GetPath()))
		}
		if len(names) > maxListing {
			return nil, fmt.Errorf("namenode %s: list %s: more than %d entries", c.addr(), path, maxListing)
		}
		if dl.GetRemainingEntries() == 0 || len(page) == 0 {
			return names, nil
		}
		after = page[len(page)-1].GetPath()
	}
}

// MaxXAttrValue bounds the value of an extended attribute GetXAttr accepts and SetXAttr sends:
// the NameNode's default limit on a name and value together (dfs.namenode.fs-limits.max-xattr-size).
const MaxXAttrValue = 16 << 10

// xattrMissing is the message a NameNode answers getXAttrs with when an asked attribute is not set
// (FSDirXAttrOp.getXAttrs, Hadoop 2.6 to 3.5).
const xattrMissing = "At least one of the attributes provided was not found"

// GetXAttr returns the value of the extended attribute user.<name> of path; ok is false (and no
// error) when path has no such attribute. os.ErrNotExist (wrapped) when path does not exist.
func (c *Conn) GetXAttr(ctx context.Context, path, name string) (value []byte, ok bool, err error) {
	if !strings.HasPrefix(path, "/") {
		return nil, false, fmt.Errorf("namenode: getXAttrs %q: not an absolute path", path)
	}
	req := &hdfspb.GetXAttrsRequestProto{Src: proto.String(path), XAttrs: []*hdfspb.XAttrProto{{
		Namespace: hdfspb.XAttrProto_USER.Enum(), Name: proto.String(name)}}}
	resp := &hdfspb.GetXAttrsResponseProto{}
	if err := c.call(ctx, "getXAttrs", req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
		var re *records.RemoteError
		if errors.As(err, &re) {
			switch {
			case strings.Contains(re.Message, xattrMissing):
				return nil, false, nil
			case strings.HasSuffix(re.Class, "FileNotFoundException"):
				return nil, false, fmt.Errorf("namenode %s: getXAttrs %s: %w", c.addr(), path, os.ErrNotExist)
			}
		}
		return nil, false, fmt.Errorf("namenode %s: getXAttrs %s: %w", c.addr(), path, err)
	}
	for _, x := range resp.GetXAttrs() {
		if x.GetNamespace() == hdfspb.XAttrProto_USER && x.GetName() == name {
			if len(x.GetValue()) > MaxXAttrValue {
				return nil, false, fmt.Errorf("namenode %s: getXAttrs %s: user.%s holds %d bytes, more than %d", c.addr(), path, name, len(x.GetValue()), MaxXAttrValue)
			}
			return x.GetValue(), true, nil
		}
	}
	return nil, false, nil
}

// SetXAttr sets the extended attribute user.<name> of path to value, creating or replacing it.
func (c *Conn) SetXAttr(ctx context.Context, path, name string, value []byte) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("namenode: setXAttr %q: not an absolute path", path)
	}
	if len(value) > MaxXAttrValue {
		return fmt.Errorf("namenode: setXAttr %s: user.%s: %d bytes, more than %d", path, name, len(value), MaxXAttrValue)
	}
	const create, replace = 1, 2 // XAttrSetFlagProto
	req := &hdfspb.SetXAttrRequestProto{Src: proto.String(path), Flag: proto.Uint32(create | replace),
		XAttr: &hdfspb.XAttrProto{Namespace: hdfspb.XAttrProto_USER.Enum(), Name: proto.String(name), Value: nonNil(value)}}
	// Setting the same value again is harmless.
	if err := c.call(ctx, "setXAttr", req, &hdfspb.SetXAttrResponseProto{}, ipc.CallOptions{Idempotent: true}); err != nil {
		return fmt.Errorf("namenode %s: setXAttr %s: %w", c.addr(), path, err)
	}
	return nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cl.Close()
}

// SelectToken returns the HDFS delegation token among tokens whose service names the NameNode at
// addr (host:port): an ip:port of the host as TokenService builds it, addr itself, or
// "ha-hdfs:<host>" for an HA nameservice (addr is then the nameservice, with or without a port). ok is false when there is none.
func SelectToken(ctx context.Context, tokens map[string]records.Token, addr string) (tok records.Token, ok bool) {
	want := map[string]bool{addr: true, "ha-hdfs:" + addr: true}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		want["ha-hdfs:"+host] = true
		// Any address of the host: the submitting client resolved it on another machine.
		if ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host); err == nil {
			for _, ip := range ips {
				want[net.JoinHostPort(ip.String(), port)] = true
			}
		}
	}
	aliases := make([]string, 0, len(tokens))
	for alias := range tokens {
		aliases = append(aliases, alias)
	}
	slices.Sort(aliases) // the same choice every time, should two tokens match
	for _, alias := range aliases {
		if t := tokens[alias]; t.Kind == KindDelegationToken && want[t.Service] {
			return t, true
		}
	}
	return records.Token{}, false
}

// isImpersonationRefusal reports whether err is a Hadoop server's refusal of a proxy-user
// request: AuthorizationException "User: <real> is not allowed to impersonate <user>" (ProxyUsers.authorize,
// Hadoop 2.x to 3.5).
func isImpersonationRefusal(err error) bool {
	var re *records.RemoteError
	return errors.As(err, &re) && strings.HasSuffix(re.Class, "AuthorizationException") && strings.Contains(re.Message, "impersonate")
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func logger(cfg Config) *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// ipcConfig is the IPC configuration of cfg, without addresses.
func ipcConfig(cfg Config) (ipc.Config, error) {
	if len(cfg.Addrs) == 0 {
		return ipc.Config{}, errors.New("namenode: no NameNode address (fix: set fs.defaultFS, or dfs.namenode.rpc-address.* under HA)")
	}
	icfg := ipc.Config{Protocol: Protocol, Kerberos: cfg.Kerberos, User: cfg.User, Dial: cfg.Dial, Logger: cfg.Logger, MaxIdle: -1}
	if cfg.Token == nil && cfg.TokenFunc == nil || cfg.Kerberos != nil {
		icfg.DoAs = cfg.DoAs
	}
	if t := cfg.Token; t != nil && cfg.Kerberos == nil {
		tok := &ipc.Token{Identifier: t.Identifier, Password: t.Password, Kind: t.Kind, Service: t.Service}
		icfg.Token = func() (*ipc.Token, error) { return tok, nil }
	}
	if f := cfg.TokenFunc; f != nil && cfg.Kerberos == nil {
		icfg.Token = func() (*ipc.Token, error) {
			t, err := f()
			if err != nil {
				return nil, err
			}
			return &ipc.Token{Identifier: t.Identifier, Password: t.Password, Kind: t.Kind, Service: t.Service}, nil
		}
	}
	if cfg.Kerberos == nil && cfg.Token == nil && cfg.TokenFunc == nil && cfg.User == "" {
		return ipc.Config{}, errors.New("namenode: no credentials: neither a Kerberos login, a delegation token nor a user name")
	}
	return icfg, nil
}

// call makes one call on the active NameNode of cfg.Addrs (Dial, then Conn.call), over a
// connection of its own. The token calls it makes are idempotent in Hadoop's ClientProtocol.
func call(ctx context.Context, cfg Config, method string, req, resp proto.Message) error {
	c, err := Dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.call(ctx, method, req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
		return fmt.Errorf("namenode %s: %s: %w", c.addr(), method, err)
	}
	return nil
}
