package gss

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-er/yarn-er/internal/ipc/layertest"
)

// FuzzUnwrap feeds arbitrary WRAP tokens, as a server could send them, to GSSAPI's security
// layers (integrity and privacy): neither panics, and what one accepts is a payload no longer
// than the token.
func FuzzUnwrap(f *testing.F) {
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{7}, 32)}
	layers := func(t testing.TB) []layertest.Layer {
		priv, _, err := newPrivacy(key, 0, "x")
		if err != nil {
			t.Fatal(err)
		}
		integ, _, err := newIntegrity(key, 0, "x")
		if err != nil {
			t.Fatal(err)
		}
		return []layertest.Layer{priv, integ}
	}
	layertest.FuzzUnwrap(f, layers)
}
