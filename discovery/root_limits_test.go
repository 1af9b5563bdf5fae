//go:build unix

package discovery_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
)

// TestRootReadFileBounds: sysfs and procfs reads never block, never read more than 1 MiB, and never
// hand back part of a file.
func TestRootReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sys"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "sys", "fifo"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "sys", "zero")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sys", "big"), []byte(strings.Repeat("x", 1<<20+1)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sys", "ok"), []byte("1\n"), 0o644))
	root := discovery.NewRoot(dir)
	for name, want := range map[string]string{
		"fifo": "not a regular file",
		"zero": "not a regular file",
		"big":  "larger than 1048576 bytes",
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := root.ReadFile("/sys/" + name); done <- err }()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Contains(t, err.Error(), want)
				assert.Contains(t, err.Error(), filepath.Join(dir, "sys", name))
			case <-time.After(10 * time.Second):
				t.Fatal("the read blocked")
			}
		})
	}
	got, err := root.ReadString("/sys/ok")
	require.NoError(t, err)
	assert.Equal(t, "1", got)
}

// TestToolOutputOverTheLimitIsRefused: a tool that prints more than any device listing is not
// parsed in part.
func TestToolOutputOverTheLimitIsRefused(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\nhead -c 5000000 /dev/zero | tr '\\0' 'x'\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(script), 0o755))
	r := discovery.ExecRunner{Path: bin, Timeout: 10 * time.Second}
	_, err := r.Run(context.Background(), "nvidia-smi", "-L")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nvidia-smi -L: printed more than 4194304 bytes")
}
