package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// ResourceMap renders Resources as {"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}: values in
// each resource's own unit, memory-mb and vcores first, the others sorted; null when unknown.
type ResourceMap yarn.Resources

// MarshalJSON implements json.Marshaler with a stable key order.
func (r ResourceMap) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range yarn.Resources(r).Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(r[n].Value, 10))
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
	if m == nil {
		*r = nil
		return nil
	}
	out := make(ResourceMap, len(m))
	for k, v := range m {
		n, err := v.Int64()
		if err != nil {
			return fmt.Errorf("resource %s: %w", k, err)
		}
		out[k] = records.Quantity{Value: n}
	}
	*r = out
	return nil
}
