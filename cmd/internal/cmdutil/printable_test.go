package cmdutil_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"ascii", "yarn-er-true application_1_0001 root.default", "yarn-er-true application_1_0001 root.default"},
		{"backslash stays", `C:\jobs\x1b`, `C:\jobs\x1b`},
		{"letters of other scripts", "Grüße, 日本語, Ελληνικά, עברית, العربية", "Grüße, 日本語, Ελληνικά, עברית, العربية"},
		{"emoji with joiners", "🚀 👩‍💻 🇫🇷", "🚀 👩‍💻 🇫🇷"},
		{"window title and clear screen", "\x1b]0;pwned\x07\x1b[2J", `\x1b]0;pwned\a\x1b[2J`},
		{"colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"newline and a fake line", "job\nyarn-er: application succeeded", `job\nyarn-er: application succeeded`},
		{"carriage return", "ok\rFAILED", `ok\rFAILED`},
		{"named C0", "\a\b\t\n\v\f\r", `\a\b\t\n\v\f\r`},
		{"other C0", "\x00\x01\x1f", `\x00\x01\x1f`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 CSI and NEL", "a\u009b2Jb\u0085c\u0080\u009f", `a\u009b2Jb\u0085c\u0080\u009f`},
		{"bidi override", "invoice\u202efdp.exe", `invoice\u202efdp.exe`},
		{"every bidi control", "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`},
		{"zero-width joiner and no-break space stay", "a\u200db\u00a0c", "a\u200db\u00a0c"},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"raw C1 byte", "a\x9b2J", `a\x9b2J`},
		{"escape after non-ASCII", "é\x1b", `é\x1b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, cmdutil.Printable(tc.in))
		})
	}
}

// TestPrintableDoesNotAllocateOnCleanText: printable text, ASCII or not, comes back as it is.
func TestPrintableDoesNotAllocateOnCleanText(t *testing.T) {
	for _, s := range []string{"application_1796117187910_0001 yarn-er-true root.default RUNNING", "Grüße 🚀"} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = cmdutil.Printable(s) }), s)
	}
}

// visible reports whether s is valid UTF-8 without a control or bidi control rune: what a
// terminal shows as text. It is Printable's specification, written with package unicode.
func visible(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	return true
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;pwned\x07\x1b[2J", "a\u202eb", "x\ny", "\xff\xfe", "é\u009b", "🚀\u2066"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := cmdutil.Printable(s)
		if !visible(got) {
			t.Fatalf("Printable(%q) = %q still holds a control, bidi control or invalid byte", s, got)
		}
		if visible(s) && got != s {
			t.Fatalf("Printable(%q) = %q changed printable text", s, got)
		}
		if again := cmdutil.Printable(s); again != got {
			t.Fatalf("Printable(%q) gave %q, then %q", s, got, again)
		}
		if twice := cmdutil.Printable(got); twice != got {
			t.Fatalf("Printable(%q) = %q is not printable itself: %q", s, got, twice)
		}
		if !visible(s) && !strings.Contains(got, `\`) {
			t.Fatalf("Printable(%q) = %q escaped without a visible escape", s, got)
		}
	})
}
