package amrm

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/records"
)

// localResourceTypes and localResourceVisibilities map the records' names to the protobuf enums.
var (
	localResourceTypes = map[records.LocalResourceType]yarnpb.LocalResourceTypeProto{
		records.LocalFile: yarnpb.LocalResourceTypeProto_FILE, records.LocalArchive: yarnpb.LocalResourceTypeProto_ARCHIVE,
		records.LocalPattern: yarnpb.LocalResourceTypeProto_PATTERN,
	}
	localResourceVisibilities = map[records.LocalResourceVisibility]yarnpb.LocalResourceVisibilityProto{
		records.VisibilityPublic: yarnpb.LocalResourceVisibilityProto_PUBLIC, records.VisibilityPrivate: yarnpb.LocalResourceVisibilityProto_PRIVATE,
		records.VisibilityApplication: yarnpb.LocalResourceVisibilityProto_APPLICATION,
	}
)

// localResourceProto encodes r.
func localResourceProto(r records.LocalResource) (*yarnpb.LocalResourceProto, error) {
	u, err := r.ParsedURL()
	if err != nil {
		return nil, fmt.Errorf("amrm: %w", err)
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
		Type:       localResourceTypes[r.EffectiveType()].Enum(),
		Visibility: localResourceVisibilities[r.EffectiveVisibility()].Enum(),
	}
	if r.EffectiveType() == records.LocalPattern {
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
	LocalResources map[string]records.LocalResource
	// Credentials are passed to the container (HDFS delegation tokens on secure clusters). The
	// AMRMToken is always left out: containers must not talk to the RM as the AM.
	Credentials *records.Credentials
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
func (lc *LaunchContext) WithLocalResource(name string, r records.LocalResource) *LaunchContext {
	if lc.LocalResources == nil {
		lc.LocalResources = map[string]records.LocalResource{}
	}
	lc.LocalResources[name] = r
	return lc
}

// WithCredentials sets the tokens passed to the container (the AMRMToken is filtered out).
func (lc *LaunchContext) WithCredentials(c *records.Credentials) *LaunchContext {
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
		r, err := localResourceProto(lc.LocalResources[k])
		if err != nil {
			return nil, fmt.Errorf("%w (local resource %q)", err, k)
		}
		p.LocalResources = append(p.LocalResources, &yarnpb.StringLocalResourceMapProto{Key: proto.String(k), Value: r})
	}
	for _, k := range slices.Sorted(maps.Keys(lc.ServiceData)) {
		p.ServiceData = append(p.ServiceData, &yarnpb.StringBytesMapProto{Key: proto.String(k), Value: nonNil(lc.ServiceData[k])})
	}
	if lc.Credentials != nil {
		b, err := lc.Credentials.WithoutKinds(records.KindAMRMToken).Marshal(records.FormatWritable)
		if err != nil {
			return nil, err
		}
		p.Tokens = b
	}
	return p, nil
}
