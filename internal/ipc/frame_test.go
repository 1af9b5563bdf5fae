package ipc

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s))
	require.NoError(t, err)
	return b
}

func TestPreamble(t *testing.T) {
	assert.Equal(t, unhex(t, "68 72 70 63 09 00 df"), Preamble(true))
	assert.Equal(t, unhex(t, "68 72 70 63 09 00 00"), Preamble(false))
}

// The first SASL packet, as documented in the reference notes (hadoop-ipc.md §1.3).
func TestSASLNegotiatePacket(t *testing.T) {
	pkt, err := EncodePacket(RequestHeader(SASLCallID, []byte{}, InvalidRetryCount),
		&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum()})
	require.NoError(t, err)
	assert.Equal(t, unhex(t, "00 00 00 0e | 0a | 08 02 10 00 18 41 22 00 28 01 | 02 | 10 01"), pkt)
}

func TestRequestHeaderNilClientIDStillEncodes(t *testing.T) {
	// clientId is required: nil must become empty bytes, not a missing field.
	b, err := proto.Marshal(RequestHeader(SASLCallID, nil, InvalidRetryCount))
	require.NoError(t, err)
	assert.Equal(t, unhex(t, "08 02 10 00 18 41 22 00 28 01"), b)
}

func TestCallPacketBytes(t *testing.T) {
	clientID := unhex(t, "0102030405060708090a0b0c0d0e0f10")
	pkt, err := EncodePacket(
		RequestHeader(5, clientID, 0),
		&commonpb.RequestHeaderProto{
			MethodName:                 proto.String("allocate"),
			DeclaringClassProtocolName: proto.String("p.Q"),
			ClientProtocolVersion:      proto.Uint64(1),
		},
		&yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0)},
	)
	require.NoError(t, err)
	want := unhex(t, `
		00 00 00 30
		1a 08 02 10 00 18 0a 22 10 0102030405060708090a0b0c0d0e0f10 28 00
		11 0a 08 616c6c6f63617465 12 03 702e51 18 01
		02 20 00`)
	assert.Equal(t, want, pkt)
}

func TestConnectionContextBytes(t *testing.T) {
	// Under TOKEN the user info is present but empty (ProtoUtil.makeIpcConnectionContext).
	b, err := proto.Marshal(&commonpb.IpcConnectionContextProto{
		UserInfo: &commonpb.UserInformationProto{},
		Protocol: proto.String("P"),
	})
	require.NoError(t, err)
	assert.Equal(t, unhex(t, "12 00 1a 01 50"), b)
}

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name     string
		packet   string
		wantID   int32
		status   commonpb.RpcResponseHeaderProto_RpcStatusProto
		wantBody string
		wantErr  string
	}{
		{name: "sasl call id -33 as uint32", packet: "08 | 08 df ff ff ff 0f 10 00 | 02 | 10 01", wantID: -33, wantBody: "10 01"},
		{name: "success without body", packet: "04 | 08 07 10 00", wantID: 7},
		{name: "error", packet: "0b | 08 01 10 01 22 05 6a2e6c2e45", wantID: 1, status: commonpb.RpcResponseHeaderProto_ERROR},
		{name: "empty", packet: "", wantErr: "empty response"},
		{name: "truncated header", packet: "05 | 08 01", wantErr: "message of 5 bytes"},
		{name: "missing required status", packet: "02 | 08 01", wantErr: "response header"},
		{name: "three messages", packet: "04 | 08 01 10 00 | 00 | 00", wantErr: "more than 2"},
		{name: "bad varint", packet: "ff ff ff ff ff ff ff ff ff ff", wantErr: "bad message length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body, err := ParseResponse(unhex(t, tt.packet))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrProtocol)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantID, CallID(h))
			assert.Equal(t, tt.status, h.GetStatus())
			if tt.wantBody == "" {
				assert.Nil(t, body)
			} else {
				assert.Equal(t, unhex(t, tt.wantBody), body)
			}
		})
	}
}

func TestReadPacket(t *testing.T) {
	p, err := ReadPacket(bytes.NewReader(unhex(t, "00 00 00 02 aa bb cc")), 10)
	require.NoError(t, err)
	assert.Equal(t, unhex(t, "aa bb"), p)

	_, err = ReadPacket(bytes.NewReader(unhex(t, "00 00 10 00")), 10)
	assert.ErrorIs(t, err, ErrResponseTooLarge)

	_, err = ReadPacket(bytes.NewReader(unhex(t, "00 00 00 05 aa")), 10)
	assert.ErrorContains(t, err, "unexpected EOF")

	_, err = ReadPacket(bytes.NewReader(unhex(t, "80 00 00 00")), DefaultMaxResponseSize)
	assert.ErrorIs(t, err, ErrResponseTooLarge)
}
