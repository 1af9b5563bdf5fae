package records

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// LocalResourceType says how a NodeManager localizes a resource (LocalResourceType).
type LocalResourceType string

// Local resource types; the zero value means LocalFile.
const (
	// LocalFile is copied as is.
	LocalFile LocalResourceType = "FILE"
	// LocalArchive is unpacked (zip, tar, tar.gz, jar).
	LocalArchive LocalResourceType = "ARCHIVE"
	// LocalPattern is a jar unpacked partially by a pattern.
	LocalPattern LocalResourceType = "PATTERN"
)

// LocalResourceVisibility says who may share a localized resource (LocalResourceVisibility).
type LocalResourceVisibility string

// Local resource visibilities; the zero value means VisibilityApplication.
const (
	// VisibilityPublic shares the resource among all users (the file must be world-readable).
	VisibilityPublic LocalResourceVisibility = "PUBLIC"
	// VisibilityPrivate shares it among the user's applications.
	VisibilityPrivate LocalResourceVisibility = "PRIVATE"
	// VisibilityApplication shares it among the application's containers only.
	VisibilityApplication LocalResourceVisibility = "APPLICATION"
)

// LocalResource is a file a NodeManager copies into a container's working directory before
// starting it. Size and Timestamp must equal the source file's length and modification time in
// milliseconds, or localization fails ("changed on src filesystem").
type LocalResource struct {
	// URL of the source, e.g. hdfs://namenode:8020/user/alice/app.tgz or file:///shared/app.
	URL string
	// Size in bytes.
	Size int64
	// Timestamp is the modification time in milliseconds since the epoch.
	Timestamp int64
	// Type is LocalFile (the default), LocalArchive or LocalPattern.
	Type LocalResourceType
	// Visibility is VisibilityApplication (the default), VisibilityPrivate or VisibilityPublic.
	Visibility LocalResourceVisibility
	// Pattern is the pattern for Type LocalPattern.
	Pattern string
}

// EffectiveType returns Type, LocalFile when empty.
func (r LocalResource) EffectiveType() LocalResourceType {
	if r.Type == "" {
		return LocalFile
	}
	return r.Type
}

// EffectiveVisibility returns Visibility, VisibilityApplication when empty.
func (r LocalResource) EffectiveVisibility() LocalResourceVisibility {
	if r.Visibility == "" {
		return VisibilityApplication
	}
	return r.Visibility
}

// ParsedURL checks the resource and returns its parsed URL: the URL needs a scheme and a path,
// the size must not be negative and the timestamp must be set; the type and visibility must be
// known ones (or empty).
func (r LocalResource) ParsedURL() (*url.URL, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("local resource URL %q: %w", r.URL, err)
	}
	if u.Scheme == "" || u.Path == "" {
		return nil, fmt.Errorf("local resource URL %q needs a scheme and a path (e.g. hdfs://nn:8020/path or file:///path)", r.URL)
	}
	if r.Size < 0 || r.Timestamp <= 0 {
		return nil, fmt.Errorf("local resource %s needs its size and modification time (ms)", r.URL)
	}
	switch r.EffectiveType() {
	case LocalFile, LocalArchive, LocalPattern:
	default:
		return nil, fmt.Errorf("local resource %s: type %q is not FILE, ARCHIVE or PATTERN", r.URL, r.Type)
	}
	switch r.EffectiveVisibility() {
	case VisibilityPublic, VisibilityPrivate, VisibilityApplication:
	default:
		return nil, fmt.Errorf("local resource %s: visibility %q is not PUBLIC, PRIVATE or APPLICATION", r.URL, r.Visibility)
	}
	return u, nil
}

// FileResource describes a local file (on a file system every NodeManager sees, e.g. NFS) by a
// file: URL with its exact size and millisecond modification time.
func FileResource(path string) (LocalResource, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return LocalResource{}, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return LocalResource{}, fmt.Errorf("local resource: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return LocalResource{}, fmt.Errorf("local resource %s is not a regular file", abs)
	}
	u := url.URL{Scheme: "file", Path: abs}
	return LocalResource{URL: u.String(), Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli()}, nil
}
