package javafmt

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDouble(t *testing.T) {
	tests := map[float64]string{
		0: "0.0", 1: "1.0", 1.1: "1.1", 100: "100.0", 0.001: "0.001", 0.0001: "1.0E-4",
		1e7: "1.0E7", 9999999: "9999999.0", 1.5e300: "1.5E300", -3.25: "-3.25", 123.456: "123.456",
		2e-300: "2.0E-300", 1.5e7: "1.5E7", float64(float32(0.1)): "0.10000000149011612",
		math.Inf(1): "Infinity", math.Inf(-1): "-Infinity",
	}
	for f, want := range tests {
		assert.Equal(t, want, Double(f), "%v", f)
	}
	assert.Equal(t, "-0.0", Double(math.Copysign(0, -1)), "a map key cannot tell -0 from 0")
	assert.Equal(t, "NaN", Double(math.NaN()))
}

func TestFloat(t *testing.T) {
	tests := map[float32]string{0.1: "0.1", 0.4: "0.4", 1: "1.0", 1e-4: "1.0E-4", 3.4028235e38: "3.4028235E38"}
	for f, want := range tests {
		assert.Equal(t, want, Float(f), "%v", f)
	}
}
