package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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

// WriteJSON writes v as indented JSON without HTML escaping.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteYAML encodes v as JSON first, then turns the JSON into YAML keeping key order and exact
// numbers (an int64 never passes through float64).
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
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return err
	}
	return enc.Close()
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

// yamlString is a string scalar, quoted where a YAML 1.1 reader would take it for something else.
func yamlString(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if yaml11Special(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
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
