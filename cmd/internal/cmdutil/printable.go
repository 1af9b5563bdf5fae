package cmdutil

import (
	"strings"
	"unicode/utf8"
)

// Printable returns s safe to write to a terminal: every rune that a terminal would act on or that
// reorders what is shown is replaced by a visible escape, so that a string from the cluster (an
// application's name, a queue, a diagnostic, a RemoteException's message: text any YARN user may
// set) cannot move the cursor, clear the screen, set the window title, start a new line that reads
// like yarn-er's own, or reverse the text after it.
//
// Escaped are the C0 controls and DEL (as \a \b \t \n \v \f \r, else \x1b-style), the C1 controls
// U+0080–U+009F and the Unicode bidirectional controls U+061C, U+200E, U+200F, U+202A–U+202E and
// U+2066–U+2069 (as \u202e-style), and bytes that are not UTF-8 (as \xff-style). Everything else,
// letters of any script and emoji included, is left as it is, and s is returned without copying
// when nothing needs escaping. A backslash is not escaped: the output is for reading, not parsing.
func Printable(s string) string {
	i := firstUnprintable(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case unprintable(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnprintable returns the index of the first byte of s that Printable escapes, or -1.
func firstUnprintable(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i // C0 or DEL
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unprintable(r) {
			return i
		}
		i += size
	}
	return -1
}

// unprintable reports whether Printable escapes r: a C0 or C1 control, DEL, or a bidi control.
func unprintable(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// writeEscape writes the visible escape of an unprintable rune r.
func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\t':
		b.WriteString(`\t`)
	case '\n':
		b.WriteString(`\n`)
	case '\v':
		b.WriteString(`\v`)
	case '\f':
		b.WriteString(`\f`)
	case '\r':
		b.WriteString(`\r`)
	default:
		if r < utf8.RuneSelf {
			writeHex(b, `\x`, uint32(r), 2)
		} else {
			writeHex(b, `\u`, uint32(r), 4)
		}
	}
}

// writeHex writes prefix and v in lower-case hexadecimal, zero-padded to digits.
func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hex[v>>uint(shift)&0xf])
	}
}
