package logagg

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll returns container → file → content of an aggregated log.
func readAll(t testing.TB, b []byte) (map[string]map[string]string, error) {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(b), int64(len(b)), Limits{})
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	err = rd.Logs(func(l Log) error {
		body, err := io.ReadAll(l.Body)
		if err != nil {
			return err
		}
		if out[l.Container] == nil {
			out[l.Container] = map[string]string{}
		}
		out[l.Container][l.Name] = string(body)
		return nil
	})
	return out, err
}

// TestCapturedHadoop350 reads the files that a real mini-YARN (Hadoop 3.5.0) aggregated for an
// application of `yarn-er submit --containers 3` whose command prints its rank to stdout and
// stderr.
func TestCapturedHadoop350(t *testing.T) {
	files, err := filepath.Glob("testdata/hadoop-3.5.0-*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	ranks := map[string]bool{}
	containers := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		rd, err := NewReader(bytes.NewReader(b), int64(len(b)), Limits{})
		require.NoError(t, err, f)
		assert.Equal(t, "none", rd.Compression())
		owner, err := rd.Owner()
		require.NoError(t, err)
		assert.Equal(t, "root", owner, f)
		logs, err := readAll(t, b)
		require.NoError(t, err, f)
		for c, byName := range logs {
			containers++
			assert.True(t, strings.HasPrefix(c, "container_"), c)
			names := make([]string, 0, len(byName))
			for n := range byName {
				names = append(names, n)
			}
			sort.Strings(names)
			assert.Contains(t, names, "stdout", c)
			assert.Contains(t, names, "stderr", c)
			if out := byName["stdout"]; strings.HasPrefix(out, "hello from rank ") {
				ranks[strings.TrimSpace(out)] = true
				assert.Contains(t, byName["stderr"], "err of rank ")
			}
			t.Logf("%s %s: %v", filepath.Base(f), c, names)
		}
	}
	assert.Equal(t, 4, containers, "the AM and 3 ranks")
	assert.Equal(t, map[string]bool{"hello from rank 0": true, "hello from rank 1": true, "hello from rank 2": true}, ranks)
}

// TestCapturedHadoop336: a file aggregated by a Hadoop 3.3.6 mini-YARN (the node of ranks 0 and 2
// and no AM) reads the same way.
func TestCapturedHadoop336(t *testing.T) {
	b, err := os.ReadFile("testdata/hadoop-3.3.6-localhost_33757")
	require.NoError(t, err)
	logs, err := readAll(t, b)
	require.NoError(t, err)
	got := map[string]string{}
	for c, byName := range logs {
		got[c] = byName["stdout"]
	}
	assert.Equal(t, map[string]string{
		"container_1796126643547_0001_01_000002": "hello from rank 0\n",
		"container_1796126643547_0001_01_000004": "hello from rank 2\n",
	}, got)
}

// TestVLongRoundTrip: every encoding length of TFile's integers decodes to its value.
func TestVLongRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, -1, -32, -33, 127, 128, -20 << 8, 20<<8 - 1, 20 << 8, -16 << 16, 16<<16 - 1,
		16 << 16, -8 << 24, 8<<24 - 1, 8 << 24, 1 << 31, -1 << 31, 1 << 40, -1 << 40, 1 << 55, 1<<63 - 1, -1 << 63} {
		b := putVLong(nil, n)
		got, err := readVLong(bytes.NewReader(b))
		require.NoError(t, err, "%d % x", n, b)
		assert.Equal(t, n, got, "% x", b)
	}
	// Java's own bytes for 6292 (the length of a captured value's chunk).
	got, err := readVLong(bytes.NewReader([]byte{0xa8, 0x18, 0x94}))
	require.NoError(t, err)
	assert.Equal(t, int64(6292), got)
}

// TestEncodings: compressed (gz) blocks, several blocks and values in several chunks read the same.
func TestEncodings(t *testing.T) {
	logs := []testLog{
		{container: "container_1_0001_01_000001", files: [][2]string{{"stderr", "am log\n"}, {"stdout", ""}}},
		{container: "container_1_0001_01_000002", files: [][2]string{{"stdout", strings.Repeat("rank 0\n", 5000)}, {"stderr", "e0"}}},
		{container: "container_1_0001_01_000003", files: [][2]string{{"stdout", "rank 1\n"}}},
	}
	want := map[string]map[string]string{}
	for _, l := range logs {
		want[l.container] = map[string]string{}
		for _, f := range l.files {
			want[l.container][f[0]] = f[1]
		}
	}
	for name, o := range map[string]encodeOpts{
		"plain":         {},
		"gz":            {codec: "gz"},
		"blocks":        {perBlock: 2},
		"chunks":        {chunk: 1000},
		"gz blocks":     {codec: "gz", perBlock: 1, chunk: 7},
		"no header rec": {skipHeader: true},
	} {
		t.Run(name, func(t *testing.T) {
			b := encode(logs, o)
			got, err := readAll(t, b)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			rd, err := NewReader(bytes.NewReader(b), int64(len(b)), Limits{})
			require.NoError(t, err)
			if !o.skipHeader {
				owner, err := rd.Owner()
				require.NoError(t, err)
				assert.Equal(t, "alice", owner)
			}
		})
	}
}

// TestDamaged: truncated, foreign and corrupted files end in a FormatError naming the problem.
func TestDamaged(t *testing.T) {
	good := encode([]testLog{{container: "container_1_0001_01_000002", files: [][2]string{{"stdout", "hello\n"}}}}, encodeOpts{})
	flip := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	// The value's declared length (the "6" of "hello\n") is at a known place: find it.
	lenAt := bytes.Index(good, []byte("\x00\x016hello"))
	require.Positive(t, lenAt)
	cases := map[string]struct {
		b       []byte
		want    string
		indexed bool
	}{
		"empty":           {b: nil, want: "too short", indexed: true},
		"not a tfile":     {b: []byte(strings.Repeat("IndexedFileAggregatedLogsBlock", 4)), want: "IndexedFile", indexed: true},
		"bad version":     {b: flip(len(good)-20, 9), want: "BCFile version"},
		"index offset":    {b: flip(len(good)-28, 0x7f), want: "meta index offset"},
		"truncated tail":  {b: good[:len(good)-1], want: "magic", indexed: true},
		"cut in the data": {b: append(bytes.Clone(good[:40]), good[len(good)-80:]...), want: "at offset"},
		"length too big":  {b: flip(lenAt+2, '9'), want: "container container_1_0001_01_000002"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := readAll(t, c.b)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrFormat)
			assert.Contains(t, err.Error(), c.want)
			if c.indexed {
				assert.ErrorIs(t, err, ErrIndexedFormat)
			}
		})
	}
	// A codec the reader does not have is named.
	b := encode(nil, encodeOpts{codec: "lzo"})
	_, err := readAll(t, b)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), `"lzo"`)
}

// TestLimits: a key over MaxKeyBytes and more blocks than MaxBlocks are refused.
func TestLimits(t *testing.T) {
	long := "container_" + strings.Repeat("1", 200)
	b := encode([]testLog{{container: long, files: [][2]string{{"stdout", "x"}}}}, encodeOpts{perBlock: 1})
	rd, err := NewReader(bytes.NewReader(b), int64(len(b)), Limits{MaxKeyBytes: 100})
	require.NoError(t, err)
	err = rd.Logs(func(Log) error { return nil })
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "the limit is 100")
	_, err = NewReader(bytes.NewReader(b), int64(len(b)), Limits{MaxBlocks: 2})
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "data blocks (the limit is 2)")
}

// FuzzReader: no input panics, and what is read stays within what the file holds.
func FuzzReader(f *testing.F) {
	if files, err := filepath.Glob("testdata/hadoop-*"); err == nil {
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add(encode([]testLog{{container: "container_1_0001_01_000002", files: [][2]string{{"stdout", "hi\n"}}}}, encodeOpts{codec: "gz", chunk: 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := NewReader(bytes.NewReader(b), int64(len(b)), Limits{MaxIndexBytes: 1 << 20})
		if err != nil {
			return
		}
		total := int64(0)
		_ = rd.Logs(func(l Log) error {
			n, _ := io.Copy(io.Discard, l.Body)
			total += n
			if n > l.Size {
				t.Fatalf("read %d bytes of a %d-byte log", n, l.Size)
			}
			return nil
		})
		if rd.Compression() == "none" && total > int64(len(b)) {
			t.Fatalf("read %d bytes of logs from a %d-byte file", total, len(b))
		}
	})
}
