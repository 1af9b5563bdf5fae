package amrm

import (
	"testing"

	_ "github.com/colinmarc/hdfs/v2" // registers hadoop.common.* from RpcHeader.proto and friends
	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Linking colinmarc/hdfs (which registers Hadoop's messages under their bare file names and the
// hadoop.common package) next to amrm must not hit protobuf's registration-conflict panic: our
// copies live in yarner.hadoop.* under yarner/ paths.
func TestNoProtobufRegistryClashWithHDFS(t *testing.T) {
	_, err := protoregistry.GlobalFiles.FindFileByPath("RpcHeader.proto")
	assert.NoError(t, err, "colinmarc/hdfs's RpcHeader.proto is registered")
	for _, p := range []string{
		"yarner/hadoop/common/rpc_header.proto", "yarner/hadoop/common/security.proto",
		"yarner/hadoop/yarn/yarn_protos.proto", "yarner/hadoop/yarn/yarn_service_protos.proto",
	} {
		_, err := protoregistry.GlobalFiles.FindFileByPath(p)
		assert.NoError(t, err, p)
	}
	_, err = protoregistry.GlobalTypes.FindMessageByName("yarner.hadoop.common.RpcRequestHeaderProto")
	assert.NoError(t, err)
	_, err = protoregistry.GlobalTypes.FindMessageByName("hadoop.common.RpcRequestHeaderProto")
	assert.NoError(t, err)
}
