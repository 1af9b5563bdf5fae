package amrun

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rssFileKiB(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return v
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestReleaseBinaryPages: the pages of the test binary leave the resident set, and the program
// goes on running (its code and read-only data come back from the page cache as used).
func TestReleaseBinaryPages(t *testing.T) {
	before := rssFileKiB(t)
	released := releaseBinaryPages()
	after := rssFileKiB(t)
	assert.Positive(t, released, "the test binary's code was resident")
	assert.Less(t, after, before, "file-backed resident set: %d KiB before, %d KiB after", before, after)
	// Code, read-only data and the heap work as before.
	assert.Equal(t, "rank 3 of 8: 0.375", fmt.Sprintf("rank %d of %d: %.3f", 3, 8, 3.0/8))
	_, err := readSpec("/nonexistent/yarn-er-job.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "yarn-er submit stages it as")
	// The code that ran since came back from the page cache, and a second call drops it again.
	assert.Positive(t, releaseBinaryPages())
}
