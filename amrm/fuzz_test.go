package amrm

import (
	"bytes"
	"testing"
)

// FuzzParseCredentials checks the token storage file reader: no panics, and whatever it accepts
// survives a write and a second read in both formats.
func FuzzParseCredentials(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCredentials(b)
		if err != nil {
			return
		}
		for _, format := range []TokenFormat{FormatWritable, FormatProtobuf} {
			out, err := c.Marshal(format)
			if err != nil {
				t.Fatalf("marshal %v: %v", format, err)
			}
			again, err := ParseCredentials(out)
			if err != nil {
				t.Fatalf("re-read %v: %v", format, err)
			}
			if len(again.Tokens) != len(c.Tokens) || len(again.Secrets) != len(c.Secrets) {
				t.Fatalf("round trip %v changed the counts", format)
			}
			for a, tok := range c.Tokens {
				g := again.Tokens[a]
				if !bytes.Equal(g.Identifier, tok.Identifier) || !bytes.Equal(g.Password, tok.Password) || g.Kind != tok.Kind || g.Service != tok.Service {
					t.Fatalf("round trip %v changed token %q", format, a)
				}
			}
			for a, s := range c.Secrets {
				if !bytes.Equal(again.Secrets[a], s) {
					t.Fatalf("round trip %v changed secret %q", format, a)
				}
			}
		}
	})
}
