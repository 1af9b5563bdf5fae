package profile

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseJavaDouble(t *testing.T) {
	// Outcomes recorded from java.lang.Double.parseDouble (OpenJDK 17).
	ok := map[string]float64{
		"2": 2, "2.5": 2.5, " 2.5 ": 2.5, "2.5d": 2.5, "2.5f": 2.5, "2.5D": 2.5, "1e2": 100, "1E2": 100,
		"0x1p3": 8, "0x1p3d": 8, ".5": 0.5, "5.": 5, "+3": 3, "0": 0, "1e400": math.Inf(1), "4.9e-325": 0,
		"Infinity": math.Inf(1), "-Infinity": math.Inf(-1),
	}
	checkParser(t, parseJavaDouble, ok, []string{"0x1f", "inf", "nan", "INFINITY", "1_0", "--3", "", " ", "abc", "1,5", "\u00a02", "--NaN", "d", "2dd"})
	for _, in := range []string{"NaN", "-NaN"} {
		got, err := parseJavaDouble(in)
		assert.NoError(t, err, in)
		assert.True(t, math.IsNaN(got), in)
	}
}

// checkParser asserts that parse reads each input of ok as its value and refuses each of bad with
// ErrNotANumber.
func checkParser[T int64 | float64](t *testing.T, parse func(string) (T, error), ok map[string]T, bad []string) {
	t.Helper()
	for in, want := range ok {
		got, err := parse(in)
		if assert.NoError(t, err, "%q", in) {
			assert.Equal(t, want, got, "%q", in)
		}
	}
	for _, in := range bad {
		_, err := parse(in)
		assert.ErrorIs(t, err, ErrNotANumber, "%q", in)
	}
}

func TestParseJavaLong(t *testing.T) {
	// Outcomes recorded from java.lang.Long.parseLong (OpenJDK 17); Java also takes non-ASCII digits.
	ok := map[string]int64{"2": 2, "+2": 2, "-2": -2, "002": 2, "9223372036854775807": math.MaxInt64,
		"-9223372036854775808": math.MinInt64}
	checkParser(t, parseJavaLong, ok, []string{" 2", "2 ", "2.5", "abc", "", "9223372036854775808", "0x10", "1_0"})
	checkParser(t, parseJavaInt, map[string]int64{"-2147483648": math.MinInt32}, []string{"2147483648"})
}

func TestParseHadoopLong(t *testing.T) {
	// Hadoop's Configuration.getLong trims and reads 0x hexadecimal (checked with Hadoop 3.5.0: " 0x10 " is 16).
	ok := map[string]int64{" 0x10 ": 16, "0X1f": 31, "-0x10": -16, "42": 42, " 42\n": 42, "-1": -1, "+7": 7}
	checkParser(t, parseHadoopLong, ok, []string{"abc", "", "0x", "1.0", "4g", "0xg", "9223372036854775808"})
	checkParser(t, parseHadoopInt, map[string]int64{" 4096 ": 4096}, []string{"4294967296"})
}

// The whitespace rule itself (conf.IsJavaWhitespace) is tested in package conf.
func TestJavaBlank(t *testing.T) {
	assert.True(t, isJavaBlank(""))
	assert.True(t, isJavaBlank(" \t\u3000"))
	assert.False(t, isJavaBlank(" \u00a0"))
}
