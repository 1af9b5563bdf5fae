package ipc

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"errors"
	"fmt"
)

// The magic constants of RFC 2831 sections 2.3 and 2.4 that derive the integrity and the
// confidentiality keys from H(A1).
const (
	digestClientSignMagic = "Digest session key to client-to-server signing key magic constant"
	digestServerSignMagic = "Digest session key to server-to-client signing key magic constant"
	digestClientSealMagic = "Digest H(A1) to client-to-server sealing key magic constant"
	digestServerSealMagic = "Digest H(A1) to server-to-client sealing key magic constant"
)

// digestMACLen is the length of the HMAC-MD5 prefix in a wrapped message; a wrapped message is
// the payload, the MAC, the message type 1 (2 bytes) and the sequence number (4 bytes).
const (
	digestMACLen   = 10
	digestOverhead = digestMACLen + 2 + 4
)

// digestIntegrity is DIGEST-MD5's security layer (RFC 2831 sections 2.3 and 2.4): every message
// carries the first 10 bytes of HMAC-MD5(Ki, seqnum || message) under the sender's signing key,
// then message type 1 and its sequence number, counted per direction from 0. With qop auth-conf
// (cipher rc4), message and MAC are encrypted under the sender's sealing key, whose key stream
// runs on across messages; type and sequence number stay in clear.
type digestIntegrity struct {
	sendKey, recvKey [md5.Size]byte
	sendSeq, recvSeq uint32
	addr             string
	// sendRC4 and recvRC4 are set with qop auth-conf.
	sendRC4, recvRC4 *rc4.Cipher
}

// securityLayer returns the security layer of a completed auth-int or auth-conf authentication,
// and the largest payload of one message within the server's
// maxbuf.
func (d *digestMD5) securityLayer(addr string) (SecurityLayer, int, error) {
	if (d.qop != qopAuthInt && d.qop != qopAuthConf) || d.response == "" {
		return nil, 0, errors.New("DIGEST-MD5: no security layer was negotiated")
	}
	ha1 := digestHA1(d.username, d.realm, d.password, d.nonce, d.cnonce)
	l := &digestIntegrity{
		sendKey: md5.Sum(append(ha1[:], digestClientSignMagic...)),
		recvKey: md5.Sum(append(ha1[:], digestServerSignMagic...)),
		addr:    addr,
	}
	maxBuf := d.maxBuf
	if maxBuf == 0 {
		maxBuf = ClientMaxBuffer // RFC 2831: 65536 when the server names none
	}
	chunk := min(maxBuf, ClientMaxBuffer) - digestOverhead
	if d.qop == qopAuthInt {
		return l, chunk, nil
	}
	// rc4: the sealing keys are MD5 of all 16 octets of H(A1) and the magic constant.
	var err error
	if l.sendRC4, err = rc4.NewCipher(md5Sum(ha1[:], digestClientSealMagic)); err != nil {
		return nil, 0, err
	}
	if l.recvRC4, err = rc4.NewCipher(md5Sum(ha1[:], digestServerSealMagic)); err != nil {
		return nil, 0, err
	}
	return l, chunk, nil
}

func md5Sum(key []byte, magic string) []byte {
	s := md5.Sum(append(append([]byte(nil), key...), magic...))
	return s[:]
}

func digestMAC(key [md5.Size]byte, seq uint32, msg []byte) []byte {
	m := hmac.New(md5.New, key[:])
	var sb [4]byte
	binary.BigEndian.PutUint32(sb[:], seq)
	m.Write(sb[:])
	m.Write(msg)
	return m.Sum(nil)[:digestMACLen]
}

// Wrap signs (and with auth-conf seals) payload.
func (l *digestIntegrity) Wrap(payload []byte) ([]byte, error) {
	out := make([]byte, 0, len(payload)+digestOverhead)
	out = append(out, payload...)
	out = append(out, digestMAC(l.sendKey, l.sendSeq, payload)...)
	if l.sendRC4 != nil {
		l.sendRC4.XORKeyStream(out, out)
	}
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint32(out, l.sendSeq)
	l.sendSeq++
	return out, nil
}

// Unwrap checks (and with auth-conf opens) a message from the server.
func (l *digestIntegrity) Unwrap(token []byte) ([]byte, error) {
	if len(token) < digestOverhead {
		return nil, fmt.Errorf("%w: DIGEST-MD5 wrapped message of %d bytes is shorter than its trailer", ErrProtocol, len(token))
	}
	n := len(token) - 6 // message and MAC, then type and sequence number in clear
	typ := binary.BigEndian.Uint16(token[n:])
	seq := binary.BigEndian.Uint32(token[n+2:])
	if typ != 1 {
		return nil, fmt.Errorf("%w: DIGEST-MD5 wrapped message of type %d, want 1", ErrProtocol, typ)
	}
	if seq != l.recvSeq {
		return nil, fmt.Errorf("%w: DIGEST-MD5 wrapped message %d from %s, want %d (replayed or lost)", ErrAuthentication, seq, l.addr, l.recvSeq)
	}
	body := token[:n]
	if l.recvRC4 != nil {
		body = make([]byte, n)
		l.recvRC4.XORKeyStream(body, token[:n])
	}
	msg, mac := body[:n-digestMACLen], body[n-digestMACLen:]
	if !hmac.Equal(mac, digestMAC(l.recvKey, seq, msg)) {
		return nil, fmt.Errorf("%w: a response from %s fails its DIGEST-MD5 integrity check", ErrAuthentication, l.addr)
	}
	l.recvSeq++
	return msg, nil
}
