package gss

import (
	"fmt"

	"github.com/jcmturner/gokrb5/v8/crypto"
	krbgss "github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-er/yarn-er/internal/ipc"
)

// integrity is GSSAPI's integrity layer (hadoop.rpc.protection = integrity): RFC 4121 wrap
// tokens, checksummed, not sealed.
type integrity struct {
	key      types.EncryptionKey
	addr     string
	sendSeq  uint64 // sequence number of the next token sent
	checkLen int
}

// newIntegrity returns the integrity layer of key and the largest payload of one wrap token
// within the server's maximum buffer.
func newIntegrity(key types.EncryptionKey, serverMaxBuf int, addr string) (*integrity, int, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, 0, err
	}
	g := &integrity{key: key, addr: addr, checkLen: et.GetHMACBitLength() / 8}
	// The server's maxbuf bounds a whole wrap token: header, payload and checksum.
	chunk, err := payloadWithin(serverMaxBuf, gssTokenHeaderLen+g.checkLen, "a wrap token")
	if err != nil {
		return nil, 0, err
	}
	return g, chunk, nil
}

// Wrap checksums payload into one wrap token.
func (g *integrity) Wrap(payload []byte) ([]byte, error) {
	wt := krbgss.WrapToken{Flags: 0, EC: uint16(g.checkLen), SndSeqNum: g.sendSeq, Payload: payload}
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

// Unwrap verifies a wrap token of the acceptor and returns its payload.
func (g *integrity) Unwrap(token []byte) ([]byte, error) {
	var wt krbgss.WrapToken
	if err := wt.Unmarshal(token, true); err != nil {
		return nil, fmt.Errorf("%w: GSSAPI wrap token: %v", ipc.ErrProtocol, err)
	}
	if wt.Flags&(wrapFlagSealed|wrapFlagAcceptorSubkey) != 0 || wt.RRC != 0 {
		return nil, fmt.Errorf("%w: GSSAPI wrap token with flags %#x, rotation %d: not negotiated", ipc.ErrProtocol, wt.Flags, wt.RRC)
	}
	if ok, _ := wt.Verify(g.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, fmt.Errorf("%w: a response from %s fails its GSSAPI integrity check", ipc.ErrAuthentication, g.addr)
	}
	return wt.Payload, nil
}
