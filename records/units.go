package records

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// unitInfo describes one Hadoop unit as a power of two times a power of five relative to the base
// unit "": 10^e is (2^e)(5^e), 1024^k is 2^(10k).
type unitInfo struct {
	name string
	exp2 int
	exp5 int
}

// hadoopUnits lists Hadoop's units in UnitsConversionUtil's order: decimal p … P, then binary Ki … Pi.
var hadoopUnits = [...]unitInfo{
	{name: "p", exp2: -12, exp5: -12},
	{name: "n", exp2: -9, exp5: -9},
	{name: "u", exp2: -6, exp5: -6},
	{name: "m", exp2: -3, exp5: -3},
	{name: "", exp2: 0, exp5: 0},
	{name: "k", exp2: 3, exp5: 3},
	{name: "M", exp2: 6, exp5: 6},
	{name: "G", exp2: 9, exp5: 9},
	{name: "T", exp2: 12, exp5: 12},
	{name: "P", exp2: 15, exp5: 15},
	{name: "Ki", exp2: 10},
	{name: "Mi", exp2: 20},
	{name: "Gi", exp2: 30},
	{name: "Ti", exp2: 40},
	{name: "Pi", exp2: 50},
}

// knownUnitsText is Hadoop's rendering of UnitsConversionUtil.KNOWN_UNITS (a java.util.HashSet, so the
// order is the set's bucket order, not the list order). Checked against Hadoop 3.5.0.
const knownUnitsText = "[, Gi, G, k, m, M, n, p, P, T, u, Ti, Pi, Mi, Ki]"

// unitIndex returns the position of u in hadoopUnits, or -1.
func unitIndex(u string) int {
	switch u {
	case "p":
		return 0
	case "n":
		return 1
	case "u":
		return 2
	case "m":
		return 3
	case "":
		return 4
	case "k":
		return 5
	case "M":
		return 6
	case "G":
		return 7
	case "T":
		return 8
	case "P":
		return 9
	case "Ki":
		return 10
	case "Mi":
		return 11
	case "Gi":
		return 12
	case "Ti":
		return 13
	case "Pi":
		return 14
	}
	return -1
}

// ratios holds conversionRatio for every pair of units, indexed [from][to]; it is computed once and
// never written afterwards.
var ratios = func() (r [len(hadoopUnits)][len(hadoopUnits)]ratio) {
	for i := range hadoopUnits {
		for j := range hadoopUnits {
			r[i][j] = conversionRatio(&hadoopUnits[i], &hadoopUnits[j])
		}
	}
	return r
}()

// KnownUnits returns Hadoop's units in UnitsConversionUtil's order:
// p n u m "" k M G T P Ki Mi Gi Ti Pi.
func KnownUnits() []string {
	out := make([]string, len(hadoopUnits))
	for i := range hadoopUnits {
		out[i] = hadoopUnits[i].name
	}
	return out
}

// IsKnownUnit reports whether u is one of Hadoop's units (case-sensitive; "" is the base unit).
func IsKnownUnit(u string) bool { return unitIndex(u) >= 0 }

// ErrUnknownUnit is wrapped by every error about a unit Hadoop does not know (errors.Is).
var ErrUnknownUnit = errors.New("unknown unit")

// ErrOverflow is wrapped by every error about a value that does not fit a Java long (errors.Is).
var ErrOverflow = errors.New("overflow of Long")

// UnitError reports a unit Hadoop does not know, with Hadoop's wording:
// "Unknown unit '<u>'. Known units are [...]".
type UnitError struct {
	Unit string
}

// Error implements error with UnitsConversionUtil's message.
func (e *UnitError) Error() string {
	return "Unknown unit '" + e.Unit + "'. Known units are " + knownUnitsText
}

// Is makes errors.Is(err, ErrUnknownUnit) true.
func (e *UnitError) Is(target error) bool { return target == ErrUnknownUnit }

// OverflowError reports a conversion whose result does not fit an int64, with Hadoop's wording:
// "Converting <v> from '<a>' to '<b>' will result in an overflow of Long".
type OverflowError struct {
	Value    int64
	From, To string
}

// Error implements error with UnitsConversionUtil's message.
func (e *OverflowError) Error() string {
	return "Converting " + strconv.FormatInt(e.Value, 10) + " from '" + e.From + "' to '" + e.To +
		"' will result in an overflow of Long"
}

// Is makes errors.Is(err, ErrOverflow) true.
func (e *OverflowError) Is(target error) bool { return target == ErrOverflow }

// ratio is the exact factor from one unit to another as the reduced fraction num/den. numBig or
// denBig says that part is 2^64 or more (its value is then unused); only one of them can be set, and
// then the other part is 1.
type ratio struct {
	num, den uint64
	numBig   bool // num >= 2^64
	denBig   bool // den >= 2^64
}

// pow25 returns 2^a * 5^b and whether it overflowed uint64 (a, b >= 0).
func pow25(a, b int) (uint64, bool) {
	v := uint64(1)
	for range a {
		if v > math.MaxUint64/2 {
			return 0, true
		}
		v *= 2
	}
	for range b {
		if v > math.MaxUint64/5 {
			return 0, true
		}
		v *= 5
	}
	return v, false
}

// conversionRatio returns from/to as a reduced fraction.
func conversionRatio(from, to *unitInfo) ratio {
	x := from.exp2 - to.exp2
	y := from.exp5 - to.exp5
	var r ratio
	r.num, r.numBig = pow25(max(x, 0), max(y, 0))
	r.den, r.denBig = pow25(max(-x, 0), max(-y, 0))
	return r
}

// Convert converts value from one Hadoop unit to another, like Hadoop's
// UnitsConversionUtil.convert(fromUnit, toUnit, value): the result is truncated toward zero
// (1536 "Ki" in "Mi" is 1), and a result that does not fit an int64 is an *OverflowError with Hadoop's
// message. An unknown unit is a *UnitError.
//
// Unlike Hadoop, the arithmetic is exact for every pair of units. Hadoop computes with 64-bit
// intermediates and so (checked against Hadoop 3.5.0) reports overflow for some results that fit
// (e.g. 10^16 "k" in "Ki"), returns the unscaled value for some that do not ("Ki" to "k" near 2^53
// and above), and wraps around for pairs whose combined factor exceeds 2^63 (e.g. "p" to "P").
// Converting between equal units returns value unchanged, as Hadoop does (but an unknown unit is
// still an error here).
func Convert(from, to string, value int64) (int64, error) {
	if from == to {
		if !IsKnownUnit(from) {
			return 0, &UnitError{Unit: from}
		}
		return value, nil
	}
	fi, ti := unitIndex(from), unitIndex(to)
	if fi < 0 {
		return 0, &UnitError{Unit: from}
	}
	if ti < 0 {
		return 0, &UnitError{Unit: to}
	}
	r := ratios[fi][ti]
	mag, neg := magnitude(value)
	if mag == 0 {
		return 0, nil
	}
	if r.numBig {
		return 0, &OverflowError{Value: value, From: from, To: to}
	}
	if r.denBig {
		// The denominator exceeds 2^64 and the numerator is 1: |value| < 2^63 truncates to 0.
		return 0, nil
	}
	hi, lo := bits.Mul64(mag, r.num)
	if hi >= r.den {
		return 0, &OverflowError{Value: value, From: from, To: to}
	}
	q, _ := bits.Div64(hi, lo, r.den)
	res, ok := signed(q, neg)
	if !ok {
		return 0, &OverflowError{Value: value, From: from, To: to}
	}
	return res, nil
}

// magnitude returns |v| as a uint64 (exact for math.MinInt64) and whether v is negative.
func magnitude(v int64) (uint64, bool) {
	if v < 0 {
		return uint64(-(v + 1)) + 1, true
	}
	return uint64(v), false
}

// signed turns a magnitude and sign back into an int64, reporting false when it does not fit.
func signed(mag uint64, neg bool) (int64, bool) {
	if !neg {
		if mag > math.MaxInt64 {
			return 0, false
		}
		return int64(mag), true
	}
	if mag > 1<<63 {
		return 0, false
	}
	if mag == 1<<63 {
		return math.MinInt64, true
	}
	return -int64(mag), true
}

// Compare compares valueA in unitA with valueB in unitB exactly and returns -1, 0 or +1, like
// Hadoop's UnitsConversionUtil.compare. Unknown units are a *UnitError.
//
// Hadoop converts the value in the unit listed later (in p … P, Ki … Pi order) into the other unit,
// truncating, so it can call different quantities equal (1000 "Ki" and 1 "M" compare as 0 in Hadoop;
// here 1000 Ki = 1,024,000 > 1 M = 1,000,000 gives +1). This function never truncates.
func Compare(unitA string, valueA int64, unitB string, valueB int64) (int, error) {
	ai, bi := unitIndex(unitA), unitIndex(unitB)
	if ai < 0 {
		return 0, &UnitError{Unit: unitA}
	}
	if bi < 0 {
		return 0, &UnitError{Unit: unitB}
	}
	if ai == bi {
		return cmp.Compare(valueA, valueB), nil
	}
	sa, sb := cmp.Compare(valueA, 0), cmp.Compare(valueB, 0)
	if sa != sb {
		return cmp.Compare(sa, sb), nil
	}
	if sa == 0 {
		return 0, nil
	}
	// Same sign: compare the magnitudes |A|*num and |B|*den, where num/den converts unitA to unitB,
	// in 128 bits.
	ma, neg := magnitude(valueA)
	mb, _ := magnitude(valueB)
	r := ratios[ai][bi]
	var c int
	switch {
	case r.numBig: // den is 1 and |A|*num >= 2^64 > |B|
		c = 1
	case r.denBig: // num is 1 and |B|*den >= 2^64 > |A|
		c = -1
	default:
		h1, l1 := bits.Mul64(ma, r.num)
		h2, l2 := bits.Mul64(mb, r.den)
		c = cmp.Or(cmp.Compare(h1, h2), cmp.Compare(l1, l2))
	}
	if neg {
		c = -c
	}
	return c, nil
}

// Quantity is an amount of one resource type with its Hadoop unit, e.g. 4 "Gi", 8192 "Mi" or 2 "".
// Arithmetic on quantities is exact (Convert, Compare): never through a float, and with Hadoop's
// error messages.
type Quantity struct {
	// Value is the amount in Units.
	Value int64
	// Units is the Hadoop unit of Value: "" or one of p n u m k M G T P Ki Mi Gi Ti Pi.
	Units string
}

// String renders the quantity as Hadoop writes one: value immediately followed by the unit ("4Gi", "2").
func (q Quantity) String() string { return strconv.FormatInt(q.Value, 10) + q.Units }

// Cmp compares q with o exactly, converting units: -1 when q < o, 0 when equal, +1 when q > o.
// It fails only for a unit Hadoop does not know (a *UnitError); two quantities in the same unit
// compare by value whatever the unit.
func (q Quantity) Cmp(o Quantity) (int, error) {
	if q.Units == o.Units {
		return cmp.Compare(q.Value, o.Value), nil
	}
	return Compare(q.Units, q.Value, o.Units, o.Value)
}

// In converts q to units. Like Hadoop's UnitsConversionUtil it rounds toward zero when the result
// is not whole; exact reports whether no rounding happened. A result beyond int64 is an error
// matching ErrOverflow, an unknown unit one matching ErrUnknownUnit. A quantity already in units
// is returned as is.
func (q Quantity) In(units string) (v int64, exact bool, err error) {
	if q.Units == units {
		return q.Value, true, nil
	}
	v, err = Convert(q.Units, units, q.Value)
	switch {
	case errors.Is(err, ErrOverflow):
		return 0, false, fmt.Errorf("converting %s to %q overflows a 64-bit integer: %w", q, units, err)
	case err != nil:
		return 0, false, err
	}
	// Convert truncates: the result is exact when it converts back to the same amount.
	c, err := Compare(units, v, q.Units, q.Value)
	if err != nil {
		return 0, false, err
	}
	return v, c == 0, nil
}

// ErrQuantitySyntax is wrapped by the errors of ParseQuantity about text that is not "value[ ][units]".
var ErrQuantitySyntax = errors.New(`expected format is: value[ ][units]`)

// ParseQuantity parses a resource amount the way Hadoop's ResourceUtils reads a requested resource
// ("4Gi", "5 k", "2"): the whole text must match ^([0-9]+) ?([a-zA-Z]*)$ (ASCII digits, at most one
// space, ASCII letters), the value must fit an int64, and the unit must be one of Hadoop's units.
// Errors wrap ErrQuantitySyntax, ErrOverflow or ErrUnknownUnit (as a *UnitError).
func ParseQuantity(s string) (Quantity, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits := s[:i]
	rest := s[i:]
	rest = strings.TrimPrefix(rest, " ")
	if digits == "" || !isASCIIAlpha(rest) {
		return Quantity{}, fmt.Errorf("%q: %w", s, ErrQuantitySyntax)
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return Quantity{}, fmt.Errorf("%q: value %s does not fit a Java long: %w", s, digits, ErrOverflow)
	}
	if !IsKnownUnit(rest) {
		return Quantity{}, &UnitError{Unit: rest}
	}
	return Quantity{Value: v, Units: rest}, nil
}

func isASCIIAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
