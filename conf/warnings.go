package conf

import (
	"fmt"

	"github.com/yarn-er/yarn-er/internal/defaults"
)

// warnList collects warnings of one load, bounded: the first perKind warnings of a kind in one file are
// kept, later ones are counted (the last kept one says how often the kind recurred), and past max
// warnings the rest are only counted. Hot paths ask fold first, so that a million bad lines cost a
// counter and no formatting.
type warnList struct {
	max     int
	list    []Warning
	seen    map[warnKey]*kindSeen
	repeats []repeat // parallel to list
	dropped int
}

// perKind is how many warnings of one kind in one file are shown one by one.
const perKind = 5

// warnKey identifies a kind of warning in a file; sub refines kind (the key a duplicate is about).
type warnKey struct{ kind, sub, file string }

type kindSeen struct {
	n    int // kept so far
	last int // index of the last kept one in list
}

type repeat struct {
	n        int
	lastLine int
}

func newWarnList(max int) *warnList {
	return &warnList{max: defaults.Positive(max, DefaultMaxWarnings)}
}

// fold counts a warning of kind at src and reports true when it is not to be kept (its kind was seen
// often enough in the file, or the list is full). An empty kind never folds into another.
func (l *warnList) fold(kind, sub string, src Source) bool {
	if kind != "" {
		if ks := l.seen[warnKey{kind, sub, src.File}]; ks != nil && ks.n >= perKind {
			l.repeats[ks.last].n++
			l.repeats[ks.last].lastLine = src.Line
			return true
		}
	}
	if len(l.list) >= l.max {
		l.dropped++
		return true
	}
	return false
}

// put keeps a warning fold did not fold.
func (l *warnList) put(kind, sub string, src Source, msg string) {
	if kind != "" {
		k := warnKey{kind, sub, src.File}
		ks := l.seen[k]
		if ks == nil {
			if l.seen == nil {
				l.seen = map[warnKey]*kindSeen{}
			}
			ks = &kindSeen{}
			l.seen[k] = ks
		}
		ks.n++
		ks.last = len(l.list)
	}
	l.list = append(l.list, Warning{Source: src, Message: msg})
	l.repeats = append(l.repeats, repeat{})
}

// addf records a warning of kind (refined by sub) at src.
func (l *warnList) addf(kind, sub string, src Source, format string, args ...any) {
	if !l.fold(kind, sub, src) {
		l.put(kind, sub, src, fmt.Sprintf(format, args...))
	}
}

// warnings returns the kept warnings, repeats noted, with a last line counting those left out.
func (l *warnList) warnings() []Warning {
	if l == nil {
		return nil
	}
	out := make([]Warning, 0, len(l.list)+1)
	for i, w := range l.list {
		if r := l.repeats[i]; r.n > 0 {
			if r.lastLine > 0 {
				w.Message += fmt.Sprintf(" [and %d more like it in this file, the last at line %d]", r.n, r.lastLine)
			} else {
				w.Message += fmt.Sprintf(" [and %d more like it]", r.n)
			}
		}
		out = append(out, w)
	}
	if l.dropped > 0 {
		out = append(out, Warning{Message: fmt.Sprintf("%d more warnings not shown (only the first %d are kept)", l.dropped, l.max)})
	}
	return out
}
