package ipc

import "testing"

// FuzzUnwrap feeds arbitrary WRAP tokens, as a server could send them, to DIGEST-MD5's security
// layers (integrity and privacy; package gss fuzzes GSSAPI's): none panics, and what one accepts
// is a payload no longer than the token.
func FuzzUnwrap(f *testing.F) {
	d := newDigestMD5(&Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default")
	d.cnonce = "c"
	if _, err := d.respond([]byte(`nonce="n",qop="auth-int",algorithm=md5-sess`)); err != nil {
		f.Fatal(err)
	}
	layers := func(t testing.TB) []SecurityLayer {
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
		return []SecurityLayer{mac, priv}
	}
	// Seeds: what each layer sends (the receiving side sees the peer's, so these fail to verify,
	// but they have the right shape), and short and empty tokens.
	for _, l := range layers(f) {
		tok, err := l.Wrap([]byte("hello"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok)
	}
	f.Add([]byte{})
	f.Add([]byte{5, 4, 3, 0xff, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, tok []byte) {
		for _, l := range layers(t) {
			p, err := l.Unwrap(tok)
			if err == nil && len(p) > len(tok) {
				t.Fatalf("%T accepted a %d-byte token as a %d-byte payload", l, len(tok), len(p))
			}
		}
	})
}
