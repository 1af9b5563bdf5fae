//go:build linux

package discovery_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestUnwritableCoordinationDirectorySaysWhy: a directory that cannot take the coordination files (not
// writable by this user, on a read-only or a full file system) gives an error that names the file and
// says what to do; nothing is handed out. A read-only and a full file system need a tmpfs mount (root);
// an unwritable directory needs a user without root's override.
func TestUnwritableCoordinationDirectorySaysWhy(t *testing.T) {
	devs := gpus(t, 2)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		file  string // the file the error names
		want  string
	}{
		{"not writable by this user", func(t *testing.T, dir string) {
			if os.Geteuid() == 0 {
				t.Skip("root writes any directory")
			}
			require.NoError(t, os.Chmod(dir, 0o555))
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		}, "gpus.lock", "cannot create files in"},
		{"read-only file system", func(t *testing.T, dir string) {
			mountTmpfs(t, dir, unix.MS_RDONLY, "")
		}, "gpus.lock", "point --coordination-file at a directory on a writable file system"},
		{"full file system", func(t *testing.T, dir string) {
			mountTmpfs(t, dir, 0, "size=16k")
			require.NoError(t, os.Chmod(dir, 0o755))
			fill, err := os.Create(filepath.Join(dir, "fill"))
			require.NoError(t, err)
			_, _ = fill.Write(make([]byte, 1<<20)) // fails once the file system is full
			require.NoError(t, fill.Close())
		}, "gpus.ledger.", "is full"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newCoordFixture(t)
			tc.setup(t, f.dir)
			_, err := f.coordinator().Acquire(context.Background(), f.owner(100), devs, 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.Join(f.dir, tc.file), "the error names the file")
			assert.NotContains(t, err.Error(), ".tmp.", "not a temporary file that no longer exists")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// mountTmpfs mounts a tmpfs on dir for the test, or skips it where mounting is not allowed.
func mountTmpfs(t *testing.T, dir string, flags uintptr, data string) {
	t.Helper()
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, data); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !strings.Contains(err.Error(), "invalid argument") {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}
