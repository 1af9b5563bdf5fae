package proto_test

import (
	"testing"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/hdfspb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

// decoded is every message yarn-er decodes from a peer's bytes (RPC and SASL headers, the
// ResourceManager's, NodeManagers' and NameNode's responses, tokens and their identifiers), with an
// equality that FuzzDecode's round trip uses.
type decoded interface {
	proto.Message
	EqualMessageVT(any) bool
}

var peerMessages = []func() decoded{
	func() decoded { return &commonpb.RpcResponseHeaderProto{} },
	func() decoded { return &commonpb.RpcSaslProto{} },
	func() decoded { return &commonpb.TokenProto{} },
	func() decoded { return &commonpb.CredentialsProto{} },
	func() decoded { return &commonpb.GetDelegationTokenResponseProto{} },
	func() decoded { return &commonpb.RenewDelegationTokenResponseProto{} },
	func() decoded { return &commonpb.CancelDelegationTokenResponseProto{} },
	func() decoded { return &hdfspb.DeleteResponseProto{} },
	func() decoded { return &yarnpb.AMRMTokenIdentifierProto{} },
	func() decoded { return &yarnpb.NMTokenIdentifierProto{} },
	func() decoded { return &yarnpb.RegisterApplicationMasterResponseProto{} },
	func() decoded { return &yarnpb.FinishApplicationMasterResponseProto{} },
	func() decoded { return &yarnpb.AllocateResponseProto{} },
	func() decoded { return &yarnpb.StartContainersResponseProto{} },
	func() decoded { return &yarnpb.StopContainersResponseProto{} },
	func() decoded { return &yarnpb.GetContainerStatusesResponseProto{} },
}

// FuzzDecode feeds bytes to the generated decoder of every message a peer sends. Decoding may fail
// but never panics; what decodes re-encodes (required fields included), and the re-encoding
// decodes to an equal message.
func FuzzDecode(f *testing.F) {
	for _, seed := range seedMessages(f) {
		b, err := proto.Marshal(seed)
		if err != nil {
			f.Fatalf("seed %s: %v", proto.Name(seed), err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, newMsg := range peerMessages {
			m := newMsg()
			if proto.Unmarshal(b, m) != nil {
				continue
			}
			again, err := proto.Marshal(m)
			if err != nil {
				t.Fatalf("%s decoded but does not encode: %v", proto.Name(m), err)
			}
			back := newMsg()
			if err := proto.Unmarshal(again, back); err != nil {
				t.Fatalf("%s: its own encoding does not decode: %v", proto.Name(m), err)
			}
			if !back.EqualMessageVT(m) {
				t.Fatalf("%s: round trip changed the message", proto.Name(m))
			}
		}
	})
}

// seedMessages are filled-in responses of the kinds a cluster sends.
func seedMessages(tb testing.TB) []proto.Message {
	tb.Helper()
	appID := &yarnpb.ApplicationIdProto{Id: proto.Int32(7), ClusterTimestamp: proto.Int64(1796167087966)}
	attempt := &yarnpb.ApplicationAttemptIdProto{ApplicationId: appID, AttemptId: proto.Int32(1)}
	cid := &yarnpb.ContainerIdProto{AppAttemptId: attempt, Id: proto.Int64(2)}
	node := &yarnpb.NodeIdProto{Host: proto.String("nm-1.example"), Port: proto.Int32(45454)}
	res := &yarnpb.ResourceProto{
		Memory: proto.Int64(128), VirtualCores: proto.Int32(1),
		ResourceValueMap: []*yarnpb.ResourceInformationProto{{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(1), Units: proto.String("")}},
	}
	token := &commonpb.TokenProto{Identifier: []byte("id"), Password: []byte("pw"), Kind: proto.String("ContainerToken"), Service: proto.String("127.0.0.1:45454")}
	return []proto.Message{
		&commonpb.RpcResponseHeaderProto{
			CallId: proto.Uint32(3), Status: commonpb.RpcResponseHeaderProto_ERROR.Enum(),
			ExceptionClassName: proto.String("org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"),
			ErrorMsg:           proto.String("Invalid resource request"), ClientId: []byte("0123456789abcdef"), RetryCount: proto.Int32(-1),
		},
		&commonpb.RpcSaslProto{
			State: commonpb.RpcSaslProto_NEGOTIATE.Enum(),
			Auths: []*commonpb.RpcSaslProto_SaslAuth{{Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"), Protocol: proto.String(""), ServerId: proto.String("default"), Challenge: []byte(`realm="default",nonce="n",qop="auth",charset=utf-8,algorithm=md5-sess`)}},
		},
		&commonpb.GetDelegationTokenResponseProto{Token: token},
		&yarnpb.RegisterApplicationMasterResponseProto{
			MaximumCapability: res, Queue: proto.String("default"),
			ResourceTypes: []*yarnpb.ResourceTypeInfoProto{{Name: proto.String("yarn.io/gpu"), Units: proto.String(""), Type: yarnpb.ResourceTypesProto_COUNTABLE.Enum()}},
		},
		&yarnpb.AllocateResponseProto{
			ResponseId:                 proto.Int32(4),
			AllocatedContainers:        []*yarnpb.ContainerProto{{Id: cid, NodeId: node, NodeHttpAddress: proto.String("nm-1.example:8042"), Resource: res, ContainerToken: token}},
			CompletedContainerStatuses: []*yarnpb.ContainerStatusProto{{ContainerId: cid, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), Diagnostics: proto.String("exit 1"), ExitStatus: proto.Int32(1)}},
			NmTokens:                   []*yarnpb.NMTokenProto{{NodeId: node, Token: token}},
			NumClusterNodes:            proto.Int32(2),
		},
		&yarnpb.StartContainersResponseProto{
			SucceededRequests: []*yarnpb.ContainerIdProto{cid},
			FailedRequests: []*yarnpb.ContainerExceptionMapProto{{ContainerId: cid, Exception: &yarnpb.SerializedExceptionProto{
				Message: proto.String("no such file"), ClassName: proto.String("java.io.IOException"), Trace: proto.String("at x"),
			}}},
		},
		&yarnpb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(true)},
	}
}
