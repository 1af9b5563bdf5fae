package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/integration/testam/result"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/records"
)

const amProtocol = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"

// probeIPC records how the real ResourceManager answers wire-level mistakes the public API never
// makes: SIMPLE authentication, a wrong token password, and a wrong responseId.
func probeIPC(ctx context.Context, sched []string, tok records.Token, res *result.Result) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	call := func(name string, token *ipc.Token, responseID int32, sentinel error) {
		cfg := ipc.Config{Addrs: sched, Protocol: amProtocol, User: "nobody"}
		if token != nil {
			cfg.Token = func() (*ipc.Token, error) { return token, nil }
		}
		c, err := ipc.NewClient(cfg)
		if err != nil {
			res.Probes[name] = result.Remote{Error: err.Error()}
			return
		}
		defer c.Close()
		req := &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(responseID)}
		err = c.Call(ctx, "allocate", req, &yarnpb.AllocateResponseProto{}, ipc.CallOptions{})
		if err == nil {
			res.Probes[name] = result.Remote{Error: "no error"}
			return
		}
		out := result.Remote{Error: err.Error(), IsSent: sentinel != nil && errors.Is(err, sentinel)}
		var re *records.RemoteError
		if errors.As(err, &re) {
			out.Class, out.Message = re.Class, firstLines(re.Message, 2)
		}
		res.Probes[name] = out
	}
	good := ipc.Token(tok)
	bad := &ipc.Token{Identifier: tok.Identifier, Password: []byte("not-the-password"), Kind: tok.Kind}
	call("simpleAuth", nil, 0, nil)
	call("wrongPassword", bad, 0, ipc.ErrAuthentication)
	call("wrongResponseId", &good, 1000, nil)
}

// probeResync moves the real ResourceManager's responseId on without rm: two heartbeats of its
// own over another connection with the AMRMToken (ids 0 and 1, both valid, so the RM's last
// answer has id 2). rm, just registered, still sends 0; the RM refuses it ("expect responseId to
// be 2 but get 0"), and rm must resynchronise: its Allocate succeeds, with the answer's id 3.
func probeResync(ctx context.Context, sched []string, tok records.Token, rm *amrm.Client, res *result.Result) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	good := ipc.Token(tok)
	c, err := ipc.NewClient(ipc.Config{Addrs: sched, Protocol: amProtocol, User: "nobody",
		Token: func() (*ipc.Token, error) { return &good, nil }})
	if err != nil {
		res.Probes["resync"] = result.Remote{Error: err.Error()}
		return
	}
	defer c.Close()
	for id := int32(0); id < 2; id++ {
		req := &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(id)}
		if err := c.Call(ctx, "allocate", req, &yarnpb.AllocateResponseProto{}, ipc.CallOptions{}); err != nil {
			res.Probes["resync"] = result.Remote{Error: fmt.Sprintf("the probe's own heartbeat %d: %v", id, err)}
			return
		}
	}
	a, err := rm.Allocate(ctx)
	if err != nil {
		res.Probes["resync"] = result.Remote{Error: err.Error()}
		return
	}
	res.Probes["resync"] = result.Remote{Error: "no error", Message: fmt.Sprintf("responseId %d", a.ResponseID)}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
