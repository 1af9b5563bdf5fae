package ipc

import (
	"fmt"
	"net"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
)

// clientMaxBuf is the largest wrapped message yarn-er says it receives (RFC 4752 maxbuf), Java's
// default javax.security.sasl.maxbuffer.
const clientMaxBuf = 65536

// saslLayer is a negotiated SASL security layer (integrity or privacy): it turns a payload into
// the token of one WRAP message and back.
type saslLayer interface {
	wrap(payload []byte) ([]byte, error)
	unwrap(token []byte) ([]byte, error)
}

// integrityConn carries Hadoop RPC over a SASL security layer (hadoop.rpc.protection = integrity
// or privacy): every write goes out as RpcSaslProto{state: WRAP, token: wrapped bytes} under call
// id -33, and every read unwraps such packets, as Hadoop's SaslRpcClient wrapped streams do. The
// layer is GSSAPI's (RFC 4121 wrap tokens, checksummed or sealed with the session key) or
// DIGEST-MD5's (RFC 2831 auth-int: HMAC-MD5 under the session's signing keys; auth-conf: RC4
// under its sealing keys).
type integrityConn struct {
	net.Conn
	layer   saslLayer
	addr    string
	maxResp int
	chunk   int    // largest payload of one WRAP message
	pending []byte // unwrapped bytes not read yet
}

func newIntegrityConn(nc net.Conn, layer saslLayer, chunk, maxResp int, addr string) *integrityConn {
	return &integrityConn{Conn: nc, layer: layer, chunk: chunk, maxResp: maxResp, addr: addr}
}

// gssIntegrity is GSSAPI's integrity layer: RFC 4121 wrap tokens, checksummed, not sealed.
type gssIntegrity struct {
	key      types.EncryptionKey
	addr     string
	sendSeq  uint64 // sequence number of the next token sent
	checkLen int
}

// newGSSIntegrity returns the GSSAPI layer of key and the largest payload of one wrap token
// within the server's maximum buffer.
func newGSSIntegrity(key types.EncryptionKey, serverMaxBuf int, addr string) (*gssIntegrity, int, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, 0, err
	}
	g := &gssIntegrity{key: key, addr: addr, checkLen: et.GetHMACBitLength() / 8}
	// The server's maxbuf bounds a whole wrap token: header, payload and checksum.
	chunk := serverMaxBuf - 16 - g.checkLen
	if serverMaxBuf == 0 || chunk > clientMaxBuf {
		chunk = clientMaxBuf
	}
	if chunk <= 0 {
		return nil, 0, fmt.Errorf("GSSAPI: the server's maximum buffer of %d bytes cannot hold a wrap token", serverMaxBuf)
	}
	return g, chunk, nil
}

func (g *gssIntegrity) wrap(payload []byte) ([]byte, error) {
	wt := gssapi.WrapToken{Flags: 0, EC: uint16(g.checkLen), SndSeqNum: g.sendSeq, Payload: payload}
	if err := wt.SetCheckSum(g.key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
		return nil, err
	}
	tok, err := wt.Marshal()
	if err != nil {
		return nil, err
	}
	g.sendSeq++
	return tok, nil
}

func (g *gssIntegrity) unwrap(token []byte) ([]byte, error) {
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(token, true); err != nil {
		return nil, fmt.Errorf("%w: GSSAPI wrap token: %v", ErrProtocol, err)
	}
	if wt.Flags&(wrapFlagSealed|wrapFlagAcceptorSubkey) != 0 || wt.RRC != 0 {
		return nil, fmt.Errorf("%w: GSSAPI wrap token with flags %#x, rotation %d: not negotiated", ErrProtocol, wt.Flags, wt.RRC)
	}
	if ok, _ := wt.Verify(g.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, fmt.Errorf("%w: a response from %s fails its GSSAPI integrity check", ErrAuthentication, g.addr)
	}
	return wt.Payload, nil
}

// Write wraps p into one or more WRAP packets.
func (c *integrityConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n := min(c.chunk, len(p)-written)
		tok, err := c.layer.wrap(p[written : written+n])
		if err != nil {
			return written, err
		}
		pkt, err := EncodePacket(RequestHeader(SASLCallID, []byte{}, InvalidRetryCount),
			&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_WRAP.Enum(), Token: tok})
		if err != nil {
			return written, err
		}
		if _, err := c.Conn.Write(pkt); err != nil {
			return written, err
		}
		written += n
	}
	return written, nil
}

// Read returns unwrapped bytes, reading and verifying the next WRAP packet when none are left.
func (c *integrityConn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		pkt, err := ReadPacket(c.Conn, c.maxResp)
		if err != nil {
			return 0, err
		}
		h, body, err := ParseResponse(pkt)
		if err != nil {
			return 0, err
		}
		if CallID(h) != SASLCallID {
			// Hadoop wraps every response once the layer is on (SaslRpcClient: "Server sent
			// non-wrapped response").
			return 0, fmt.Errorf("%w: unwrapped response (call id %d) on a connection with SASL integrity", ErrProtocol, CallID(h))
		}
		m := &commonpb.RpcSaslProto{}
		if err := proto.Unmarshal(body, m); err != nil || m.GetState() != commonpb.RpcSaslProto_WRAP {
			return 0, fmt.Errorf("%w: SASL message on a connection with SASL integrity is not WRAP (%v)", ErrProtocol, err)
		}
		payload, err := c.layer.unwrap(m.GetToken())
		if err != nil {
			return 0, err
		}
		c.pending = payload
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
