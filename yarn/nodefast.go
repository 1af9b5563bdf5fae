package yarn

import (
	"unicode/utf8"
)

// This file is a fast path for the one record a large cluster sends many thousands of: a node of
// /ws/v1/cluster/nodes. encoding/json decodes a node through reflection and a custom decoder per
// field, each scanning its value again (about 20 MB/s, three quarters of a preflight on 50,000
// nodes). decodeFast reads the shape Hadoop writes in one pass over the bytes and gives up on
// anything else — an escaped string, a number that is not a plain integer, a key that differs
// from a known one only in case, a repeated key, a value of another type than Hadoop's — which
// the reflection path then decodes as before. It never decides differently from that path:
// FuzzNodeFast checks that whatever it accepts decodes to the same node.

// fastDecoder is a JSON form that can decode the common shape of its record in one pass.
type fastDecoder interface {
	// decodeFast decodes b, a complete and valid JSON value, into the receiver and reports
	// whether it could; false leaves the receiver in an unspecified state.
	decodeFast(b []byte) bool
}

// fastScan is a cursor over one JSON value.
type fastScan struct {
	b []byte
	i int
}

func (s *fastScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (s *fastScan) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// consume reads the byte c after white space.
func (s *fastScan) consume(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// literal reads the literal word (null, true, false).
func (s *fastScan) literal(word string) bool {
	s.ws()
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// str reads a string without escapes, control characters or invalid UTF-8 and returns its
// bytes (which alias the input).
func (s *fastScan) str() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// text reads a string (as str) or null ("") into a jsonString.
func (s *fastScan) text(dst *jsonString) bool {
	if s.peek() == 'n' {
		*dst = ""
		return s.literal("null")
	}
	v, ok := s.str()
	if !ok {
		return false
	}
	*dst = jsonString(v)
	return true
}

// int reads a plain integer of at most 19 digits that fits in an int64, or null (0).
func (s *fastScan) int(dst *jsonInt64) bool {
	c := s.peek()
	if c == 'n' {
		*dst = 0
		return s.literal("null")
	}
	neg := c == '-'
	if neg {
		s.i++
	}
	start := s.i
	var n uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + uint64(s.b[s.i]-'0')
		s.i++
		if s.i-start > 19 {
			return false
		}
	}
	digits := s.i - start
	if digits == 0 || (digits > 1 && s.b[start] == '0') {
		return false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	// 19 digits may pass the range: n wraps only above 18446744073709551615 (20 digits).
	switch {
	case !neg && n > 1<<63-1:
		return false
	case neg && n > 1<<63:
		return false
	case neg && n == 1<<63:
		*dst = jsonInt64(-1 << 63)
	case neg:
		*dst = jsonInt64(-int64(n))
	default:
		*dst = jsonInt64(n)
	}
	return true
}

// intPtr reads an integer into a new value, or null (nil).
func (s *fastScan) intPtr(dst **jsonInt64) bool {
	if s.peek() == 'n' {
		*dst = nil
		return s.literal("null")
	}
	v := new(jsonInt64)
	if !s.int(v) {
		return false
	}
	*dst = v
	return true
}

// strings reads a list[string]: an array of strings, one string, or null.
func (s *fastScan) strings(dst *list[string]) bool {
	switch s.peek() {
	case 'n':
		*dst = nil
		return s.literal("null")
	case '"':
		v, ok := s.str()
		if !ok {
			return false
		}
		*dst = list[string]{string(v)}
		return true
	case '[':
	default:
		return false
	}
	s.i++
	out := list[string]{}
	if s.consume(']') {
		*dst = out
		return true
	}
	for {
		v, ok := s.str()
		if !ok {
			return false
		}
		if len(out) >= maxListElements {
			return false // the general path refuses it
		}
		out = append(out, string(v))
		if s.consume(']') {
			*dst = out
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// skip reads any value, checking only that its brackets and strings close (the caller's bytes
// were validated as JSON before).
func (s *fastScan) skip() bool {
	depth := 0
	for {
		switch c := s.peek(); c {
		case 0:
			return false
		case '{', '[':
			s.i++
			depth++
		case '}', ']':
			s.i++
			depth--
			if depth < 0 {
				return false
			}
		case ',', ':':
			if depth == 0 {
				return false
			}
			s.i++
		case '"':
			s.i++
			for {
				if s.i >= len(s.b) {
					return false
				}
				c := s.b[s.i]
				s.i++
				if c == '\\' {
					s.i++
				} else if c == '"' {
					break
				}
			}
		default:
			// A number or a literal: up to the next delimiter.
			for s.i < len(s.b) {
				c := s.b[s.i]
				if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
					break
				}
				s.i++
			}
		}
		if depth == 0 {
			return true
		}
	}
}

// object reads an object, calling member for each key with the cursor before its value; member
// reads the value (or skips it) and reports whether it could.
func (s *fastScan) object(member func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') || !member(key) {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// unknownKey skips the value of a key no field has, unless encoding/json would match it to one
// of known anyway (it matches keys without regard to case, and folds some non-ASCII letters):
// then the fast path gives up.
func (s *fastScan) unknownKey(key []byte, known []string) bool {
	for _, c := range key {
		if c >= 0x80 {
			return false
		}
	}
	for _, k := range known {
		if equalFoldASCII(key, k) {
			return false
		}
	}
	return s.skip()
}

func equalFoldASCII(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// seen tracks the known keys of one object read, so that a repeated one (which encoding/json
// merges) sends the value to the general path.
type seen uint32

func (m *seen) first(bit int) bool {
	if *m&(1<<bit) != 0 {
		return false
	}
	*m |= 1 << bit
	return true
}

// nodeKeys are nodeJSON's keys, in the order of its fields.
func nodeKeys() [17]string {
	return [...]string{"rack", "state", "id", "nodeHostName", "nodeHTTPAddress", "lastHealthUpdate", "version",
		"healthReport", "numContainers", "usedMemoryMB", "availMemoryMB", "usedVirtualCores", "availableVirtualCores",
		"nodeLabels", "usedResource", "availableResource", "totalResource"}
}

// decodeFast implements fastDecoder.
func (n *nodeJSON) decodeFast(b []byte) bool {
	s := fastScan{b: b}
	var got seen
	keys := nodeKeys()
	ok := s.object(func(key []byte) bool {
		for bit, k := range keys {
			if string(key) != k {
				continue
			}
			if !got.first(bit) {
				return false
			}
			switch bit {
			case 0:
				return s.text(&n.Rack)
			case 1:
				return s.text(&n.State)
			case 2:
				return s.text(&n.ID)
			case 3:
				return s.text(&n.NodeHostName)
			case 4:
				return s.text(&n.NodeHTTPAddress)
			case 5:
				return s.int(&n.LastHealthUpdate)
			case 6:
				return s.text(&n.Version)
			case 7:
				return s.text(&n.HealthReport)
			case 8:
				return s.int(&n.NumContainers)
			case 9:
				return s.intPtr(&n.UsedMemoryMB)
			case 10:
				return s.intPtr(&n.AvailMemoryMB)
			case 11:
				return s.intPtr(&n.UsedVirtualCores)
			case 12:
				return s.intPtr(&n.AvailableVirtualCores)
			case 13:
				return s.strings(&n.NodeLabels)
			case 14:
				return s.resource(&n.UsedResource)
			case 15:
				return s.resource(&n.AvailableResource)
			default:
				return s.resource(&n.TotalResource)
			}
		}
		return s.unknownKey(key, keys[:])
	})
	if !ok {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// resourceInfoKeys are resourceInfoJSON's keys, in the order of its fields.
func resourceInfoKeys() [3]string { return [...]string{"memory", "vCores", "resourceInformations"} }

// resource reads a resourceInfoJSON, or null (nil).
func (s *fastScan) resource(dst **resourceInfoJSON) bool {
	if s.peek() == 'n' {
		*dst = nil
		return s.literal("null")
	}
	r := &resourceInfoJSON{}
	var got seen
	keys := resourceInfoKeys()
	ok := s.object(func(key []byte) bool {
		for bit, k := range keys {
			if string(key) != k {
				continue
			}
			if !got.first(bit) {
				return false
			}
			switch bit {
			case 0:
				return s.intPtr(&r.Memory)
			case 1:
				return s.intPtr(&r.VCores)
			default:
				return s.informations(&r.ResourceInformations)
			}
		}
		return s.unknownKey(key, keys[:])
	})
	if !ok {
		return false
	}
	*dst = r
	return true
}

// informations reads {"resourceInformation": [...]} or {"resourceInformation": {...}}, or null;
// the other shapes resourceInformationsJSON accepts go to the general path.
func (s *fastScan) informations(dst *resourceInformationsJSON) bool {
	if s.peek() == 'n' {
		*dst = nil
		return s.literal("null")
	}
	found := false
	ok := s.object(func(key []byte) bool {
		if string(key) != "resourceInformation" || found {
			return false
		}
		found = true
		if s.peek() == '{' {
			var e resourceInformationJSON
			if !s.information(&e) {
				return false
			}
			*dst = resourceInformationsJSON{e}
			return true
		}
		if !s.consume('[') {
			return false
		}
		out := make(resourceInformationsJSON, 0, 4)
		if s.consume(']') {
			*dst = out
			return true
		}
		for {
			var e resourceInformationJSON
			if !s.information(&e) {
				return false
			}
			if len(out) >= maxListElements {
				return false // the general path refuses it
			}
			out = append(out, e)
			if s.consume(']') {
				*dst = out
				return true
			}
			if !s.consume(',') {
				return false
			}
		}
	})
	return ok && found
}

// informationKeys are resourceInformationJSON's keys, in the order of its fields.
func informationKeys() [8]string {
	return [...]string{"name", "resourceType", "units", "value", "minimumAllocation", "maximumAllocation",
		"tags", "attributes"}
}

// information reads one resourceInformation entry; its attributes only as {} or null.
func (s *fastScan) information(e *resourceInformationJSON) bool {
	var got seen
	keys := informationKeys()
	return s.object(func(key []byte) bool {
		for bit, k := range keys {
			if string(key) != k {
				continue
			}
			if !got.first(bit) {
				return false
			}
			switch bit {
			case 0:
				return s.text(&e.Name)
			case 1:
				return s.text(&e.ResourceType)
			case 2:
				return s.text(&e.Units)
			case 3:
				return s.int(&e.Value)
			case 4:
				return s.int(&e.MinimumAllocation)
			case 5:
				return s.int(&e.MaximumAllocation)
			case 6:
				return s.strings(&e.Tags)
			default:
				if s.peek() == 'n' {
					e.Attributes = nil
					return s.literal("null")
				}
				if !s.consume('{') || !s.consume('}') {
					return false
				}
				e.Attributes = entryList{}
				return true
			}
		}
		return s.unknownKey(key, keys[:])
	})
}
