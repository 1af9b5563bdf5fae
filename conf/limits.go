package conf

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/yarn-er/yarn-er/internal/boundedfile"
	"github.com/yarn-er/yarn-er/internal/defaults"
)

// Default limits of one load (LoadHadoop or LoadFlink). Real configurations are far smaller: a
// yarn-site.xml is tens of kilobytes, a capacity-scheduler.xml with a thousand queues about 2 MiB, a
// Flink configuration a few kilobytes.
const (
	// DefaultMaxFileBytes is the largest configuration file read.
	DefaultMaxFileBytes = 16 << 20
	// DefaultMaxTotalBytes is the most bytes read by one load, included files counted.
	DefaultMaxTotalBytes = 64 << 20
	// DefaultMaxIncludes is the most <xi:include> elements followed by one load (a file included
	// again is not read again, but every include counts).
	DefaultMaxIncludes = 256
	// DefaultMaxProperties is the most properties one load collects, repeats through includes counted.
	DefaultMaxProperties = 200_000
	// DefaultMaxValueBytes is the longest value ${var} expansion may produce; a longer result is left
	// unexpanded, with a warning.
	DefaultMaxValueBytes = 1 << 20
	// DefaultMaxWarnings is the most warnings kept; past the first five of one kind in one file the
	// rest of that kind are counted in the fifth, and past the limit in a last "more warnings" line.
	DefaultMaxWarnings = 100
	// DefaultMaxXMLAttributes is the most attributes (namespace declarations included) of one element
	// of a Hadoop XML file. Hadoop's elements have a few at most; Hadoop's own XML parser (Woodstox)
	// refuses more than 1000.
	DefaultMaxXMLAttributes = 1000
	// DefaultMaxXMLTagBytes is the longest start tag of a Hadoop XML file, from '<' to '>'. Real
	// start tags are well under a kilobyte; Hadoop's own parser refuses an attribute value over 512 KiB.
	DefaultMaxXMLTagBytes = 1 << 20
	// DefaultMaxXMLDepth is the deepest element nesting of a Hadoop XML file; real files nest three or
	// four deep (configuration, property, value; an include's fallback).
	DefaultMaxXMLDepth = 64
)

// Limits bound the work and memory of loading a configuration, so that hostile or broken input (a
// huge file, /dev/zero, a FIFO, an include fan-out, a ${var} amplification, an XML element with a
// million attributes) ends with a clear error.
// Zero fields take the defaults.
type Limits struct {
	// MaxFileBytes bounds each file; DefaultMaxFileBytes when 0.
	MaxFileBytes int64
	// MaxTotalBytes bounds all files of one load together; DefaultMaxTotalBytes when 0.
	MaxTotalBytes int64
	// MaxIncludes bounds the <xi:include>s followed in one load; DefaultMaxIncludes when 0.
	MaxIncludes int
	// MaxProperties bounds the properties collected in one load; DefaultMaxProperties when 0.
	MaxProperties int
	// MaxValueBytes bounds one value after ${var} expansion; DefaultMaxValueBytes when 0.
	MaxValueBytes int
	// MaxWarnings bounds the distinct warnings kept; DefaultMaxWarnings when 0.
	MaxWarnings int
	// MaxXMLAttributes bounds the attributes of one element of a Hadoop XML file, checked before the
	// file is parsed; DefaultMaxXMLAttributes when 0.
	MaxXMLAttributes int
	// MaxXMLTagBytes bounds one start tag of a Hadoop XML file, checked before the file is parsed;
	// DefaultMaxXMLTagBytes when 0.
	MaxXMLTagBytes int
	// MaxXMLDepth bounds the element nesting of a Hadoop XML file; DefaultMaxXMLDepth when 0.
	MaxXMLDepth int
	// RaiseHint says how the user raises a limit (a flag, a setting); it ends the errors about limits.
	// Empty means the error only names the limit.
	RaiseHint string
}

func (l Limits) withDefaults() Limits {
	l.MaxFileBytes = defaults.Positive(l.MaxFileBytes, DefaultMaxFileBytes)
	l.MaxTotalBytes = defaults.Positive(l.MaxTotalBytes, DefaultMaxTotalBytes)
	l.MaxIncludes = defaults.Positive(l.MaxIncludes, DefaultMaxIncludes)
	l.MaxProperties = defaults.Positive(l.MaxProperties, DefaultMaxProperties)
	l.MaxValueBytes = defaults.Positive(l.MaxValueBytes, DefaultMaxValueBytes)
	l.MaxWarnings = defaults.Positive(l.MaxWarnings, DefaultMaxWarnings)
	l.MaxXMLAttributes = defaults.Positive(l.MaxXMLAttributes, DefaultMaxXMLAttributes)
	l.MaxXMLTagBytes = defaults.Positive(l.MaxXMLTagBytes, DefaultMaxXMLTagBytes)
	l.MaxXMLDepth = defaults.Positive(l.MaxXMLDepth, DefaultMaxXMLDepth)
	return l
}

// ErrLimit is wrapped by every error about a configuration limit (test with errors.Is).
var ErrLimit = errors.New("configuration limit exceeded")

// LimitError says which limit a configuration source exceeded.
type LimitError struct {
	// What names the limit ("file size", "total size", "includes", "properties").
	What string
	// Limit is the limit's value.
	Limit int64
	// Detail says what was found.
	Detail string
}

// Error names the limit and what was found.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: limit of %d exceeded (%s)", e.What, e.Limit, e.Detail)
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// ErrNotRegular is wrapped by the error about a configuration path that is not a regular file (a
// FIFO, a device such as /dev/zero, a socket).
var ErrNotRegular = boundedfile.ErrNotRegular

// budget is the state of one load: what was read so far.
type budget struct {
	lim        Limits
	totalBytes int64
	includes   int
	props      int
}

func newBudget(l Limits) *budget { return &budget{lim: l.withDefaults()} }

func (b *budget) limitError(src Source, what string, limit int64, detail, fix string) error {
	return limitError(b.lim, src, what, limit, detail, fix)
}

// limitError is the *Error about src exceeding a limit of l, with l's RaiseHint after the fix.
func limitError(l Limits, src Source, what string, limit int64, detail, fix string) error {
	if l.RaiseHint != "" {
		fix += "; to allow more, " + l.RaiseHint
	}
	return &Error{Source: src, Err: &LimitError{What: what, Limit: limit, Detail: detail}, Fix: fix}
}

// addProps counts n more properties.
func (b *budget) addProps(src Source, n int) error {
	b.props += n
	if b.props > b.lim.MaxProperties {
		return b.limitError(src, "properties", int64(b.lim.MaxProperties), fmt.Sprintf("%d properties so far, includes counted", b.props),
			"a configuration has a few thousand properties; check for a file included over and over")
	}
	return nil
}

// addInclude counts one more include.
func (b *budget) addInclude(src Source) error {
	b.includes++
	if b.includes > b.lim.MaxIncludes {
		return b.limitError(src, "includes", int64(b.lim.MaxIncludes), fmt.Sprintf("%d <xi:include> elements followed", b.includes),
			"include each file once, directly")
	}
	return nil
}

// readFile reads a configuration file within the budget.
func (b *budget) readFile(path string) ([]byte, error) {
	data, err := readRegular(path, min(b.lim.MaxFileBytes, b.lim.MaxTotalBytes-b.totalBytes), b.lim.RaiseHint)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) && b.lim.MaxTotalBytes-b.totalBytes < b.lim.MaxFileBytes {
			return nil, b.limitError(Source{File: path}, "total size", b.lim.MaxTotalBytes,
				fmt.Sprintf("%d bytes read before this file", b.totalBytes), "read fewer or smaller files")
		}
		return nil, err
	}
	b.totalBytes += int64(len(data))
	return data, nil
}

// ReadConfigFile reads a configuration file of at most maxBytes bytes (DefaultMaxFileBytes when
// maxBytes is 0). It refuses anything but a regular file (a FIFO, a device like /dev/zero, a socket)
// before opening it, never blocks on a FIFO swapped in meanwhile, and never reads more than maxBytes+1
// bytes. Errors are *Error values naming the file; a missing file wraps fs.ErrNotExist.
func ReadConfigFile(path string, maxBytes int64) ([]byte, error) {
	return readRegular(path, defaults.Positive(maxBytes, DefaultMaxFileBytes), "")
}

func readRegular(path string, maxBytes int64, raise string) ([]byte, error) {
	src := Source{File: path}
	data, err := boundedfile.Read(path, maxBytes)
	var tooBig *boundedfile.TooLargeError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &tooBig):
		fix := "a configuration file is far smaller; check that this is the right file"
		if raise != "" {
			fix += "; to allow more, " + raise
		}
		return nil, &Error{Source: src, Err: &LimitError{What: "file size", Limit: maxBytes, Detail: fmt.Sprintf("the file has %d bytes or more", tooBig.Size)}, Fix: fix}
	case errors.Is(err, boundedfile.ErrNotRegular):
		return nil, &Error{Source: src, Err: err, Fix: "name a regular configuration file"}
	case errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Source: src, Err: err, Fix: "check the path"}
	}
	return nil, &Error{Source: src, Err: err, Fix: unreadableFix(err, "make the file readable")}
}

// unreadableFix says how to fix a path that cannot be read because of err: def, unless the path is a
// loop of symbolic links, which no permission change repairs.
func unreadableFix(err error, def string) string {
	if errors.Is(err, syscall.ELOOP) {
		return "fix the symbolic link: it leads back to itself (a loop of links), or through more than the system allows"
	}
	return def
}
