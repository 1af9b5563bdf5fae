package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/yarn-er/yarn-er/conf"
)

// This file parses numbers the way the Java code that reads them does, so that yarn-er accepts and
// rejects what Flink and Hadoop accept and reject.

// ErrNotANumber is wrapped by the number-parsing errors of this package (errors.Is).
var ErrNotANumber = errors.New("not a number")

// parseJavaLong parses s like java.lang.Long.parseLong: an optional '+' or '-' and decimal digits,
// nothing else (no blanks, no '_'), within int64. Java also accepts non-ASCII decimal digits; this
// accepts ASCII only.
func parseJavaLong(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, numberError(s, err)
	}
	return v, nil
}

// parseJavaInt parses s like java.lang.Integer.parseInt (see parseJavaLong), within int32.
func parseJavaInt(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, numberError(s, err)
	}
	return v, nil
}

func numberError(s string, err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return kindErrorf(ErrNotANumber, "%q is out of range", s)
	}
	return kindErrorf(ErrNotANumber, "For input string: %q", s)
}

// parseJavaDouble parses s like java.lang.Double.parseDouble: surrounding characters <= U+0020 are
// ignored; decimal or hexadecimal ("0x1.8p1") notation with an optional exponent and an optional
// trailing f, F, d or D; "NaN" and "Infinity" (with an optional sign) exactly as spelled.
func parseJavaDouble(s string) (float64, error) {
	t := conf.JavaTrim(s)
	body := t
	if strings.HasPrefix(body, "+") || strings.HasPrefix(body, "-") {
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	if len(t) > 0 && strings.ContainsRune("fFdD", rune(t[len(t)-1])) && !isHexWithoutExponent(t) {
		t = t[:len(t)-1]
	}
	// Go accepts spellings Java does not: inf, nan in any case, and '_' between digits.
	lower := strings.ToLower(t)
	if t == "" || strings.Contains(lower, "inf") || strings.Contains(lower, "nan") || strings.Contains(t, "_") {
		return 0, kindErrorf(ErrNotANumber, "For input string: %q", s)
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, kindErrorf(ErrNotANumber, "For input string: %q", s)
	}
	// Java rounds an out-of-range literal to ±Infinity or 0 as strconv does; keep v.
	return v, nil
}

// isHexWithoutExponent reports whether t is hexadecimal without a 'p' exponent, where a trailing
// f/F/d/D is a hex digit, not a type suffix (Java rejects such a literal anyway).
func isHexWithoutExponent(t string) bool {
	u := t
	if strings.HasPrefix(u, "+") || strings.HasPrefix(u, "-") {
		u = u[1:]
	}
	if !strings.HasPrefix(u, "0x") && !strings.HasPrefix(u, "0X") {
		return false
	}
	return !strings.ContainsAny(u, "pP")
}

// parseHadoopLong parses s like Hadoop's Configuration.getLong: surrounding blanks are trimmed, a
// "0x"/"0X" prefix (after an optional '-') means hexadecimal, otherwise Long.parseLong.
func parseHadoopLong(s string) (int64, error) {
	t := conf.JavaTrim(s)
	neg := strings.HasPrefix(t, "-")
	u := strings.TrimPrefix(t, "-")
	if strings.HasPrefix(u, "0x") || strings.HasPrefix(u, "0X") {
		hex := u[2:]
		if neg {
			hex = "-" + hex
		}
		v, err := strconv.ParseInt(hex, 16, 64)
		if err != nil {
			return 0, numberError(hex, err)
		}
		return v, nil
	}
	return parseJavaLong(t)
}

// parseHadoopInt parses s like Hadoop's Configuration.getInt (see parseHadoopLong), within int32.
func parseHadoopInt(s string) (int64, error) {
	v, err := parseHadoopLong(s)
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, kindErrorf(ErrNotANumber, "For input string: %q: out of range for an int", conf.JavaTrim(s))
	}
	return v, nil
}

// kindError is an error with a fixed message that matches a sentinel with errors.Is.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func kindErrorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// isJavaLetter approximates Java's Character.isAlphabetic / isLetter with Unicode letters.
func isJavaLetter(r rune) bool { return unicode.IsLetter(r) }
