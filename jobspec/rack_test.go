package jobspec

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestCheckRack(t *testing.T) {
	for _, tc := range []struct {
		rack string
		msg  string // "": a rack
	}{
		{rack: "/default-rack"},
		{rack: "/dc1/rack7"},
		{rack: "/rack_a.1:x"},
		{rack: "", msg: "empty"},
		{rack: "default-rack", msg: `"default-rack" does not start with /`},
		{rack: "/", msg: "has an empty part"},
		{rack: "/a/", msg: "has an empty part"},
		{rack: "//a", msg: "has an empty part"},
		{rack: "/a b", msg: "a space"},
		{rack: "/a\tb", msg: "a control character"},
		{rack: "/a,/b", msg: "a comma"},
		{rack: "/*", msg: "or *"},
		{rack: "/a\xffb", msg: "a space, a control character"},
		{rack: "/" + strings.Repeat("x", MaxRackLen), msg: "256 bytes, more than 255"},
	} {
		err := CheckRack(tc.rack)
		if tc.msg == "" {
			assert.NoError(t, err, "%q", tc.rack)
			continue
		}
		assert.ErrorContains(t, err, tc.msg, "%q", tc.rack)
	}
}

// FuzzCheckRack: CheckRack never panics, and what it accepts is an absolute path of non-empty
// parts, short, valid UTF-8, without spaces, commas or *.
func FuzzCheckRack(f *testing.F) {
	for _, s := range []string{"/default-rack", "/dc1/rack7", "", "/", "a//b", "/a b", "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckRack(s) != nil {
			return
		}
		if !strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//") || len(s) > MaxRackLen ||
			!utf8.ValidString(s) || strings.ContainsAny(s, " ,*\t\n") {
			t.Fatalf("%q accepted", s)
		}
	})
}
