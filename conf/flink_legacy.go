package conf

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// utf8BOM is the byte order mark some editors put at the start of a UTF-8 file.
const utf8BOM = "\uFEFF"

// ParseFlinkLegacy parses a legacy flink-conf.yaml exactly as Flink 1.x's line-based parser
// (GlobalConfiguration.loadYAMLResource) does, remembering name:line for every key:
//
//   - lines end at "\n", "\r\n" or a lone "\r" (Java's BufferedReader.readLine);
//   - '#' anywhere starts a comment, even inside quotes ("a: 'x#y'" gives "'x");
//   - the rest is trimmed and split at the first ": "; key and value are trimmed (Java's String.trim,
//     which strips every character up to U+0020, tabs included);
//   - a line without ": ", or with an empty key or value, is skipped with a warning;
//   - values are raw strings: quotes are kept, nothing is typed ("0700" stays "0700");
//   - a later duplicate wins, with a warning naming both lines.
//   - a key with a blank or invisible character that trimming leaves (a no-break space, a
//     zero-width space, a control character) is kept as Flink keeps it, with a warning: it matches
//     no option.
//
// Flink decodes the file as UTF-8 and does not strip a byte order mark, so the first key of a file
// starting with one carries U+FEFF and Flink never finds it; the key is kept as Flink sees it, with
// a warning. Invalid UTF-8 is replaced by U+FFFD (as Java's decoder does), with a warning.
// Content makes it fail only past DefaultMaxProperties distinct keys (a real configuration has a few
// hundred), with an error wrapping ErrLimit that names the line, so that a huge file of distinct keys
// cannot take gigabytes.
// Warnings of one kind (a duplicate of one key, a skipped line) are kept for the first five lines and
// counted after that; at most DefaultMaxWarnings warnings are kept.
func ParseFlinkLegacy(name string, data []byte) (*FlinkConfig, error) {
	return parseFlinkLegacy(name, data, Limits{}.withDefaults())
}

// parseFlinkLegacy parses within lim's MaxProperties and MaxWarnings (lim has its defaults applied).
func parseFlinkLegacy(name string, data []byte, lim Limits) (*FlinkConfig, error) {
	cfg := &FlinkConfig{files: fileList(name), maxWarnings: lim.MaxWarnings}
	warns := cfg.warnings()
	seen := make(map[string]int)
	for lineNo, rest := 1, data; len(rest) > 0; lineNo++ {
		var raw []byte
		raw, rest = cutLine(rest)
		src := Source{File: name, Line: lineNo}
		if !utf8.Valid(raw) {
			cfg.warn(src, legacyInvalidUTF8)
			raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
		}
		line := string(raw)
		bom := lineNo == 1 && strings.HasPrefix(line, utf8BOM)
		if bom {
			cfg.warn(src, "file starts with a UTF-8 byte order mark, which Flink keeps as part of the first key, so Flink ignores the first setting (fix: save the file as UTF-8 without BOM)")
		}
		content, _, _ := strings.Cut(line, "#")
		content = JavaTrim(content)
		if content == "" {
			continue
		}
		key, value, ok := strings.Cut(content, ": ")
		if !ok {
			cfg.warn(src, legacyNotKeyValue)
			continue
		}
		key, value = JavaTrim(key), JavaTrim(value)
		if key == "" || value == "" {
			cfg.warn(src, legacyEmpty)
			continue
		}
		if r, at, odd := oddKeyChar(key); odd && !(bom && at == 0) {
			cfg.warn(src, oddKeyWarning, shortKey(key), r, at)
		}
		if prev, dup := seen[key]; dup && !warns.fold(legacyAgain, key, src) {
			warns.put(legacyAgain, key, src, fmt.Sprintf(legacyAgain, key, prev))
		}
		seen[key] = lineNo
		if len(seen) > lim.MaxProperties {
			return nil, newBudget(lim).limitError(src, "properties", int64(lim.MaxProperties), fmt.Sprintf("%d distinct keys so far", len(seen)),
				"a Flink configuration has a few hundred settings; check that this is the right file")
		}
		cfg.put(FlinkValue{Key: key, Value: value, Source: src})
	}
	return cfg, nil
}

// Warnings of the legacy parser (also their kinds).
const (
	legacyInvalidUTF8 = "line is not valid UTF-8; invalid bytes read as U+FFFD, as Flink does (fix: save the file as UTF-8)"
	legacyNotKeyValue = "skipped: Flink ignores a line that is not \"key: value\" (fix: put a space after the ':' that ends the key, or comment the line out with '#')"
	legacyEmpty       = "skipped: Flink ignores a line whose key or value is empty (fix: give both a key and a value, or comment the line out with '#')"
	legacyAgain       = "%s is set again (first at line %d); Flink uses this later value (fix: remove one of the two lines)"
)

// cutLine returns the first line of data without its terminator ("\n", "\r\n" or "\r") and the rest.
func cutLine(data []byte) (line, rest []byte) {
	i := bytes.IndexAny(data, "\r\n")
	if i < 0 {
		return data, nil
	}
	if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
		return data[:i], data[i+2:]
	}
	return data[:i], data[i+1:]
}

func fileList(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}
