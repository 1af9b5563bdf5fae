// Package namenode calls the few ClientNamenodeProtocol methods that github.com/colinmarc/hdfs
// does not expose, over yarn-er's own Hadoop IPC (internal/ipc): HDFS delegation tokens for the
// applications yarn-er submits to a Kerberized cluster.
package namenode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
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

// ErrNoToken: the NameNode issued no token (it does not use Kerberos or tokens are disabled).
var ErrNoToken = errors.New("the NameNode issued no delegation token")

// Config says how to reach the NameNodes.
type Config struct {
	// Addrs are the NameNode RPC addresses, host:port; under HA every NameNode of the nameservice
	// (a standby is skipped).
	Addrs []string
	// Kerberos authenticates the connections (required for delegation tokens: a NameNode only
	// issues them to Kerberos logins).
	Kerberos *ipc.Kerberos
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
	return call(ctx, cfg, "cancelDelegationToken", &commonpb.CancelDelegationTokenRequestProto{Token: &commonpb.TokenProto{
		Identifier: nonNil(tok.Identifier), Password: nonNil(tok.Password), Kind: proto.String(tok.Kind), Service: proto.String(tok.Service),
	}}, &commonpb.CancelDelegationTokenResponseProto{})
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

// call tries each NameNode in turn, skipping unreachable and standby ones.
func call(ctx context.Context, cfg Config, method string, req, resp proto.Message) error {
	if len(cfg.Addrs) == 0 {
		return errors.New("namenode: no NameNode address (fix: set fs.defaultFS, or dfs.namenode.rpc-address.* under HA)")
	}
	if cfg.Kerberos == nil {
		return errors.New("namenode: delegation tokens need a Kerberos login (fix: kinit, or give --keytab and --principal)")
	}
	var errs []error
	for _, addr := range cfg.Addrs {
		cl, err := ipc.NewClient(ipc.Config{
			Addrs: []string{addr}, Protocol: Protocol, Kerberos: cfg.Kerberos, Dial: cfg.Dial, Logger: cfg.Logger, MaxIdle: -1,
		})
		if err != nil {
			return fmt.Errorf("namenode: %w", err)
		}
		err = cl.Call(ctx, method, req, resp, ipc.CallOptions{})
		_ = cl.Close()
		if err == nil {
			return nil
		}
		var re *records.RemoteError
		switch {
		case ctx.Err() != nil:
			return err
		case errors.As(err, &re) && re.Class == standbyException:
			logger(cfg).Debug("standby NameNode, trying the next", "addr", addr, "method", method)
		case errors.Is(err, ipc.ErrConnection):
			logger(cfg).Debug("NameNode unreachable, trying the next", "addr", addr, "method", method, "err", err)
		default:
			return fmt.Errorf("namenode %s: %s: %w", addr, method, err)
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return fmt.Errorf("namenode: %s: no active NameNode answered: %w", method, errors.Join(errs...))
}
