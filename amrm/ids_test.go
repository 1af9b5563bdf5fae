package amrm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/records"
)

func TestContainerIDProtoMatchesHadoop(t *testing.T) {
	app := &yarnpb.ApplicationIdProto{Id: proto.Int32(1), ClusterTimestamp: proto.Int64(1700000000000)}
	att := &yarnpb.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)}
	// ContainerId.toString() from Hadoop 3.5.0.
	assert.Equal(t, "container_1700000000000_0001_01_000002",
		containerIDFromProto(&yarnpb.ContainerIdProto{AppAttemptId: att, Id: proto.Int64(2)}).String())
	assert.Equal(t, "container_e05_1700000000000_0001_01_000003",
		containerIDFromProto(&yarnpb.ContainerIdProto{AppAttemptId: att, Id: proto.Int64(5<<40 | 3)}).String())
	// The deprecated app_id field when the attempt has no application.
	assert.Equal(t, "container_1700000000000_0001_00_000004",
		containerIDFromProto(&yarnpb.ContainerIdProto{AppId: app, Id: proto.Int64(4)}).String())

	// ContainerId.fromString("container_e17_1700000000000_0001_01_000003").getContainerId() in Hadoop 3.5.0.
	p, err := containerIDProto(containerID(t, "container_e17_1700000000000_0001_01_000003"))
	require.NoError(t, err)
	assert.Equal(t, int64(18691697672195), p.GetId())
	assert.Equal(t, int64(1700000000000), p.GetAppAttemptId().GetApplicationId().GetClusterTimestamp())
	assert.Equal(t, int32(1), p.GetAppAttemptId().GetApplicationId().GetId())
	assert.Equal(t, int32(1), p.GetAppAttemptId().GetAttemptId())
	assert.Equal(t, int32(1), p.GetAppId().GetId(), "the deprecated field is filled for older servers")

	for _, s := range []string{"container_1700000000000_0001_01_000002", "container_e05_1700000000000_12345_100_1234567"} {
		id := containerID(t, s)
		p, err := containerIDProto(id)
		require.NoError(t, err)
		assert.Equal(t, id, containerIDFromProto(p), "round trip")
	}
	_, err = containerIDProto(records.ContainerID{Sequence: -1})
	assert.ErrorContains(t, err, "out of range")
	_, err = containerIDProto(records.ContainerID{Epoch: records.MaxContainerEpoch + 1})
	assert.Error(t, err)
}

// TestNotTheScheduler: the fix is added for the RM client service's refusals of an AMRMToken (its
// delegation-token secret manager's words on Hadoop 3.2-3.3 and 3.4+), and for nothing else.
func TestNotTheScheduler(t *testing.T) {
	const invalid = "org.apache.hadoop.security.token.SecretManager$InvalidToken"
	for _, tc := range []struct {
		name string
		err  error
		fix  bool
	}{
		{"3.2 client port", &records.RemoteError{Class: invalid, Message: "token (RM_DELEGATION_TOKEN owner="}, true},
		{"3.5 client port", &records.RemoteError{Class: invalid, Message: "Token for real user: , can't be found in cache"}, true},
		{"scheduler, stale AMRMToken", &records.RemoteError{Class: invalid, Message: "Invalid AMRMToken from appattempt_1_0001_000001"}, false},
		{"not a token refusal", &records.RemoteError{Class: "java.io.IOException", Message: "can't be found in cache"}, false},
		{"no remote error", errors.New("connection refused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := notTheScheduler(fmt.Errorf("hadoop ipc: SASL with h:1: %w", tc.err), "h:1")
			if tc.fix {
				assert.Contains(t, got, "fix: h:1 took the AMRMToken for a client's delegation token")
			} else {
				assert.Empty(t, got)
			}
		})
	}
}
