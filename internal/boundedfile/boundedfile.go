// Package boundedfile reads files a user names (configuration, keytabs, credential caches,
// certificates, token files) within a size limit and only when they are regular files: a FIFO, a
// device such as /dev/zero, a socket or a directory is refused before anything is read, and a
// FIFO swapped in after the check never blocks the reader. It is a leaf: every package that reads
// such files shares it.
package boundedfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular matches (errors.Is) a refusal of anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge matches (errors.Is) a file over the limit.
var ErrTooLarge = errors.New("file too large")

// NotRegularError is a path that is not a regular file.
type NotRegularError struct {
	// Kind says what it is instead ("a FIFO (named pipe)", "a character device", ...).
	Kind string
}

func (e *NotRegularError) Error() string { return "not a regular file: it is " + e.Kind }

// Is makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// TooLargeError is a file over the reader's limit.
type TooLargeError struct {
	// Limit is the limit in bytes; Size what was seen (the file's size, or Limit+1 when it grew
	// while being read).
	Limit, Size int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than the %d-byte limit (%d bytes or more)", e.Limit, e.Size)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Read returns the contents of the regular file at path, of at most max bytes. Errors are the
// os package's (wrapping fs.ErrNotExist, fs.ErrPermission, ...), *NotRegularError or
// *TooLargeError; none quotes the file's bytes.
func Read(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(fi); err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, &TooLargeError{Limit: max, Size: fi.Size()}
	}
	// O_NONBLOCK: a FIFO swapped in after the check opens at once instead of waiting for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := Check(fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Limit: max, Size: int64(len(data))}
	}
	return data, nil
}

// Check returns nil for a regular file, else a *NotRegularError saying what fi is.
func Check(fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO (named pipe)"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return &NotRegularError{Kind: kind}
}
