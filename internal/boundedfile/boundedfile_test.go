package boundedfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	require.NoError(t, os.WriteFile(ok, []byte("hello"), 0o600))
	b, err := Read(ok, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))

	_, err = Read(ok, 4)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, int64(4), tl.Limit)

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for path, kind := range map[string]string{fifo: "a FIFO (named pipe)", "/dev/zero": "a character device", dir: "a directory"} {
		_, err = Read(path, 1<<20)
		var nr *NotRegularError
		require.ErrorAs(t, err, &nr, path)
		assert.Equal(t, kind, nr.Kind)
		assert.ErrorIs(t, err, ErrNotRegular)
	}

	_, err = Read(filepath.Join(dir, "missing"), 1)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
