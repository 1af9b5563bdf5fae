package yarn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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

// skip reads any value, checking it against JSON's grammar (as encoding/json would: a value the
// fast path accepts is valid JSON, whoever cut it out of the stream).
func (s *fastScan) skip() bool { return s.value(0) }

// maxFastDepth bounds the nesting skip follows (encoding/json's own bound is 10000; the body
// guard's is lower).
const maxFastDepth = 10000

func (s *fastScan) value(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch c := s.peek(); c {
	case '{':
		s.i++
		if s.consume('}') {
			return true
		}
		for {
			if s.peek() != '"' || !s.skipString() || !s.consume(':') || !s.value(depth+1) {
				return false
			}
			if s.consume('}') {
				return true
			}
			if !s.consume(',') {
				return false
			}
		}
	case '[':
		s.i++
		if s.consume(']') {
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if s.consume(']') {
				return true
			}
			if !s.consume(',') {
				return false
			}
		}
	case '"':
		return s.skipString()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case 0:
		return false
	default:
		return s.number()
	}
}

// skipString reads a string with any escapes JSON allows.
func (s *fastScan) skipString() bool {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(s.b)-s.i < 4 {
					return false
				}
				for _, h := range s.b[s.i : s.i+4] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// number reads a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *fastScan) number() bool {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
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

// listSplitter cuts the elements of a JSON array out of a stream, one at a time, without
// decoding them: only brackets and strings are followed, so that a value is found at memory
// speed. The elements are checked by whoever decodes them (decodeFast's grammar, or
// encoding/json).
type listSplitter struct {
	r   io.Reader
	buf []byte // buf[off:] is read and not consumed
	off int
	err error // the reader's error once it returned one
}

// fill moves buf[keep:] to the front of buf (so that keep becomes 0) and reads more of the
// stream after it, growing buf when it is full. It returns false at the end of the stream or on
// a read error (in s.err).
func (s *listSplitter) fill(keep int) bool {
	n := copy(s.buf[:cap(s.buf)], s.buf[keep:])
	s.buf = s.buf[:n]
	s.off -= keep
	if s.err != nil {
		return false
	}
	if n == cap(s.buf) {
		s.buf = slices.Grow(s.buf, cap(s.buf))
	}
	for {
		m, err := s.r.Read(s.buf[n:cap(s.buf)])
		s.buf = s.buf[:n+m]
		if err != nil {
			s.err = err
		}
		if m > 0 || err != nil {
			return m > 0
		}
	}
}

// skipSpace moves off past white space; it returns the next byte, 0 at the end of the stream.
func (s *listSplitter) skipSpace() byte {
	for {
		for s.off < len(s.buf) {
			switch c := s.buf[s.off]; c {
			case ' ', '\t', '\r', '\n':
				s.off++
			default:
				return c
			}
		}
		if !s.fill(s.off) {
			return 0
		}
	}
}

// value returns the bytes of the next value (valid until the next call) and moves past it. A
// value that the stream ends inside is io.ErrUnexpectedEOF.
func (s *listSplitter) value() ([]byte, error) {
	start := s.off
	depth, inString := 0, false
	i := start
	for {
		for ; i < len(s.buf); i++ {
			c := s.buf[i]
			switch {
			case inString:
				// Jump to the next quote that no backslash escapes (the backslashes before it
				// are in buf: fill keeps the value from its start).
				q := bytes.IndexByte(s.buf[i:], '"')
				if q < 0 {
					i = len(s.buf) - 1
					continue
				}
				i += q
				if oddBackslashes(s.buf[start:i]) {
					continue // an escaped quote
				}
				inString = false
				if depth == 0 {
					s.off = i + 1
					return s.buf[start:s.off], nil
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']' || c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n':
				if depth == 0 {
					// The end of a number or a literal (or a stray delimiter: an empty value,
					// which encoding/json then refuses).
					s.off = i
					return s.buf[start:i], nil
				}
				if c == '}' || c == ']' {
					depth--
					if depth == 0 {
						s.off = i + 1
						return s.buf[start:s.off], nil
					}
				}
			}
		}
		i -= start
		if !s.fill(start) {
			if s.err != nil && s.err != io.EOF {
				return nil, s.err
			}
			if depth == 0 && !inString && i > 0 {
				s.off = len(s.buf)
				return s.buf[:s.off], nil // a number or literal that ends the stream
			}
			return nil, io.ErrUnexpectedEOF
		}
		start = 0
	}
}

// oddBackslashes reports whether b ends in an odd number of backslashes (so that the byte after
// it is escaped).
func oddBackslashes(b []byte) bool {
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// listPrefix matches the opening of {"<outer>":{"<inner>":[ (white space allowed between the
// tokens) at the start of b and returns its length; 0 when b does not start so.
func listPrefix(b []byte, outer, inner string) int {
	s := fastScan{b: b}
	for _, tok := range []string{"{", `"` + outer + `"`, ":", "{", `"` + inner + `"`, ":", "["} {
		s.ws()
		if !bytes.HasPrefix(b[s.i:], []byte(tok)) {
			return 0
		}
		s.i += len(tok)
	}
	return s.i
}

// streamListFast is streamList for records with a fast path (fastDecoder): when the answer
// opens as {"<outer>":{"<inner>":[ it cuts the elements out itself and decodes each through the
// fast path (or, for a shape the fast path leaves, encoding/json); what follows the array, and an
// answer of any other shape, goes to the general streamList, which decides as it always did.
func streamListFast[T any](r io.Reader, outer, inner string, each func(*T) error) error {
	s := &listSplitter{r: r, buf: make([]byte, 0, 64<<10)}
	for len(s.buf) < 512 && s.fill(0) {
	}
	n := listPrefix(s.buf, outer, inner)
	if n == 0 {
		if s.err != nil && s.err != io.EOF && len(s.buf) == 0 {
			return s.err
		}
		return streamListGeneral(io.MultiReader(bytes.NewReader(s.buf), errReader{s.err}, r), outer, inner, each)
	}
	s.off = n
	wrap := func(err error) error { return fmt.Errorf("%s: %w", outer, err) }
	for count := 0; ; count++ {
		c := s.skipSpace()
		if c == 0 {
			if s.err != nil && s.err != io.EOF {
				return wrap(s.err)
			}
			return wrap(io.ErrUnexpectedEOF)
		}
		if count == 0 && c == ']' {
			s.off++
			break
		}
		if count > 0 {
			if c == ']' {
				s.off++
				break
			}
			if c != ',' {
				return wrap(fmt.Errorf("invalid character %q after array element", c))
			}
			s.off++
			if s.skipSpace() == 0 {
				return wrap(io.ErrUnexpectedEOF)
			}
		}
		if count >= maxListElements {
			return wrap(errTooManyElements)
		}
		raw, err := s.value()
		if err != nil {
			return wrap(err)
		}
		var v T
		if fd := any(&v).(fastDecoder); !fd.decodeFast(raw) {
			v = *new(T)
			if err := json.Unmarshal(raw, &v); err != nil {
				return wrap(err)
			}
		}
		if err := each(&v); err != nil {
			return wrap(err)
		}
	}
	// The rest of the answer, after an array already streamed: to the general path, as if the
	// array had been empty.
	rest := []byte(`{"` + outer + `":{"` + inner + `":[]`)
	rest = append(rest, s.buf[s.off:]...)
	return streamListGeneral(io.MultiReader(bytes.NewReader(rest), errReader{s.err}, r), outer, inner, each)
}

// errReader returns err (nil: io.EOF), so that a read error the splitter met reaches the general
// path where it would have met it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil || e.err == io.EOF {
		return 0, io.EOF
	}
	return 0, e.err
}
