package profile

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
)

// ErrMemorySize is wrapped by the errors of ParseMemorySize (errors.Is).
var ErrMemorySize = errors.New("invalid memory size")

// memoryUnits are Flink's MemorySize.MemoryUnit spellings (all binary multiples).
var memoryUnits = [...]struct {
	names      []string
	multiplier int64
}{
	{[]string{"b", "bytes"}, 1},
	{[]string{"k", "kb", "kibibytes"}, 1 << 10},
	{[]string{"m", "mb", "mebibytes"}, 1 << 20},
	{[]string{"g", "gb", "gibibytes"}, 1 << 30},
	{[]string{"t", "tb", "tebibytes"}, 1 << 40},
}

// memoryUnitsText is Flink's MemoryUnit.getAllUnits().
const memoryUnitsText = "(b | bytes) / (k | kb | kibibytes) / (m | mb | mebibytes) / (g | gb | gibibytes) / (t | tb | tebibytes)"

// ParseMemorySize parses a Flink memory size the way org.apache.flink.configuration.MemorySize.parse
// does and returns it in bytes: surrounding blanks are ignored; ASCII digits come first; an optional
// unit follows, blanks allowed in between, case-insensitive: b|bytes, k|kb|kibibytes,
// m|mb|mebibytes, g|gb|gibibytes, t|tb|tebibytes (all powers of 1024). No unit means bytes. Signs,
// fractions ("1.5g") and values over 2^63-1 bytes are errors, worded as Flink words them.
func ParseMemorySize(text string) (int64, error) {
	trimmed := conf.JavaTrim(text)
	if trimmed == "" {
		return 0, kindErrorf(ErrMemorySize, "argument is an empty- or whitespace-only string")
	}
	i := 0
	for i < len(trimmed) && trimmed[i] >= '0' && trimmed[i] <= '9' {
		i++
	}
	number := trimmed[:i]
	unit := javaLowerASCII(conf.JavaTrim(trimmed[i:]))
	if number == "" {
		return 0, kindErrorf(ErrMemorySize, "text does not start with a number")
	}
	value, err := strconv.ParseInt(number, 10, 64)
	if err != nil {
		return 0, kindErrorf(ErrMemorySize, "The value '%s' cannot be re represented as 64bit number (numeric overflow)", number)
	}
	multiplier := int64(1)
	if unit != "" {
		found := false
		for _, u := range memoryUnits {
			for _, n := range u.names {
				if n == unit {
					multiplier, found = u.multiplier, true
				}
			}
		}
		if !found {
			return 0, kindErrorf(ErrMemorySize, "Memory size unit '%s' does not match any of the recognized units: %s", unit, memoryUnitsText)
		}
	}
	if value > math.MaxInt64/multiplier {
		return 0, kindErrorf(ErrMemorySize, "The value '%s' cannot be re represented as 64bit number of bytes (numeric overflow)", text)
	}
	return value * multiplier, nil
}

// javaLowerASCII lower-cases s as Java's toLowerCase(Locale.US) does for every character whose
// lower case is ASCII: A-Z and the Kelvin sign U+212A (which lower-cases to 'k'). Other characters
// are kept; they cannot match a unit either way.
func javaLowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		case r == '\u212A':
			return 'k'
		}
		return r
	}, s)
}
