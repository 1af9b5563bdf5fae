package conf

import "strings"

// withPrefix returns get(k) for each key of keys (in their order) that starts with prefix.
func withPrefix[V any](keys []string, prefix string, get func(string) V) []V {
	var out []V
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, get(k))
		}
	}
	return out
}
