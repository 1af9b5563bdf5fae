package conf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlinkYAML(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     map[string]entry
		lists    map[string][]string
		warnings []string
	}{
		{
			name: "nested and flat keys are equivalent",
			in: `external-resource:
  gpu:
    amount: 2
    yarn.config-key: yarn.io/gpu
external-resource.fpga.amount: 1
`,
			want: map[string]entry{
				"external-resource.gpu.amount":          {"2", 3},
				"external-resource.gpu.yarn.config-key": {"yarn.io/gpu", 4},
				"external-resource.fpga.amount":         {"1", 5},
			},
		},
		{
			name: "scalars keep their text",
			in:   "mode: 0700\nversion: 1.10\nflag: True\nhex: 0x1F\nyes: yes\nsq: 'it''s'\ndq: \"a\\tb\"\nspaced: \"  x  \"\n",
			want: map[string]entry{
				"mode": {"0700", 1}, "version": {"1.10", 2}, "flag": {"True", 3}, "hex": {"0x1F", 4},
				"yes": {"yes", 5}, "sq": {"it's", 6}, "dq": {"a\tb", 7}, "spaced": {"  x  ", 8},
			},
		},
		{
			name: "values with ': ', '*' or '%' when quoted, and block scalars",
			in:   "name: \"gpu: training\"\nstar: '*all'\npct: '%d'\nopts: >-\n  -Xmx1g\n  -Dx=y\nlit: |\n  line1\n  line2\n",
			want: map[string]entry{
				"name": {"gpu: training", 1}, "star": {"*all", 2}, "pct": {"%d", 3},
				"opts": {"-Xmx1g -Dx=y", 4}, "lit": {"line1\nline2\n", 7},
			},
		},
		{
			name: "flow and block lists, and the legacy string form",
			in:   "external-resources: [gpu, fpga]\nblock:\n  - a;b\n  - \"it's\"\n  - ''\nlegacy: gpu;fpga\nempty: []\n",
			want: map[string]entry{
				"external-resources": {"gpu;fpga", 1},
				"block":              {"'a;b';'it''s';''", 2},
				"legacy":             {"gpu;fpga", 6},
				"empty":              {"", 7},
			},
			lists: map[string][]string{
				"external-resources": {"gpu", "fpga"},
				"block":              {"a;b", "it's", ""},
				"legacy":             nil,
				"empty":              {},
			},
		},
		{
			name: "maps are flattened, as Flink stores Map options",
			in:   "pipeline.global-job-parameters: {k1: v1, k2: v2}\nmetrics.reporter.prom:\n  factory.class: P\n  port: 9249\n",
			want: map[string]entry{
				"pipeline.global-job-parameters.k1":   {"v1", 1},
				"pipeline.global-job-parameters.k2":   {"v2", 1},
				"metrics.reporter.prom.factory.class": {"P", 3},
				"metrics.reporter.prom.port":          {"9249", 4},
			},
		},
		{
			name: "a list of maps uses Flink's legacy map form",
			in:   "pipeline.cached-files:\n  - name: file1\n    path: 'hdfs:///x,y'\n  - {name: file2, path: /tmp/f2}\n",
			want: map[string]entry{
				"pipeline.cached-files": {"'name:file1,path:''hdfs:///x,y''';name:file2,path:/tmp/f2", 1},
			},
			lists: map[string][]string{
				"pipeline.cached-files": {"name:file1,path:'hdfs:///x,y'", "name:file2,path:/tmp/f2"},
			},
		},
		{
			name: "anchors and aliases are resolved",
			in:   "base: &gpu yarn.io/gpu\nexternal-resource.gpu.yarn.config-key: *gpu\nlist: &l [a, b]\ncopy: *l\n",
			want: map[string]entry{
				"base": {"yarn.io/gpu", 1}, "external-resource.gpu.yarn.config-key": {"yarn.io/gpu", 2},
				"list": {"a;b", 3}, "copy": {"a;b", 4},
			},
		},
		{
			name:     "an empty mapping sets nothing, with a warning",
			in:       "a: {}\nb: 1\n",
			want:     map[string]entry{"b": {"1", 2}},
			warnings: []string{"f.yaml:1: a is an empty mapping"},
		},
		{
			name: "empty document and comments only",
			in:   "# nothing here\n",
			want: map[string]entry{},
		},
		{
			name: "keys keep their case; numeric keys as Flink renders them",
			in:   "Parallelism.Default: 1\nparallelism.default: 2\nlevels:\n  0700: x\n",
			want: map[string]entry{"Parallelism.Default": {"1", 1}, "parallelism.default": {"2", 2}, "levels.700": {"x", 4}},
		},
		{
			name: "explicit core tags",
			in:   "a: !!str 0700\nb: !!int 12\nc: !!float 1\n? !!null ''\n: x\n",
			want: map[string]entry{"a": {"0700", 1}, "b": {"12", 2}, "c": {"1", 3}, "null": {"x", 4}},
		},
		{
			name: "a quoted key with blanks or a no-break space stays as written, with a warning",
			in:   "\"taskmanager.memory.process.size \": 4g\nexternal-resource:\n  gpu\u00a0:\n    amount: 2\n' a': 1\n",
			want: map[string]entry{"taskmanager.memory.process.size ": {"4g", 1}, "external-resource.gpu\u00a0.amount": {"2", 4}, " a": {"1", 5}},
			warnings: []string{
				`f.yaml:1: "taskmanager.memory.process.size " has U+0020 at byte 31, a blank or invisible character that Flink keeps as part of the key, so the key matches no Flink option (fix: retype the key without it)`,
				`f.yaml:4: "external-resource.gpu\u00a0.amount" has U+00A0 at byte 21`,
				`f.yaml:5: " a" has U+0020 at byte 0`,
			},
		},
		{
			name: "CRLF and a BOM",
			in:   "\uFEFFa: 1\r\nb:\r\n  c: 2\r\n",
			want: map[string]entry{"a": {"1", 1}, "b.c": {"2", 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseFlinkYAML("f.yaml", []byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, flinkEntries(cfg))
			for k, want := range tt.lists {
				v, ok := cfg.Lookup(k)
				require.True(t, ok, k)
				assert.Equal(t, want, v.List, k)
				items, err := v.Items()
				require.NoError(t, err)
				if want == nil {
					continue
				}
				assert.Equal(t, want, items, k)
				again, err := SplitFlinkList(v.Value)
				require.NoError(t, err)
				assert.Equal(t, want, again, "Value round-trips through SplitFlinkList for %s", k)
			}
			ws := cfg.Warnings()
			require.Len(t, ws, len(tt.warnings), warningsText(ws))
			for i, w := range tt.warnings {
				assert.Contains(t, ws[i].String(), w)
				assert.Contains(t, ws[i].Message, "fix:")
			}
		})
	}
}

func TestParseFlinkYAMLErrors(t *testing.T) {
	runParseErrorCases(t, "conf/config.yaml", ParseFlinkYAML, []parseErrorCase{
		{name: "duplicate key in one mapping", in: "a: 1\nb: 2\na: 3\n", line: 3, key: "a", msg: "key is set twice in the same mapping, at lines 1 and 3"},
		{name: "duplicate mapping key in one mapping", in: "a:\n  b: 1\na:\n  c: 2\n", line: 3, key: "a", msg: "found duplicate key"},
		{name: "duplicate nested key", in: "a:\n  b: 1\n  b: 2\n", line: 3, key: "a.b", msg: "lines 2 and 3"},
		{name: "null value", in: "a: 1\nexternal-resources:\n", line: 2, key: "external-resources", msg: "Value must not be null"},
		{name: "tilde value", in: "a: ~\n", line: 1, key: "a", msg: "null"},
		{name: "syntax error names the line", in: "a: 1\nb: [x, y\nc: 2\n", line: 2, msg: "invalid YAML"},
		{name: "legacy file with ': ' inside a plain value", in: "a: 1\nyarn.application.name: gpu: training\n", line: 2, msg: "invalid YAML"},
		{name: "bad indentation", in: "a:\n  b: 1\n c: 2\n", line: 3, msg: "invalid YAML"},
		{name: "leading star is an alias", in: "a: 1\nb: *all\n", line: 2, msg: "unknown anchor 'all'"},
		{name: "top level list", in: "- a\n- b\n", line: 1, msg: "must be a mapping"},
		{name: "top level scalar", in: "just text\n", line: 1, msg: "must be a mapping"},
		{name: "two documents", in: "a: 1\n---\nb: 2\n", line: 2, msg: "more than one YAML document"},
		{name: "merge key", in: "base: &b {x: 1}\nd:\n  <<: *b\n", line: 3, key: "d.<<", msg: "merge keys"},
		{name: "mapping as key", in: "? {a: 1}\n: v\n", line: 1, msg: "cannot be a configuration key"},
		{name: "map with a list in a list", in: "a:\n  - {x: [1]}\n", line: 2, key: "a", msg: "a mapping in a list may hold only scalars"},
		{name: "list in list", in: "a: [[x]]\n", line: 1, key: "a", msg: "a list cannot contain a list"},
		{name: "custom tag", in: "a: !secret x\n", line: 1, key: "a", msg: "unsupported YAML tag !secret"},
		{name: "tag that does not fit", in: "a: !!int twelve\n", line: 1, key: "a", msg: `"twelve" is not a valid !!int`},
		{name: "alias bomb", in: billionLaughs(), line: 1, msg: "YAML nodes: limit of 100000 exceeded (aliases counted each time they are used)"},
		{name: "a long list without aliases is not called an alias bomb", in: "a: [" + strings.Repeat("x,", yamlMaxNodes) + "x]\n", line: 1,
			msg: "YAML nodes: limit of 100000 exceeded"},
		{name: "a long scalar repeated through aliases in a list", in: "a: &a " + strings.Repeat("x", 100<<10) + "\nb: [" + strings.Repeat("*a, ", 200) + "*a]\n",
			line: 2, key: "b", msg: "flattened size: limit of 16777216 exceeded"},
		{name: "a long scalar repeated through aliases as values", in: "a: &a " + strings.Repeat("x", 100<<10) + "\n" + aliasLines("", "*a", 200),
			line: 164, key: "k162", msg: "flattened size: limit of 16777216 exceeded"},
		{name: "a long key over many nested entries", in: "? " + strings.Repeat("k", 100<<10) + "\n:\n" + aliasLines("  ", "1", 3000),
			line: 165, key: strings.Repeat("k", 200) + "…", msg: "flattened size: limit of 16777216 exceeded"},
		{name: "tabs for indentation", in: "a:\n\tb: 1\n", line: 2, msg: "invalid YAML"},
		{name: "unclosed quote", in: "a: 1\nb: 'x\n", line: 2, msg: "invalid YAML"},
		{name: "parser error on first line", in: "{a: 1\n", line: 2, msg: "invalid YAML"},
		{name: "invalid UTF-8", in: "a: 1\nb: x\xffy\n", line: 2, msg: "invalid YAML"},
		{name: "control character", in: "a: 1\n\nb: x\x01y\n", line: 3, msg: "invalid YAML"},
		{name: "missing flow mapping comma", in: "a: {b: 1 c: 2}\n", line: 1, msg: "invalid YAML"},
	})
}

// parseErrorCase is an input that a parser must refuse with an *Error at line of the file (0: the
// file as a whole), naming key ("" for none) and saying msg and how to fix it.
type parseErrorCase struct {
	name string
	in   string
	line int
	key  string
	msg  string
}

// runParseErrorCases parses each case's input as file with parse and checks the error it must give.
func runParseErrorCases[T any](t *testing.T, file string, parse func(string, []byte) (T, error), cases []parseErrorCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(file, []byte(tt.in))
			require.Error(t, err)
			assert.Nil(t, got)
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, file, ce.Source.File)
			assert.Equal(t, tt.line, ce.Source.Line, err.Error())
			assert.Equal(t, tt.key, ce.Key)
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotEmpty(t, ce.Fix, "every error says how to fix it")
		})
	}
}

// aliasLines returns n lines "<indent>k<i>: value".
func aliasLines(indent, value string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk%d: %s\n", indent, i, value)
	}
	return b.String()
}

// billionLaughs builds the classic alias bomb with mappings: 10 levels of 10 aliases each, which
// flattens to 10^10 keys.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 {a: lol, b: lol, c: lol, d: lol, e: lol, f: lol, g: lol, h: lol, i: lol, j: lol}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d {", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "k%d: *l%d", j, i-1)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// Flink flattens config.yaml depth-first in file order, so a key given once nested and once flat is
// the one that comes later (checked against Flink 1.20.0 and 2.0.0: profile/testdata/flink-golden,
// dup-*).
func TestParseFlinkYAMLNestedAndFlatLaterWins(t *testing.T) {
	cases := []struct {
		name, in, want string
		line           int
		warn           string
	}{
		{name: "nested then flat", in: "external-resource:\n  gpu:\n    amount: 2\nexternal-resource.gpu.amount: 3\n",
			want: "3", line: 4, warn: "external-resource.gpu.amount is set twice, at lines 3 and 4"},
		{name: "flat then nested", in: "a.b: 1\na:\n  b: 2\n", want: "2", line: 3, warn: "a.b is set twice, at lines 1 and 3"},
		{name: "flat then deeper nested", in: "a.b.c: x\na:\n  b.c: y\n", want: "y", line: 3, warn: "a.b.c is set twice, at lines 1 and 3"},
		{name: "typed scalar replaced", in: "a:\n  b: 0700\na.b: x\n", want: "x", line: 3, warn: "lines 2 and 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseFlinkYAML("conf/config.yaml", []byte(tc.in))
			require.NoError(t, err)
			key := "a.b"
			if strings.HasPrefix(tc.in, "external") {
				key = "external-resource.gpu.amount"
			} else if strings.HasPrefix(tc.in, "a.b.c") {
				key = "a.b.c"
			}
			v, ok := cfg.Lookup(key)
			require.True(t, ok)
			assert.Equal(t, tc.want, v.Value)
			assert.Equal(t, tc.want, cfg.FlinkString(key))
			assert.Equal(t, Source{File: "conf/config.yaml", Line: tc.line}, v.Source)
			ws := cfg.Warnings()
			require.Len(t, ws, 1)
			assert.Contains(t, ws[0].Message, tc.warn)
			assert.Contains(t, ws[0].Message, "Flink keeps the later one")
			assert.Equal(t, tc.line, ws[0].Source.Line)
		})
	}
}

func TestFlinkStringRendersLikeFlink(t *testing.T) {
	in := `int: 0700
hex: 0x1F
oct: 0o17
plus: +12
big: 123456789012345678901234567890
float: 1.10
exp: 1e7
small: 0.0001
mid: 1234567.5
neg: -2.50
inf: .inf
nan: .NaN
bool: TRUE
str: "0700"
text: gpu
list: [0700]
huge: 1e400
tiny: -1e-400
`
	cfg, err := ParseFlinkYAML("c.yaml", []byte(in))
	require.NoError(t, err)
	want := map[string]string{
		"int": "700", "hex": "31", "oct": "15", "plus": "12", "big": "123456789012345678901234567890",
		"float": "1.1", "exp": "1.0E7", "small": "1.0E-4", "mid": "1234567.5", "neg": "-2.5",
		"inf": "Infinity", "nan": "NaN", "bool": "true", "str": "0700", "text": "gpu", "list": "0700", "huge": "Infinity", "tiny": "-0.0",
	}
	for k, w := range want {
		assert.Equal(t, w, cfg.FlinkString(k), k)
	}
	assert.Equal(t, "0700", cfg.Get("int"), "Get keeps the text as written")
	assert.Equal(t, "", cfg.FlinkString("absent"))
	cfg.Set("int", "5", Source{Flag: "-D int"})
	assert.Equal(t, "5", cfg.FlinkString("int"), "Set replaces the typed rendering")

	legacy, err := ParseFlinkLegacy("flink-conf.yaml", []byte("int: 0700\n"))
	require.NoError(t, err)
	assert.Equal(t, "0700", legacy.FlinkString("int"), "the legacy parser does not type values")
}

func TestCoreTag(t *testing.T) {
	tests := map[string]string{
		"": "!!null", "~": "!!null", "null": "!!null", "Null": "!!null", "NULL": "!!null", "nULL": "!!str",
		"true": "!!bool", "False": "!!bool", "yes": "!!str", "on": "!!str",
		"0700": "!!int", "-1": "!!int", "0o7": "!!int", "0x1f": "!!int", "0b101": "!!str", "1_000": "!!str",
		"1.10": "!!float", ".5": "!!float", "1.": "!!float", "1e3": "!!float", "-.inf": "!!float", ".NaN": "!!float",
		"1.2.3": "!!str", "yarn.io/gpu": "!!str",
	}
	for in, want := range tests {
		assert.Equal(t, want, coreTag(in), "%q", in)
	}
}
