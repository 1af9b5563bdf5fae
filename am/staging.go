package am

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"

	"github.com/colinmarc/hdfs/v2"
)

// Staging removes an application's staging directory when the application ends.
type Staging interface {
	// Remove deletes the staging directory and everything under it. A directory that is already
	// gone is not an error.
	Remove(ctx context.Context) error
	// Close releases the connection, if any.
	Close() error
}

// ErrStaging reports a staging directory that cannot be handled (unknown scheme, unsafe path).
var ErrStaging = errors.New("am: staging directory")

// OpenStaging returns the Staging for a staging directory URL: hdfs://namenode:port/path through
// the NameNode named in the URL as user, or file:///path on the local file system (a file system
// every NodeManager shares, as in single-host tests). The directory's last path element must be
// the application id, so that a wrong URL can never remove anything but this application's
// directory. For hdfs, the NameNode connection is opened now, so that removal on SIGTERM needs a
// single call.
func OpenStaging(dirURL, appID, user string) (Staging, error) {
	u, err := url.Parse(dirURL)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrStaging, dirURL, err)
	}
	p := path.Clean(u.Path)
	if u.Path == "" || p == "/" || path.Base(p) != appID {
		return nil, fmt.Errorf("%w %q: its last path element must be the application id %s; not removing it", ErrStaging, dirURL, appID)
	}
	switch u.Scheme {
	case "file":
		return fileStaging(filepath.FromSlash(p)), nil
	case "hdfs":
		if u.Host == "" {
			return nil, fmt.Errorf("%w %q: no NameNode address in the URL (want hdfs://namenode:port/path)", ErrStaging, dirURL)
		}
		if user == "" {
			return nil, fmt.Errorf("%w %q: no user to act as", ErrStaging, dirURL)
		}
		c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{u.Host}, User: user})
		if err != nil {
			return nil, fmt.Errorf("%w %q: connect to the NameNode: %v", ErrStaging, dirURL, err)
		}
		return &hdfsStaging{c: c, path: p}, nil
	}
	return nil, fmt.Errorf("%w %q: scheme %q: only hdfs:// and file:// are supported", ErrStaging, dirURL, u.Scheme)
}

type fileStaging string

func (d fileStaging) Remove(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.RemoveAll(string(d)); err != nil {
		return fmt.Errorf("am: remove staging directory %s: %w", string(d), err)
	}
	return nil
}

func (fileStaging) Close() error { return nil }

type hdfsStaging struct {
	c    *hdfs.Client
	path string
}

func (h *hdfsStaging) Remove(ctx context.Context) error {
	// The HDFS client takes no context: run the call aside and stop waiting when ctx ends.
	done := make(chan error, 1)
	go func() { done <- h.c.RemoveAll(h.path) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("am: remove staging directory hdfs %s: %w", h.path, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("am: remove staging directory hdfs %s: %w", h.path, ctx.Err())
	}
}

func (h *hdfsStaging) Close() error { return h.c.Close() }
