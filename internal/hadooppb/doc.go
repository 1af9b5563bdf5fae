// Package hadooppb holds yarn-er's own proto2 subset of Hadoop's RPC, security and YARN messages,
// and the Go code generated from it (sub-packages commonpb, hdfspb and yarnpb).
//
// The .proto files under yarner/ were written for yarn-er from the field lists of Hadoop 3.5.0
// (RpcHeader.proto, IpcConnectionContext.proto, ProtobufRpcEngine2.proto, Security.proto,
// ClientNamenodeProtocol.proto, yarn_protos.proto, yarn_service_protos.proto, yarn_security_token.proto). Field numbers, types,
// labels and defaults match Hadoop's; the proto packages are renamed (yarner.hadoop.common,
// yarner.hadoop.yarn) and the file paths prefixed with yarner/ so that this binary can link other
// Hadoop bindings (colinmarc/hdfs registers hadoop.common.* under bare paths) without a protobuf
// registry conflict. Package names never reach the wire. Messages and fields yarn-er does not use are
// left out; protobuf keeps them as unknown fields.
//
// Regenerate with `go generate ./internal/hadooppb/` (needs protoc from Debian's
// protobuf-compiler and protoc-gen-go v1.36.12 from the Go module proxy on PATH).
package hadooppb

//go:generate protoc -I . --go_out=../.. --go_opt=module=github.com/yarn-er/yarn-er yarner/hadoop/common/rpc_header.proto yarner/hadoop/common/ipc_connection_context.proto yarner/hadoop/common/protobuf_rpc_engine.proto yarner/hadoop/common/security.proto
//go:generate protoc -I . --go_out=../.. --go_opt=module=github.com/yarn-er/yarn-er yarner/hadoop/yarn/yarn_protos.proto yarner/hadoop/yarn/yarn_service_protos.proto yarner/hadoop/yarn/yarn_security_token.proto
//go:generate protoc -I . --go_out=../.. --go_opt=module=github.com/yarn-er/yarn-er yarner/hadoop/hdfs/client_namenode.proto
