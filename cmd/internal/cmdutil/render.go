package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Output formats of -o.
const (
	OutputTable = "table"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
)

// Render writes v to out in format: json and yaml come from the same JSON encoding of v, so both
// carry the same public shape; table (and anything else) calls table.
func Render(out io.Writer, format string, v any, table func(w io.Writer) error) error {
	switch format {
	case OutputJSON:
		return WriteJSON(out, v)
	case OutputYAML:
		return WriteYAML(out, v)
	default:
		return table(out)
	}
}

// WriteJSON writes v as indented JSON without HTML escaping. Besides the control characters
// encoding/json escapes, DEL, the C1 controls and the bidi controls are written as \u escapes
// (escapeInvisible): the same JSON value, which a terminal cannot act on.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeInvisible(buf.Bytes()))
	return err
}

// WriteYAML encodes v as JSON first, then turns the JSON into YAML keeping key order and exact
// numbers (an int64 never passes through float64). The YAML encoder escapes the control
// characters; a string holding a bidi control is double-quoted, with the control as a \u escape.
func WriteYAML(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	node, err := jsonToYAML(dec)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.Write(escapeInvisible(buf.Bytes()))
	return err
}

// jsonToYAML reads one JSON value from dec and returns it as a YAML node.
func jsonToYAML(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := keyTok.(string)
				val, err := jsonToYAML(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, yamlString(key), val)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				val, err := jsonToYAML(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, val)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return nil, fmt.Errorf("unexpected JSON delimiter %v", t)
	case string:
		return yamlString(t), nil
	case json.Number:
		tag := "!!int"
		if _, err := t.Int64(); err != nil {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// NewTable returns a tabwriter for aligned columns; Flush it when done.
func NewTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// yamlString is a string scalar, quoted where a YAML 1.1 reader would take it for something else,
// and where it holds a rune that escapeInvisible escapes (the YAML encoder writes bidi controls as
// they are, and only a double-quoted scalar has escapes).
func yamlString(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if yaml11Special(s) || indexInvisible([]byte(s)) >= 0 {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// invisible reports whether escapeInvisible escapes r: DEL, a C1 control or a bidi control, what
// Printable escapes beyond the C0 controls (which JSON and YAML encoders escape themselves).
func invisible(r rune) bool { return r >= 0x7f && unprintable(r) }

// indexInvisible returns the index of the first rune of b that escapeInvisible escapes, or -1.
func indexInvisible(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			if b[i] == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if invisible(r) {
			return i
		}
		i += size
	}
	return -1
}

// escapeInvisible returns JSON or YAML text b with every DEL, C1 control and bidi control written
// as a \u escape (\u007f, \u009b, \u202e), which both read as the same rune. In JSON such a rune
// can only be inside a string; in yarn-er's YAML, only inside a double-quoted scalar (yamlString,
// and the encoder's own quoting of DEL and C1). b comes back as it is when it holds none.
func escapeInvisible(b []byte) []byte {
	i := indexInvisible(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if invisible(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// yaml11Special reports whether a plain scalar s would read as a boolean or null to a YAML 1.1 reader
// (PyYAML, older Java libraries); such strings are quoted.
func yaml11Special(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~":
		return true
	}
	return false
}

// ErrWriter remembers the first write error so that table code can print without checking each call.
type ErrWriter struct {
	W   io.Writer
	Err error
}

// Write implements io.Writer; after the first error it writes nothing and returns that error.
func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}

// Printf formats to the writer, remembering the first error.
func (e *ErrWriter) Printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// OrDash returns s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// invisibleEscaper writes JSON text to w with escapeInvisible applied, for slog's JSON handler,
// which writes each record with one Write.
type invisibleEscaper struct{ w io.Writer }

// Write implements io.Writer: it reports p written whole once its escaped form is.
func (e invisibleEscaper) Write(p []byte) (int, error) {
	if _, err := e.w.Write(escapeInvisible(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
