package gss

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-er/yarn-er/internal/ipc"
)

// FuzzUnwrap feeds arbitrary WRAP tokens, as a server could send them, to GSSAPI's security
// layers (integrity and privacy): neither panics, and what one accepts is a payload no longer
// than the token.
func FuzzUnwrap(f *testing.F) {
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{7}, 32)}
	layers := func(t testing.TB) []ipc.SecurityLayer {
		priv, _, err := newPrivacy(key, 0, "x")
		if err != nil {
			t.Fatal(err)
		}
		integ, _, err := newIntegrity(key, 0, "x")
		if err != nil {
			t.Fatal(err)
		}
		return []ipc.SecurityLayer{priv, integ}
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
