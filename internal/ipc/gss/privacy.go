package gss

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/etype"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-er/yarn-er/internal/ipc"
)

// gssTokenHeaderLen is the length of an RFC 4121 wrap token's header.
const gssTokenHeaderLen = 16

// privacy is GSSAPI's confidentiality layer (hadoop.rpc.protection = privacy): RFC 4121 wrap
// tokens with the Sealed flag, whose payload, filler and a copy of the header are encrypted with
// the session key's etype (RFC 3961: confounder, encryption, integrity checksum), under the
// initiator's and the acceptor's sealing key usages.
type privacy struct {
	key     types.EncryptionKey
	et      etype.EType
	addr    string
	sendSeq uint64
}

// newPrivacy returns the privacy layer of key and the largest payload of one wrap token within
// the server's maximum buffer.
func newPrivacy(key types.EncryptionKey, serverMaxBuf int, addr string) (*privacy, int, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, 0, err
	}
	overhead := gssTokenHeaderLen + et.GetConfounderByteSize() + gssTokenHeaderLen + et.GetHMACBitLength()/8
	chunk, err := payloadWithin(serverMaxBuf, overhead, "a sealed wrap token")
	if err != nil {
		return nil, 0, err
	}
	return &privacy{key: key, et: et, addr: addr}, chunk, nil
}

// payloadWithin is the largest payload of one wrap token with overhead bytes around it that the
// server's maximum buffer (0: none named) takes, at most what yarn-er itself receives.
func payloadWithin(serverMaxBuf, overhead int, token string) (int, error) {
	chunk := serverMaxBuf - overhead
	if serverMaxBuf == 0 || chunk > ipc.ClientMaxBuffer {
		chunk = ipc.ClientMaxBuffer
	}
	if chunk <= 0 {
		return 0, fmt.Errorf("GSSAPI: the server's maximum buffer of %d bytes cannot hold %s", serverMaxBuf, token)
	}
	return chunk, nil
}

// sealedHeader is a wrap token header: TOK_ID 05 04, flags, filler FF, EC, RRC, SND_SEQ.
func sealedHeader(flags byte, ec, rrc uint16, seq uint64) []byte {
	h := []byte{0x05, 0x04, flags, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(h[4:], ec)
	binary.BigEndian.PutUint16(h[6:], rrc)
	binary.BigEndian.PutUint64(h[8:], seq)
	return h
}

// Wrap seals payload into one wrap token.
func (g *privacy) Wrap(payload []byte) ([]byte, error) {
	// EC 0: the etypes yarn-er meets (AES with ciphertext stealing) need no padding; RRC 0.
	h := sealedHeader(wrapFlagSealed, 0, 0, g.sendSeq)
	plain := append(append(make([]byte, 0, len(payload)+len(h)), payload...), h...)
	_, ct, err := g.et.EncryptMessage(g.key.KeyValue, plain, keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: seal: %w", err)
	}
	g.sendSeq++
	return append(h, ct...), nil
}

// Unwrap opens a sealed wrap token of the acceptor.
func (g *privacy) Unwrap(token []byte) ([]byte, error) {
	if len(token) < gssTokenHeaderLen || token[0] != 0x05 || token[1] != 0x04 || token[3] != 0xff {
		return nil, fmt.Errorf("%w: not a GSSAPI wrap token", ipc.ErrProtocol)
	}
	flags := token[2]
	if flags&wrapFlagSealed == 0 || flags&wrapFlagSentByAcceptor == 0 || flags&wrapFlagAcceptorSubkey != 0 {
		return nil, fmt.Errorf("%w: GSSAPI wrap token with flags %#x on a connection with privacy: want sealed, from the acceptor, no acceptor subkey", ipc.ErrProtocol, flags)
	}
	ec := int(binary.BigEndian.Uint16(token[4:]))
	rrc := int(binary.BigEndian.Uint16(token[6:]))
	data := token[gssTokenHeaderLen:]
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty GSSAPI wrap token", ipc.ErrProtocol)
	}
	// The acceptor may have rotated the encrypted part right by RRC octets (RFC 4121 section 4.2.5).
	if r := rrc % len(data); r != 0 {
		data = append(append(make([]byte, 0, len(data)), data[r:]...), data[:r]...)
	}
	// The shortest ciphertext: confounder, the header copy, checksum (gokrb5 indexes out of
	// range on less).
	if len(data) < g.et.GetConfounderByteSize()+gssTokenHeaderLen+g.et.GetHMACBitLength()/8 {
		return nil, fmt.Errorf("%w: sealed GSSAPI wrap token of %d bytes is too short", ipc.ErrProtocol, len(token))
	}
	plain, err := g.decrypt(data)
	if err != nil {
		return nil, fmt.Errorf("%w: a response from %s does not decrypt under the session key", ipc.ErrAuthentication, g.addr)
	}
	if len(plain) < ec+gssTokenHeaderLen {
		return nil, fmt.Errorf("%w: sealed GSSAPI wrap token too short for its filler and header", ipc.ErrProtocol)
	}
	// The encrypted copy of the header has RRC 0.
	want := bytes.Clone(token[:gssTokenHeaderLen])
	want[6], want[7] = 0, 0
	if !bytes.Equal(plain[len(plain)-gssTokenHeaderLen:], want) {
		return nil, fmt.Errorf("%w: the encrypted header of a response from %s differs from its header", ipc.ErrAuthentication, g.addr)
	}
	return plain[:len(plain)-gssTokenHeaderLen-ec], nil
}

// decrypt is the etype's DecryptMessage under the acceptor's sealing usage, with a panic in the
// Kerberos library (malformed input it does not check) turned into an error.
func (g *privacy) decrypt(data []byte) (plain []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			plain, err = nil, fmt.Errorf("the Kerberos library failed: %v", r)
		}
	}()
	return g.et.DecryptMessage(g.key.KeyValue, data, keyusage.GSSAPI_ACCEPTOR_SEAL)
}
