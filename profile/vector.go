package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/yarn-er/yarn-er/records"
)

// Resource is one entry of a resource vector: a type name and an amount in the type's unit.
type Resource struct {
	Name  string
	Value int64
}

// Vector is a container's resource request: memory-mb, vcores, then the other types in the order
// they were added (for a translation: the order external-resources lists them). JSON keeps that
// order and writes exact int64 numbers: {"memory-mb":4096,"vcores":4,"yarn.io/gpu":2,"yarn.io/fpga":1}.
// The zero value is an empty vector.
type Vector struct {
	entries []Resource
}

// Set sets the amount of name. A new memory-mb goes first, a new vcores after memory-mb, any other
// new name last.
func (v *Vector) Set(name string, value int64) {
	for i := range v.entries {
		if v.entries[i].Name == name {
			v.entries[i].Value = value
			return
		}
	}
	i := len(v.entries)
	switch name {
	case records.MemoryMB:
		i = 0
	case records.VCores:
		i = 0
		if len(v.entries) > 0 && v.entries[0].Name == records.MemoryMB {
			i = 1
		}
	}
	v.entries = append(v.entries, Resource{})
	copy(v.entries[i+1:], v.entries[i:])
	v.entries[i] = Resource{Name: name, Value: value}
}

// Get returns the amount of name and whether the vector has it.
func (v Vector) Get(name string) (int64, bool) {
	for _, e := range v.entries {
		if e.Name == name {
			return e.Value, true
		}
	}
	return 0, false
}

// Len returns the number of entries.
func (v Vector) Len() int { return len(v.entries) }

// Resources returns the entries in order.
func (v Vector) Resources() []Resource { return append([]Resource(nil), v.entries...) }

// String renders the vector as Hadoop prints a Resource's extended form:
// "<memory-mb:4096, vcores:4, yarn.io/gpu:2>".
func (v Vector) String() string {
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

// MarshalJSON writes the vector as a JSON object in vector order.
func (v Vector) MarshalJSON() ([]byte, error) {
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
// object's order.
func (v *Vector) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("resource vector: want a JSON object, got %v", tok)
	}
	var out Vector
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
		out.Set(name, n)
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*v = out
	return nil
}
