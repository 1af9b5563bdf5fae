package ipc

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
)

// FuzzReadResponse feeds a byte stream through the client's response path: length-prefixed packets,
// then the response header and the optional body.
func FuzzReadResponse(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := bytes.NewReader(stream)
		for i := 0; i < 64; i++ {
			p, err := ReadPacket(r, 1<<16)
			if err != nil {
				return
			}
			h, body, err := ParseResponse(p)
			if err != nil {
				if !errors.Is(err, ErrProtocol) {
					t.Fatalf("error not matching ErrProtocol: %v", err)
				}
				continue
			}
			if len(body) > len(p) {
				t.Fatalf("body longer than the packet")
			}
			if h.Status == nil || h.CallId == nil {
				t.Fatalf("required fields missing after a successful parse")
			}
			// A remote error built from any header must format without panicking.
			_ = remoteErrorFrom(h, "m").Error()
			if h.GetStatus() == commonpb.RpcResponseHeaderProto_SUCCESS && body != nil {
				_ = proto.Unmarshal(body, &commonpb.RpcSaslProto{})
			}
		}
	})
}

// FuzzParseDigestChallenge checks the DIGEST-MD5 challenge parser and that a parsed challenge can
// always be answered or refused cleanly.
func FuzzParseDigestChallenge(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		dirs, derr := ParseDigestDirectives(string(in))
		if derr == nil {
			// Re-serializing quoted directives must parse back to the same list.
			var parts []string
			for _, d := range dirs {
				parts = append(parts, d.Key+"="+quoteDigest(d.Value))
			}
			again, err := ParseDigestDirectives(strings.Join(parts, ","))
			if err != nil {
				t.Fatalf("re-serialized directives do not parse: %v", err)
			}
			if len(again) != len(dirs) {
				t.Fatalf("round trip changed %d directives into %d", len(dirs), len(again))
			}
			for i := range dirs {
				if again[i] != dirs[i] {
					t.Fatalf("round trip changed %q into %q", dirs[i], again[i])
				}
			}
		}
		ch, err := ParseDigestChallenge(in)
		if err != nil {
			return
		}
		if ch.Nonce == "" || len(ch.QOP) == 0 {
			t.Fatalf("accepted challenge without nonce or qop: %+v", ch)
		}
		d := newDigestMD5(&Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default")
		resp, err := d.respond(in)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedQOP) {
				t.Fatalf("respond to a parsed challenge: %v", err)
			}
			return
		}
		if _, err := ParseDigestDirectives(string(resp)); err != nil {
			t.Fatalf("our response does not parse: %v\n%s", err, resp)
		}
	})
}
