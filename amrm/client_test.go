package amrm

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/internal/fakeyarn"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/records"
)

var (
	gpu1    = records.NewResources(1024, 1, records.Resource{Name: records.GPU, Value: 1})
	amrmTok = records.Token{Identifier: []byte("amrm-id-1"), Password: []byte("amrm-pw-1"), Kind: records.KindAMRMToken}
)

// newRM starts a fake scheduler whose heartbeats script answers (nil: empty answers). Its
// registration declares memory-mb, vcores and yarn.io/gpu, with at most 8192 MiB, 8 vcores and
// 4 GPUs, and hands back an NMToken of a previous attempt for old-nm:1.
func newRM(t *testing.T, script func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error) *fakeyarn.RM {
	return fakeyarn.NewRM(t, amrmTok, fakeyarn.RMHooks{
		Register: func(*yarnpb.RegisterApplicationMasterRequestProto) *yarnpb.RegisterApplicationMasterResponseProto {
			resp := fakeyarn.Registration(4)
			resp.NmTokensFromPreviousAttempts = []*yarnpb.NMTokenProto{
				fakeyarn.NMToken("old-nm", 1, records.Token{Identifier: []byte("old"), Password: []byte("p")}),
			}
			return resp
		},
		Allocate: script,
	})
}

// newContainers returns a maker of the containers a script allocates: at priority 1, numbered
// from 2 (after the AM's own), with 1024 MiB, 1 vcore and gpus yarn.io/gpu, on node:45454.
func newContainers() func(gpus int64, node string) *yarnpb.ContainerProto {
	seq := int64(1)
	return func(gpus int64, node string) *yarnpb.ContainerProto {
		seq++
		r := &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}
		if gpus > 0 {
			r.ResourceValueMap = []*yarnpb.ResourceInformationProto{{Key: proto.String(records.GPU), Value: proto.Int64(gpus), Units: proto.String("")}}
		}
		return fakeyarn.Container(seq, node, 45454, r, 1)
	}
}

// client is a Client of rm's scheduler with its AMRMToken; mod, when not nil, changes the
// configuration first.
func client(t *testing.T, rm *fakeyarn.RM, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{SchedulerAddrs: []string{rm.Server.Addr}, Credentials: rm.Credentials()}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func registered(t *testing.T, rm *fakeyarn.RM, mod func(*Config)) *Client {
	t.Helper()
	c := client(t, rm, mod)
	_, err := c.Register(context.Background(), RegisterRequest{Host: "am-host", RPCPort: -1, TrackingURL: "http://am"})
	require.NoError(t, err)
	return c
}

func TestNewNeedsAMRMToken(t *testing.T) {
	_, err := New(Config{SchedulerAddrs: []string{"rm:8030"}, Credentials: records.NewCredentials()})
	require.ErrorIs(t, err, ErrNoToken)
	assert.ErrorContains(t, err, records.EnvTokenFile)
	_, err = New(Config{Credentials: records.NewCredentials()})
	assert.ErrorContains(t, err, "scheduler.address")
}

func TestRegisterKeepsCapabilityAndTypes(t *testing.T) {
	rm := newRM(t, nil)
	c := client(t, rm, nil)
	reg, err := c.Register(context.Background(), RegisterRequest{Host: "am-host", RPCPort: -1, TrackingURL: "http://am"})
	require.NoError(t, err)
	assert.Equal(t, records.NewResources(8192, 8, records.Resource{Name: records.GPU, Value: 4}), reg.MaximumCapability)
	assert.True(t, reg.HasResourceType(records.GPU))
	assert.False(t, reg.HasResourceType(records.FPGA))
	assert.Equal(t, []ResourceType{
		{Name: records.MemoryMB, Units: "Mi", Type: "COUNTABLE"},
		{Name: records.VCores, Units: "", Type: "COUNTABLE"},
		{Name: records.GPU, Units: "", Type: "COUNTABLE"},
	}, reg.ResourceTypes)
	assert.Equal(t, "default", reg.Queue)
	_, ok := c.NMToken("old-nm:1")
	assert.True(t, ok, "NMTokens from previous attempts are cached")

	calls := rm.Server.MethodCalls("registerApplicationMaster")
	require.Len(t, calls, 1)
	req := &yarnpb.RegisterApplicationMasterRequestProto{}
	require.NoError(t, calls[0].Decode(req))
	assert.Equal(t, "am-host", req.GetHost())
	assert.Equal(t, int32(-1), req.GetRpcPort())
	assert.Equal(t, "http://am", req.GetTrackingUrl())
	assert.Equal(t, amrmTok.Identifier, rm.Server.Logins()[0], "authenticated with the AMRMToken")

	// Registering twice is the RM's InvalidApplicationMasterRequestException, typed.
	_, err = c.Register(context.Background(), RegisterRequest{})
	require.ErrorIs(t, err, ErrInvalidRequest)
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, fakeyarn.ExInvalidRequest, re.Class)
	assert.Contains(t, re.Message, "already registered")
	assert.Equal(t, "registerApplicationMaster", re.Method)
}

func TestAskChecksBeforeSending(t *testing.T) {
	rm := newRM(t, nil)
	c := client(t, rm, nil)
	require.ErrorIs(t, c.Ask(1, gpu1, 1), ErrNotRegistered, "types are unknown before Register")
	_, err := c.Register(context.Background(), RegisterRequest{RPCPort: -1})
	require.NoError(t, err)

	err = c.Ask(1, records.NewResources(1024, 1, records.Resource{Name: "yarn.io/nonexistent", Value: 1}), 1)
	require.ErrorIs(t, err, ErrUnknownResource)
	assert.ErrorContains(t, err, `"yarn.io/nonexistent"`)
	assert.ErrorContains(t, err, "memory-mb, vcores, yarn.io/gpu")
	assert.ErrorContains(t, err, "yarn.resource-types")

	assert.ErrorIs(t, c.Ask(1, records.NewResources(1024, 1, records.Resource{Name: records.GPU, Value: 5}), 1), ErrExceedsMaximum)
	assert.ErrorIs(t, c.Ask(1, records.NewResources(9000, 1), 1), ErrExceedsMaximum)
	assert.ErrorIs(t, c.Ask(1, records.NewResources(16, 1, records.Resource{Name: records.MemoryMB, Value: 1, Units: "Ti"}), 1), ErrExceedsMaximum,
		"units are converted: 1Ti of memory is above 8192Mi")
	assert.ErrorContains(t, c.Ask(1, records.NewResources(1, -1), 1), "negative vcores=-1")
	assert.ErrorContains(t, c.Ask(1, records.NewResources(1, 1, records.Resource{Name: records.GPU, Value: -1}), 1), "negative yarn.io/gpu=-1")
	assert.ErrorIs(t, c.Ask(1, records.NewResources(1, 1, records.Resource{Name: records.GPU, Value: 1, Units: "parsecs"}), 1), records.ErrUnknownUnit)
	assert.Error(t, c.Ask(1, gpu1, -1))

	// Nothing bad reaches the RM.
	_, err = c.Allocate(context.Background())
	require.NoError(t, err)
	reqs := rm.AllocateRequests()
	require.Len(t, reqs, 1)
	assert.Empty(t, reqs[0].GetAsk())
}

func TestAbsoluteAsksMatchingAndResponseIDs(t *testing.T) {
	mk := newContainers()
	rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
		switch n {
		case 0, 1:
			resp.AllocatedContainers = []*yarnpb.ContainerProto{mk(1, "nm1"), mk(1, "nm2")}
			resp.NmTokens = []*yarnpb.NMTokenProto{{NodeId: &yarnpb.NodeIdProto{Host: proto.String("nm1"), Port: proto.Int32(45454)},
				Token: tokenProto(records.Token{Identifier: []byte("nmtok-1"), Password: []byte("x"), Kind: records.KindNMToken})}}
		case 2:
			resp.AllocatedContainers = []*yarnpb.ContainerProto{mk(1, "nm1")} // one too many
		}
		return nil
	})
	c := registered(t, rm, nil)
	require.NoError(t, c.Ask(1, gpu1, 4))
	assert.Equal(t, 4, c.Outstanding(1))

	var got []Container
	for i := 0; i < 4; i++ {
		a, err := c.Allocate(context.Background())
		require.NoError(t, err)
		got = append(got, a.Allocated...)
		if i == 2 {
			require.Len(t, a.Released, 1)
			assert.Contains(t, a.Released[0].Reason, "surplus")
		}
	}
	require.Len(t, got, 4)
	for _, ct := range got {
		assert.Equal(t, int32(1), ct.Priority)
		assert.Equal(t, int64(1), ct.Resource.Value(records.GPU))
		assert.Contains(t, []string{"nm1:45454", "nm2:45454"}, ct.Node)
	}
	assert.Equal(t, "container_1700000000000_0001_01_000002", got[0].ID.String())
	assert.Equal(t, 0, c.Outstanding(1))

	reqs := rm.AllocateRequests()
	require.Len(t, reqs, 4)
	for i, r := range reqs {
		assert.Equal(t, int32(i), r.GetResponseId(), "echoes the last response id, starting at 0")
	}
	// The ask goes out once, as the absolute total, and is not repeated while unchanged.
	require.Len(t, reqs[0].GetAsk(), 1)
	ask := reqs[0].GetAsk()[0]
	assert.Equal(t, int32(4), ask.GetNumContainers())
	assert.Equal(t, "*", ask.GetResourceName())
	assert.Equal(t, int32(1), ask.GetPriority().GetPriority())
	assert.True(t, ask.GetRelaxLocality())
	assert.Equal(t, yarnpb.ExecutionTypeProto_GUARANTEED, ask.GetExecutionTypeRequest().GetExecutionType())
	require.Len(t, ask.GetCapability().GetResourceValueMap(), 1)
	assert.Equal(t, records.GPU, ask.GetCapability().GetResourceValueMap()[0].GetKey())
	assert.Equal(t, int64(1), ask.GetCapability().GetResourceValueMap()[0].GetValue())
	assert.Empty(t, reqs[1].GetAsk())
	assert.Empty(t, reqs[2].GetAsk())
	// The surplus container is released with the next heartbeat.
	require.Len(t, reqs[3].GetRelease(), 1)
	assert.Equal(t, int64(6), reqs[3].GetRelease()[0].GetId())

	_, ok := c.NMToken("nm1:45454")
	assert.True(t, ok)
	_, ok = c.NMToken("nm2:45454")
	assert.False(t, ok)

	// Lowering the total sends the new absolute value.
	require.NoError(t, c.Ask(1, gpu1, 0))
	require.NoError(t, c.Ask(2, records.NewResources(512, 1), 3))
	_, err := c.Allocate(context.Background())
	require.NoError(t, err)
	reqs = rm.AllocateRequests()
	require.Len(t, reqs[4].GetAsk(), 2)
	assert.Equal(t, int32(0), reqs[4].GetAsk()[0].GetNumContainers())
	assert.Equal(t, int32(3), reqs[4].GetAsk()[1].GetNumContainers())
}

func TestOnePriorityPerProfile(t *testing.T) {
	rm := newRM(t, nil)
	c := registered(t, rm, nil)
	require.NoError(t, c.Ask(1, gpu1, 2))
	err := c.Ask(1, records.NewResources(2048, 1), 2)
	assert.ErrorContains(t, err, "one priority per resource profile")
	require.NoError(t, c.Ask(1, gpu1, 5), "same profile, new total")
}

func TestContainerMissingAskedResourceIsReleasedAndReasked(t *testing.T) {
	mk := newContainers()
	rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
		switch n {
		case 0:
			resp.AllocatedContainers = []*yarnpb.ContainerProto{mk(0, "nm1")} // GPU dropped
		case 2:
			resp.AllocatedContainers = []*yarnpb.ContainerProto{mk(1, "nm2")}
		}
		return nil
	})
	c := registered(t, rm, nil)
	require.NoError(t, c.Ask(1, gpu1, 1))
	a, err := c.Allocate(context.Background())
	require.NoError(t, err)
	assert.Empty(t, a.Allocated)
	require.Len(t, a.Released, 1)
	assert.Equal(t, "missing yarn.io/gpu=1 (got 0)", a.Released[0].Reason)
	assert.Equal(t, 1, c.Outstanding(1))

	_, err = c.Allocate(context.Background())
	require.NoError(t, err)
	reqs := rm.AllocateRequests()
	require.Len(t, reqs[1].GetRelease(), 1, "the bad container goes back")
	require.Len(t, reqs[1].GetAsk(), 1, "and the total is asked again")
	assert.Equal(t, int32(1), reqs[1].GetAsk()[0].GetNumContainers())

	a, err = c.Allocate(context.Background())
	require.NoError(t, err)
	require.Len(t, a.Allocated, 1)
	assert.Equal(t, 0, c.Outstanding(1))
}

func TestWrongResponseIDIsTypedError(t *testing.T) {
	rm := newRM(t, nil)
	c := registered(t, rm, nil)
	_, err := c.Allocate(context.Background())
	require.NoError(t, err)
	rm.Mu.Lock()
	rm.LastID = 7 // the RM moved on without this client
	rm.Mu.Unlock()
	_, err = c.Allocate(context.Background())
	require.ErrorIs(t, err, ErrInvalidRequest)
	var re *records.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Message, "expect responseId to be 7 but get 1")
	assert.Contains(t, err.Error(), "InvalidApplicationMasterRequestException: Invalid responseId")
}

func TestReregisterAfterRMRestart(t *testing.T) {
	mk := newContainers()
	rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
		if n == 0 {
			resp.AllocatedContainers = []*yarnpb.ContainerProto{mk(1, "nm1")}
		}
		return nil
	})
	c := registered(t, rm, nil)
	require.NoError(t, c.Ask(1, gpu1, 3))
	require.NoError(t, c.Ask(2, records.NewResources(512, 1), 0))
	a, err := c.Allocate(context.Background())
	require.NoError(t, err)
	require.Len(t, a.Allocated, 1)
	require.NoError(t, c.Release(a.Allocated[0].ID))
	_, err = c.Allocate(context.Background())
	require.NoError(t, err)

	rm.Forget()
	_, err = c.Allocate(context.Background())
	require.NoError(t, err)

	rm.Mu.Lock()
	assert.Equal(t, 2, rm.Registers)
	rm.Mu.Unlock()
	reqs := rm.AllocateRequests()
	require.Len(t, reqs, 3)
	last := reqs[2]
	assert.Equal(t, int32(0), last.GetResponseId(), "response ids start over after re-registering")
	require.Len(t, last.GetAsk(), 2, "every ask is sent again")
	assert.Equal(t, int32(2), last.GetAsk()[0].GetNumContainers(), "with the outstanding total")
	require.Len(t, last.GetRelease(), 1, "unconfirmed releases are sent again")
	assert.Equal(t, 2, rm.Server.Connections(), "reconnected with SASL")
}

func TestAMCommands(t *testing.T) {
	t.Run("resync", func(t *testing.T) {
		var rm *fakeyarn.RM
		rm = newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
			if n == 0 {
				resp.AMCommand = yarnpb.AMCommandProto_AM_RESYNC.Enum()
				rm.Registered = false
			}
			return nil
		})
		c := registered(t, rm, nil)
		_, err := c.Allocate(context.Background())
		require.NoError(t, err)
		rm.Mu.Lock()
		defer rm.Mu.Unlock()
		assert.Equal(t, 2, rm.Registers)
	})
	t.Run("shutdown", func(t *testing.T) {
		rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
			resp.AMCommand = yarnpb.AMCommandProto_AM_SHUTDOWN.Enum()
			return nil
		})
		c := registered(t, rm, nil)
		_, err := c.Allocate(context.Background())
		assert.ErrorIs(t, err, ErrShutdown)
	})
}

func TestAMRMTokenRoll(t *testing.T) {
	newTok := records.Token{Identifier: []byte("amrm-id-2"), Password: []byte("amrm-pw-2"), Kind: records.KindAMRMToken}
	rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
		if n == 0 {
			resp.AmRmToken = tokenProto(newTok)
		}
		return nil
	})
	rm.Server.AddToken(newTok.Identifier, newTok.Password)
	c := registered(t, rm, nil)
	_, err := c.Allocate(context.Background())
	require.NoError(t, err)
	assert.Equal(t, newTok.Identifier, c.AMRMToken().Identifier)
	_, tok, _ := c.Credentials().TokenByKind(records.KindAMRMToken)
	assert.Equal(t, newTok.Password, tok.Password)

	// The RM forgets the old key and drops the connection: the client reconnects with the new token.
	rm.Server.RemoveToken(amrmTok.Identifier)
	rm.Server.DropConnections()
	_, err = c.Allocate(context.Background())
	require.NoError(t, err)
	logins := rm.Server.Logins()
	require.Len(t, logins, 2)
	assert.Equal(t, newTok.Identifier, logins[1])
}

func TestCompletedContainerStatuses(t *testing.T) {
	mk := newContainers()
	rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
		ct := mk(1, "nm1")
		resp.CompletedContainerStatuses = []*yarnpb.ContainerStatusProto{
			{ContainerId: ct.Id, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0), Diagnostics: proto.String("")},
			{ContainerId: mk(1, "nm1").Id, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(-105), Diagnostics: proto.String("Container killed by the ApplicationMaster.")},
		}
		resp.Limit = &yarnpb.ResourceProto{Memory: proto.Int64(4096), VirtualCores: proto.Int32(4)}
		resp.UpdatedNodes = []*yarnpb.NodeReportProto{{NodeId: &yarnpb.NodeIdProto{Host: proto.String("nm3"), Port: proto.Int32(1)}, NodeState: yarnpb.NodeStateProto_NS_LOST.Enum()}}
		resp.Preempt = &yarnpb.PreemptionMessageProto{StrictContract: &yarnpb.StrictPreemptionContractProto{Container: []*yarnpb.PreemptionContainerProto{{Id: ct.Id}}}}
		return nil
	})
	c := registered(t, rm, nil)
	a, err := c.Allocate(context.Background())
	require.NoError(t, err)
	require.Len(t, a.Completed, 2)
	assert.Equal(t, ContainerStatus{ID: containerID(t, "container_1700000000000_0001_01_000002"), State: records.ContainerComplete, ExitStatus: 0}, a.Completed[0])
	assert.Equal(t, int32(-105), a.Completed[1].ExitStatus)
	assert.Contains(t, a.Completed[1].Diagnostics, "killed")
	assert.Equal(t, records.NewResources(4096, 4), a.Headroom)
	assert.Equal(t, 2, a.NumClusterNodes)
	require.Len(t, a.UpdatedNodes, 1)
	assert.Equal(t, "LOST", a.UpdatedNodes[0].State)
	assert.Equal(t, []records.ContainerID{containerID(t, "container_1700000000000_0001_01_000002")}, a.Preempted)
}

func TestUnregister(t *testing.T) {
	t.Run("loops until the RM confirms", func(t *testing.T) {
		rm := newRM(t, nil)
		rm.Mu.Lock()
		rm.UnregisterAfter = 3
		rm.Mu.Unlock()
		c := registered(t, rm, nil)
		require.NoError(t, c.Unregister(context.Background(), records.FinalSucceeded, "all done", "http://history"))
		rm.Mu.Lock()
		defer rm.Mu.Unlock()
		assert.Len(t, rm.Finishes, 3)
		assert.Equal(t, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, rm.Finishes[0].GetFinalApplicationStatus())
		assert.Equal(t, "all done", rm.Finishes[0].GetDiagnostics())
		assert.Equal(t, "http://history", rm.Finishes[0].GetTrackingUrl())
	})
	t.Run("registers again after an RM restart", func(t *testing.T) {
		rm := newRM(t, nil)
		c := registered(t, rm, nil)
		rm.Forget()
		require.NoError(t, c.Unregister(context.Background(), records.FinalFailed, "", ""))
		rm.Mu.Lock()
		defer rm.Mu.Unlock()
		assert.Equal(t, 2, rm.Registers)
		assert.Equal(t, yarnpb.FinalApplicationStatusProto_APP_FAILED, rm.Finishes[0].GetFinalApplicationStatus())
	})
	t.Run("context ends the loop", func(t *testing.T) {
		rm := newRM(t, nil)
		rm.Mu.Lock()
		rm.UnregisterAfter = 1 << 30
		rm.Mu.Unlock()
		c := registered(t, rm, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, c.Unregister(ctx, records.FinalSucceeded, "", ""), context.DeadlineExceeded)
	})
}

func TestRun(t *testing.T) {
	mk := newContainers()
	rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
		if n < 4 {
			resp.AllocatedContainers = []*yarnpb.ContainerProto{mk(1, "nm1")}
		}
		return nil
	})
	c := registered(t, rm, func(cfg *Config) { cfg.Heartbeat = 5 * time.Millisecond })
	require.NoError(t, c.Ask(1, gpu1, 4))
	var got []Container
	err := c.Run(context.Background(), func(a *Allocation) (bool, error) {
		got = append(got, a.Allocated...)
		return len(got) == 4, nil
	})
	require.NoError(t, err)
	assert.Len(t, got, 4)
	assert.Equal(t, 4, c.Stats().Allocates)

	boom := errors.New("boom")
	assert.ErrorIs(t, c.Run(context.Background(), func(*Allocation) (bool, error) { return false, boom }), boom)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, c.Run(ctx, func(*Allocation) (bool, error) { return false, nil }), context.DeadlineExceeded)
}

func TestRunRetriesConnectionFailures(t *testing.T) {
	rm := newRM(t, nil)
	var failDials atomic.Int32
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if failDials.Add(-1) >= 0 {
			return nil, errors.New("connection refused (test)")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	c := registered(t, rm, func(cfg *Config) {
		cfg.Dial = dial
		cfg.Heartbeat = 5 * time.Millisecond
	})
	rm.Server.DropConnections() // an RM restart that keeps the attempt registered (work-preserving)
	failDials.Store(3)
	n := 0
	err := c.Run(context.Background(), func(*Allocation) (bool, error) { n++; return n == 2, nil })
	require.NoError(t, err)
	assert.LessOrEqual(t, failDials.Load(), int32(0), "the failing dials were all tried")

	// Past RetryTimeout the error comes back.
	c.cfg.RetryTimeout = 50 * time.Millisecond
	rm.Server.DropConnections()
	failDials.Store(1 << 30)
	err = c.Run(context.Background(), func(*Allocation) (bool, error) { return false, nil })
	require.ErrorIs(t, err, ErrConnection)
	assert.ErrorContains(t, err, "connection refused (test)")

	c3 := client(t, rm, func(cfg *Config) {
		cfg.Dial = func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("refused") }
	})
	_, err = c3.Register(context.Background(), RegisterRequest{})
	assert.ErrorIs(t, err, ErrConnection)
}

func TestAttemptNotFoundEndsRun(t *testing.T) {
	rm := newRM(t, func(int, *yarnpb.AllocateRequestProto, *yarnpb.AllocateResponseProto) error {
		return &ipctest.Exception{Class: fakeyarn.ExAttemptNotFound,
			Message: "Application attempt " + fakeyarn.AttemptID + " doesn't exist in ApplicationMasterService cache."}
	})
	c := registered(t, rm, func(cfg *Config) { cfg.Heartbeat = time.Millisecond })
	err := c.Run(context.Background(), func(*Allocation) (bool, error) { return false, nil })
	assert.ErrorIs(t, err, ErrAttemptNotFound)
	assert.NotErrorIs(t, err, ErrNotRegistered)
}
