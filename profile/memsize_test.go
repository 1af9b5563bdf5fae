package profile

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMemorySize(t *testing.T) {
	const allUnits = "(b | bytes) / (k | kb | kibibytes) / (m | mb | mebibytes) / (g | gb | gibibytes) / (t | tb | tebibytes)"
	// Inputs and outcomes recorded from Flink 1.20.1's MemorySize.parseBytes.
	ok := []struct {
		in   string
		want int64
	}{
		{"4096m", 4 << 30}, {"4096 m", 4 << 30}, {" 4096M ", 4 << 30}, {"4g", 4 << 30}, {"4G", 4 << 30},
		{"4 gb", 4 << 30}, {"4gibibytes", 4 << 30}, {"1", 1}, {"0", 0}, {"1b", 1}, {"1 bytes", 1},
		{"1k", 1024}, {"1kb", 1024}, {"1kibibytes", 1024}, {"1mebibytes", 1 << 20}, {"1t", 1 << 40},
		{"1tb", 1 << 40}, {"1tebibytes", 1 << 40}, {"8388607t", 9223370937343148032},
		{"9223372036854775807", math.MaxInt64}, {"9223372036854775807b", math.MaxInt64},
		{"4\tm", 4 << 20}, {"4\u212A", 4096}, {"00012m", 12 << 20}, {"4mb ", 4 << 20}, {"1 K", 1024},
		{"4\x00m", 4 << 20}, {"\x014m", 4 << 20},
	}
	for _, tc := range ok {
		got, err := ParseMemorySize(tc.in)
		if assert.NoError(t, err, "%q", tc.in) {
			assert.Equal(t, tc.want, got, "%q", tc.in)
		}
	}
	bad := []struct{ in, msg string }{
		{"8388608t", "The value '8388608t' cannot be re represented as 64bit number of bytes (numeric overflow)"},
		{"9223372036854775808", "The value '9223372036854775808' cannot be re represented as 64bit number (numeric overflow)"},
		{"1.5g", "Memory size unit '.5g' does not match any of the recognized units: " + allUnits},
		{"-1m", "text does not start with a number"},
		{"", "argument is an empty- or whitespace-only string"},
		{"   ", "argument is an empty- or whitespace-only string"},
		{"abc", "text does not start with a number"},
		{"4x", "Memory size unit 'x' does not match any of the recognized units: " + allUnits},
		{"4 m b", "Memory size unit 'm b' does not match any of the recognized units: " + allUnits},
		{"4\u212Am", "Memory size unit 'km' does not match any of the recognized units: " + allUnits},
		{"\u00a04m", "text does not start with a number"},
		{"4m\u00a0", "Memory size unit 'm\u00a0' does not match any of the recognized units: " + allUnits},
		{"1KiB", "Memory size unit 'kib' does not match any of the recognized units: " + allUnits},
		{"4_000m", "Memory size unit '_000m' does not match any of the recognized units: " + allUnits},
		{"+4m", "text does not start with a number"},
		{"٤m", "text does not start with a number"},
	}
	for _, tc := range bad {
		_, err := ParseMemorySize(tc.in)
		require.Error(t, err, "%q", tc.in)
		assert.ErrorIs(t, err, ErrMemorySize)
		assert.Equal(t, tc.msg, err.Error(), "%q", tc.in)
	}
}
