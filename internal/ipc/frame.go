// Package ipc is a Hadoop IPC (RPC version 9) client for protobuf protocols: the connection
// preamble, SASL TOKEN/DIGEST-MD5 authentication, the connection context, framing, call ids and
// pipelined calls, remote exceptions and reconnection.
//
// The wire format: after a 7-byte preamble ("hrpc", version 9, service class 0, auth protocol), every
// packet is a 4-byte big-endian length followed by varint-delimited protobuf messages. A request is
// RpcRequestHeaderProto, RequestHeaderProto and the method's request message; a response is
// RpcResponseHeaderProto and, on success only, the method's response message.
package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
)

// Special call ids of Hadoop's RpcConstants and Server.AuthProtocol.
const (
	SASLCallID              int32 = -33
	ConnectionContextCallID int32 = -3
	PingCallID              int32 = -4
	// InvalidRetryCount is the retry count of SASL and connection-context packets.
	InvalidRetryCount int32 = -1
)

// RPCVersion is the Hadoop IPC version this package speaks.
const RPCVersion = 9

// DefaultMaxResponseSize caps one response packet, like Hadoop's ipc.maximum.response.length.
const DefaultMaxResponseSize = 128 << 20

// Auth protocol bytes of the preamble.
const (
	authNone byte = 0x00
	authSASL byte = 0xDF // -33
)

// Preamble returns the 7 bytes a client sends first on a connection.
func Preamble(sasl bool) []byte {
	auth := authNone
	if sasl {
		auth = authSASL
	}
	return []byte{'h', 'r', 'p', 'c', RPCVersion, 0, auth}
}

// ErrProtocol reports bytes from the server that do not follow the Hadoop IPC wire format.
var ErrProtocol = errors.New("hadoop ipc: protocol violation")

// ErrResponseTooLarge reports a response packet over the configured maximum size.
var ErrResponseTooLarge = errors.New("hadoop ipc: response exceeds the maximum size")

// RequestHeader returns the RpcRequestHeaderProto of a protobuf call. rpcKind and rpcOp are
// always set (the server rejects a header without rpcOp); clientID must be non-nil (empty during SASL).
func RequestHeader(callID int32, clientID []byte, retryCount int32) *commonpb.RpcRequestHeaderProto {
	if clientID == nil {
		clientID = []byte{}
	}
	return &commonpb.RpcRequestHeaderProto{
		RpcKind:    commonpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:      commonpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:     proto.Int32(callID),
		ClientId:   clientID,
		RetryCount: proto.Int32(retryCount),
	}
}

// AppendDelimited appends m, preceded by its length as a varint.
func AppendDelimited(b []byte, m proto.Message) ([]byte, error) {
	body, err := proto.Marshal(m)
	if err != nil {
		return b, fmt.Errorf("hadoop ipc: encode %s: %w", proto.Name(m), err)
	}
	b = protowire.AppendVarint(b, uint64(len(body)))
	return append(b, body...), nil
}

// EncodePacket returns a whole packet: the 4-byte big-endian length and the delimited messages.
func EncodePacket(msgs ...proto.Message) ([]byte, error) {
	b := make([]byte, 4, 128)
	var err error
	for _, m := range msgs {
		if b, err = AppendDelimited(b, m); err != nil {
			return nil, err
		}
	}
	if len(b)-4 > 1<<31-1 {
		return nil, fmt.Errorf("hadoop ipc: request of %d bytes is too large", len(b)-4)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// ReadPacket reads one length-prefixed packet of at most max bytes (after the length).
func ReadPacket(r io.Reader, max int) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lb[:])
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: packet of %d bytes, maximum %d", ErrResponseTooLarge, n, max)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p, nil
}

// SplitDelimited splits a packet body into its varint-delimited messages (at most max of them).
func SplitDelimited(p []byte, max int) ([][]byte, error) {
	var out [][]byte
	for len(p) > 0 {
		if len(out) == max {
			return nil, fmt.Errorf("%w: more than %d messages in a packet", ErrProtocol, max)
		}
		n, vl := protowire.ConsumeVarint(p)
		if vl < 0 {
			return nil, fmt.Errorf("%w: bad message length: %v", ErrProtocol, protowire.ParseError(vl))
		}
		p = p[vl:]
		if n > uint64(len(p)) {
			return nil, fmt.Errorf("%w: message of %d bytes in %d remaining", ErrProtocol, n, len(p))
		}
		out = append(out, p[:n])
		p = p[n:]
	}
	return out, nil
}

// ParseResponse decodes a response packet (without its length prefix) into the response header and
// the raw bytes of the response message; body is nil when the server sent none (always so on errors).
func ParseResponse(p []byte) (header *commonpb.RpcResponseHeaderProto, body []byte, err error) {
	parts, err := SplitDelimited(p, 2)
	if err != nil {
		return nil, nil, err
	}
	if len(parts) == 0 {
		return nil, nil, fmt.Errorf("%w: empty response packet", ErrProtocol)
	}
	header = &commonpb.RpcResponseHeaderProto{}
	if err := proto.Unmarshal(parts[0], header); err != nil {
		return nil, nil, fmt.Errorf("%w: response header: %v", ErrProtocol, err)
	}
	if len(parts) == 2 {
		body = parts[1]
	}
	return header, body, nil
}

// CallID returns the response header's call id as the signed value the client sent.
func CallID(h *commonpb.RpcResponseHeaderProto) int32 {
	return int32(h.GetCallId())
}
