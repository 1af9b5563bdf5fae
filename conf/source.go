// Package conf loads the configuration yarn-er reasons about: Flink's (legacy flink-conf.yaml, the
// standard config.yaml of Flink 1.19+, and -D overrides) and Hadoop's XML files (core-site, yarn-site,
// resource-types, node-resources, capacity-scheduler). Every value remembers where it came from, so
// messages can name the file and line, or the -D flag, that needs fixing.
package conf

import (
	"fmt"
	"strconv"
)

// Source tells where a configuration value came from.
type Source struct {
	// File is the path of the file the value was read from; empty for command-line values.
	File string
	// Line is the 1-based line of the value in File; 0 when unknown.
	Line int
	// Flag names the command-line origin of the value, e.g. "-D external-resources", when File is empty.
	Flag string
}

// String renders the source as "file:line", "file", the flag, or "" when nothing is known.
func (s Source) String() string {
	switch {
	case s.File != "" && s.Line > 0:
		return s.File + ":" + strconv.Itoa(s.Line)
	case s.File != "":
		return s.File
	default:
		return s.Flag
	}
}

// IsZero reports whether nothing is known about the source.
func (s Source) IsZero() bool { return s.File == "" && s.Line == 0 && s.Flag == "" }

// Warning is a problem that does not stop loading, such as a duplicate key that a later line overrides.
type Warning struct {
	Source  Source
	Message string
}

// String renders the warning with its source first, as compilers do.
func (w Warning) String() string {
	if w.Source.IsZero() {
		return w.Message
	}
	return w.Source.String() + ": " + w.Message
}

// Error is a configuration error that names where the bad input is and how to fix it.
// Callers branch on it with errors.As.
type Error struct {
	// Source is where the offending value or syntax is.
	Source Source
	// Key is the configuration key concerned, when there is one.
	Key string
	// Err is the underlying problem.
	Err error
	// Fix says how to repair the input, in one sentence; may be empty.
	Fix string
}

// Error implements error as "source: key: problem (fix: ...)".
func (e *Error) Error() string {
	msg := ""
	if s := e.Source.String(); s != "" {
		msg = s + ": "
	}
	if e.Key != "" {
		msg += e.Key + ": "
	}
	if e.Err != nil {
		msg += e.Err.Error()
	}
	if e.Fix != "" {
		msg += fmt.Sprintf(" (fix: %s)", e.Fix)
	}
	return msg
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }
