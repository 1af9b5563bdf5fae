// Package layertest fuzzes SASL security layers (the WRAP tokens of DIGEST-MD5 and GSSAPI) for
// the tests of internal/ipc and internal/ipc/gss. It does not import internal/ipc, so that
// package's own tests can use it.
package layertest

import "testing"

// Layer is ipc.SecurityLayer: a payload into one WRAP token and back.
type Layer interface {
	Wrap(payload []byte) ([]byte, error)
	Unwrap(token []byte) ([]byte, error)
}

// FuzzUnwrap feeds arbitrary WRAP tokens, as a server could send them, to fresh layers from
// layers: none may panic, and what one accepts is a payload no longer than the token. The seeds
// are what each layer sends (the receiving side sees the peer's, so these fail to verify, but
// they have the right shape), and short and empty tokens.
func FuzzUnwrap(f *testing.F, layers func(testing.TB) []Layer) {
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
