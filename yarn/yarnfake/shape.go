package yarnfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// Shape rewrites the RM's JSON answers into the shape of another serializer. Flags combine.
// The zero Shape keeps the answers as recorded.
type Shape uint

const (
	// SingleObjects writes every one-element array as its element: {"node":{…}} instead of
	// {"node":[{…}]}, as Jersey 2 without the YARN-11874 compatibility layer and some Jersey 1
	// JAXB configurations do.
	SingleObjects Shape = 1 << iota
	// NullEmpty writes every empty object and empty array as null: {"apps":null} instead of
	// {"apps":{}}, as Jersey 1 has been reported to.
	NullEmpty
	// StringNumbers writes every number as a string: "value":"4".
	StringNumbers
)

// Jersey2Raw is Jersey 2's own JSON (Hadoop 3.5 trunk before YARN-11874): single objects for
// one-element lists, numbers as strings.
const Jersey2Raw = SingleObjects | StringNumbers

// apply rewrites body; a body that is not JSON is returned as it is.
func (s Shape) apply(body []byte) []byte {
	if s == 0 {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return body
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return body
	}
	var out bytes.Buffer
	if v.kind == 'o' && len(v.vals) == 0 {
		return body // a whole answer of {} stays {}
	}
	s.write(&out, v)
	return out.Bytes()
}

// node is a JSON value with its object keys in document order.
type node struct {
	kind   byte // 'o' object, 'a' array, 'v' scalar
	keys   []string
	vals   []*node
	scalar any // json.Number, string, bool or nil
}

func readValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: 'a'}
		if t == '{' {
			n.kind = 'o'
		}
		for dec.More() {
			if n.kind == 'o' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				ks, _ := k.(string)
				n.keys = append(n.keys, ks)
			}
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	default:
		return &node{kind: 'v', scalar: t}, nil
	}
}

func (s Shape) write(b *bytes.Buffer, n *node) {
	switch n.kind {
	case 'v':
		if num, ok := n.scalar.(json.Number); ok && s&StringNumbers != 0 {
			b.WriteString(strconv.Quote(num.String()))
			return
		}
		enc, _ := json.Marshal(n.scalar)
		b.Write(enc)
	case 'a':
		if len(n.vals) == 0 && s&NullEmpty != 0 {
			b.WriteString("null")
			return
		}
		if len(n.vals) == 1 && s&SingleObjects != 0 && n.vals[0].kind == 'o' {
			s.write(b, n.vals[0])
			return
		}
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			s.write(b, v)
		}
		b.WriteByte(']')
	case 'o':
		if len(n.vals) == 0 && s&NullEmpty != 0 {
			b.WriteString("null")
			return
		}
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			enc, _ := json.Marshal(k)
			b.Write(enc)
			b.WriteByte(':')
			s.write(b, n.vals[i])
		}
		b.WriteByte('}')
	}
}
