package conf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitFlinkList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		// Flink's own StructuredOptionsSplitterTest cases (delimiter ';').
		{in: `'A;B';C`, want: []string{"A;B", "C"}},
		{in: `'A;B';'C'`, want: []string{"A;B", "C"}},
		{in: `A;B;C`, want: []string{"A", "B", "C"}},
		{in: `'AB''D;B';C`, want: []string{"AB'D;B", "C"}},
		{in: `A'BD;B';C`, want: []string{"A'BD", "B'", "C"}},
		{in: `'AB'D;B;C`, err: "Could not split string. Illegal quoting at position: 3"},
		{in: `'A`, err: "Could not split string. Quoting was not closed properly."},
		{in: `C;'`, err: "Could not split string. Quoting was not closed properly."},
		{in: `"A;B";C`, want: []string{"A;B", "C"}},
		{in: `"A;B";"C"`, want: []string{"A;B", "C"}},
		{in: `"AB""D;B";C`, want: []string{`AB"D;B`, "C"}},
		{in: `A"BD;B";C`, want: []string{`A"BD`, `B"`, "C"}},
		{in: `"AB"D;B;C`, err: "Could not split string. Illegal quoting at position: 3"},
		{in: `"A`, err: "Could not split string. Quoting was not closed properly."},
		{in: `C;"`, err: "Could not split string. Quoting was not closed properly."},
		{in: `'AB"D';B;C`, want: []string{`AB"D`, "B", "C"}},
		{in: `'AB"D;B';C`, want: []string{`AB"D;B`, "C"}},
		{in: `'AB"''D;B';C`, want: []string{`AB"'D;B`, "C"}},
		{in: `"AB'D";B;C`, want: []string{"AB'D", "B", "C"}},
		{in: `"AB'D;B";C`, want: []string{"AB'D;B", "C"}},
		{in: `"AB'""D;B";C`, want: []string{`AB'"D;B`, "C"}},
		{in: `   'A;B'    ;   C   `, want: []string{"A;B", "C"}},
		{in: `   A;B    ;   C   `, want: []string{"A", "B", "C"}},
		{in: `'A;B'    ;C A`, want: []string{"A;B", "C A"}},
		{in: `' A    ;B'    ;'   C'`, want: []string{" A    ;B", "   C"}},

		// Empty items, leading and trailing delimiters, blanks.
		{in: ``, want: []string{}},
		{in: `   `, want: []string{}},
		{in: `gpu`, want: []string{"gpu"}},
		{in: `gpu ; fpga`, want: []string{"gpu", "fpga"}},
		{in: `gpu;;fpga`, want: []string{"gpu", "", "fpga"}},
		{in: `gpu; ;fpga`, want: []string{"gpu", "", "fpga"}},
		{in: `gpu;`, want: []string{"gpu"}},
		{in: `;gpu`, want: []string{"gpu"}},
		{in: `;;`, want: []string{""}},
		{in: `;`, want: []string{}},
		{in: `''`, want: []string{""}},
		{in: `'';''`, want: []string{"", ""}},
		{in: "\tgpu\t;\tfpga\t", want: []string{"gpu", "fpga"}},
		{in: "none", want: []string{"none"}},
		{in: "a,b", want: []string{"a,b"}},

		// Quoted item followed by something else than ';': position is of the char before the next token.
		{in: `'a' b`, err: "Illegal quoting at position: 3"},
		{in: `'a'"b"`, err: "Illegal quoting at position: 2"},
		{in: `'a';'b'c`, err: "Illegal quoting at position: 6"},
		// Positions count UTF-16 units like Java: 'é' is one unit, '😀' two.
		{in: `é;'a'b`, err: "Illegal quoting at position: 4"},
		{in: `😀;'a'b`, err: "Illegal quoting at position: 5"},
		{in: "\u3000gpu\u3000", want: []string{"gpu\u3000"}}, // Java skips U+3000 before a token, trim() keeps it after
		{in: "\u00a0gpu", want: []string{"\u00a0gpu"}},       // no-break space is not white space for Java
		{in: "g\xffu", want: []string{"g\xffu"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := SplitFlinkList(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestJoinFlinkListRoundTrips(t *testing.T) {
	lists := [][]string{
		{"gpu", "fpga"},
		{"a;b", "c"},
		{"it's", `say "hi"`},
		{"", "x"},
		{"x", "", "y"},
		{" padded ", "\tx"},
	}
	for _, items := range lists {
		joined := joinFlinkList(items)
		got, err := SplitFlinkList(joined)
		require.NoError(t, err, joined)
		assert.Equal(t, items, got, joined)
	}
	assert.Equal(t, "gpu;fpga", joinFlinkList([]string{"gpu", "fpga"}))
	assert.Equal(t, "'a;b';'it''s'", joinFlinkList([]string{"a;b", "it's"}))
}

func TestFlinkValueItems(t *testing.T) {
	v := FlinkValue{Key: "external-resources", Value: "gpu; fpga"}
	items, err := v.Items()
	require.NoError(t, err)
	assert.Equal(t, []string{"gpu", "fpga"}, items)

	v = FlinkValue{Key: "external-resources", Value: "ignored", List: []string{"a;b"}}
	items, err = v.Items()
	require.NoError(t, err)
	assert.Equal(t, []string{"a;b"}, items)
	items[0] = "changed"
	assert.Equal(t, "a;b", v.List[0], "Items returns a copy")

	v = FlinkValue{Key: "external-resources", Value: "'gpu", Source: Source{File: "flink-conf.yaml", Line: 7}}
	_, err = v.Items()
	ce := requireConfError(t, err, "flink-conf.yaml:7", "flink-conf.yaml:7: external-resources: Could not split string. Quoting was not closed properly.")
	assert.Equal(t, "external-resources", ce.Key)
}

func TestIsJavaWhitespace(t *testing.T) {
	for _, r := range []rune{' ', '\t', '\n', '\r', '\f', '\v', 0x1C, 0x1F, '\u2003', '\u2028', '\u3000'} {
		assert.True(t, IsJavaWhitespace(r), "%U", r)
	}
	for _, r := range []rune{'a', '\u00a0', '\u2007', '\u202f', 0} {
		assert.False(t, IsJavaWhitespace(r), "%U", r)
	}
}
