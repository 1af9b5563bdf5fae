// Package suggest finds the known name a mistyped one most likely meant ("did you mean ...?"),
// for the errors about unknown keys, fields and flags.
package suggest

import "strings"

// maxLen bounds the names compared: a longer one is never a likely slip, and the distance's cost
// grows with the product of the lengths.
const maxLen = 64

// Distance is the Levenshtein distance of a and b in bytes; names longer than 64 bytes are
// maxLen+1 apart from everything.
func Distance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return maxLen + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest returns the name of known closest to name when it is close enough to be a likely slip:
// an edit distance of at most 2, case ignored, or (with prefixes) one a prefix of the other; "" if
// none is.
func Nearest(name string, known []string, prefixes bool) string {
	in := strings.ToLower(name)
	if in == "" {
		return ""
	}
	best, bestDist := "", 3
	for _, k := range known {
		kl := strings.ToLower(k)
		d := Distance(in, kl)
		if prefixes && (strings.HasPrefix(kl, in) || strings.HasPrefix(in, kl)) {
			d = min(d, 2)
		}
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}
