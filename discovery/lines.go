package discovery

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
)

// eachLine calls fn with the number (counted from 1, blank lines included) and the space-trimmed text
// of every non-blank line of data, stopping at the first error fn returns. A line longer than
// maxSysfsFile is the scanner's error.
func eachLine(data []byte, fn func(line int, text string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxSysfsFile)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if err := fn(line, text); err != nil {
			return err
		}
	}
	return sc.Err()
}

// runParsed runs the tool name with args and parses its output; a parse error is wrapped as
// "<label> output: …".
func runParsed[T any](ctx context.Context, r Runner, parse func([]byte) (T, error), label, name string, args ...string) (T, error) {
	var zero T
	out, err := r.Run(ctx, name, args...)
	if err != nil {
		return zero, err
	}
	v, err := parse(out)
	if err != nil {
		return zero, fmt.Errorf("%s output: %w", label, err)
	}
	return v, nil
}

// probeDirEntries is the probe of a backend that lists the directory dir: ready when it can be read,
// the answer "<dir> <found>" with found formatted from the number of entries (e.g. "has %d node(s)").
func probeDirEntries(root Root, dir, driver, found string) (bool, string) {
	entries, err := root.ReadDir(dir)
	if err != nil {
		return probeDirFailure(root, dir, driver, err)
	}
	return true, root.Path(dir) + " " + fmt.Sprintf(found, len(entries))
}

// readBackendDir lists the directory dir for a backend's Devices; a missing directory makes the
// backend unavailable (see dirUnavailable).
func readBackendDir(root Root, dir string) ([]os.DirEntry, error) {
	entries, err := root.ReadDir(dir)
	if err != nil {
		return nil, dirUnavailable(root, dir, err)
	}
	return entries, nil
}
