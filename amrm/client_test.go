package amrm

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/amrm/internal/fakeyarn"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/testsupport/syncbuf"
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

// logBuffer is a JSON slog destination a test reads while the client may still log.
type logBuffer struct{ syncbuf.Buffer }

// records returns the log records with msg.
func (b *logBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(b.String(), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), "%s", line)
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

func withLog(b *logBuffer) func(*Config) {
	return func(cfg *Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

const resyncLog = "amrm: the ResourceManager refused the heartbeat's responseId; sending it again with the expected one"

// TestWrongResponseIDResyncs: an RM that went on without the client refuses its responseId with
// the id it expects (in 3.2+'s and 3.1's wording); the client sends the heartbeat again with it,
// once, and the asks and releases of the refused heartbeat reach the RM.
func TestWrongResponseIDResyncs(t *testing.T) {
	for _, hadoop31 := range []bool{false, true} {
		t.Run(map[bool]string{false: "hadoop-3.2+", true: "hadoop-3.1"}[hadoop31], func(t *testing.T) {
			mk := newContainers()
			rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
				if n == 0 {
					resp.AllocatedContainers = []*yarnpb.ContainerProto{mk(1, "nm1")}
				}
				return nil
			})
			rm.Hadoop31 = hadoop31
			var logs logBuffer
			c := registered(t, rm, withLog(&logs))
			require.NoError(t, c.Ask(1, gpu1, 3))
			a, err := c.Allocate(context.Background())
			require.NoError(t, err)
			require.Len(t, a.Allocated, 1)

			// Pending for the next heartbeat: a release and a new ask.
			require.NoError(t, c.Release(a.Allocated[0].ID))
			require.NoError(t, c.Ask(2, records.NewResources(512, 1), 2))
			rm.Mu.Lock()
			rm.LastID = 7 // the RM moved on without this client
			rm.Mu.Unlock()

			a, err = c.Allocate(context.Background())
			require.NoError(t, err)
			assert.Equal(t, int32(8), a.ResponseID)
			reqs := rm.AllocateRequests()
			require.Len(t, reqs, 2, "one accepted heartbeat after the refused one")
			resent := reqs[1]
			assert.Equal(t, int32(7), resent.GetResponseId(), "sent again with the id the RM expects")
			require.Len(t, resent.GetAsk(), 2, "the new ask, and the other total again")
			assert.Equal(t, int32(1), resent.GetAsk()[0].GetPriority().GetPriority())
			assert.Equal(t, int32(2), resent.GetAsk()[0].GetNumContainers(), "the outstanding total")
			assert.Equal(t, int32(2), resent.GetAsk()[1].GetPriority().GetPriority())
			assert.Equal(t, int32(2), resent.GetAsk()[1].GetNumContainers())
			require.Len(t, resent.GetRelease(), 1, "the pending release")
			assert.Equal(t, 2, c.Stats().Allocates)

			recs := logs.records(t, resyncLog)
			require.Len(t, recs, 1)
			assert.Equal(t, "WARN", recs[0]["level"])
			assert.Equal(t, fakeyarn.AttemptID, recs[0]["attempt"], "named by the RM's message (the test token does not decode)")
			assert.Equal(t, float64(1), recs[0]["sentResponseId"])
			assert.Equal(t, float64(7), recs[0]["expectedResponseId"])
			assert.NotContains(t, logs.String(), string(amrmTok.Password))
			assert.NotContains(t, logs.String(), string(amrmTok.Identifier))

			// In step again: the next heartbeat carries the RM's id and nothing unchanged.
			_, err = c.Allocate(context.Background())
			require.NoError(t, err)
			reqs = rm.AllocateRequests()
			require.Len(t, reqs, 3)
			assert.Equal(t, int32(8), reqs[2].GetResponseId())
			assert.Empty(t, reqs[2].GetAsk())
		})
	}
}

// TestWrongResponseIDWithoutResync: when the refusal names no usable id, or the heartbeat sent
// again is refused too, Allocate returns the RM's exception as ErrInvalidRequest and sends
// nothing more.
func TestWrongResponseIDWithoutResync(t *testing.T) {
	refuse := func(msg string) error { return &ipctest.Exception{Class: fakeyarn.ExInvalidRequest, Message: msg} }
	tests := []struct {
		name string
		// answer refuses heartbeat n (from 0) that the RM's rules accepted, or not (nil).
		answer    func(n int, req *yarnpb.AllocateRequestProto) error
		wantCalls int
		wantMsg   string
	}{
		{
			name: "no number",
			answer: func(n int, req *yarnpb.AllocateRequestProto) error {
				return refuse("Invalid responseId in AllocateRequest from application attempt: " + fakeyarn.AttemptID +
					" expect responseId to be soon but get 0")
			},
			wantCalls: 1, wantMsg: "to be soon",
		},
		{
			name: "out of range",
			answer: func(n int, req *yarnpb.AllocateRequestProto) error {
				return refuse("Invalid responseId in AllocateRequest from application attempt: " + fakeyarn.AttemptID +
					" expect responseId to be 2147483648 but get 0")
			},
			wantCalls: 1, wantMsg: "2147483648",
		},
		{
			name: "another refusal",
			answer: func(n int, req *yarnpb.AllocateRequestProto) error {
				return refuse("Application Master is already registered : " + fakeyarn.AppID)
			},
			wantCalls: 1, wantMsg: "already registered",
		},
		{
			name: "expects the id sent",
			answer: func(n int, req *yarnpb.AllocateRequestProto) error {
				return refuse(fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, req.GetResponseId(), req.GetResponseId(), false))
			},
			wantCalls: 1, wantMsg: "expect responseId to be 0 but get 0",
		},
		{
			name: "refused again",
			answer: func(n int, req *yarnpb.AllocateRequestProto) error {
				// A refusal naming an id the RM's own rule then refuses as well.
				return refuse(fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, req.GetResponseId()+5, req.GetResponseId(), false))
			},
			wantCalls: 1, wantMsg: "expect responseId to be 0 but get 5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			rm := newRM(t, func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error {
				calls++
				return tt.answer(n, req)
			})
			var logs logBuffer
			c := registered(t, rm, withLog(&logs))
			require.NoError(t, c.Ask(1, gpu1, 1))
			_, err := c.Allocate(context.Background())
			require.ErrorIs(t, err, ErrInvalidRequest)
			var re *records.RemoteError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, fakeyarn.ExInvalidRequest, re.Class)
			assert.Contains(t, re.Message, tt.wantMsg)
			assert.Equal(t, tt.wantCalls, calls, "heartbeats the RM's rules accepted")
			assert.Equal(t, 0, c.Stats().Allocates)
			assert.Equal(t, 1, c.Outstanding(1), "nothing counted down")
		})
	}

	// A refusal of the resent heartbeat is returned too; the next Allocate starts over.
	t.Run("moved on again", func(t *testing.T) {
		rm := newRM(t, nil)
		c := registered(t, rm, func(cfg *Config) { cfg.Logger = slog.New(moveOnHandler{rm: rm, to: 20, once: new(sync.Once)}) })
		_, err := c.Allocate(context.Background())
		require.NoError(t, err)
		rm.Mu.Lock()
		rm.LastID = 7
		rm.Mu.Unlock()
		_, err = c.Allocate(context.Background())
		require.ErrorIs(t, err, ErrInvalidRequest)
		assert.ErrorContains(t, err, "expect responseId to be 20 but get 7")
		assert.Len(t, rm.AllocateRequests(), 1, "no heartbeat accepted")

		a, err := c.Allocate(context.Background())
		require.NoError(t, err)
		assert.Equal(t, int32(21), a.ResponseID)
	})
}

// moveOnHandler moves the fake RM's last response id to the first time the client logs that it
// resends the heartbeat, as an RM that answered another heartbeat of the attempt meanwhile.
type moveOnHandler struct {
	rm   *fakeyarn.RM
	to   int32
	once *sync.Once
}

func (h moveOnHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h moveOnHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == resyncLog {
		h.once.Do(func() {
			h.rm.Mu.Lock()
			h.rm.LastID = h.to
			h.rm.Mu.Unlock()
		})
	}
	return nil
}
func (h moveOnHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h moveOnHandler) WithGroup(string) slog.Handler      { return h }

// TestResponseIDWrapsAround: the RM answers 0 after 2147483647 and the client goes on with it.
func TestResponseIDWrapsAround(t *testing.T) {
	rm := newRM(t, nil)
	c := registered(t, rm, nil)
	rm.Mu.Lock()
	rm.LastID = math.MaxInt32 - 1
	rm.Mu.Unlock()
	var got []int32
	for i := 0; i < 4; i++ {
		a, err := c.Allocate(context.Background())
		require.NoError(t, err)
		got = append(got, a.ResponseID)
	}
	assert.Equal(t, []int32{math.MaxInt32, 0, 1, 2}, got)
	var sent []int32
	for _, r := range rm.AllocateRequests() {
		sent = append(sent, r.GetResponseId())
	}
	assert.Equal(t, []int32{math.MaxInt32 - 1, math.MaxInt32, 0, 1}, sent)
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

// TestResyncAgainstFakeCluster: against amrmfake's scheduler, an AM whose RM went on to the last
// id before the wrap resynchronises on its first heartbeat, the asks of that heartbeat are
// allocated, and the ids go on from 0.
func TestResyncAgainstFakeCluster(t *testing.T) {
	cl := amrmfake.New(t, amrmfake.Options{Nodes: 2, GPUsPerNode: 4})
	c, err := New(Config{SchedulerAddrs: []string{cl.SchedulerAddr}, Credentials: cl.Credentials()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Register(context.Background(), RegisterRequest{RPCPort: -1})
	require.NoError(t, err)
	require.NoError(t, c.Ask(1, gpu1, 6))
	cl.MoveResponseID(math.MaxInt32)

	a, err := c.Allocate(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int32(0), a.ResponseID, "2147483647 is answered with 0")
	assert.Len(t, a.Allocated, 6, "the ask of the refused heartbeat was allocated")
	assert.Equal(t, 6, cl.MaxAsked(1))
	assert.Equal(t, 0, c.Outstanding(1))

	a, err = c.Allocate(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int32(1), a.ResponseID)
	assert.Empty(t, a.Allocated)
	assert.Equal(t, 2, cl.Allocates())
}

// TestUpdateTokens: fresh tokens replace those of their aliases in the credentials containers get
// from then on; the AMRMToken stays the client's own.
func TestUpdateTokens(t *testing.T) {
	cl := amrmfake.New(t, amrmfake.Options{Nodes: 1, GPUsPerNode: 1})
	creds := cl.Credentials()
	creds.AddToken("hdfs", records.Token{Identifier: []byte("old"), Password: []byte("p"), Kind: "HDFS_DELEGATION_TOKEN", Service: "nn:8020"})
	c, err := New(Config{SchedulerAddrs: []string{cl.SchedulerAddr}, Credentials: creds})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	before := c.Credentials()

	c.UpdateTokens(map[string]records.Token{
		"hdfs":  {Identifier: []byte("new"), Password: []byte("q"), Kind: "HDFS_DELEGATION_TOKEN", Service: "nn:8020"},
		"other": {Identifier: []byte("kms"), Password: []byte("r"), Kind: "kms-dt", Service: "kms:9600"},
		"amrm":  {Identifier: []byte("forged"), Password: []byte("x"), Kind: records.KindAMRMToken},
	})
	after := c.Credentials()
	assert.Equal(t, "new", string(after.Tokens["hdfs"].Identifier))
	assert.Equal(t, "kms", string(after.Tokens["other"].Identifier))
	_, amrm, ok := after.TokenByKind(records.KindAMRMToken)
	require.True(t, ok)
	_, was, _ := before.TokenByKind(records.KindAMRMToken)
	assert.Equal(t, was.Identifier, amrm.Identifier, "an AMRMToken among the fresh tokens is ignored")
	assert.Equal(t, "old", string(before.Tokens["hdfs"].Identifier), "credentials handed out before are not changed")
}
