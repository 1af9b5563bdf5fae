package amrm

import (
	"bytes"
	"fmt"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/records"
)

func tokenFromProto(p *commonpb.TokenProto) records.Token {
	if p == nil {
		return records.Token{}
	}
	return records.Token{Identifier: bytes.Clone(p.GetIdentifier()), Password: bytes.Clone(p.GetPassword()), Kind: p.GetKind(), Service: p.GetService()}
}

func tokenProto(t records.Token) *commonpb.TokenProto {
	return &commonpb.TokenProto{
		Identifier: nonNil(t.Identifier), Password: nonNil(t.Password),
		Kind: proto.String(t.Kind), Service: proto.String(t.Service),
	}
}

// ipcToken is the token as the ipc package takes it.
func ipcToken(t records.Token) *ipc.Token {
	it := ipc.Token(t)
	return &it
}

// nonNil returns b, or an empty slice for nil: protobuf leaves a nil bytes field out (a token's
// required fields must be present even when empty).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// AMRMAttempt decodes an AMRMToken's identifier and returns the application attempt it was issued
// to, e.g. appattempt_1700000000000_0001_000001.
func AMRMAttempt(t records.Token) (records.ApplicationAttemptID, error) {
	if t.Kind != records.KindAMRMToken {
		return records.ApplicationAttemptID{}, fmt.Errorf("amrm: token of kind %q is not an AMRMToken", t.Kind)
	}
	var id yarnpb.AMRMTokenIdentifierProto
	if err := proto.Unmarshal(t.Identifier, &id); err != nil || id.AppAttemptId == nil {
		return records.ApplicationAttemptID{}, fmt.Errorf("amrm: AMRMToken identifier does not decode: %v", err)
	}
	a := id.GetAppAttemptId()
	return records.ApplicationAttemptID{
		Application: records.ApplicationID{ClusterTimestamp: a.GetApplicationId().GetClusterTimestamp(), ID: a.GetApplicationId().GetId()},
		Attempt:     a.GetAttemptId(),
	}, nil
}
