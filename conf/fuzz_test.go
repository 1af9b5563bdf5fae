package conf

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/; these f.Add calls cover the basics so that a
// plain `go test` exercises every target.

func FuzzParseFlinkLegacy(f *testing.F) {
	f.Add([]byte("a: 1\nb: x: y # c\n\r\n: v\nk:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseFlinkLegacy("flink-conf.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("legacy parser fails only on a limit, got %v", err)
			}
			fatalUnlessFixableError(t, err, "flink-conf.yaml")
			return
		}
		lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1
		for _, k := range cfg.Keys() {
			v, ok := cfg.Lookup(k)
			if !ok || v.Key != k {
				t.Fatalf("Lookup(%q) = %v, %v", k, v, ok)
			}
			if k == "" || v.Value == "" || JavaTrim(k) != k || JavaTrim(v.Value) != v.Value {
				t.Fatalf("key %q value %q: empty or untrimmed", k, v.Value)
			}
			if strings.Contains(k, "#") || strings.Contains(v.Value, "#") {
				t.Fatalf("comment leaked into %q: %q", k, v.Value)
			}
			if !utf8.ValidString(k) || !utf8.ValidString(v.Value) {
				t.Fatalf("invalid UTF-8 kept in %q: %q", k, v.Value)
			}
			if v.Source.Line < 1 || v.Source.Line > lines {
				t.Fatalf("line %d out of range 1..%d", v.Source.Line, lines)
			}
		}
		for _, w := range cfg.Warnings() {
			if w.Source.Line < 1 || w.Message == "" {
				t.Fatalf("warning without line or message: %v", w)
			}
		}
	})
}

func FuzzParseFlinkYAML(f *testing.F) {
	f.Add([]byte("a:\n  b: [x, 'y;z']\n  c: &x {d: 1}\ne: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseFlinkYAML("config.yaml", data)
		if err != nil {
			fatalUnlessFixableError(t, err, "config.yaml")
			if cfg != nil {
				t.Fatal("config returned with an error")
			}
			return
		}
		for _, k := range cfg.Keys() {
			v, _ := cfg.Lookup(k)
			if v.Source.Line < 1 {
				t.Fatalf("%q has no line", k)
			}
			if v.List != nil {
				items, err := SplitFlinkList(v.Value)
				if err != nil {
					t.Fatalf("%q: Value %q does not split: %v", k, v.Value, err)
				}
				if !slices.Equal(items, v.List) {
					t.Fatalf("%q: Value %q splits to %q, List is %q", k, v.Value, items, v.List)
				}
			}
			_ = cfg.FlinkString(k)
		}
	})
}

func FuzzParseHadoopXML(f *testing.F) {
	f.Add([]byte(`<configuration><property><name>a</name><value>${b}</value><final>true</final></property></configuration>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := ParseHadoopXML("yarn-site.xml", data)
		if err != nil {
			fatalUnlessFixableError(t, err, "yarn-site.xml")
			return
		}
		cfg := &HadoopConfig{lookupEnv: func(string) (string, bool) { return "", false }}
		for _, p := range props {
			if p.Name == "" || strings.TrimSpace(p.Name) != p.Name {
				t.Fatalf("bad name %q", p.Name)
			}
			if p.Raw == "" || p.Value != p.Raw {
				t.Fatalf("%s: raw %q value %q", p.Name, p.Raw, p.Value)
			}
			if p.Source.Line < 1 {
				t.Fatalf("%s has no line", p.Name)
			}
			cfg.set(xmlProp{Property: p, hasValue: true})
		}
		cfg.expandAll() // expansion must not panic or loop on any input
	})
}

// fatalUnlessFixableError fails the test unless err is an *Error naming file and saying how to fix it.
func fatalUnlessFixableError(t *testing.T, err error, file string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) || ce.Source.File != file || ce.Fix == "" {
		t.Fatalf("error is not a *conf.Error naming the file with a fix: %#v", err)
	}
}

func FuzzSplitFlinkList(f *testing.F) {
	f.Add("gpu; 'a;b' ;\"x\"\"y\";;")
	f.Fuzz(func(t *testing.T, s string) {
		items, err := SplitFlinkList(s)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "Could not split string. Illegal quoting at position: ") &&
				msg != "Could not split string. Quoting was not closed properly." {
				t.Fatalf("unexpected error %q", msg)
			}
			return
		}
		joined := joinFlinkList(items)
		again, err := SplitFlinkList(joined)
		if err != nil || !slices.Equal(items, again) {
			t.Fatalf("%q: items %q join to %q which splits to %q (%v)", s, items, joined, again, err)
		}
	})
}
