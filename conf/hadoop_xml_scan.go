package conf

import (
	"bytes"
	"fmt"
)

// xmlScanFinding is a start tag over one of the limits scanXMLTags checks.
type xmlScanFinding struct {
	// Offset is the byte offset of the tag's '<' in the scanned data.
	Offset int
	// What names the limit ("attributes of one element", "start tag size"); Limit is its value.
	What  string
	Limit int64
	// Detail says what was found, naming the element.
	Detail string
	// Fix says how to repair the file.
	Fix string
}

// scanXMLTags reads the markup of an XML document without building anything, before encoding/xml
// does, and returns the first start tag that has more than maxAttrs attributes or is longer than
// maxTagBytes bytes (from '<' to '>'), or nil. encoding/xml builds every attribute of a start tag
// before it returns the element, so an element with a million attributes (or namespace declarations)
// would take hundreds of megabytes before the parser could look at it.
//
// It finds the boundaries of comments, CDATA sections, processing instructions, directives
// (<!DOCTYPE …>, whose quoted strings and nested <…> and comments it follows) and quoted attribute
// values exactly as encoding/xml does, so a '>' inside any of them never ends a tag, and it counts an
// attribute for each quoted value. Where the markup is malformed (an unclosed comment or quote, a '<'
// inside a tag) it stops and returns nil: encoding/xml fails there too, with its own syntax error,
// before reading further. It never reads outside data and never allocates except for a finding.
func scanXMLTags(data []byte, maxAttrs, maxTagBytes int) *xmlScanFinding {
	n := len(data)
	i := 0
	for {
		k := bytes.IndexByte(data[i:], '<')
		if k < 0 {
			return nil
		}
		i += k
		if i+1 >= n {
			return nil
		}
		var next int // offset after the markup at i; -1 when it is malformed
		switch data[i+1] {
		case '/': // end tag: a name, spaces and '>'
			next = afterByte(data, i+2, '>')
		case '?': // processing instruction: the first "?>" after "<?"
			next = afterSeq(data, i+2, "?>")
		case '!':
			next = skipBang(data, i)
		default:
			var f *xmlScanFinding
			next, f = scanStartTag(data, i, maxAttrs, maxTagBytes)
			if f != nil {
				return f
			}
		}
		if next < 0 {
			return nil
		}
		i = next
	}
}

// afterByte returns the offset after the first b at or after from, or -1.
func afterByte(data []byte, from int, b byte) int {
	if from > len(data) {
		return -1
	}
	k := bytes.IndexByte(data[from:], b)
	if k < 0 {
		return -1
	}
	return from + k + 1
}

// afterSeq returns the offset after the first seq at or after from, or -1.
func afterSeq(data []byte, from int, seq string) int {
	if from > len(data) {
		return -1
	}
	k := bytes.Index(data[from:], []byte(seq))
	if k < 0 {
		return -1
	}
	return from + k + len(seq)
}

// skipBang returns the offset after the comment, CDATA section or directive starting with "<!" at
// i, or -1 where encoding/xml fails on it.
func skipBang(data []byte, i int) int {
	n := len(data)
	if i+2 >= n {
		return -1
	}
	switch data[i+2] {
	case '-':
		// a comment ends at the first "--", which must be followed by '>'
		if i+3 >= n || data[i+3] != '-' {
			return -1
		}
		k := bytes.Index(data[i+4:], []byte("--"))
		if k < 0 {
			return -1
		}
		end := i + 4 + k + 2
		if end >= n || data[end] != '>' {
			return -1
		}
		return end + 1
	case '[':
		if !bytes.HasPrefix(data[i+3:], []byte("CDATA[")) {
			return -1
		}
		return afterSeq(data, i+9, "]]>")
	}
	return skipDirective(data, i+3)
}

// skipDirective returns the offset after the directive (<!DOCTYPE …>) whose body starts at j, the
// byte after "<!" and the one after it (which encoding/xml takes as it is), or -1. It follows
// encoding/xml's rules: quoted strings hide '<' and '>', a nested '<' opens a level that a '>'
// closes, and "<!--" starts a comment that ends at the first "-->".
func skipDirective(data []byte, j int) int {
	n := len(data)
	var inquote byte
	depth := 0
	for {
		if j >= n {
			return -1
		}
		b := data[j]
		j++
		if inquote == 0 && b == '>' && depth == 0 {
			return j
		}
		for again := true; again; {
			again = false
			switch {
			case b == inquote:
				inquote = 0
			case inquote != 0:
			case b == '\'' || b == '"':
				inquote = b
			case b == '>':
				depth--
			case b == '<':
				// "<!--" starts a comment; any other byte is taken as it comes, one level deeper
				comment := true
				for _, c := range []byte("!--") {
					if j >= n {
						return -1
					}
					b = data[j]
					j++
					if b != c {
						depth++
						comment, again = false, true
						break
					}
				}
				if comment {
					var b0, b1 byte
					for {
						if j >= n {
							return -1
						}
						b = data[j]
						j++
						if b0 == '-' && b1 == '-' && b == '>' {
							break
						}
						b0, b1 = b1, b
					}
				}
			}
		}
	}
}

// scanStartTag returns the offset after the start tag at i, or -1 where encoding/xml fails on it,
// and a finding when the tag is over a limit. Every attribute has one quoted value, and a quote ends
// at the next same quote (an entity reference cannot hold one); '<' is never inside a tag.
func scanStartTag(data []byte, i, maxAttrs, maxTagBytes int) (int, *xmlScanFinding) {
	n := len(data)
	attrs := 0
	j := i + 1
	for {
		if j >= n {
			return -1, nil
		}
		if j-i >= maxTagBytes {
			// data[i:j+1] is already longer than the limit
			return -1, tagSizeFinding(data, i, maxTagBytes)
		}
		switch b := data[j]; b {
		case '>':
			return j + 1, nil
		case '<':
			return -1, nil
		case '"', '\'':
			attrs++
			if attrs > maxAttrs {
				return -1, attrsFinding(data, i, maxAttrs)
			}
			q := bytes.IndexByte(data[j+1:], b)
			if q < 0 {
				return -1, nil
			}
			if bytes.IndexByte(data[j+1:j+1+q], '<') >= 0 {
				return -1, nil
			}
			j += q + 2
		default:
			j++
		}
	}
}

func attrsFinding(data []byte, i, maxAttrs int) *xmlScanFinding {
	return &xmlScanFinding{Offset: i, What: "attributes of one element", Limit: int64(maxAttrs),
		Detail: fmt.Sprintf("%s has %d attributes or more", tagName(data, i), maxAttrs+1),
		Fix: "an element of a Hadoop configuration has a few attributes at most (name, value and final on a short-form <property>, " +
			"xmlns:xi and href on <xi:include>), and Hadoop's own parser refuses more than 1000; check that this is the right file"}
}

func tagSizeFinding(data []byte, i, maxTagBytes int) *xmlScanFinding {
	return &xmlScanFinding{Offset: i, What: "start tag size", Limit: int64(maxTagBytes),
		Detail: fmt.Sprintf("the start tag of %s has %d bytes or more", tagName(data, i), maxTagBytes+1),
		Fix: "a start tag of a Hadoop configuration is well under a kilobyte; write a long value as <value>…</value> " +
			"text instead of a value=\"…\" attribute, and check that this is the right file"}
}

// tagName renders the element name of the start tag at i for a message: "<name>", cut to 64 bytes,
// or "an element" when the name has bytes other than ASCII name characters.
func tagName(data []byte, i int) string {
	const maxShown = 64
	j := i + 1
	for j < len(data) && j-i-1 < maxShown+1 && isASCIINameByte(data[j]) {
		j++
	}
	name := data[i+1 : j]
	switch {
	case len(name) == 0 || (j < len(data) && data[j] >= 0x80):
		return "an element"
	case len(name) > maxShown:
		return "<" + string(name[:maxShown]) + "…>"
	}
	return "<" + string(name) + ">"
}

// isASCIINameByte reports whether c is an ASCII byte of an XML name.
func isASCIINameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == ':' || c == '.' || c == '-'
}
