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

// integrityConn carries Hadoop RPC over a SASL GSSAPI integrity layer (hadoop.rpc.protection =
// integrity): every write goes out as RpcSaslProto{state: WRAP, token: GSS wrap token} under call
// id -33, and every read unwraps such packets, as Hadoop's SaslRpcClient wrapped streams do. The
// tokens are RFC 4121 wrap tokens without confidentiality, checksummed with the session key.
type integrityConn struct {
	net.Conn
	key      types.EncryptionKey
	addr     string
	maxResp  int
	chunk    int    // largest payload of one wrap token
	sendSeq  uint64 // sequence number of the next token sent
	pending  []byte // unwrapped bytes not read yet
	checkLen int
}

func newIntegrityConn(nc net.Conn, key types.EncryptionKey, serverMaxBuf, maxResp int, addr string) (*integrityConn, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, err
	}
	c := &integrityConn{Conn: nc, key: key, addr: addr, maxResp: maxResp, checkLen: et.GetHMACBitLength() / 8}
	// The server's maxbuf bounds a whole wrap token: header, payload and checksum.
	c.chunk = serverMaxBuf - 16 - c.checkLen
	if serverMaxBuf == 0 || c.chunk > clientMaxBuf {
		c.chunk = clientMaxBuf
	}
	if c.chunk <= 0 {
		return nil, fmt.Errorf("GSSAPI: the server's maximum buffer of %d bytes cannot hold a wrap token", serverMaxBuf)
	}
	return c, nil
}

// Write wraps p into one or more WRAP packets.
func (c *integrityConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n := min(c.chunk, len(p)-written)
		wt := gssapi.WrapToken{Flags: 0, EC: uint16(c.checkLen), SndSeqNum: c.sendSeq, Payload: p[written : written+n]}
		if err := wt.SetCheckSum(c.key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
			return written, err
		}
		tok, err := wt.Marshal()
		if err != nil {
			return written, err
		}
		c.sendSeq++
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
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(m.GetToken(), true); err != nil {
			return 0, fmt.Errorf("%w: GSSAPI wrap token: %v", ErrProtocol, err)
		}
		if wt.Flags&(wrapFlagSealed|wrapFlagAcceptorSubkey) != 0 || wt.RRC != 0 {
			return 0, fmt.Errorf("%w: GSSAPI wrap token with flags %#x, rotation %d: not negotiated", ErrProtocol, wt.Flags, wt.RRC)
		}
		if ok, _ := wt.Verify(c.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
			return 0, fmt.Errorf("%w: a response from %s fails its GSSAPI integrity check", ErrAuthentication, c.addr)
		}
		c.pending = wt.Payload
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
