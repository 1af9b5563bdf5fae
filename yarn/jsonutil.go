package yarn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the JSON helpers that make the decoders tolerant of every shape Hadoop has
// produced: Jersey 1 (3.1 to 3.4) and Jersey 2 (3.5) differ in whether a one-element list is an
// array, empty lists come as null or are missing, and numbers must never pass through float64.

var jsonNull = []byte("null")

// isNull reports whether b (a raw JSON value) is null or empty.
func isNull(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || bytes.Equal(b, jsonNull)
}

// firstByte returns the first non-space byte of a raw JSON value, or 0.
func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// jsonInt64 is an int64 decoded exactly from a JSON number, a string holding one, or null (0).
// Integral numbers written with a fraction or an exponent ("1.0", "4E3") are accepted when their
// value is an exact int64; anything else is an error. float64 is never involved.
type jsonInt64 int64

// UnmarshalJSON implements json.Unmarshaler.
func (v *jsonInt64) UnmarshalJSON(b []byte) error {
	n, err := parseJSONInt64(b)
	if err != nil {
		return err
	}
	*v = jsonInt64(n)
	return nil
}

// parseJSONInt64 parses a raw JSON value as an exact int64.
func parseJSONInt64(b []byte) (int64, error) {
	if n, ok := fastInt64(b); ok {
		return n, nil
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, jsonNull) {
		return 0, nil
	}
	s := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, fmt.Errorf("invalid JSON string %.40q: %w", b, err)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return 0, nil
		}
	}
	return parseExactInt64(s)
}

// fastInt64 parses a plain integer of at most 18 digits without allocating; ok is false for
// anything else, which the general path handles.
func fastInt64(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseExactInt64 parses a decimal number that must denote an int64 exactly.
func parseExactInt64(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("number %.40s does not fit in a 64-bit integer", s)
	}
	if !strings.ContainsAny(s, ".eE") || !looksNumeric(s) {
		return 0, fmt.Errorf("%.40q is not an integer", s)
	}
	// "1.0" or "4E3": exact rational arithmetic, with a bound on the exponent so that "1e999999999"
	// cannot make big.Rat allocate without limit.
	if exp := exponentOf(s); exp > 40 || exp < -40 {
		return 0, fmt.Errorf("number %.40s is out of range for a 64-bit integer", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("%.40q is not a number", s)
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("number %.40s is not a whole number", s)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("number %.40s does not fit in a 64-bit integer", s)
	}
	return r.Num().Int64(), nil
}

// looksNumeric reports whether s has the characters of a JSON number only.
func looksNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

// exponentOf returns the decimal exponent written in s (0 when none), saturating at ±1000.
func exponentOf(s string) int {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return 0
	}
	e, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return 1000
	}
	return max(-1000, min(1000, e))
}

// jsonString decodes a JSON string, and also a number or boolean as its literal text, or null as "".
// Hadoop's Jersey 2 output sometimes writes what Jersey 1 wrote as a number as a string and back.
type jsonString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *jsonString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, jsonNull):
		*s = ""
	case b[0] == '"':
		// encoding/json validated the literal before calling us: without escapes its content is
		// the string.
		if len(b) >= 2 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
			*s = jsonString(b[1 : len(b)-1])
			return nil
		}
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = jsonString(v)
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("expected a string, got %.20s", b)
	default:
		*s = jsonString(b)
	}
	return nil
}

// jsonBool decodes true/false, the strings "true"/"false", or null (false).
type jsonBool bool

// UnmarshalJSON implements json.Unmarshaler.
func (v *jsonBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		*v = true
	case "false", "", "null":
		*v = false
	default:
		return fmt.Errorf("expected a boolean, got %.20s", b)
	}
	return nil
}

// jsonFloat decodes a JSON number, a string holding one, or null (0). It is for ratios and
// percentages (queue capacities, progress), never for resource quantities.
type jsonFloat float64

// UnmarshalJSON implements json.Unmarshaler.
func (v *jsonFloat) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, jsonNull) {
		*v = 0
		return nil
	}
	s := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s = strings.TrimSpace(s); s == "" {
			*v = 0
			return nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("expected a number, got %.20s", b)
	}
	*v = jsonFloat(f)
	return nil
}

// list is a JSON list that also accepts a single element in place of a one-element array (Jersey 1
// versus Jersey 2), and null or a missing value as the empty list.
type list[T any] []T

// UnmarshalJSON implements json.Unmarshaler.
func (l *list[T]) UnmarshalJSON(b []byte) error {
	switch firstByte(b) {
	case 0, 'n':
		if !isNull(b) {
			return fmt.Errorf("expected a list, got %.20s", b)
		}
		*l = nil
		return nil
	case '[':
		items, err := decodeArray[T](b)
		if err != nil {
			return err
		}
		if items == nil {
			// [] is an empty list, not an absent one (a queue's nodeLabels: [] means none).
			items = []T{}
		}
		*l = items
		return nil
	default:
		var one T
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*l = list[T]{one}
		return nil
	}
}

// maxListElements bounds the elements of one list in an answer: ten times the nodes of a
// 10,000-node cluster, and far more applications than a ResourceManager keeps
// (yarn.resourcemanager.max-completed-applications is 1,000 by default). Without it, an answer of
// 100 MB of "{}," would become 33 million records.
const maxListElements = 100_000

// errTooManyElements is the error about a list over maxListElements.
var errTooManyElements = fmt.Errorf("%w: a list with more than %d elements", ErrResponseTooLarge, maxListElements)

// decodeArray decodes a JSON array element by element, at most maxListElements of them.
func decodeArray[T any](b []byte) ([]T, error) {
	if len(b) <= 2*maxListElements {
		// An array of n elements takes at least 2n+1 bytes ("[0,0]"), so this one cannot hold too
		// many: decode it at once, without a Decoder and its buffer (most lists are a node's or a
		// queue's handful of resource types).
		var items []T
		if err := json.Unmarshal(b, &items); err != nil {
			return nil, err
		}
		return items, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	var items []T
	for dec.More() {
		if len(items) >= maxListElements {
			return nil, errTooManyElements
		}
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	return items, expectDelim(dec, ']')
}

// unwrapList decodes a Jersey list wrapper such as {"nodes": {"node": [...]}}: given the value of
// the outer key ("nodes") it returns the elements under key ("node"). It accepts the inner value as
// an array or a single object, the wrapper as null, {} or missing (no elements), and a bare array in
// place of the wrapper object.
func unwrapList[T any](b []byte, key string) ([]T, error) {
	switch firstByte(b) {
	case 0, 'n':
		if !isNull(b) {
			return nil, fmt.Errorf("expected an object with %q, got %.20s", key, b)
		}
		return nil, nil
	case '[':
		var items list[T]
		err := json.Unmarshal(b, &items)
		return items, err
	case '{':
		var wrapper map[string]json.RawMessage
		if err := json.Unmarshal(b, &wrapper); err != nil {
			return nil, err
		}
		inner, ok := wrapper[key]
		if !ok {
			if len(wrapper) == 0 {
				return nil, nil
			}
			// Not a wrapper at all but one element.
			var one T
			if err := json.Unmarshal(b, &one); err != nil {
				return nil, err
			}
			return []T{one}, nil
		}
		var items list[T]
		err := json.Unmarshal(inner, &items)
		return items, err
	default:
		return nil, fmt.Errorf("expected an object with %q, got %.20s", key, b)
	}
}

// unmarshalWrapped is the UnmarshalJSON of a list type holding the elements of a Jersey list
// wrapper under key (see unwrapList); what names the list in errors.
func unmarshalWrapped[T any](dst *[]T, b []byte, key, what string) error {
	items, err := unwrapList[T](b, key)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	*dst = items
	return nil
}

// entryList decodes Hadoop's JAXB rendering of a Map, {"entry":[{"key":k,"value":v},...]}, and
// also a plain JSON object {k: v}, into ordered key/value pairs. Values are kept raw.
type entryList []entry

type entry struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *entryList) UnmarshalJSON(b []byte) error {
	switch firstByte(b) {
	case 0, 'n':
		*e = nil
		return nil
	case '[':
		var items []entry
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		*e = items
		return nil
	case '{':
	default:
		return fmt.Errorf("expected a map, got %.20s", b)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	if raw, ok := obj["entry"]; ok && len(obj) == 1 {
		var items list[entry]
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		*e = entryList(items)
		return nil
	}
	if _, ok := obj["key"]; ok && len(obj) <= 2 {
		if _, ok := obj["value"]; ok || len(obj) == 1 {
			var one entry
			if err := json.Unmarshal(b, &one); err != nil {
				return err
			}
			*e = entryList{one}
			return nil
		}
	}
	out := make(entryList, 0, len(obj))
	for k, v := range obj {
		out = append(out, entry{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.Key, b.Key) })
	*e = out
	return nil
}

// stringMap returns the entries as a map of strings (numbers and booleans as their text).
func (e entryList) stringMap() (map[string]string, error) {
	if len(e) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(e))
	for _, kv := range e {
		var s jsonString
		if err := s.UnmarshalJSON(kv.Value); err != nil {
			return nil, fmt.Errorf("value of %q: %w", kv.Key, err)
		}
		m[kv.Key] = string(s)
	}
	return m, nil
}

// streamList decodes a top-level {"<outer>": <wrapper>, ...} from r and calls each for every
// element of the list, one at a time, so a 10,000-node answer is never held as one JSON value.
// The wrapper may be {"<inner>": [...]}, {"<inner>": {...}}, {"<inner>": null}, {}, null or a bare
// array (the shapes of unwrapList). Other top-level keys are skipped.
func streamList[T any](r io.Reader, outer, inner string, each func(*T) error) error {
	if _, ok := any(new(T)).(fastDecoder); ok {
		return streamListFast(r, outer, inner, each)
	}
	return streamListGeneral(r, outer, inner, each)
}

// streamListGeneral is streamList through encoding/json's Decoder.
func streamListGeneral[T any](r io.Reader, outer, inner string, each func(*T) error) error {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	return eachMember(dec, outer, func() error {
		if err := streamWrapper(dec, inner, each); err != nil {
			return fmt.Errorf("%s: %w", outer, err)
		}
		return nil
	})
}

func streamWrapper[T any](dec *json.Decoder, inner string, each func(*T) error) error {
	switch peekByte(dec) {
	case 'n':
		_, err := dec.Token()
		return err
	case '[':
		return streamElements(dec, each)
	case '{':
		if _, err := dec.Token(); err != nil {
			return err
		}
		return eachMember(dec, inner, func() error { return streamElements(dec, each) })
	}
	// Not in the buffer, or something else: decode the value whole.
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	items, err := unwrapList[T](raw, inner)
	if err != nil {
		return err
	}
	for i := range items {
		if err := each(&items[i]); err != nil {
			return err
		}
	}
	return nil
}

// streamElements decodes an array element by element, or a single object, or null.
func streamElements[T any](dec *json.Decoder, each func(*T) error) error {
	switch peekByte(dec) {
	case '[':
		if _, err := dec.Token(); err != nil {
			return err
		}
		for n := 0; dec.More(); n++ {
			if n >= maxListElements {
				return errTooManyElements
			}
			var v T
			if err := decodeElement(dec, &v); err != nil {
				return err
			}
			if err := each(&v); err != nil {
				return err
			}
		}
		return expectDelim(dec, ']')
	case '{':
		var v T
		if err := decodeElement(dec, &v); err != nil {
			return err
		}
		return each(&v)
	}
	var items list[T]
	if err := dec.Decode(&items); err != nil {
		return err
	}
	for i := range items {
		if err := each(&items[i]); err != nil {
			return err
		}
	}
	return nil
}

// decodeElement decodes the next value of dec into v: through v's fast path when it has one
// (fastDecoder) and the value has the shape it reads, else as encoding/json does.
func decodeElement[T any](dec *json.Decoder, v *T) error {
	fd, ok := any(v).(fastDecoder)
	if !ok {
		return dec.Decode(v)
	}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if fd.decodeFast(raw) {
		return nil
	}
	var zero T
	*v = zero
	return json.Unmarshal(raw, v)
}

// peekByte returns the first byte of the next value in dec's buffer (skipping white space and the
// ':' or ',' before it), or 0 when the buffer holds none yet.
func peekByte(dec *json.Decoder) byte {
	br, ok := dec.Buffered().(io.ByteReader)
	if !ok {
		return 0
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0
		}
		switch c {
		case ' ', '\t', '\r', '\n', ':', ',':
			continue
		}
		return c
	}
}

// expectDelim reads the next token and checks it is the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("expected %q, got %v", d, tok)
	}
	return nil
}

// eachMember reads the members of an object whose '{' dec has already read, through its '}':
// for a member called key it calls value, which must read the member's value from dec; the values
// of other members are skipped.
func eachMember(dec *json.Decoder, key string, value func() error) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if name, _ := tok.(string); name == key {
			if err := value(); err != nil {
				return err
			}
			continue
		}
		if err := skipValue(dec); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

// skipValue reads and discards the next value.
func skipValue(dec *json.Decoder) error {
	var skip json.RawMessage
	return dec.Decode(&skip)
}

// decodeList decodes an answer holding a list, {"<outer>": {"<inner>": [...]}} in any of the shapes
// of streamList, element by element, converting each JSON form J into the record T.
func decodeList[J, T any](r io.Reader, outer, inner string, convert func(*J) (T, error)) ([]T, error) {
	var out []T
	var kept int64
	boundary, _ := r.(recordBoundary)
	err := streamList(r, outer, inner, func(j *J) error {
		t, err := convert(j)
		if err != nil {
			return err
		}
		kept += retainedBytes(&t)
		if kept > MaxListRetained {
			return &ResponseLimitError{Endpoint: outer, What: "records kept", Limit: MaxListRetained,
				Class: "the memory the records of one list may keep, about 500 bytes a node"}
		}
		out = append(out, t)
		if boundary != nil {
			boundary.recordDone()
		}
		return nil
	})
	if err != nil {
		return nil, unexpected(outer, err)
	}
	return out, nil
}

// retainedBytes estimates the memory a decoded record keeps: its own size estimate when it has
// one, else a fixed 512 bytes.
func retainedBytes[T any](t *T) int64 {
	if s, ok := any(t).(interface{ retainedBytes() int64 }); ok {
		return s.retainedBytes()
	}
	return 512
}

// decodeSingle decodes an answer holding one object under key, {"app": {...}}, converting its JSON
// form J into the record T. id names the object in errors.
func decodeSingle[J, T any](r io.Reader, key, id string, convert func(*J) (T, error)) (*T, error) {
	j, err := decodeObject[J](r, key, key+" "+id)
	if err != nil {
		return nil, err
	}
	t, err := convert(j)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// decodeObject decodes an answer holding one object under key, {"clusterInfo": {...}}, into its
// JSON form J. what names the answer in errors.
func decodeObject[J any](r io.Reader, key, what string) (*J, error) {
	var v map[string]json.RawMessage
	if err := decodeJSON(r, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	raw := v[key]
	if isNull(raw) {
		return nil, fmt.Errorf("%s: %w: no %s object", what, ErrUnexpectedResponse, key)
	}
	var j J
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", what, ErrUnexpectedResponse, err)
	}
	return &j, nil
}
