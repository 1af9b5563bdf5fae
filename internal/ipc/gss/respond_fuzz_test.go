package gss

import (
	"bytes"
	"testing"

	krbgss "github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
)

// FuzzGSSAPIRespond feeds arbitrary security-layer messages (the server's last GSSAPI challenge)
// to the client: it never panics, and it answers only a message that verifies under the session
// key and offers "no security layer" or integrity.
func FuzzGSSAPIRespond(f *testing.F) {
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{7}, 32)}
	for _, layers := range []byte{1, 2, 4, 7} {
		wt := krbgss.WrapToken{Flags: wrapFlagSentByAcceptor, EC: 12, Payload: []byte{layers, 1, 0, 0}}
		if err := wt.SetCheckSum(key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
			f.Fatal(err)
		}
		b, err := wt.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x05, 0x04, 0x01, 0xff, 0x00, 0x0c, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, challenge []byte) {
		g := &exchange{spn: "nn/localhost", key: key}
		out, err := g.Respond(challenge)
		if err != nil {
			if g.complete || out != nil {
				t.Fatalf("a refused challenge completed the exchange")
			}
			return
		}
		var wt krbgss.WrapToken
		if uerr := wt.Unmarshal(challenge, true); uerr != nil {
			t.Fatalf("answered a challenge that does not parse: %v", uerr)
		}
		if ok, _ := wt.Verify(key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok || wt.Payload[0]&(saslLayerNone|saslLayerIntegrity|saslLayerPrivacy) == 0 {
			t.Fatalf("answered a challenge that does not verify or offers no layer yarn-er knows")
		}
		if !g.complete {
			t.Fatalf("answered without completing")
		}
	})
}
