package yarn

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Limits on what one ResourceManager answer may be. A cluster's answers are far smaller: /info and
// /metrics are under a kilobyte, an application a few kilobytes, /conf a few hundred; the largest is
// /nodes, about 2.6 KB per node (26 MB for 10,000 nodes).
const (
	// MaxListBody bounds list answers (/nodes, /apps, /scheduler, application attempts): about four
	// times the /nodes answer of a 10,000-node cluster.
	MaxListBody = 100 << 20
	// MaxConfBody bounds the /conf answer (the RM's whole configuration).
	MaxConfBody = 16 << 20
	// MaxObjectBody bounds every other answer (cluster info, metrics, one application, a new
	// application id).
	MaxObjectBody = 4 << 20
	// MaxListRecordBody bounds one record of a streamed list (/nodes, /apps): a node is about
	// 2.6 KB, an application a few kilobytes (its diagnostics YARN cuts at 64 KB). The whole list
	// is not bounded by its bytes, so that a cluster of any size is read: by the number of its
	// records (maxListElements), the memory they keep (MaxListRetained) and the request's time
	// (Options.Timeout).
	MaxListRecordBody = 1 << 20
	// MaxListRetained bounds the memory the records of one streamed list keep once decoded
	// (estimated from their strings and resource vectors): about 500 bytes a node.
	MaxListRetained = 256 << 20
	// maxJSONDepth bounds nesting in an answer; Hadoop's nest about ten deep (the scheduler's queues
	// nest deeper, one level per queue level plus a few).
	maxJSONDepth = 256
	// maxJSONString bounds one JSON string; the longest real ones are application diagnostics.
	maxJSONString = 4 << 20
	// maxJSONNumber bounds one JSON number literal.
	maxJSONNumber = 512
)

// ErrResponseTooLarge is wrapped by the errors about an answer over a limit (test with errors.Is).
var ErrResponseTooLarge = errors.New("ResourceManager answer over the limit")

// ResponseLimitError says which answer exceeded which limit.
type ResponseLimitError struct {
	// Endpoint is the request, "GET /ws/v1/cluster/nodes" (no query).
	Endpoint string
	// What is the limit: "body", "compressed body", "decompressed body", "JSON nesting", "JSON
	// string", "JSON number".
	What string
	// Limit is the limit's value (bytes, or levels for nesting).
	Limit int64
	// Class explains the limit.
	Class string
}

// Error names the request, the limit and why it is set there.
func (e *ResponseLimitError) Error() string {
	unit := " bytes"
	if e.What == "JSON nesting" {
		unit = " levels"
	}
	return fmt.Sprintf("%s: the answer's %s exceeds %d%s (%s); the ResourceManager, or something between it and yarn-er, answered far more than a cluster does",
		e.Endpoint, e.What, e.Limit, unit, e.Class)
}

// Unwrap returns ErrResponseTooLarge and ErrUnexpectedResponse.
func (e *ResponseLimitError) Unwrap() []error {
	return []error{ErrResponseTooLarge, ErrUnexpectedResponse}
}

// bodyLimit returns the limit of the answers to path and a sentence explaining it.
func bodyLimit(path string) (int64, string) {
	p := strings.TrimRight(path, "/")
	// By the last segment, so that a gateway's prefix (Knox's /gateway/<topology>/resourcemanager)
	// does not change the class.
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "nodes", "apps", "scheduler", "scheduler-overview", "appattempts", "containers":
		return MaxListBody, "the limit of list answers, about four times the 26 MB /nodes of a 10,000-node cluster"
	case "conf":
		return MaxConfBody, "the limit of the /conf answer; a ResourceManager's configuration is a few hundred kilobytes"
	}
	return MaxObjectBody, "the limit of single-object answers, which are a few kilobytes"
}

// streamedList reports whether the answers to path are lists decoded record by record (nodes,
// applications), bounded per record rather than as a whole.
func streamedList(path string) bool {
	p := strings.TrimRight(path, "/")
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "nodes", "apps":
		return true
	}
	return false
}

// capReader fails once more than limit bytes were read (since the last recordDone, for a
// per-record cap).
type capReader struct {
	r     io.Reader
	left  int64
	err   *ResponseLimitError
	tripd bool
	// perRecord, when set, is the budget recordDone restores.
	perRecord int64
}

// recordDone starts a new record's budget.
func (c *capReader) recordDone() {
	if c.perRecord > 0 && !c.tripd {
		c.left = c.perRecord
	}
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.tripd {
		return 0, c.err
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		c.tripd = true
		return n + int(c.left), c.err
	}
	return n, err
}

// limitBody wraps an answer's body: the bytes on the wire are capped, a gzip body is decompressed
// here (so that the decompressed size is capped separately: a small gzip bomb cannot expand without
// bound), and a JSON body is checked for nesting depth and string and number lengths as it streams.
// Another Content-Encoding is an error, returned by the first read (so that it reaches the caller as
// the answer's error, not as a failure to connect).
func limitBody(method, path string, header http.Header, body io.ReadCloser) io.ReadCloser {
	limit, class := bodyLimit(path)
	endpoint := method + " " + path
	what, perRecord := "body", int64(0)
	if streamedList(path) {
		limit, perRecord, what = MaxListRecordBody, MaxListRecordBody, "list record"
		class = "the limit of one record of a list: a node is about 2.6 KB, an application a few KB"
	}
	wire := &capReader{r: body, left: limit, perRecord: perRecord, err: &ResponseLimitError{Endpoint: endpoint, What: what, Limit: limit, Class: class}}
	caps := []*capReader{wire}
	var r io.Reader = wire
	switch enc := strings.ToLower(strings.TrimSpace(header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		wire.err.What = "compressed " + what
		gz, err := gzip.NewReader(wire)
		if err != nil {
			return failingBody{err: &bodyError{msg: fmt.Sprintf("%s: the gzip-encoded answer cannot be decompressed: %v", endpoint, err)}, Closer: body}
		}
		dc := &capReader{r: gz, left: limit, perRecord: perRecord, err: &ResponseLimitError{Endpoint: endpoint, What: "decompressed " + what, Limit: limit, Class: class}}
		caps = append(caps, dc)
		r = dc
		header.Del("Content-Encoding")
		header.Del("Content-Length")
	default:
		return failingBody{err: &bodyError{msg: fmt.Sprintf("%s: Content-Encoding %q, which yarn-er did not ask for (it accepts gzip)", endpoint, redactText(enc))}, Closer: body}
	}
	if strings.Contains(strings.ToLower(header.Get("Content-Type")), "json") {
		r = newJSONGuard(r, endpoint)
	}
	if perRecord > 0 {
		return listBody{readCloser: readCloser{Reader: r, Closer: body}, caps: caps}
	}
	return readCloser{Reader: r, Closer: body}
}

// recordBoundary is a body whose byte budget is per record: the list decoder tells it where each
// record ends.
type recordBoundary interface{ recordDone() }

// listBody is a streamed list's body: each record gets the per-record budget anew.
type listBody struct {
	readCloser
	caps []*capReader
}

func (l listBody) recordDone() {
	for _, c := range l.caps {
		c.recordDone()
	}
}

// bodyError is a problem with an answer's encoding; it wraps ErrUnexpectedResponse without repeating
// its text (the decoders add it).
type bodyError struct{ msg string }

func (e *bodyError) Error() string { return e.msg }
func (e *bodyError) Unwrap() error { return ErrUnexpectedResponse }

// failingBody is a body whose every read fails with err.
type failingBody struct {
	err error
	io.Closer
}

func (f failingBody) Read([]byte) (int, error) { return 0, f.err }

type readCloser struct {
	io.Reader
	io.Closer
}

// jsonGuard passes a JSON text through, failing as soon as it nests deeper than maxJSONDepth or holds
// a string longer than maxJSONString or a number longer than maxJSONNumber, so that the decoder never
// builds such a value. It tracks only what it needs (strings, escapes, brackets); the decoder still
// does the real parsing.
type jsonGuard struct {
	r        io.Reader
	endpoint string
	err      error

	depth    int
	inString bool
	escape   bool
	strLen   int
	numLen   int
}

func newJSONGuard(r io.Reader, endpoint string) *jsonGuard {
	return &jsonGuard{r: r, endpoint: endpoint}
}

func (g *jsonGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	if i, e := g.scan(p[:n]); e != nil {
		g.err = e
		return i, e
	}
	return n, err
}

func (g *jsonGuard) limit(what string, limit int64, class string) error {
	return &ResponseLimitError{Endpoint: g.endpoint, What: what, Limit: limit, Class: class}
}

// scan advances the guard's state over b; on a limit it returns how many bytes passed and the error.
// Inside strings it jumps to the next quote or backslash, so that long strings cost little.
func (g *jsonGuard) scan(b []byte) (int, error) {
	for i := 0; i < len(b); i++ {
		if g.inString {
			if g.escape {
				g.escape = false
				g.strLen++
				continue
			}
			j := bytes.IndexAny(b[i:], "\"\\")
			if j < 0 {
				g.strLen += len(b) - i
				if g.strLen > maxJSONString {
					return i, g.limit("JSON string", maxJSONString, "no value a ResourceManager sends is that long")
				}
				return len(b), nil
			}
			g.strLen += j
			if g.strLen > maxJSONString {
				return i, g.limit("JSON string", maxJSONString, "no value a ResourceManager sends is that long")
			}
			i += j
			if b[i] == '\\' {
				g.escape = true
				g.strLen++
			} else {
				g.inString = false
			}
			continue
		}
		c := b[i]
		if c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || c == 'e' || c == 'E' {
			g.numLen++
			if g.numLen > maxJSONNumber {
				return i, g.limit("JSON number", maxJSONNumber, "no number a ResourceManager sends is that long")
			}
			continue
		}
		g.numLen = 0
		switch c {
		case '"':
			g.inString, g.strLen = true, 0
		case '{', '[':
			g.depth++
			if g.depth > maxJSONDepth {
				return i, g.limit("JSON nesting", maxJSONDepth, "a ResourceManager's answers nest a few levels, one more per queue level")
			}
		case '}', ']':
			g.depth--
		}
	}
	return len(b), nil
}
