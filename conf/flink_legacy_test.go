package conf

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entry is a compact expectation for one parsed key.
type entry struct {
	value string
	line  int
}

func flinkEntries(c *FlinkConfig) map[string]entry {
	out := make(map[string]entry)
	for _, k := range c.Keys() {
		v, _ := c.Lookup(k)
		out[k] = entry{value: v.Value, line: v.Source.Line}
	}
	return out
}

func warningsText(ws []Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestParseFlinkLegacy(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     map[string]entry
		warnings []string // substrings, one per expected warning, in order
	}{
		{
			name: "simple pairs",
			in:   "a: 1\nb.c: two\n",
			want: map[string]entry{"a": {"1", 1}, "b.c": {"two", 2}},
		},
		{
			name: "values a YAML codec would rewrite stay raw",
			in:   "mode: 0700\nversion: 1.10\nflag: yes\nstar: *all\npct: %d\nquoted: 'x'\ndq: \"y\"\nempty-quotes: ''\n",
			want: map[string]entry{
				"mode": {"0700", 1}, "version": {"1.10", 2}, "flag": {"yes", 3}, "star": {"*all", 4},
				"pct": {"%d", 5}, "quoted": {"'x'", 6}, "dq": {`"y"`, 7}, "empty-quotes": {"''", 8},
			},
		},
		{
			name: "first ': ' splits; later ones stay in the value",
			in:   "yarn.application.name: gpu: training\nurl: http://host:8080/x\n",
			want: map[string]entry{"yarn.application.name": {"gpu: training", 1}, "url": {"http://host:8080/x", 2}},
		},
		{
			name: "hash starts a comment anywhere, even in quotes",
			in:   "# full line\na: 1 # trailing\nb: 'x#y'\nc:#d: e\n   # indented comment\n",
			want: map[string]entry{"a": {"1", 2}, "b": {"'x", 3}},
			warnings: []string{
				`flink.yaml:4: skipped: Flink ignores a line that is not "key: value"`,
			},
		},
		{
			name: "keys and values are trimmed, case kept",
			in:   "  taskmanager.numberOfTaskSlots  :    4   \n\tKey.With.Tab\t: v\t\n",
			want: map[string]entry{"taskmanager.numberOfTaskSlots": {"4", 1}, "Key.With.Tab": {"v", 2}},
		},
		{
			name: "lines without ': ' are skipped with a warning",
			in:   "a:1\nb:\tc\njust text\nc:\nd: ok\n",
			want: map[string]entry{"d": {"ok", 5}},
			warnings: []string{
				"flink.yaml:1: skipped", "flink.yaml:2: skipped", "flink.yaml:3: skipped", "flink.yaml:4: skipped",
			},
		},
		{
			name: "empty key or value is skipped with a warning",
			in:   ": value\nkey:    # only a comment\nk2: ok\n",
			want: map[string]entry{"k2": {"ok", 3}},
			warnings: []string{
				"flink.yaml:1: skipped: Flink ignores a line whose key or value is empty",
				`flink.yaml:2: skipped: Flink ignores a line that is not "key: value"`,
			},
		},
		{
			name:     "later duplicate wins with a warning naming both lines",
			in:       "external-resources: gpu\nother: x\nexternal-resources: fpga\n",
			want:     map[string]entry{"external-resources": {"fpga", 3}, "other": {"x", 2}},
			warnings: []string{"flink.yaml:3: external-resources is set again (first at line 1); Flink uses this later value"},
		},
		{
			name: "keys are case sensitive",
			in:   "Parallelism.Default: 1\nparallelism.default: 2\n",
			want: map[string]entry{"Parallelism.Default": {"1", 1}, "parallelism.default": {"2", 2}},
		},
		{
			name: "CRLF, lone CR and a missing final newline",
			in:   "a: 1\r\nb: 2\rc: 3",
			want: map[string]entry{"a": {"1", 1}, "b": {"2", 2}, "c": {"3", 3}},
		},
		{
			name:     "a BOM stays in the first key, as Flink reads it",
			in:       "\uFEFFexternal-resources: gpu\nb: 2\n",
			want:     map[string]entry{"\uFEFFexternal-resources": {"gpu", 1}, "b": {"2", 2}},
			warnings: []string{"flink.yaml:1: file starts with a UTF-8 byte order mark"},
		},
		{
			name: "a no-break space or zero-width space that trimming leaves stays in the key, with a warning",
			in:   "external-resource.gpu.amount\u00a0: 2\ntaskmanager.memory.process.size: 4g\u200b\nab\u200bc: 1\nin\tside: x\n",
			want: map[string]entry{"external-resource.gpu.amount\u00a0": {"2", 1}, "taskmanager.memory.process.size": {"4g\u200b", 2}, "ab\u200bc": {"1", 3}, "in\tside": {"x", 4}},
			warnings: []string{
				`flink.yaml:1: "external-resource.gpu.amount\u00a0" has U+00A0 at byte 28, a blank or invisible character that Flink keeps as part of the key, so the key matches no Flink option (fix: retype the key without it)`,
				`flink.yaml:3: "ab\u200bc" has U+200B at byte 2`,
				`flink.yaml:4: "in\tside" has U+0009 at byte 2`,
			},
		},
		{
			name:     "invalid UTF-8 becomes U+FFFD with a warning",
			in:       "a: x\xff\xfey\nb: 2\n",
			want:     map[string]entry{"a": {"x\uFFFDy", 1}, "b": {"2", 2}},
			warnings: []string{"flink.yaml:1: line is not valid UTF-8"},
		},
		{
			name: "blank lines and empty input",
			in:   "\n\n   \n\t\n",
			want: map[string]entry{},
		},
		{
			name: "a nested YAML block is not understood by the legacy parser",
			in:   "external-resource:\n  gpu:\n    amount: 2\n",
			want: map[string]entry{"amount": {"2", 3}},
			warnings: []string{
				"flink.yaml:1: skipped", "flink.yaml:2: skipped",
			},
		},
		{
			name: "list values are raw strings",
			in:   "external-resources: gpu; 'f;pga'\n",
			want: map[string]entry{"external-resources": {"gpu; 'f;pga'", 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseFlinkLegacy("flink.yaml", []byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, flinkEntries(cfg))
			ws := cfg.Warnings()
			require.Len(t, ws, len(tt.warnings), warningsText(ws))
			for i, w := range tt.warnings {
				assert.Contains(t, ws[i].String(), w)
				assert.Contains(t, ws[i].Message, "fix", "warnings say how to fix: %s", ws[i])
			}
			assert.Equal(t, []string{"flink.yaml"}, cfg.Files())
		})
	}
}

func TestParseFlinkLegacyLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	cfg, err := ParseFlinkLegacy("f", []byte("k: "+long+"\nnext: 1\n"))
	require.NoError(t, err)
	assert.Equal(t, long, cfg.Get("k"))
	v, ok := cfg.Lookup("next")
	require.True(t, ok)
	assert.Equal(t, 2, v.Source.Line)
}
