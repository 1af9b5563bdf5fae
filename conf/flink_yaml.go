package conf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits that keep hostile config.yaml files (alias bombs, deep nesting, node-dense text) cheap to reject.
const (
	// yamlMaxBytes bounds the text given to the YAML parser. The parser builds the whole node tree
	// before anything can count its nodes, and that tree costs up to about 250 bytes of memory per
	// byte of input (a flow list of one-letter items, or of items with comments), so a 16 MiB file
	// would take gigabytes. A real config.yaml is a few KB (Flink's own, comments included, about
	// 15 KB).
	yamlMaxBytes = 512 << 10
	// yamlMaxNodes bounds the nodes visited while flattening, aliases counted each time they are
	// followed, so "billion laughs" documents fail fast instead of expanding.
	yamlMaxNodes = 100_000
	// yamlMaxText bounds the text of the flattened configuration: every key (with its prefix) and
	// value, aliases counted each time they are followed, so that a long scalar or key repeated
	// through aliases, or a long key over many nested entries, fails fast instead of taking
	// gigabytes.
	yamlMaxText = 16 << 20
	// yamlMaxDepth bounds mapping/sequence nesting.
	yamlMaxDepth = 100
)

// ParseFlinkYAML parses a standard YAML config.yaml (Flink 1.19 and later) the way Flink's
// GlobalConfiguration does: nested mappings are flattened with '.' so that nested and flat dotted
// spellings are equivalent, and every entry remembers name:line (the line of its key).
//
//   - Scalars keep their text as written in Value (0700 stays "0700", 1.10 stays "1.10"; quoted
//     strings lose their quotes). Flink itself types plain scalars with the YAML 1.2 core schema and
//     renders them back with Java's toString (0700 → "700", 1.10 → "1.1", True → "true"); that
//     rendering is available from FlinkConfig.FlinkString.
//   - A sequence (block or flow) fills List with the item texts, and Value with the legacy ';'-joined
//     form (items quoted when needed so that SplitFlinkList(Value) gives List back). A mapping inside a
//     sequence becomes the legacy "k:v,k2:v2" map form.
//   - Every mapping is flattened, including those given to Map-typed options: "opt: {k1: v1}" becomes
//     the entry "opt.k1" = "v1", which is how Flink stores it and reads it back as a prefix map.
//     An empty mapping sets nothing (with a warning).
//   - A null value ("key:", "key: ~", "key: null") is an error, as Flink fails on it ("Value must not
//     be null").
//   - A key given twice in the same mapping is an error naming both lines, as Flink's YAML parser
//     refuses duplicate keys. A key given once nested and once flat ("a: {b: 1}" and "a.b: 2") is
//     what Flink's flattening resolves: the one that comes later in the file wins, with a warning
//     naming both lines.
//   - A key with a blank at either end (a quoted key keeps them) or an invisible character (a no-break
//     space, a zero-width space, a control character) is kept as Flink keeps it, with a warning: it
//     matches no option.
//   - Anchors and aliases are resolved; merge keys ("<<") are rejected, since Flink's YAML 1.2 parser
//     does not support them; expansion is bounded (100,000 nodes and 16 MiB of flattened keys and
//     values, aliases counted each time they are used), so alias bombs fail with an error wrapping
//     ErrLimit.
//   - Only one YAML document is allowed; the top level must be a mapping (an empty file is an empty
//     configuration).
//   - A file over 512 KiB is refused with an error wrapping ErrLimit before it is parsed: the parser's
//     node tree would take up to about 250 times its size in memory.
func ParseFlinkYAML(name string, data []byte) (*FlinkConfig, error) {
	if len(data) > yamlMaxBytes {
		return nil, &Error{
			Source: Source{File: name},
			Err:    &LimitError{What: "YAML size", Limit: yamlMaxBytes, Detail: fmt.Sprintf("the file has %d bytes", len(data))},
			Fix:    "a Flink config.yaml is a few KB; check that this is the right file",
		}
	}
	cfg := &FlinkConfig{files: fileList(name)}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return cfg, nil
		}
		return nil, yamlSyntaxError(name, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{
			Source: Source{File: name, Line: extra.Line},
			Err:    errors.New("more than one YAML document"),
			Fix:    "keep a single document: remove the '---' separator and merge the settings",
		}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlSyntaxError(name, data, err)
	}
	f := &yamlFlattener{name: name, cfg: cfg, lines: make(map[string]yamlKeyPos)}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return cfg, nil
		}
		root = root.Content[0]
	}
	if err := f.top(root); err != nil {
		return nil, err
	}
	return cfg, nil
}

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlSyntaxError turns a yaml.v3 error into an *Error with the line it names.
func yamlSyntaxError(name string, data []byte, err error) error {
	msg := err.Error()
	src := Source{File: name}
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			src.Line = n
		}
		msg = m[2]
		if isYAMLParserError(msg) {
			// yaml.v3 reports parser (not scanner) errors with a 0-based line
			src.Line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	fix := "fix the YAML syntax there or just before it; a file written for Flink's legacy flink-conf.yaml format must be migrated (Flink's bin/migrate-config-file.sh) or named flink-conf.yaml"
	switch m := yamlErrAnchor.FindStringSubmatch(msg); {
	case src.Line > 0:
	case m != nil:
		// yaml.v3 gives no line for an unknown alias: find where it is used
		src.Line = lineOf(data, "*"+m[1])
		fix = "quote a value that starts with '*' ('*all'), or define the anchor (&" + m[1] + ") before using it"
	case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "control characters") || strings.Contains(msg, "Unicode character"):
		src.Line = badCharLine(data)
		fix = "save the file as UTF-8 without control characters"
	default:
		// yaml.v3 omits the line when the problem is on the first line
		src.Line = 1
	}
	return &Error{Source: src, Err: fmt.Errorf("invalid YAML: %s", msg), Fix: fix}
}

// isYAMLParserError tells the messages of yaml.v3's parser, whose line yaml.v3 gives 0-based, from
// those of its scanner, which it gives 1-based.
func isYAMLParserError(msg string) bool {
	for _, p := range []string{"did not find expected", "found duplicate %", "found incompatible YAML document", "found undefined tag handle"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

var yamlErrAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// badCharLine returns the line of the first invalid UTF-8 sequence or control character (other than
// tab, CR and LF) in data, or 0.
func badCharLine(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, w := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && w <= 1:
			return line
		case r == '\n':
			line++
		case r < 0x20 && r != '\t' && r != '\r', r == 0x7f:
			return line
		}
		i += w
	}
	return 0
}

// lineOf returns the 1-based line of the first occurrence of s in data, or 0.
func lineOf(data []byte, s string) int {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

type yamlFlattener struct {
	name    string
	cfg     *FlinkConfig
	lines   map[string]yamlKeyPos // flattened key → where it was set
	visited int
	text    int // bytes of keys and values flattened so far
}

func (f *yamlFlattener) limitError(n *yaml.Node, key, what string, limit int, detail, fix string) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Source: Source{File: f.name, Line: line}, Key: key, Err: &LimitError{What: what, Limit: int64(limit), Detail: detail}, Fix: fix}
}

// shortKey cuts a key for a message (an error about its size, a warning about a character in it) to
// its first 200 bytes (at a rune boundary).
func shortKey(k string) string { return cutAtRune(k, 200) }

// charge counts n more bytes of flattened text, at node at (for the error's line) under key (cut
// by shortKey in the error).
func (f *yamlFlattener) charge(at *yaml.Node, key string, n int) error {
	f.text += n
	if f.text > yamlMaxText {
		return f.limitError(at, shortKey(key), "flattened size", yamlMaxText, "the keys and values so far, aliases counted each time they are used",
			"write each value once instead of repeating long values or keys through aliases")
	}
	return nil
}

func (f *yamlFlattener) errorf(n *yaml.Node, key, fix, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Source: Source{File: f.name, Line: line}, Key: key, Err: fmt.Errorf(format, args...), Fix: fix}
}

// deref follows aliases, counting each visit against the node budget.
func (f *yamlFlattener) deref(n *yaml.Node) (*yaml.Node, error) {
	at := n // where the node is used: the alias, not its anchor
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > yamlMaxDepth || n.Alias == nil {
			return nil, f.errorf(n, "", "remove the alias or point it at an anchor defined earlier", "alias *%s cannot be resolved", n.Value)
		}
		n = n.Alias
	}
	f.visited++
	if f.visited > yamlMaxNodes {
		return nil, f.limitError(at, "", "YAML nodes", yamlMaxNodes, "aliases counted each time they are used",
			"a Flink configuration has a few hundred settings: check that this is the right file, and write values out instead of nesting aliases")
	}
	return n, nil
}

func (f *yamlFlattener) top(root *yaml.Node) error {
	root, err := f.deref(root)
	if err != nil {
		return err
	}
	switch {
	case root.Kind == yaml.MappingNode:
		return f.mapping(root, "", 0)
	case root.Kind == yaml.ScalarNode && scalarTag(root) == "!!null":
		return nil
	default:
		return f.errorf(root, "", "write the configuration as \"key: value\" lines at the top level", "the top level of a Flink config.yaml must be a mapping, not a %s", kindName(root))
	}
}

func (f *yamlFlattener) mapping(m *yaml.Node, prefix string, depth int) error {
	if depth > yamlMaxDepth {
		return f.errorf(m, prefix, "flatten the keys with '.'", "mappings nested more than %d deep", yamlMaxDepth)
	}
	seen := make(map[string]int, len(m.Content)/2) // this mapping's own keys → line
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, err := f.deref(m.Content[i])
		if err != nil {
			return err
		}
		if kn.Kind != yaml.ScalarNode {
			return f.errorf(kn, prefix, "use plain text keys", "a %s cannot be a configuration key", kindName(kn))
		}
		if kn.Tag == "!!merge" && kn.Style&yaml.TaggedStyle == 0 && kn.Value == "<<" {
			return f.errorf(kn, prefix+"<<", "write the inherited keys out; Flink's YAML 1.2 parser does not support merge keys", "YAML merge keys (<<) are not supported")
		}
		if err := f.checkTag(kn, prefix+kn.Value); err != nil {
			return err
		}
		kt := keyText(kn)
		key := prefix + kt
		if err := f.charge(m.Content[i], key, len(key)); err != nil {
			return err
		}
		if prev, dup := seen[kt]; dup {
			return f.errorf(kn, key, "keep one of the two", "key is set twice in the same mapping, at lines %d and %d (Flink's YAML parser refuses it: \"found duplicate key\")", prev, kn.Line)
		}
		seen[kt] = kn.Line
		vn, err := f.deref(m.Content[i+1])
		if err != nil {
			return err
		}
		switch vn.Kind {
		case yaml.MappingNode:
			if len(vn.Content) == 0 {
				f.cfg.warn(Source{File: f.name, Line: kn.Line}, "%s is an empty mapping; Flink sets nothing for it (fix: give it keys, or remove it)", key)
				continue
			}
			if err := f.mapping(vn, key+".", depth+1); err != nil {
				return err
			}
		case yaml.SequenceNode:
			items, err := f.sequence(vn, key, depth+1)
			if err != nil {
				return err
			}
			if err := f.set(m, kn, FlinkValue{Key: key, Value: joinFlinkList(items), List: items}, ""); err != nil {
				return err
			}
		case yaml.ScalarNode:
			if err := f.checkTag(vn, key); err != nil {
				return err
			}
			tag := scalarTag(vn)
			if tag == "!!null" {
				return f.errorf(kn, key, "give the key a value, or remove the line (comment it out with '#')", "the value is empty (null); Flink fails to start on it (\"Value must not be null\")")
			}
			if err := f.set(m, kn, FlinkValue{Key: key, Value: vn.Value}, javaString(vn.Value, tag)); err != nil {
				return err
			}
		default:
			return f.errorf(vn, key, "write a scalar, a list or a mapping", "unsupported YAML %s", kindName(vn))
		}
	}
	return nil
}

// yamlKeyPos is where a flattened key was set: its line and the mapping that holds it.
type yamlKeyPos struct {
	line   int
	parent *yaml.Node
}

// set records one flattened entry of mapping m; flinkString is Flink's rendering when it differs
// from the text. A key already set from another mapping (once nested, once flat) is replaced, as
// Flink's flattening keeps the one that comes last in the file, with a warning naming both lines.
func (f *yamlFlattener) set(m, kn *yaml.Node, v FlinkValue, flinkString string) error {
	if prev, dup := f.lines[v.Key]; dup {
		if prev.parent == m {
			return f.errorf(kn, v.Key, "keep one of the two", "key is set twice, at lines %d and %d", prev.line, kn.Line)
		}
		f.cfg.warn(Source{File: f.name, Line: kn.Line},
			"%s is set twice, at lines %d and %d (once nested, once as a dotted key): Flink keeps the later one, line %d (fix: keep one of the two)",
			v.Key, prev.line, kn.Line, kn.Line)
		delete(f.cfg.flinkStrings, v.Key)
	}
	if err := f.charge(kn, v.Key, len(v.Value)); err != nil {
		return err
	}
	f.lines[v.Key] = yamlKeyPos{line: kn.Line, parent: m}
	if r, at, odd := oddKeyChar(v.Key); odd {
		f.cfg.warn(Source{File: f.name, Line: kn.Line}, oddKeyWarning, shortKey(v.Key), r, at)
	}
	v.Source = Source{File: f.name, Line: kn.Line}
	f.cfg.put(v)
	if flinkString != "" && flinkString != v.Value {
		if f.cfg.flinkStrings == nil {
			f.cfg.flinkStrings = make(map[string]string)
		}
		f.cfg.flinkStrings[v.Key] = flinkString
	}
	return nil
}

// sequence returns the items of a YAML sequence as text. A mapping item becomes Flink's legacy map
// form "k:v,k2:v2".
func (f *yamlFlattener) sequence(s *yaml.Node, key string, depth int) ([]string, error) {
	items := make([]string, 0, len(s.Content))
	for _, c := range s.Content {
		n, err := f.deref(c)
		if err != nil {
			return nil, err
		}
		switch n.Kind {
		case yaml.ScalarNode:
			if err := f.checkTag(n, key); err != nil {
				return nil, err
			}
			if err := f.charge(c, key, len(n.Value)); err != nil {
				return nil, err
			}
			items = append(items, n.Value)
		case yaml.MappingNode:
			pairs := make([]string, 0, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				kn, err := f.deref(n.Content[i])
				if err != nil {
					return nil, err
				}
				vn, err := f.deref(n.Content[i+1])
				if err != nil {
					return nil, err
				}
				if kn.Kind != yaml.ScalarNode || vn.Kind != yaml.ScalarNode {
					return nil, f.errorf(n, key, "use only text keys and values inside a list item", "a mapping in a list may hold only scalars")
				}
				if err := f.charge(c, key, len(kn.Value)+len(vn.Value)); err != nil {
					return nil, err
				}
				pairs = append(pairs, escapeWithSingleQuote(kn.Value, ",", ":")+":"+escapeWithSingleQuote(vn.Value, ",", ":"))
			}
			items = append(items, strings.Join(pairs, ","))
		default:
			return nil, f.errorf(n, key, "flatten the list: Flink options take lists of values or of maps", "a list cannot contain a %s", kindName(n))
		}
	}
	return items, nil
}

// checkTag rejects explicit tags outside the YAML 1.2 core schema, which Flink's parser rejects too.
func (f *yamlFlattener) checkTag(n *yaml.Node, key string) error {
	if n.Style&yaml.TaggedStyle == 0 {
		return nil
	}
	tag := n.ShortTag()
	switch tag {
	case "!!str", "!!map", "!!seq":
		return nil
	case "!!int", "!!float", "!!bool", "!!null":
		if n.Kind != yaml.ScalarNode {
			break
		}
		got := coreTag(n.Value)
		if got == tag || (tag == "!!float" && got == "!!int") {
			return nil
		}
		return f.errorf(n, key, "remove the tag or write a value of that type", "%q is not a valid %s", n.Value, tag)
	}
	return f.errorf(n, key, "remove the tag; Flink reads only the YAML 1.2 core schema (!!str, !!int, !!float, !!bool, !!null)", "unsupported YAML tag %s", n.Tag)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	default:
		return "node"
	}
}

// keyText returns a key as Flink builds it: the Java string of the key's value (an unquoted "0700:"
// key is "700", "~:" is "null"). Quoted keys keep their text.
func keyText(kn *yaml.Node) string { return javaString(kn.Value, scalarTag(kn)) }

// joinFlinkList renders items in Flink's legacy list form: ';'-joined, each item single-quoted
// (quotes doubled) when it contains ';' or a quote, as Flink's ConfigurationUtils does, and also when
// it is empty or starts or ends with a blank, so that SplitFlinkList gives the items back.
func joinFlinkList(items []string) string {
	parts := make([]string, len(items))
	for i, it := range items {
		if it == "" || JavaTrim(it) != it || startsWithJavaSpace(it) {
			parts[i] = "'" + strings.ReplaceAll(it, "'", "''") + "'"
			continue
		}
		parts[i] = escapeWithSingleQuote(it, ";")
	}
	return strings.Join(parts, ";")
}

// startsWithJavaSpace reports whether s starts with a character SplitFlinkList skips before an item.
func startsWithJavaSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return IsJavaWhitespace(r)
}

// escapeWithSingleQuote quotes s with single quotes (doubling any inside) when it contains a quote or
// one of chars, as Flink's StructuredOptionsSplitter.escapeWithSingleQuote does.
func escapeWithSingleQuote(s string, chars ...string) string {
	need := strings.ContainsAny(s, `'"`)
	for _, c := range chars {
		if strings.Contains(s, c) {
			need = true
		}
	}
	if !need {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
