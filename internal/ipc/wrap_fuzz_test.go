package ipc

import (
	"testing"

	"github.com/yarn-er/yarn-er/internal/ipc/layertest"
)

// FuzzUnwrap feeds arbitrary WRAP tokens, as a server could send them, to DIGEST-MD5's security
// layers (integrity and privacy; package gss fuzzes GSSAPI's): none panics, and what one accepts
// is a payload no longer than the token.
func FuzzUnwrap(f *testing.F) {
	d := newDigestMD5(&Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default")
	d.cnonce = "c"
	if _, err := d.respond([]byte(`nonce="n",qop="auth-int",algorithm=md5-sess`)); err != nil {
		f.Fatal(err)
	}
	layers := func(t testing.TB) []layertest.Layer {
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
		return []layertest.Layer{mac, priv}
	}
	layertest.FuzzUnwrap(f, layers)
}
