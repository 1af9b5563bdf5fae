package conf

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/yarn-er/yarn-er/internal/javafmt"
)

// The YAML 1.2 core schema, as snakeyaml-engine's CoreSchema (used by Flink) resolves plain scalars.
var (
	coreNull  = regexp.MustCompile(`^(?:~|null|Null|NULL)?$`)
	coreBool  = regexp.MustCompile(`^(?:true|True|TRUE|false|False|FALSE)$`)
	coreInt10 = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreInt8  = regexp.MustCompile(`^0o[0-7]+$`)
	coreInt16 = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$`)
	coreInf   = regexp.MustCompile(`^[-+]?(?:\.inf|\.Inf|\.INF)$`)
	coreNaN   = regexp.MustCompile(`^(?:\.nan|\.NaN|\.NAN)$`)
)

// scalarTag resolves a scalar node's tag as the YAML 1.2 core schema does: an explicit tag wins,
// quoted and block scalars are strings, plain scalars are matched against the core patterns.
func scalarTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle != 0 {
		return n.ShortTag()
	}
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return "!!str"
	}
	return coreTag(n.Value)
}

// coreTag resolves the text of a plain scalar with the YAML 1.2 core schema.
func coreTag(s string) string {
	switch {
	case coreNull.MatchString(s):
		return "!!null"
	case coreBool.MatchString(s):
		return "!!bool"
	case coreInt10.MatchString(s), coreInt8.MatchString(s), coreInt16.MatchString(s):
		return "!!int"
	case coreFloat.MatchString(s), coreInf.MatchString(s), coreNaN.MatchString(s):
		return "!!float"
	default:
		return "!!str"
	}
}

// javaString returns the string Flink's Configuration.getString gives for a scalar of text s typed
// tag: Java's toString of the Integer/Long/BigInteger, Double or Boolean the core schema built.
// It returns "null" for a null (String.valueOf, as a null key becomes) and s itself for a string or
// text it cannot type.
func javaString(s, tag string) string {
	switch tag {
	case "!!null":
		return "null"
	case "!!bool":
		switch s {
		case "true", "True", "TRUE":
			return "true"
		case "false", "False", "FALSE":
			return "false"
		}
	case "!!int":
		if v, ok := coreInt(s); ok {
			return v.String()
		}
	case "!!float":
		if f, ok := coreFloatValue(s); ok {
			return javafmt.Double(f)
		}
	}
	return s
}

// coreInt parses a core-schema integer (decimal with sign, 0o octal, 0x hex) of any size.
func coreInt(s string) (*big.Int, bool) {
	base, digits := 10, s
	switch {
	case strings.HasPrefix(s, "0o"):
		base, digits = 8, s[2:]
	case strings.HasPrefix(s, "0x"):
		base, digits = 16, s[2:]
	}
	v, ok := new(big.Int).SetString(digits, base)
	return v, ok
}

func coreFloatValue(s string) (float64, bool) {
	switch {
	case coreNaN.MatchString(s):
		return math.NaN(), true
	case coreInf.MatchString(s):
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
