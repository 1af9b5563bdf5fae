package cmdutil_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

// TestJSONAndYAMLEscapeControls: -o json and -o yaml carry every string as it is, yet write no
// control or bidi control rune but their own line breaks (a string's newline in a YAML block
// scalar included): the encoders escape the C0 controls, yarn-er DEL, C1 and the bidi controls.
func TestJSONAndYAMLEscapeControls(t *testing.T) {
	long := strings.Repeat("a long diagnostic line that the YAML encoder folds ", 3) + "\u202e reversed " + strings.Repeat("word ", 20)
	v := map[string]any{
		"name":           cmdtest.Hostile,
		"bidi":           "invoice\u202efdp.exe \u2066isolate\u2069 \u200e\u200f\u061c",
		"del and c1":     "x\x7fy\u009b2J\u0085",
		"long":           long,
		"key\u202ebidi":  "value",
		"plain":          "x: y",
		"multi-line":     "first\nsecond",
		"letters, emoji": "Grüße 🚀",
	}
	for _, tc := range []struct {
		name   string
		write  func(*bytes.Buffer) error
		decode func([]byte, any) error
	}{
		{"json", func(b *bytes.Buffer) error { return cmdutil.WriteJSON(b, v) }, json.Unmarshal},
		{"yaml", func(b *bytes.Buffer) error { return cmdutil.WriteYAML(b, v) }, yaml.Unmarshal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, tc.write(&b))
			for _, r := range b.String() {
				if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
					assert.Failf(t, "a control rune in the output", "%U in %s", r, b.String())
				}
			}
			assert.Contains(t, strings.ToLower(b.String()), `\u202e`)
			var got map[string]any
			require.NoError(t, tc.decode(b.Bytes(), &got), b.String())
			assert.Equal(t, v, got, "the same values: %s", b.String())
		})
	}
}

// TestJSONUnchangedWithoutControls: output without such runes is byte for byte encoding/json's.
func TestJSONUnchangedWithoutControls(t *testing.T) {
	v := map[string]string{"name": "yarn-er-true <b>", "nl": "a\nb", "letters": "Grüße 🚀"}
	var got bytes.Buffer
	require.NoError(t, cmdutil.WriteJSON(&got, v))
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	assert.Equal(t, want.String(), got.String())
}

// TestLogsEscapeControls: both log formats write a value from the cluster with its controls and
// bidi controls escaped, on the record's one line.
func TestLogsEscapeControls(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			f, _, errOut := cmdtest.Buffers(cmdutil.Env{})
			f.LogFormat = format
			require.NoError(t, f.SetupLogger())
			f.Logger().Warn("application "+cmdtest.Hostile, "queue", "a\u202eb\x7f\u009b")
			cmdtest.AssertTerminalSafe(t, errOut.String())
			assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), errOut.String())
			assert.Contains(t, errOut.String(), `\u202e`)
		})
	}
}
