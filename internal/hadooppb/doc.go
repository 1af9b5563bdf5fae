// Package hadooppb holds yarn-er's own proto2 subset of Hadoop's RPC, security and YARN messages,
// and the Go code generated from it (sub-packages commonpb, hdfspb and yarnpb).
//
// The .proto files under yarner/ were written for yarn-er from the field lists of Hadoop 3.5.0
// (RpcHeader.proto, IpcConnectionContext.proto, ProtobufRpcEngine2.proto, Security.proto,
// ClientNamenodeProtocol.proto, yarn_protos.proto, yarn_service_protos.proto, yarn_security_token.proto). Field numbers, types,
// labels and defaults match Hadoop's; the proto packages are renamed (yarner.hadoop.common,
// yarner.hadoop.yarn) and the file paths prefixed with yarner/, which kept them apart from other
// Hadoop bindings (colinmarc/hdfs registers hadoop.common.* under bare paths) while the code was
// registered with protobuf-go; package names never reach the wire. Messages and fields yarn-er does
// not use are left out; the generated code keeps them as unknown fields. No message may contain
// itself, directly or through others: the generated decoder has no depth limit (so Hadoop's
// SerializedExceptionProto.cause is left out; TestNoRecursiveMessages in package proto checks).
//
// The Go code comes from protoc-gen-go-lite (github.com/aperturerobotics/protobuf-go-lite), not
// protoc-gen-go: the same structs, pointer fields and getters, with marshal, unmarshal, size, clone
// and equal generated as code instead of driven by protobuf-go's reflection runtime. Nothing is
// registered in a global registry, and a binary that links only these messages (yarn-er-am) does not
// carry that runtime: about 3 MB of binary and 2 MiB of resident memory less (docs/benchmarks.md).
// Package proto beside them holds the few helpers the callers use (proto.String, proto.Marshal...).
//
// Regenerate with `go generate ./internal/hadooppb/` (needs protoc from Debian's protobuf-compiler
// and protoc-gen-go-lite v0.14.0 on PATH:
// `go install github.com/aperturerobotics/protobuf-go-lite/cmd/protoc-gen-go-lite@v0.14.0`).
package hadooppb

//go:generate protoc -I . --go-lite_out=../.. --go-lite_opt=module=github.com/yarn-er/yarn-er,features=marshal+unmarshal+size+clone+equal yarner/hadoop/common/rpc_header.proto yarner/hadoop/common/ipc_connection_context.proto yarner/hadoop/common/protobuf_rpc_engine.proto yarner/hadoop/common/security.proto
//go:generate protoc -I . --go-lite_out=../.. --go-lite_opt=module=github.com/yarn-er/yarn-er,features=marshal+unmarshal+size+clone+equal yarner/hadoop/yarn/yarn_protos.proto yarner/hadoop/yarn/yarn_service_protos.proto yarner/hadoop/yarn/yarn_security_token.proto
//go:generate protoc -I . --go-lite_out=../.. --go-lite_opt=module=github.com/yarn-er/yarn-er,features=marshal+unmarshal+size+clone+equal yarner/hadoop/hdfs/client_namenode.proto
