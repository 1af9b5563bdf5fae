package amrm

import (
	"strconv"
	"testing"

	_ "github.com/colinmarc/hdfs/v2" // registers hadoop.common.* from RpcHeader.proto and friends
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
)

// yarn-er's messages are generated without protobuf's global registry, so linking colinmarc/hdfs
// (which registers Hadoop's messages under their bare file names and the hadoop.common package) next
// to amrm cannot hit a registration conflict, whatever either side names its files.
func TestNoProtobufRegistryClashWithHDFS(t *testing.T) {
	_, err := protoregistry.GlobalFiles.FindFileByPath("RpcHeader.proto")
	assert.NoError(t, err, "colinmarc/hdfs's RpcHeader.proto is registered")
	for _, p := range []string{
		"yarner/hadoop/common/rpc_header.proto", "yarner/hadoop/common/security.proto",
		"yarner/hadoop/yarn/yarn_protos.proto", "yarner/hadoop/yarn/yarn_service_protos.proto",
	} {
		_, err := protoregistry.GlobalFiles.FindFileByPath(p)
		assert.ErrorIs(t, err, protoregistry.NotFound, p)
	}
}

// The generated codec and protobuf-go's reflection codec (through the Hadoop messages colinmarc/hdfs
// registers) read each other's bytes: yarn-er's encoding decodes into Hadoop's own message with every
// field in place, and Hadoop's re-encoding decodes back to an equal message.
func TestCodecInteropWithProtobufGo(t *testing.T) {
	retry, callID := int32(3), int32(-33)
	cases := []struct {
		hadoopName string
		ours, back proto.Message
		fields     map[string]string
	}{
		{
			hadoopName: "hadoop.common.RpcRequestHeaderProto",
			ours: &commonpb.RpcRequestHeaderProto{
				RpcKind: commonpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), RpcOp: commonpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
				CallId: &callID, ClientId: []byte("0123456789abcdef"), RetryCount: &retry,
			},
			back:   &commonpb.RpcRequestHeaderProto{},
			fields: map[string]string{"rpcKind": "2", "rpcOp": "0", "callId": "-33", "retryCount": "3", "clientId": "0123456789abcdef"},
		},
		{
			hadoopName: "hadoop.common.RpcSaslProto",
			ours: &commonpb.RpcSaslProto{
				State: commonpb.RpcSaslProto_NEGOTIATE.Enum(), Token: []byte{0, 1, 2, 255},
				Auths: []*commonpb.RpcSaslProto_SaslAuth{
					{Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"), Protocol: proto.String(""), ServerId: proto.String("default"), Challenge: []byte("realm=\"default\"")},
					{Method: proto.String("KERBEROS"), Mechanism: proto.String("GSSAPI"), Protocol: proto.String("rm"), ServerId: proto.String("host.example")},
				},
			},
			back:   &commonpb.RpcSaslProto{},
			fields: map[string]string{"state": "1", "token": "\x00\x01\x02\xff"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.hadoopName, func(t *testing.T) {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(tc.hadoopName))
			require.NoError(t, err)
			b, err := proto.Marshal(tc.ours)
			require.NoError(t, err)
			theirs := mt.New().Interface()
			require.NoError(t, gproto.Unmarshal(b, theirs))
			fields := theirs.ProtoReflect().Descriptor().Fields()
			for name, want := range tc.fields {
				fd := fields.ByName(protoreflect.Name(name))
				require.NotNil(t, fd, name)
				v := theirs.ProtoReflect().Get(fd)
				got := v.String()
				switch fd.Kind() {
				case protoreflect.BytesKind:
					got = string(v.Bytes())
				case protoreflect.EnumKind:
					got = strconv.Itoa(int(v.Enum()))
				}
				assert.Equal(t, want, got, name)
			}
			assert.Empty(t, theirs.ProtoReflect().GetUnknown(), "every field is known to Hadoop's message")
			b2, err := gproto.Marshal(theirs)
			require.NoError(t, err)
			require.NoError(t, proto.Unmarshal(b2, tc.back))
			assert.True(t, tc.back.(interface{ EqualMessageVT(any) bool }).EqualMessageVT(tc.ours), "round trip through protobuf-go")
		})
	}
}
