package yarnfake

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed captures
var capturesFS embed.FS

// DefaultVersion is the Hadoop version an RM replays unless WithVersion says otherwise: the
// mini-YARN's default line.
const DefaultVersion = "3.5.0"

// Misconfigured is the variant of a capture set recorded from the cluster of
// docker/conf-misconfigured (no GPU or FPGA resource types).
const Misconfigured = "misconfigured"

// ErrNoCapture is returned for a version, variant or file that has no embedded capture.
var ErrNoCapture = errors.New("no such capture")

// Capture is one recorded RM answer.
type Capture struct {
	// Name is the file name, e.g. "nodes.json".
	Name string
	// Status is the HTTP status the RM answered with.
	Status int
	// ContentType is the media type of the answer ("" when the RM sent none).
	ContentType string
	// Method and Path are the request's, Path without the query.
	Method, Path string
	// Query is the request's query without user.name.
	Query url.Values
	// Body is the answer's body, byte for byte.
	Body []byte
}

// Route is the capture's "METHOD /path".
func (c Capture) Route() string { return c.Method + " " + c.Path }

// Set is the captures of one Hadoop version and variant.
type Set struct {
	// Version is the Hadoop version, e.g. "3.4.2"; "3.1" for the hand-derived 3.1 set.
	Version string
	// Variant is "" for the good cluster (docker/conf) or Misconfigured.
	Variant string
	// Derived is true for a set written by hand from Hadoop's sources rather than recorded.
	Derived bool
	// Captures are the answers in the order they were recorded.
	Captures []Capture
}

// Get returns the capture called name.
func (s *Set) Get(name string) (Capture, error) {
	for _, c := range s.Captures {
		if c.Name == name {
			return c, nil
		}
	}
	return Capture{}, fmt.Errorf("yarnfake: %s: %s: %w", s.label(), name, ErrNoCapture)
}

func (s *Set) label() string {
	l := "hadoop-" + s.Version
	if s.Derived {
		l += "-derived"
	}
	if s.Variant != "" {
		l += "/" + s.Variant
	}
	return l
}

// SetInfo names an embedded capture set.
type SetInfo struct {
	// Version, Variant and Derived are as in Set.
	Version, Variant string
	// Derived is true for a set written by hand.
	Derived bool
}

// Sets lists every embedded capture set, ordered by version (oldest first), the good cluster
// before its variants.
func Sets() []SetInfo {
	var out []SetInfo
	dirs, _ := fs.ReadDir(capturesFS, "captures")
	for _, d := range dirs {
		if !d.IsDir() || !strings.HasPrefix(d.Name(), "hadoop-") {
			continue
		}
		v := strings.TrimPrefix(d.Name(), "hadoop-")
		derived := strings.HasSuffix(v, "-derived")
		v = strings.TrimSuffix(v, "-derived")
		base := path.Join("captures", d.Name())
		if _, err := fs.Stat(capturesFS, path.Join(base, "index.txt")); err == nil {
			out = append(out, SetInfo{Version: v, Derived: derived})
		}
		subs, _ := fs.ReadDir(capturesFS, base)
		for _, s := range subs {
			if _, err := fs.Stat(capturesFS, path.Join(base, s.Name(), "index.txt")); s.IsDir() && err == nil {
				out = append(out, SetInfo{Version: v, Variant: s.Name(), Derived: derived})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := compareVersions(out[i].Version, out[j].Version); c != 0 {
			return c < 0
		}
		return out[i].Variant < out[j].Variant
	})
	return out
}

// Versions lists the Hadoop versions with a recorded (not derived) capture set, oldest first.
func Versions() []string {
	var out []string
	for _, s := range Sets() {
		if !s.Derived && s.Variant == "" {
			out = append(out, s.Version)
		}
	}
	return out
}

// LoadSet reads the embedded captures of version (e.g. "3.4.2", or "3.1" for the hand-derived
// set) and variant ("" or Misconfigured).
func LoadSet(version, variant string) (*Set, error) {
	for _, derived := range []bool{false, true} {
		dir := "captures/hadoop-" + version
		if derived {
			dir += "-derived"
		}
		if variant != "" {
			dir = path.Join(dir, variant)
		}
		idx, err := capturesFS.ReadFile(path.Join(dir, "index.txt"))
		if err != nil {
			continue
		}
		s := &Set{Version: version, Variant: variant, Derived: derived}
		if err := s.parseIndex(dir, idx); err != nil {
			return nil, err
		}
		return s, nil
	}
	have := make([]string, 0, 8)
	for _, si := range Sets() {
		l := si.Version
		if si.Variant != "" {
			l += "/" + si.Variant
		}
		have = append(have, l)
	}
	want := version
	if variant != "" {
		want += "/" + variant
	}
	return nil, fmt.Errorf("yarnfake: Hadoop %s: %w (embedded: %s)", want, ErrNoCapture, strings.Join(have, ", "))
}

// LoadCapture is LoadSet(version, variant) followed by Get(name).
func LoadCapture(version, variant, name string) (Capture, error) {
	s, err := LoadSet(version, variant)
	if err != nil {
		return Capture{}, err
	}
	return s.Get(name)
}

// parseIndex reads index.txt: "name status content-type method path-and-query" per line
// (content type "-" when none); blank lines and lines starting with # are skipped.
func (s *Set) parseIndex(dir string, idx []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(idx))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 5 {
			return fmt.Errorf("yarnfake: %s/index.txt:%d: want 5 fields (name status content-type method path), got %d", dir, line, len(f))
		}
		status, err := strconv.Atoi(f[1])
		if err != nil || status < 100 || status > 599 {
			return fmt.Errorf("yarnfake: %s/index.txt:%d: bad status %q", dir, line, f[1])
		}
		u, err := url.Parse(f[4])
		if err != nil || !strings.HasPrefix(u.Path, "/") {
			return fmt.Errorf("yarnfake: %s/index.txt:%d: bad path %q", dir, line, f[4])
		}
		body, err := capturesFS.ReadFile(path.Join(dir, f[0]))
		if err != nil {
			return fmt.Errorf("yarnfake: %s/index.txt:%d: %w", dir, line, err)
		}
		ct := f[2]
		if ct == "-" {
			ct = ""
		}
		q := u.Query()
		q.Del("user.name")
		s.Captures = append(s.Captures, Capture{Name: f[0], Status: status, ContentType: ct,
			Method: f[3], Path: u.Path, Query: q, Body: body})
	}
	return sc.Err()
}

// compareVersions orders dotted versions numerically ("3.10" after "3.9").
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}
