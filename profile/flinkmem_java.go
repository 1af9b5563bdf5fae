package profile

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
)

// This file holds the Java arithmetic and renderings the TaskManager memory model needs to give
// Flink's numbers and Flink's messages: MemorySize.multiply (exact decimal product of the double's
// Double.toString digits, truncated), MemorySize.toHumanReadableString and Float.parseFloat
// (Double.toString and Float.toString are package javafmt's).

// errLongOverflow is Java's ArithmeticException of Math.addExact and MemorySize.multiply.
const errLongOverflow = "long overflow"

// javaMultiply returns MemorySize(bytes).multiply(f): the exact product of bytes and the decimal
// that Double.toString(f) prints, truncated toward zero. ok is false when the product exceeds
// 2^63-1 (Java: ArithmeticException "long overflow").
func javaMultiply(bytes int64, f float64) (int64, bool) {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'e', -1, 64))
	if !ok {
		return 0, false
	}
	r.Mul(r, new(big.Rat).SetInt64(bytes))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// addExact is Math.addExact for non-negative sizes.
func addExact(a, b int64) (int64, bool) {
	if a > math.MaxInt64-b {
		return 0, false
	}
	return a + b, true
}

// humanSize renders bytes as MemorySize.toHumanReadableString: "<n> bytes" up to 1024 bytes, else
// "<x.xxx><unit> (<n> bytes)" in the largest unit strictly smaller than the size.
func humanSize(bytes int64) string {
	units := [...]struct {
		name string
		mult int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40}}
	best := -1
	for i, u := range units {
		if bytes > u.mult {
			best = i
		}
	}
	if best < 0 {
		return fmt.Sprintf("%d bytes", bytes)
	}
	approx := float64(bytes) / float64(units[best].mult)
	return fmt.Sprintf("%s%s (%d bytes)", javaFixed3(approx), units[best].name, bytes)
}

// javaFixed3 formats a non-negative double as Java's String.format(Locale.ROOT, "%.3f"): the
// shortest decimal digits of the double rounded half-up to three places.
func javaFixed3(d float64) string {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(d, 'e', -1, 64))
	if !ok {
		return strconv.FormatFloat(d, 'f', 3, 64)
	}
	// round half up at 3 decimals: floor(r*1000 + 1/2)
	r.Mul(r, big.NewRat(1000, 1))
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	s := q.String()
	for len(s) < 4 {
		s = "0" + s
	}
	return s[:len(s)-3] + "." + s[len(s)-3:]
}

// parseJavaFloat parses s like java.lang.Float.parseFloat (see parseJavaDouble for the syntax),
// rounding the decimal once, to the nearest float.
func parseJavaFloat(s string) (float32, error) {
	d, err := parseJavaDouble(s)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return float32(d), nil
	}
	t := conf.JavaTrim(s)
	if len(t) > 0 && strings.ContainsRune("fFdD", rune(t[len(t)-1])) && !isHexWithoutExponent(t) {
		t = t[:len(t)-1]
	}
	f, perr := strconv.ParseFloat(t, 32)
	if perr != nil {
		// out of range: Java rounds to infinity or zero as strconv does
		return float32(f), nil //nolint:nilerr // the value strconv returns with ErrRange is Java's
	}
	return float32(f), nil
}
