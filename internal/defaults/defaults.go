// Package defaults fills unset option fields: the one rule yarn-er's option structs share, that
// zero or a negative value means "use the default".
package defaults

// Number is what Positive takes: counts, sizes and durations (time.Duration is an int64).
type Number interface {
	~int | ~int32 | ~int64 | ~float64
}

// Positive returns v when it is positive, else def.
func Positive[T Number](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
