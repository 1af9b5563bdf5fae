package yarnfake

import (
	"encoding/json"
	"testing"
)

// FuzzShape rewrites arbitrary bodies with every shape: never a panic, valid JSON stays valid,
// and a body that is not JSON comes back unchanged. Seeds: testdata/fuzz/FuzzShape/.
func FuzzShape(f *testing.F) {
	f.Add([]byte(`{"nodes":{"node":[{"id":"a:1","value":9223372036854775807}]}}`), uint(SingleObjects|NullEmpty|StringNumbers))
	f.Add([]byte(`{"apps":{}}`), uint(NullEmpty))
	f.Add([]byte(`not json`), uint(Jersey2Raw))
	f.Fuzz(func(t *testing.T, body []byte, shape uint) {
		s := Shape(shape & uint(SingleObjects|NullEmpty|StringNumbers))
		out := s.apply(body)
		if json.Valid(body) && !json.Valid(out) {
			t.Fatalf("shape %d made valid JSON invalid: %q -> %q", s, body, out)
		}
		if !json.Valid(body) && string(out) != string(body) {
			t.Fatalf("shape %d changed a body that is not JSON: %q -> %q", s, body, out)
		}
	})
}
