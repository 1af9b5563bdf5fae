package records

import (
	"bytes"
	"errors"
	"math/big"
	"regexp"
	"strconv"
	"testing"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/; run each target with e.g.
// go test -run '^$' -fuzz '^FuzzConvertUnits$' -fuzztime 60s ./records/

func FuzzConvertUnits(f *testing.F) {
	f.Add("Gi", "Mi", int64(4))
	f.Add("p", "P", int64(9223372036854775807))
	f.Add("Ki", "k", int64(-9223372036854775808))
	f.Add("", "m", int64(1))
	f.Add("x", "k", int64(1))
	f.Fuzz(func(t *testing.T, from, to string, v int64) {
		got, err := Convert(from, to, v)
		if !IsKnownUnit(from) || !IsKnownUnit(to) {
			if !errors.Is(err, ErrUnknownUnit) {
				t.Fatalf("Convert(%q, %q, %d): want unknown unit, got %v", from, to, v, err)
			}
			return
		}
		exact, fits := exactConvert(t, from, to, v)
		switch {
		case !fits:
			var oe *OverflowError
			if !errors.As(err, &oe) || oe.Value != v || oe.From != from || oe.To != to {
				t.Fatalf("Convert(%q, %q, %d): want overflow, got %d, %v", from, to, v, got, err)
			}
		case err != nil || got != exact:
			t.Fatalf("Convert(%q, %q, %d) = %d, %v; exact %d", from, to, v, got, err, exact)
		}
		if err == nil {
			// Truncation toward zero: |result in to| never exceeds |v in from|.
			c, cerr := Compare(from, v, to, got)
			if cerr != nil || (v >= 0 && c < 0) || (v < 0 && c > 0) {
				t.Fatalf("Compare(%q, %d, %q, %d) = %d, %v", from, v, to, got, c, cerr)
			}
		}
	})
}

func FuzzCompareUnits(f *testing.F) {
	f.Add("Ki", int64(1000), "M", int64(1))
	f.Add("p", int64(9223372036854775807), "P", int64(1))
	f.Add("Pi", int64(-9223372036854775808), "p", int64(-1))
	f.Add("x", int64(0), "k", int64(0))
	f.Fuzz(func(t *testing.T, ua string, a int64, ub string, b int64) {
		got, err := Compare(ua, a, ub, b)
		if !IsKnownUnit(ua) || !IsKnownUnit(ub) {
			if !errors.Is(err, ErrUnknownUnit) {
				t.Fatalf("Compare(%q, %q): want unknown unit, got %v", ua, ub, err)
			}
			return
		}
		fa, _ := new(big.Rat).SetString(unitFactor[ua])
		fb, _ := new(big.Rat).SetString(unitFactor[ub])
		want := new(big.Rat).Mul(new(big.Rat).SetInt64(a), fa).Cmp(new(big.Rat).Mul(new(big.Rat).SetInt64(b), fb))
		if err != nil || got != want {
			t.Fatalf("Compare(%q, %d, %q, %d) = %d, %v; want %d", ua, a, ub, b, got, err, want)
		}
	})
}

var quantityPattern = regexp.MustCompile(`^([0-9]+) ?([a-zA-Z]*)$`)

func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"4Gi", "5 k", "2", "5  k", "9223372036854775808", "5x", "", "-1", "1.5G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuantity(s)
		m := quantityPattern.FindStringSubmatch(s)
		if err != nil {
			if m != nil && IsKnownUnit(m[2]) {
				if _, perr := strconv.ParseInt(m[1], 10, 64); perr == nil {
					t.Fatalf("ParseQuantity(%q) failed on valid input: %v", s, err)
				}
			}
			return
		}
		if m == nil || !IsKnownUnit(q.Units) || q.Value < 0 {
			t.Fatalf("ParseQuantity(%q) = %+v on input Hadoop rejects", s, q)
		}
		back, err := ParseQuantity(q.String())
		if err != nil || back != q {
			t.Fatalf("round trip of %q: %+v, %v", s, back, err)
		}
	})
}

// FuzzParseContainerID checks the container id parser: what it accepts formats back to the same
// text's id, and the wire number splits back into the same epoch and sequence.
func FuzzParseContainerID(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseContainerID(s)
		if err != nil {
			var ie *IDError
			if !errors.As(err, &ie) {
				t.Fatalf("%q: error %v is not an *IDError", s, err)
			}
			return
		}
		again, err := ParseContainerID(id.String())
		if err != nil || again != id {
			t.Fatalf("%q formatted as %q, which parses to %+v, %v", s, id, again, err)
		}
		if ContainerIDFromNumber(id.Attempt, id.Number()) != id {
			t.Fatalf("%q: the wire number %d does not split back", s, id.Number())
		}
	})
}

// FuzzParseApplicationID checks the application and attempt id parsers: what they accept formats
// back to the same id.
func FuzzParseApplicationID(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := ParseApplicationID(s); err == nil {
			again, err := ParseApplicationID(id.String())
			if err != nil || again != id {
				t.Fatalf("%q formatted as %q, which parses to %+v, %v", s, id, again, err)
			}
		}
		if id, err := ParseApplicationAttemptID(s); err == nil {
			again, err := ParseApplicationAttemptID(id.String())
			if err != nil || again != id {
				t.Fatalf("%q formatted as %q, which parses to %+v, %v", s, id, again, err)
			}
		}
	})
}

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

// FuzzDecodeTokenURLString checks the REST token form: what decodes encodes back to a string that
// decodes to the same token.
func FuzzDecodeTokenURLString(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := DecodeTokenURLString(s)
		if err != nil {
			if !errors.Is(err, ErrBadToken) {
				t.Fatalf("%q: error %v does not match ErrBadToken", s, err)
			}
			return
		}
		again, err := DecodeTokenURLString(tok.EncodeToURLString())
		if err != nil || !bytes.Equal(again.Identifier, tok.Identifier) || !bytes.Equal(again.Password, tok.Password) ||
			again.Kind != tok.Kind || again.Service != tok.Service {
			t.Fatalf("%q: round trip gave %v, %v", s, again, err)
		}
	})
}
