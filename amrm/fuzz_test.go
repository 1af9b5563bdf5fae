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

// FuzzParseContainerID checks the container id parser: what it accepts formats back to an id that
// parses to the same protobuf.
func FuzzParseContainerID(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		p, err := containerIDProto(ContainerID(s))
		if err != nil {
			return
		}
		id := containerIDFromProto(p)
		p2, err := containerIDProto(id)
		if err != nil {
			t.Fatalf("%q formatted as %q, which does not parse: %v", s, id, err)
		}
		if p2.GetId() != p.GetId() || containerIDFromProto(p2) != id {
			t.Fatalf("%q: round trip through %q changed the id", s, id)
		}
	})
}
