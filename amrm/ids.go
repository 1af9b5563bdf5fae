package amrm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"google.golang.org/protobuf/proto"
)

// ContainerID is a YARN container id as Hadoop prints it:
// container_[e<epoch>_]<clusterTimestamp>_<appId>_<attemptId>_<containerId>.
type ContainerID string

// containerIDMask keeps the container number; the RM epoch sits above bit 40.
const containerIDMask = 1<<40 - 1

func containerIDFromProto(p *yarnpb.ContainerIdProto) ContainerID {
	att := p.GetAppAttemptId()
	app := att.GetApplicationId()
	if app == nil {
		app = p.GetAppId()
	}
	var b strings.Builder
	b.WriteString("container_")
	id := p.GetId()
	if epoch := id >> 40; epoch > 0 {
		fmt.Fprintf(&b, "e%02d_", epoch)
	}
	fmt.Fprintf(&b, "%d_%04d_%02d_%06d", app.GetClusterTimestamp(), app.GetId(), att.GetAttemptId(), id&containerIDMask)
	return ContainerID(b.String())
}

// ParseContainerID parses a container id string.
func ParseContainerID(s string) (ContainerID, error) {
	_, err := containerIDProto(ContainerID(s))
	return ContainerID(s), err
}

// containerIDProto converts a container id string to its protobuf form.
func containerIDProto(id ContainerID) (*yarnpb.ContainerIdProto, error) {
	bad := func(why string) (*yarnpb.ContainerIdProto, error) {
		return nil, fmt.Errorf("amrm: invalid container id %q: %s (want container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<id>)", string(id), why)
	}
	parts := strings.Split(string(id), "_")
	if len(parts) < 5 || parts[0] != "container" {
		return bad("wrong prefix or too few parts")
	}
	parts = parts[1:]
	var epoch int64
	if strings.HasPrefix(parts[0], "e") {
		e, err := strconv.ParseInt(parts[0][1:], 10, 64)
		if err != nil || e < 0 || e >= 1<<23 {
			return bad("bad epoch")
		}
		epoch = e
		parts = parts[1:]
	}
	if len(parts) != 4 {
		return bad("wrong number of parts")
	}
	ts, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || ts < 0 {
		return bad("bad cluster timestamp")
	}
	app, err := strconv.ParseInt(parts[1], 10, 32)
	if err != nil || app < 0 {
		return bad("bad application number")
	}
	att, err := strconv.ParseInt(parts[2], 10, 32)
	if err != nil || att < 0 {
		return bad("bad attempt number")
	}
	n, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || n < 0 || n > containerIDMask {
		return bad("bad container number")
	}
	appID := &yarnpb.ApplicationIdProto{Id: proto.Int32(int32(app)), ClusterTimestamp: proto.Int64(ts)}
	return &yarnpb.ContainerIdProto{
		AppId:        appID,
		AppAttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: proto.CloneOf(appID), AttemptId: proto.Int32(int32(att))},
		Id:           proto.Int64(epoch<<40 | n),
	}, nil
}

func nodeAddr(n *yarnpb.NodeIdProto) string {
	if n == nil {
		return ""
	}
	return n.GetHost() + ":" + strconv.Itoa(int(n.GetPort()))
}
