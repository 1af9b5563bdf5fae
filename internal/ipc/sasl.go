package ipc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
)

// maxSASLRounds bounds the negotiation; DIGEST-MD5 needs two or three.
const maxSASLRounds = 8

// saslConnect runs Hadoop's SASL negotiation (SaslRpcClient.saslConnect) with the TOKEN method
// and the DIGEST-MD5 mechanism when the connection has a token, else with the KERBEROS method and
// the GSSAPI mechanism. It reports simple=true when the server answered NEGOTIATE with SUCCESS,
// i.e. it accepts SIMPLE authentication. With a GSSAPI integrity layer negotiated, the returned
// connection wraps and unwraps everything that follows; else it is nc.
func saslConnect(ctx context.Context, nc net.Conn, cfg *connConfig) (simple bool, out net.Conn, err error) {
	simple, gss, dm, err := saslNegotiate(ctx, nc, cfg)
	if err != nil {
		return simple, nc, err
	}
	var (
		layer SecurityLayer
		chunk int
	)
	switch {
	case gss != nil:
		layer, chunk, err = gss.SecurityLayer()
		if layer == nil && err == nil {
			return simple, nc, nil
		}
	case dm != nil && (dm.qop == qopAuthInt || dm.qop == qopAuthConf):
		layer, chunk, err = dm.securityLayer(cfg.addr)
	default:
		return simple, nc, nil
	}
	if err != nil {
		return false, nil, &SASLError{Addr: cfg.addr, Err: err}
	}
	cfg.logger.Debug("hadoop ipc: SASL security layer", "addr", cfg.addr)
	return false, newIntegrityConn(nc, layer, chunk, cfg.maxResponseSize, cfg.addr), nil
}

// saslNegotiate runs the negotiation for saslConnect; gss is the GSSAPI state after KERBEROS,
// dm the DIGEST-MD5 state after TOKEN.
func saslNegotiate(ctx context.Context, nc net.Conn, cfg *connConfig) (simple bool, gss GSSExchange, dm *digestMD5, err error) {
	fail := func(err error) (bool, GSSExchange, *digestMD5, error) {
		return false, nil, nil, &SASLError{Addr: cfg.addr, Err: err}
	}
	if err := writeSASL(nc, &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum()}); err != nil {
		return false, nil, nil, &ConnError{Addr: cfg.addr, Err: err}
	}
	for round := 0; round < maxSASLRounds; round++ {
		msg, err := readSASL(nc, cfg)
		if err != nil {
			return false, nil, nil, err
		}
		var reply *commonpb.RpcSaslProto
		switch msg.GetState() {
		case commonpb.RpcSaslProto_NEGOTIATE:
			if dm != nil || gss != nil {
				return fail(errors.New("server negotiated twice"))
			}
			if cfg.token == nil {
				auth := pickAuth(msg.GetAuths(), "KERBEROS", "GSSAPI")
				if auth == nil {
					return fail(fmt.Errorf("the server offers %s, not KERBEROS/GSSAPI (fix: check hadoop.security.authentication)", describeAuths(msg.GetAuths())))
				}
				g, tok, err := cfg.kerberos.Initiate(ctx, cfg.addr, auth.GetProtocol(), auth.GetServerId())
				if err != nil {
					return fail(err)
				}
				gss = g
				chosen := proto.CloneOf(auth)
				chosen.Challenge = nil
				reply = &commonpb.RpcSaslProto{
					State: commonpb.RpcSaslProto_INITIATE.Enum(),
					Token: tok,
					Auths: []*commonpb.RpcSaslProto_SaslAuth{chosen},
				}
				break
			}
			auth := pickAuth(msg.GetAuths(), "TOKEN", "DIGEST-MD5")
			if auth == nil {
				return fail(fmt.Errorf("the server offers %s; yarn-er supports TOKEN/DIGEST-MD5 only", describeAuths(msg.GetAuths())))
			}
			dm = newDigestMD5(cfg.token, auth.GetProtocol(), auth.GetServerId())
			// The chosen auth goes back as offered, without its challenge.
			chosen := proto.CloneOf(auth)
			chosen.Challenge = nil
			tok := []byte{} // DIGEST-MD5 has no initial response
			if auth.Challenge != nil {
				if tok, err = dm.respond(auth.GetChallenge()); err != nil {
					return fail(err)
				}
			}
			reply = &commonpb.RpcSaslProto{
				State: commonpb.RpcSaslProto_INITIATE.Enum(),
				Token: tok,
				Auths: []*commonpb.RpcSaslProto_SaslAuth{chosen},
			}
		case commonpb.RpcSaslProto_CHALLENGE:
			if gss != nil {
				tok, err := gss.Respond(msg.GetToken())
				if err != nil {
					return fail(err)
				}
				reply = &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_RESPONSE.Enum(), Token: tok}
				break
			}
			if dm == nil {
				return fail(errors.New("server sent a challenge before negotiating"))
			}
			tok, err := dm.respond(msg.GetToken())
			if err != nil {
				return fail(err)
			}
			reply = &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_RESPONSE.Enum(), Token: tok}
		case commonpb.RpcSaslProto_SUCCESS:
			if gss != nil {
				if !gss.Established() {
					return fail(errors.New("the server declared success before the GSSAPI security layer was negotiated"))
				}
				cfg.logger.Debug("hadoop ipc: authenticated", "addr", cfg.addr, "method", "KERBEROS", "principal", gss.Principal())
				return false, gss, nil, nil
			}
			if dm == nil {
				// The server skipped authentication: it accepts SIMPLE.
				return true, nil, nil, nil
			}
			if err := dm.verify(msg.GetToken()); err != nil {
				return fail(err)
			}
			cfg.logger.Debug("hadoop ipc: authenticated", "addr", cfg.addr, "method", "TOKEN", "tokenKind", cfg.token.Kind, "qop", dm.qop)
			return false, nil, dm, nil
		default:
			return fail(fmt.Errorf("unexpected SASL state %v", msg.GetState()))
		}
		if err := writeSASL(nc, reply); err != nil {
			return false, nil, nil, &ConnError{Addr: cfg.addr, Err: err}
		}
	}
	return fail(errors.New("too many SASL rounds"))
}

func pickAuth(auths []*commonpb.RpcSaslProto_SaslAuth, method, mechanism string) *commonpb.RpcSaslProto_SaslAuth {
	for _, a := range auths {
		if a.GetMethod() == method && a.GetMechanism() == mechanism {
			return a
		}
	}
	return nil
}

func describeAuths(auths []*commonpb.RpcSaslProto_SaslAuth) string {
	if len(auths) == 0 {
		return "no authentication method"
	}
	var s []string
	for _, a := range auths {
		s = append(s, a.GetMethod()+"/"+a.GetMechanism())
	}
	return strings.Join(s, ", ")
}

func writeSASL(nc net.Conn, m *commonpb.RpcSaslProto) error {
	pkt, err := EncodePacket(RequestHeader(SASLCallID, []byte{}, InvalidRetryCount), m)
	if err != nil {
		return err
	}
	_, err = nc.Write(pkt)
	return err
}

// readSASL reads one SASL response; a non-SUCCESS status ends the negotiation with the server's exception.
func readSASL(nc net.Conn, cfg *connConfig) (*commonpb.RpcSaslProto, error) {
	p, err := ReadPacket(nc, cfg.maxResponseSize)
	if err != nil {
		return nil, &ConnError{Addr: cfg.addr, Err: fmt.Errorf("during SASL negotiation: %w", err)}
	}
	h, body, err := ParseResponse(p)
	if err != nil {
		return nil, &SASLError{Addr: cfg.addr, Err: err}
	}
	if h.GetStatus() != commonpb.RpcResponseHeaderProto_SUCCESS {
		return nil, &SASLError{Addr: cfg.addr, Err: remoteErrorFrom(h, "")}
	}
	if CallID(h) != SASLCallID {
		return nil, &SASLError{Addr: cfg.addr, Err: fmt.Errorf("%w: non-SASL response (call id %d) during negotiation", ErrProtocol, CallID(h))}
	}
	m := &commonpb.RpcSaslProto{}
	if err := proto.Unmarshal(body, m); err != nil {
		return nil, &SASLError{Addr: cfg.addr, Err: fmt.Errorf("%w: SASL message: %v", ErrProtocol, err)}
	}
	return m, nil
}
