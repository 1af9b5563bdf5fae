package conf

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SplitFlinkList splits a legacy Flink list value the way Flink's
// StructuredOptionsSplitter.splitEscaped(value, ';') does (the parser behind every List-typed option
// such as external-resources):
//
//   - items are separated by ';' and unquoted items are trimmed ("gpu ; fpga" gives [gpu fpga]);
//   - an item may be quoted with '...' or "..."; inside, ';' is literal and the quote is escaped by
//     doubling it (see the examples below); quoted items are not trimmed;
//   - a quote inside an unquoted item is kept as an ordinary character (A'B gives [A'B]), as
//     current Flink does (early releases of the splitter rejected it);
//   - a quoted item followed by anything but ';' (after blanks) is an error "Could not split string.
//     Illegal quoting at position: <i>", with i counted in UTF-16 units as Java does;
//   - an unclosed quote is an error "Could not split string. Quoting was not closed properly.";
//   - two ';' in a row give an empty item (gpu;;fpga gives [gpu "" fpga]); a leading or trailing ';'
//     gives nothing; "" and blank strings give an empty list.
//
// Examples:
//
//	gpu;fpga         [gpu fpga]
//	'a;b';c          [a;b c]
//	'it''s';"x""y"   [it's x"y]
//	gpu;;fpga        [gpu  fpga]   (three items, the middle one empty)
func SplitFlinkList(s string) ([]string, error) {
	toks, err := tokenizeFlinkList(s)
	if err != nil {
		return nil, err
	}
	items := make([]string, 0, len(toks))
	for i, t := range toks {
		switch t.kind {
		case listQuoted:
			if i+1 < len(toks) && toks[i+1].kind != listDelim {
				return nil, fmt.Errorf("Could not split string. Illegal quoting at position: %d", toks[i+1].pos-1)
			}
			items = append(items, t.text)
		case listUnquoted:
			items = append(items, t.text)
		case listDelim:
			if i+1 < len(toks) && toks[i+1].kind == listDelim {
				items = append(items, "")
			}
		}
	}
	return items, nil
}

type listTokenKind int

const (
	listUnquoted listTokenKind = iota
	listQuoted
	listDelim
)

type listToken struct {
	kind listTokenKind
	text string
	pos  int // position in UTF-16 code units, as Java counts String indexes
}

// tokenizeFlinkList cuts s into quoted items, unquoted items and delimiters, skipping blanks
// between tokens.
func tokenizeFlinkList(s string) ([]listToken, error) {
	var toks []listToken
	pos := 0 // UTF-16 position of s[i:]
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\'' || r == '"':
			text, n, units, err := consumeQuoted(s[i+1:], byte(r))
			if err != nil {
				return nil, err
			}
			toks = append(toks, listToken{kind: listQuoted, text: text, pos: pos})
			i += 1 + n
			pos += 1 + units
		case r == ';':
			toks = append(toks, listToken{kind: listDelim, text: ";", pos: pos})
			i++
			pos++
		case IsJavaWhitespace(r):
			i += w
			pos += utf16Len(r)
		default:
			end := strings.IndexByte(s[i:], ';')
			if end < 0 {
				end = len(s) - i
			}
			toks = append(toks, listToken{kind: listUnquoted, text: JavaTrim(s[i : i+end]), pos: pos})
			pos += utf16Units(s[i : i+end])
			i += end
		}
	}
	return toks, nil
}

// consumeQuoted reads a quoted item whose opening quote precedes s. It returns the unescaped text,
// the bytes consumed (closing quote included) and the same length in UTF-16 units.
func consumeQuoted(s string, quote byte) (text string, n, units int, err error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == quote {
			if i+1 < len(s) && s[i+1] == quote {
				b.WriteByte(quote)
				i += 2
				continue
			}
			return b.String(), i + 1, utf16Units(s[:i+1]), nil
		}
		b.WriteByte(s[i])
		i++
	}
	return "", 0, 0, fmt.Errorf("Could not split string. Quoting was not closed properly.")
}

// IsJavaWhitespace mirrors java.lang.Character.isWhitespace, which Flink and Hadoop use to tell blank
// values: Unicode space, line and paragraph separators other than the no-break spaces, plus
// \t \n \v \f \r and U+001C..U+001F.
func IsJavaWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f:
		return true
	case 0x00a0, 0x2007, 0x202f:
		return false
	case ' ', 0x1680, 0x2028, 0x2029, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// JavaTrim mirrors java.lang.String.trim, with which Flink and Hadoop trim configuration values: it
// strips every character up to U+0020 from both ends.
func JavaTrim(s string) string {
	start, end := 0, len(s)
	for start < end && s[start] <= ' ' {
		start++
	}
	for end > start && s[end-1] <= ' ' {
		end--
	}
	return s[start:end]
}

// utf16Units returns the length of s in UTF-16 code units (an invalid byte counts as one unit, as
// Java's decoder turns it into one U+FFFD).
func utf16Units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Len(r)
	}
	return n
}

func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
