package conf

import (
	"unicode"
	"unicode/utf8"
)

// oddKeyWarning is the warning about a Flink key with a character no option name has (also its kind).
const oddKeyWarning = "%q has %U at byte %d, a blank or invisible character that Flink keeps as part of the key, so the key matches no Flink option (fix: retype the key without it)"

// oddKeyChar finds the first character of a Flink key that is easy to miss and makes the key match
// no option, since Flink compares keys exactly as written: a blank at either end (config.yaml keeps
// those of a quoted key), a control character, or a non-ASCII space or format character (a no-break
// space, a zero-width space, a byte order mark). It ignores U+FFFD, which stands for invalid UTF-8
// and is warned about by itself.
func oddKeyChar(key string) (r rune, at int, found bool) {
	for i, r := range key {
		switch {
		case r == utf8.RuneError:
		case r == ' ' && (i == 0 || i == len(key)-1):
			return r, i, true
		case r < ' ' || r == 0x7f:
			return r, i, true
		case r > 0x7f && (unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)):
			return r, i, true
		}
	}
	return 0, 0, false
}
