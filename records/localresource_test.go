package records

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileResource(t *testing.T) {
	p := filepath.Join(t.TempDir(), "am bin")
	require.NoError(t, os.WriteFile(p, []byte("12345"), 0o755))
	mt := time.UnixMilli(1700000000123)
	require.NoError(t, os.Chtimes(p, mt, mt))
	r, err := FileResource(p)
	require.NoError(t, err)
	assert.Equal(t, int64(5), r.Size)
	assert.Equal(t, int64(1700000000123), r.Timestamp, "millisecond modification time")
	assert.Equal(t, LocalFile, r.EffectiveType())
	assert.Equal(t, VisibilityApplication, r.EffectiveVisibility())
	u, err := r.ParsedURL()
	require.NoError(t, err)
	assert.Equal(t, "file", u.Scheme)
	assert.Equal(t, p, u.Path, "the path with its blank, decoded")
	_, err = FileResource(filepath.Dir(p))
	assert.ErrorContains(t, err, "not a regular file")
	_, err = FileResource(filepath.Join(p, "missing"))
	assert.Error(t, err)
}

func TestLocalResourceChecks(t *testing.T) {
	ok := LocalResource{URL: "hdfs://nn:8020/x", Size: 1, Timestamp: 1, Type: LocalArchive, Visibility: VisibilityPublic}
	_, err := ok.ParsedURL()
	require.NoError(t, err)
	for _, bad := range []struct {
		r    LocalResource
		want string
	}{
		{LocalResource{URL: "relative/path", Size: 1, Timestamp: 1}, "needs a scheme and a path"},
		{LocalResource{URL: "hdfs://nn:8020/x", Size: -1, Timestamp: 1}, "size and modification time"},
		{LocalResource{URL: "hdfs://nn:8020/x", Size: 1}, "size and modification time"},
		{LocalResource{URL: "::", Size: 1, Timestamp: 1}, "local resource URL"},
		{LocalResource{URL: "hdfs://nn/x", Size: 1, Timestamp: 1, Type: "file"}, `type "file"`},
		{LocalResource{URL: "hdfs://nn/x", Size: 1, Timestamp: 1, Visibility: "WORLD"}, `visibility "WORLD"`},
	} {
		_, err := bad.r.ParsedURL()
		assert.ErrorContains(t, err, bad.want, bad.r.URL)
	}
}
