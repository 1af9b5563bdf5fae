package am

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/records"
)

// Staging is an application's staging directory as the ApplicationMaster uses it: it keeps the
// ranks record there (ranks.go) and removes the directory when the application ends.
type Staging interface {
	// Remove deletes the staging directory and everything under it. A directory that is already
	// gone is not an error.
	Remove(ctx context.Context) error
	// Record makes the empty entry name in the ranks record (ranks/ below the directory). An
	// entry that exists already is no error.
	Record(ctx context.Context, name string) error
	// Records lists the ranks record's entries; none (and no error) when it has none.
	Records(ctx context.Context) ([]string, error)
	// Close releases the connection, if any.
	Close() error
}

// ErrStaging reports a staging directory that cannot be handled (unknown scheme, unsafe path).
var ErrStaging = errors.New("am: staging directory")

// OpenStaging returns the Staging for a staging directory URL: hdfs://namenode:port/path through
// the NameNode named in the URL, or file:///path on the local file system (a file system every
// NodeManager shares, as in single-host tests). The directory's last path element must be the
// application id, so that a wrong URL can never remove anything but this application's directory.
// On HDFS the AM authenticates with the HDFS delegation token for that NameNode among creds (a
// Kerberized cluster: yarn-er submit puts one there), else as user (a cluster without security).
func OpenStaging(dirURL, appID, user string, creds *records.Credentials) (Staging, error) {
	return openStaging(dirURL, nil, appID, user, func() *records.Credentials { return creds })
}

// openStaging is OpenStaging with the credentials read at each connection: those of an AM whose
// tokens are refreshed (tokens.go) change.
// namenodes are the NameNodes of the nameservice that dirURL names (jobspec.Spec.StagingNameNodes;
// nil: the URL names the NameNode).
func openStaging(dirURL string, namenodes []string, appID, user string, credsNow func() *records.Credentials) (Staging, error) {
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
		// Connect now, so that removal after SIGTERM (the NodeManager's SIGKILL follows soon)
		// is a single call; the token's lookup of the NameNode's addresses counts too.
		addrs, err := StagingNameNodes(u, namenodes)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrStaging, dirURL, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), stagingConnectTimeout)
		defer cancel()
		cfg := namenode.Config{Addrs: addrs, User: user}
		if creds := credsNow(); creds != nil {
			if _, ok := namenode.SelectToken(ctx, creds.Tokens, u.Host); ok {
				host := u.Host
				cfg.TokenFunc = func() (records.Token, error) {
					lctx, cancel := context.WithTimeout(context.Background(), stagingConnectTimeout)
					defer cancel()
					if tok, ok := namenode.SelectToken(lctx, credsNow().Tokens, host); ok {
						return tok, nil
					}
					return records.Token{}, fmt.Errorf("no HDFS delegation token for %s", host)
				}
			}
		}
		if cfg.TokenFunc == nil && user == "" {
			return nil, fmt.Errorf("%w %q: no user to act as", ErrStaging, dirURL)
		}
		c, err := namenode.Dial(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("%w %q: connect to the NameNode: %w", ErrStaging, dirURL, err)
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

func (d fileStaging) Record(ctx context.Context, name string) error {
	if err := checkRecordName(name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(string(d), recordsDir, name), 0o700); err != nil {
		return fmt.Errorf("am: ranks record: %w", err)
	}
	return nil
}

func (d fileStaging) Records(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(string(d), recordsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("am: ranks record: %w", err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

func (fileStaging) Close() error { return nil }

// checkRecordName refuses a record entry name that is not one plain path element.
func checkRecordName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("am: ranks record: bad entry name %q", name)
	}
	return nil
}

// stagingConnectTimeout bounds connecting to the NameNode while the AM starts.
const stagingConnectTimeout = 30 * time.Second

type hdfsStaging struct {
	c    *namenode.Conn
	path string
}

func (h *hdfsStaging) Remove(ctx context.Context) error {
	if _, err := h.c.Delete(ctx, h.path, true); err != nil {
		return fmt.Errorf("am: remove staging directory hdfs %s: %w", h.path, err)
	}
	return nil
}

func (h *hdfsStaging) Record(ctx context.Context, name string) error {
	if err := checkRecordName(name); err != nil {
		return err
	}
	if err := h.c.Mkdirs(ctx, path.Join(h.path, recordsDir, name), 0o700); err != nil {
		return fmt.Errorf("am: ranks record: %w", err)
	}
	return nil
}

func (h *hdfsStaging) Records(ctx context.Context) ([]string, error) {
	names, err := h.c.List(ctx, path.Join(h.path, recordsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("am: ranks record: %w", err)
	}
	return names, nil
}

func (h *hdfsStaging) Close() error { return h.c.Close() }

// StagingNameNodes returns the NameNode RPC addresses of the staging directory's hdfs:// URL u: the
// nameservice's NameNodes when given (jobspec.Spec.StagingNameNodes), else u's host:port. A
// URL without a port and no NameNodes is an HA nameservice nobody resolved: an error.
func StagingNameNodes(u *url.URL, namenodes []string) ([]string, error) {
	if len(namenodes) > 0 {
		return namenodes, nil
	}
	if u.Port() == "" {
		return nil, fmt.Errorf("%s names no NameNode port and the job spec lists no NameNodes (stagingNameNodes) of that nameservice", u.Host)
	}
	return []string{u.Host}, nil
}
