package amrm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"google.golang.org/protobuf/proto"
)

func TestContainerIDMatchesHadoop(t *testing.T) {
	app := &yarnpb.ApplicationIdProto{Id: proto.Int32(1), ClusterTimestamp: proto.Int64(1700000000000)}
	att := &yarnpb.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)}
	// ContainerId.toString() from Hadoop 3.5.0.
	assert.Equal(t, ContainerID("container_1700000000000_0001_01_000002"),
		containerIDFromProto(&yarnpb.ContainerIdProto{AppAttemptId: att, Id: proto.Int64(2)}))
	assert.Equal(t, ContainerID("container_e05_1700000000000_0001_01_000003"),
		containerIDFromProto(&yarnpb.ContainerIdProto{AppAttemptId: att, Id: proto.Int64(5<<40 | 3)}))

	// ContainerId.fromString("container_e17_1700000000000_0001_01_000003").getContainerId() in Hadoop 3.5.0.
	p, err := containerIDProto("container_e17_1700000000000_0001_01_000003")
	require.NoError(t, err)
	assert.Equal(t, int64(18691697672195), p.GetId())
	assert.Equal(t, int64(1700000000000), p.GetAppAttemptId().GetApplicationId().GetClusterTimestamp())
	assert.Equal(t, int32(1), p.GetAppAttemptId().GetApplicationId().GetId())
	assert.Equal(t, int32(1), p.GetAppAttemptId().GetAttemptId())
}

func TestParseContainerID(t *testing.T) {
	for _, ok := range []string{
		"container_1700000000000_0001_01_000002",
		"container_e05_1700000000000_12345_100_1234567",
	} {
		id, err := ParseContainerID(ok)
		require.NoError(t, err, ok)
		p, err := containerIDProto(id)
		require.NoError(t, err)
		assert.Equal(t, id, containerIDFromProto(p), "round trip")
	}
	for _, bad := range []string{
		"", "container", "application_1_0001", "container_1_2_3", "container_x_0001_01_000002",
		"container_e_1_0001_01_000002", "container_1_0001_01_-2", "container_1_0001_01_2_3",
		"container_1_99999999999_01_2", "container_1_1_1_1099511627776",
	} {
		_, err := ParseContainerID(bad)
		assert.Error(t, err, bad)
	}
}
