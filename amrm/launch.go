package amrm

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

// LocalResourceType says how a NodeManager localizes a resource.
type LocalResourceType int

// Local resource types.
const (
	// File is copied as is.
	File LocalResourceType = iota
	// Archive is unpacked (zip, tar, tar.gz, jar).
	Archive
	// Pattern is a jar unpacked partially by a pattern.
	Pattern
)

// Visibility says who may share a localized resource.
type Visibility int

// Local resource visibilities.
const (
	// VisibilityApplication shares the resource among the application's containers only.
	VisibilityApplication Visibility = iota
	// VisibilityPrivate shares it among the user's applications.
	VisibilityPrivate
	// VisibilityPublic shares it among all users (the file must be world-readable).
	VisibilityPublic
)

// LocalResource is a file a NodeManager copies into the container's working directory before
// starting it. Size and Timestamp must equal the source file's length and modification time in
// milliseconds, or localization fails ("changed on src filesystem").
type LocalResource struct {
	// URL of the source, e.g. hdfs://namenode:8020/user/alice/app.tgz or file:///shared/app.
	URL string
	// Size in bytes.
	Size int64
	// Timestamp is the modification time in milliseconds since the epoch.
	Timestamp int64
	// Type is File (default), Archive or Pattern.
	Type LocalResourceType
	// Visibility is VisibilityApplication (default), VisibilityPrivate or VisibilityPublic.
	Visibility Visibility
	// Pattern is the pattern for Type Pattern.
	Pattern string
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
		return LocalResource{}, fmt.Errorf("amrm: local resource: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return LocalResource{}, fmt.Errorf("amrm: local resource %s is not a regular file", abs)
	}
	u := url.URL{Scheme: "file", Path: abs}
	return LocalResource{URL: u.String(), Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli()}, nil
}

func (r LocalResource) proto() (*yarnpb.LocalResourceProto, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("amrm: local resource URL %q: %w", r.URL, err)
	}
	if u.Scheme == "" || u.Path == "" {
		return nil, fmt.Errorf("amrm: local resource URL %q needs a scheme and a path (e.g. hdfs://nn:8020/path or file:///path)", r.URL)
	}
	if r.Size < 0 || r.Timestamp <= 0 {
		return nil, fmt.Errorf("amrm: local resource %s needs its size and modification time (ms)", r.URL)
	}
	// Like Hadoop's URL.fromURI: decoded path, port -1 when absent, host and user info only when set.
	pu := &yarnpb.URLProto{Scheme: proto.String(u.Scheme), Port: proto.Int32(-1), File: proto.String(u.Path)}
	if h := u.Hostname(); h != "" {
		pu.Host = proto.String(h)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("amrm: local resource URL %q: bad port", r.URL)
		}
		pu.Port = proto.Int32(int32(n))
	}
	if u.User != nil {
		pu.UserInfo = proto.String(u.User.String())
	}
	p := &yarnpb.LocalResourceProto{
		Resource:   pu,
		Size:       proto.Int64(r.Size),
		Timestamp:  proto.Int64(r.Timestamp),
		Type:       [...]yarnpb.LocalResourceTypeProto{yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceTypeProto_ARCHIVE, yarnpb.LocalResourceTypeProto_PATTERN}[r.Type].Enum(),
		Visibility: [...]yarnpb.LocalResourceVisibilityProto{yarnpb.LocalResourceVisibilityProto_APPLICATION, yarnpb.LocalResourceVisibilityProto_PRIVATE, yarnpb.LocalResourceVisibilityProto_PUBLIC}[r.Visibility].Enum(),
	}
	if r.Type == Pattern {
		p.Pattern = proto.String(r.Pattern)
	}
	return p, nil
}

// LaunchContext is what a NodeManager needs to start a container: commands, environment, local
// resources and tokens. Build it with the chaining methods or set the fields directly.
type LaunchContext struct {
	// Commands are joined with spaces into the container's launch script; <LOG_DIR> expands to the
	// container's log directory, {{VAR}} to an environment variable.
	Commands []string
	// Environment for the container.
	Environment map[string]string
	// LocalResources by link name in the container's working directory.
	LocalResources map[string]LocalResource
	// Credentials are passed to the container (HDFS delegation tokens on secure clusters). The
	// AMRMToken is always left out: containers must not talk to the RM as the AM.
	Credentials *Credentials
	// ServiceData for NodeManager auxiliary services by service name.
	ServiceData map[string][]byte
}

// NewLaunchContext returns a launch context running the given command words.
func NewLaunchContext(command ...string) *LaunchContext {
	return &LaunchContext{Commands: command}
}

// WithCommand appends command words.
func (lc *LaunchContext) WithCommand(words ...string) *LaunchContext {
	lc.Commands = append(lc.Commands, words...)
	return lc
}

// WithEnv sets an environment variable.
func (lc *LaunchContext) WithEnv(key, value string) *LaunchContext {
	if lc.Environment == nil {
		lc.Environment = map[string]string{}
	}
	lc.Environment[key] = value
	return lc
}

// WithLocalResource adds a local resource under a link name.
func (lc *LaunchContext) WithLocalResource(name string, r LocalResource) *LaunchContext {
	if lc.LocalResources == nil {
		lc.LocalResources = map[string]LocalResource{}
	}
	lc.LocalResources[name] = r
	return lc
}

// WithCredentials sets the tokens passed to the container (the AMRMToken is filtered out).
func (lc *LaunchContext) WithCredentials(c *Credentials) *LaunchContext {
	lc.Credentials = c
	return lc
}

func (lc *LaunchContext) proto() (*yarnpb.ContainerLaunchContextProto, error) {
	if len(lc.Commands) == 0 {
		return nil, fmt.Errorf("amrm: launch context has no command")
	}
	p := &yarnpb.ContainerLaunchContextProto{Command: slices.Clone(lc.Commands)}
	for _, k := range slices.Sorted(maps.Keys(lc.Environment)) {
		p.Environment = append(p.Environment, &yarnpb.StringStringMapProto{Key: proto.String(k), Value: proto.String(lc.Environment[k])})
	}
	for _, k := range slices.Sorted(maps.Keys(lc.LocalResources)) {
		r, err := lc.LocalResources[k].proto()
		if err != nil {
			return nil, fmt.Errorf("%w (local resource %q)", err, k)
		}
		p.LocalResources = append(p.LocalResources, &yarnpb.StringLocalResourceMapProto{Key: proto.String(k), Value: r})
	}
	for _, k := range slices.Sorted(maps.Keys(lc.ServiceData)) {
		p.ServiceData = append(p.ServiceData, &yarnpb.StringBytesMapProto{Key: proto.String(k), Value: nonNil(lc.ServiceData[k])})
	}
	if lc.Credentials != nil {
		b, err := lc.Credentials.WithoutKinds(KindAMRMToken).Marshal(FormatWritable)
		if err != nil {
			return nil, err
		}
		p.Tokens = b
	}
	return p, nil
}
