// Package javafmt renders numbers as Java does, for the messages and values that yarn-er must give
// exactly as Flink (and so the JVM) would: Double.toString and Float.toString.
package javafmt

import (
	"math"
	"strconv"
	"strings"
)

// Double renders d as Java's Double.toString does (JDK 19+, shortest digits): plain decimal with at
// least one fractional digit for 1e-3 <= |d| < 1e7, otherwise computerized scientific notation such
// as 1.0E-4.
func Double(d float64) string { return floating(d, 64) }

// Float renders f as Java's Float.toString does (shortest digits that read back as the same float).
func Float(f float32) string { return floating(float64(f), 32) }

func floating(d float64, bits int) string {
	switch {
	case math.IsNaN(d):
		return "NaN"
	case math.IsInf(d, 1):
		return "Infinity"
	case math.IsInf(d, -1):
		return "-Infinity"
	case d == 0:
		if math.Signbit(d) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(d)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(d, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(d, 'e', -1, bits) // e.g. 1e-04, 1.5e+07
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}
