package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/yarn-er/yarn-er/records"
)

// ResourceMap renders a resource vector as {"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}:
// values in each resource's own unit, memory-mb and vcores first, the others sorted; null when
// unknown (the empty vector). Fields that may be left out are tagged omitzero.
type ResourceMap records.Resources

// Names returns the resource names: memory-mb and vcores first (when present), then the rest
// sorted.
func (r ResourceMap) Names() []string {
	var names, rest []string
	for _, e := range records.Resources(r).All() {
		switch e.Name {
		case records.MemoryMB, records.VCores:
			names = append(names, e.Name) // the vector keeps them first, in this order
		default:
			rest = append(rest, e.Name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// Quantity returns the amount of name with its unit, the zero Quantity when absent.
func (r ResourceMap) Quantity(name string) records.Quantity {
	q, _ := records.Resources(r).Quantity(name)
	return q
}

// IsZero reports whether the vector is empty (unknown), for omitzero.
func (r ResourceMap) IsZero() bool { return records.Resources(r).Len() == 0 }

// MarshalJSON implements json.Marshaler with a stable key order.
func (r ResourceMap) MarshalJSON() ([]byte, error) {
	if r.IsZero() {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range r.Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(r.Quantity(n).Value, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote (units are not part of it), exactly.
func (r *ResourceMap) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]json.Number
	if err := dec.Decode(&m); err != nil {
		return err
	}
	var out records.Resources
	names := slices.Sorted(maps.Keys(m))
	for _, k := range names {
		n, err := m[k].Int64()
		if err != nil {
			return fmt.Errorf("resource %s: %w", k, err)
		}
		out.Set(k, records.Quantity{Value: n})
	}
	*r = ResourceMap(out)
	return nil
}
