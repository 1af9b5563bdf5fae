package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Resource is one entry of a resource vector: a type name and an amount with its Hadoop unit.
type Resource struct {
	Name  string
	Value int64
	Units string
}

// Quantity returns the entry's amount and unit.
func (r Resource) Quantity() Quantity { return Quantity{Value: r.Value, Units: r.Units} }

// Resources is a resource vector, e.g. a container's request: memory-mb, vcores, then the other
// types in the order they were added (for a translation of Flink's configuration: the order
// external-resources lists them). Every amount carries its Hadoop unit. JSON keeps the order and
// writes the exact int64 values: {"memory-mb":4096,"vcores":4,"yarn.io/gpu":2,"yarn.io/fpga":1}.
// The zero value is an empty vector.
type Resources struct {
	entries []Resource
}

// NewResources returns a vector of memoryMiB memory-mb (in Mi) and vcores vcores, followed by
// others in order.
func NewResources(memoryMiB, vcores int64, others ...Resource) Resources {
	var v Resources
	v.Set(MemoryMB, Quantity{Value: memoryMiB, Units: MemoryUnits})
	v.Set(VCores, Quantity{Value: vcores})
	for _, r := range others {
		v.Set(r.Name, r.Quantity())
	}
	return v
}

// ResourcesOf returns a vector of the entries, placed as Set places them.
func ResourcesOf(entries ...Resource) Resources {
	var v Resources
	if len(entries) > 0 {
		v.entries = make([]Resource, 0, len(entries))
	}
	for _, e := range entries {
		v.Set(e.Name, e.Quantity())
	}
	return v
}

// Set sets the amount of name. A new memory-mb goes first, a new vcores after memory-mb, any other
// new name last.
func (v *Resources) Set(name string, q Quantity) {
	for i := range v.entries {
		if v.entries[i].Name == name {
			v.entries[i].Value, v.entries[i].Units = q.Value, q.Units
			return
		}
	}
	i := len(v.entries)
	switch name {
	case MemoryMB:
		i = 0
	case VCores:
		i = 0
		if len(v.entries) > 0 && v.entries[0].Name == MemoryMB {
			i = 1
		}
	}
	v.entries = append(v.entries, Resource{})
	copy(v.entries[i+1:], v.entries[i:])
	v.entries[i] = Resource{Name: name, Value: q.Value, Units: q.Units}
}

// Get returns the amount of name in its unit and whether the vector has it.
func (v Resources) Get(name string) (int64, bool) {
	q, ok := v.Quantity(name)
	return q.Value, ok
}

// Quantity returns the amount of name with its unit and whether the vector has it.
func (v Resources) Quantity(name string) (Quantity, bool) {
	for _, e := range v.entries {
		if e.Name == name {
			return e.Quantity(), true
		}
	}
	return Quantity{}, false
}

// Value returns the amount of name in its unit, 0 when the vector does not have it.
func (v Resources) Value(name string) int64 {
	n, _ := v.Get(name)
	return n
}

// Add returns v + o per resource name, in v's order followed by the names only o has. A name
// present in one of them only is kept as is. An amount of o in another unit is converted to v's
// unit (rounding toward zero); a sum beyond int64 saturates at math.MaxInt64, Hadoop's
// "unbounded". It fails for a unit Hadoop does not know.
func (v Resources) Add(o Resources) (Resources, error) {
	out := Resources{entries: slices.Clone(v.entries)}
	for _, e := range o.entries {
		cur, ok := out.Quantity(e.Name)
		if !ok {
			out.Set(e.Name, e.Quantity())
			continue
		}
		n, _, err := e.Quantity().In(cur.Units)
		if err != nil {
			return Resources{}, fmt.Errorf("resource %s: %w", e.Name, err)
		}
		out.Set(e.Name, Quantity{Value: saturatingAdd(cur.Value, n), Units: cur.Units})
	}
	return out, nil
}

func saturatingAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// Len returns the number of entries.
func (v Resources) Len() int { return len(v.entries) }

// All returns the entries in order.
func (v Resources) All() []Resource { return append([]Resource(nil), v.entries...) }

// AppendTo appends the entries to dst, in order, and returns it (All without a new slice).
func (v Resources) AppendTo(dst []Resource) []Resource { return append(dst, v.entries...) }

// String renders the vector as Hadoop prints a Resource's extended form:
// "<memory-mb:4096, vcores:4, yarn.io/gpu:2>".
func (v Resources) String() string {
	var b bytes.Buffer
	b.WriteByte('<')
	for i, e := range v.entries {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Name)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(e.Value, 10))
	}
	b.WriteByte('>')
	return b.String()
}

// MarshalJSON writes the vector as a JSON object of values in vector order (the units are not
// written: memory-mb is in Mi, every other type of a request in its base unit).
func (v Resources) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range v.entries {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(e.Name)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(e.Value, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of integer amounts, exactly (never through float64) and in the
// object's order; memory-mb is read in Mi, every other type in its base unit "".
func (v *Resources) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("resource vector: want a JSON object, got %v", tok)
	}
	var out Resources
	for dec.More() {
		keyTok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := keyTok.(string)
		valTok, err := dec.Token()
		if err != nil {
			return err
		}
		num, ok := valTok.(json.Number)
		if !ok {
			return fmt.Errorf("resource %q: amount %v is not a number", name, valTok)
		}
		n, err := strconv.ParseInt(num.String(), 10, 64)
		if err != nil {
			return fmt.Errorf("resource %q: amount %s is not a 64-bit integer", name, num)
		}
		units := ""
		if name == MemoryMB {
			units = MemoryUnits
		}
		out.Set(name, Quantity{Value: n, Units: units})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*v = out
	return nil
}
