package ipc

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"
)

// FuzzUnwrap feeds arbitrary WRAP tokens, as a server could send them, to the security layers
// yarn-er speaks (DIGEST-MD5 integrity and privacy, GSSAPI integrity and privacy): none panics, and what one
// accepts is a payload no longer than the token.
func FuzzUnwrap(f *testing.F) {
	d := newDigestMD5(&Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default")
	d.cnonce = "c"
	if _, err := d.respond([]byte(`nonce="n",qop="auth-int",algorithm=md5-sess`)); err != nil {
		f.Fatal(err)
	}
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{7}, 32)}
	layers := func(t testing.TB) []saslLayer {
		mac, _, err := d.securityLayer("x")
		if err != nil {
			t.Fatal(err)
		}
		conf := *d
		conf.qop = qopAuthConf
		priv, _, err := conf.securityLayer("x")
		if err != nil {
			t.Fatal(err)
		}
		gss, _, err := newGSSPrivacy(key, 0, "x")
		if err != nil {
			t.Fatal(err)
		}
		gssInt, _, err := newGSSIntegrity(key, 0, "x")
		if err != nil {
			t.Fatal(err)
		}
		return []saslLayer{mac, priv, gss, gssInt}
	}
	// Seeds: what each layer sends (the receiving side sees the peer's, so these fail to verify,
	// but they have the right shape), and short and empty tokens.
	for _, l := range layers(f) {
		tok, err := l.wrap([]byte("hello"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok)
	}
	f.Add([]byte{})
	f.Add([]byte{5, 4, 3, 0xff, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, tok []byte) {
		for _, l := range layers(t) {
			p, err := l.unwrap(tok)
			if err == nil && len(p) > len(tok) {
				t.Fatalf("%T accepted a %d-byte token as a %d-byte payload", l, len(tok), len(p))
			}
		}
	})
}
