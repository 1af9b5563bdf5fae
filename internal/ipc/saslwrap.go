package ipc

import (
	"fmt"
	"net"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
)

// ClientMaxBuffer is the largest wrapped message yarn-er says it receives (the maxbuf of RFC 4752
// and RFC 2831), Java's default javax.security.sasl.maxbuffer.
const ClientMaxBuffer = 65536

// SecurityLayer is a negotiated SASL security layer (integrity or privacy): it turns a payload
// into the token of one WRAP message, and the token of a WRAP message from the server back into
// its payload, checking it.
type SecurityLayer interface {
	Wrap(payload []byte) ([]byte, error)
	Unwrap(token []byte) ([]byte, error)
}

// integrityConn carries Hadoop RPC over a SASL security layer (hadoop.rpc.protection = integrity
// or privacy): every write goes out as RpcSaslProto{state: WRAP, token: wrapped bytes} under call
// id -33, and every read unwraps such packets, as Hadoop's SaslRpcClient wrapped streams do. The
// layer is GSSAPI's (RFC 4121 wrap tokens, checksummed or sealed with the session key) or
// DIGEST-MD5's (RFC 2831 auth-int: HMAC-MD5 under the session's signing keys; auth-conf: RC4
// under its sealing keys).
type integrityConn struct {
	net.Conn
	layer   SecurityLayer
	addr    string
	maxResp int
	chunk   int    // largest payload of one WRAP message
	pending []byte // unwrapped bytes not read yet
}

func newIntegrityConn(nc net.Conn, layer SecurityLayer, chunk, maxResp int, addr string) *integrityConn {
	return &integrityConn{Conn: nc, layer: layer, chunk: chunk, maxResp: maxResp, addr: addr}
}

// Write wraps p into one or more WRAP packets.
func (c *integrityConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n := min(c.chunk, len(p)-written)
		tok, err := c.layer.Wrap(p[written : written+n])
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
		payload, err := c.layer.Unwrap(m.GetToken())
		if err != nil {
			return 0, err
		}
		c.pending = payload
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
