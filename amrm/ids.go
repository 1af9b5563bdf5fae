package amrm

import (
	"fmt"
	"strconv"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/records"
)

// containerIDFromProto decodes a container id; the application id is taken from the attempt, or
// from the deprecated app_id field.
func containerIDFromProto(p *yarnpb.ContainerIdProto) records.ContainerID {
	att := p.GetAppAttemptId()
	app := att.GetApplicationId()
	if app == nil {
		app = p.GetAppId()
	}
	return records.ContainerIDFromNumber(records.ApplicationAttemptID{
		Application: records.ApplicationID{ClusterTimestamp: app.GetClusterTimestamp(), ID: app.GetId()},
		Attempt:     att.GetAttemptId(),
	}, p.GetId())
}

// containerIDProto encodes a container id; an id whose parts are out of Hadoop's ranges (not one
// records.ParseContainerID returns) is an error.
func containerIDProto(id records.ContainerID) (*yarnpb.ContainerIdProto, error) {
	a := id.Attempt.Application
	if id.Epoch < 0 || id.Epoch > records.MaxContainerEpoch || id.Sequence < 0 || id.Sequence > records.MaxContainerSequence ||
		a.ClusterTimestamp < 0 || a.ID < 0 || id.Attempt.Attempt < 0 {
		return nil, fmt.Errorf("amrm: container id %s is out of range", id)
	}
	appID := &yarnpb.ApplicationIdProto{Id: proto.Int32(a.ID), ClusterTimestamp: proto.Int64(a.ClusterTimestamp)}
	return &yarnpb.ContainerIdProto{
		AppId:        appID,
		AppAttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: proto.CloneOf(appID), AttemptId: proto.Int32(id.Attempt.Attempt)},
		Id:           proto.Int64(id.Number()),
	}, nil
}

func nodeAddr(n *yarnpb.NodeIdProto) string {
	if n == nil {
		return ""
	}
	return n.GetHost() + ":" + strconv.Itoa(int(n.GetPort()))
}
