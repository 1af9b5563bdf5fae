package cmdutil

import (
	"maps"
	"slices"
	"strings"
)

// Env is the environment as commands see it: main passes the process environment, tests a map.
// Commands read variables only through it, never through os.Getenv or os.Environ.
type Env struct {
	list []string
}

// NewEnv returns the environment of "KEY=value" entries (os.Environ's form).
func NewEnv(environ []string) Env { return Env{list: slices.Clone(environ)} }

// EnvFromMap returns the environment holding exactly m, in key order.
func EnvFromMap(m map[string]string) Env {
	list := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		list = append(list, k+"="+m[k])
	}
	return Env{list: list}
}

// Lookup returns the value of key and whether it is set; of several entries the last counts, as
// for the C library's getenv.
func (e Env) Lookup(key string) (string, bool) {
	for i := len(e.list) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(e.list[i], "="); k == key {
			return v, true
		}
	}
	return "", false
}

// Getenv returns the value of key, "" when unset.
func (e Env) Getenv(key string) string {
	v, _ := e.Lookup(key)
	return v
}

// Environ returns a copy of the environment's "KEY=value" entries.
func (e Env) Environ() []string { return slices.Clone(e.list) }
