package amrm

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/records"
)

const (
	testAttempt        = "appattempt_1700000000000_0001_000001"
	exNotRegistered    = "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException"
	exInvalidAMRequest = "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException"
)

// fakeRM is a scripted ApplicationMasterProtocol server with the 3.x ResourceManager's rules:
// registration, strict responseId, and finish that may need several calls.
type fakeRM struct {
	t   *testing.T
	srv *ipctest.Server

	mu              sync.Mutex
	registered      bool
	registers       int
	lastID          int32
	lastResp        *yarnpb.AllocateResponseProto
	requests        []*yarnpb.AllocateRequestProto
	finishCalls     int
	finishRequests  []*yarnpb.FinishApplicationMasterRequestProto
	unregisterAfter int
	types           []string
	maxGPU          int64
	nextContainer   int64
	// script answers allocate number n (from 0); nil leaves the response empty.
	script func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error
}

var amrmTok = records.Token{Identifier: []byte("amrm-id-1"), Password: []byte("amrm-pw-1"), Kind: records.KindAMRMToken}

func newFakeRM(t *testing.T) *fakeRM {
	rm := &fakeRM{t: t, types: []string{records.MemoryMB, records.VCores, records.GPU}, maxGPU: 4, unregisterAfter: 1, nextContainer: 2}
	rm.srv = ipctest.NewServer(t, ipctest.NewProtocol(amProtocol, &rm.mu,
		ipctest.Answer("registerApplicationMaster", rm.register),
		ipctest.Answer("allocate", rm.allocate),
		ipctest.Answer("finishApplicationMaster", rm.finish),
	).Handle)
	rm.srv.AddToken(amrmTok.Identifier, amrmTok.Password)
	return rm
}

func (rm *fakeRM) client(t *testing.T, mod func(*Config)) *Client {
	t.Helper()
	creds := records.NewCredentials()
	creds.AddToken("amrm", amrmTok)
	cfg := Config{SchedulerAddrs: []string{rm.srv.Addr}, Credentials: creds}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// restart forgets the AM, like an RM restart without work-preserving recovery of the attempt's state.
func (rm *fakeRM) restart() {
	rm.mu.Lock()
	rm.registered = false
	rm.lastID = 0
	rm.lastResp = nil
	rm.mu.Unlock()
	rm.srv.DropConnections()
}

func (rm *fakeRM) allocRequests() []*yarnpb.AllocateRequestProto {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return append([]*yarnpb.AllocateRequestProto(nil), rm.requests...)
}

// register answers registerApplicationMaster.
func (rm *fakeRM) register(_ *yarnpb.RegisterApplicationMasterRequestProto) (proto.Message, error) {
	if rm.registered {
		return nil, &ipctest.Exception{Class: exInvalidAMRequest, Message: "Application Master is already registered : application_1700000000000_0001"}
	}
	rm.registered = true
	rm.registers++
	rm.lastID = 0
	rm.lastResp = nil
	resp := &yarnpb.RegisterApplicationMasterResponseProto{
		MaximumCapability: &yarnpb.ResourceProto{
			Memory: proto.Int64(8192), VirtualCores: proto.Int32(8),
			ResourceValueMap: []*yarnpb.ResourceInformationProto{
				{Key: proto.String(records.MemoryMB), Value: proto.Int64(8192), Units: proto.String("Mi")},
				{Key: proto.String(records.VCores), Value: proto.Int64(8), Units: proto.String("")},
			},
		},
		Queue: proto.String("default"),
		NmTokensFromPreviousAttempts: []*yarnpb.NMTokenProto{
			{NodeId: &yarnpb.NodeIdProto{Host: proto.String("old-nm"), Port: proto.Int32(1)}, Token: tokenProto(records.Token{Identifier: []byte("old"), Password: []byte("p"), Kind: records.KindNMToken})},
		},
	}
	for _, n := range rm.types {
		resp.ResourceTypes = append(resp.ResourceTypes, &yarnpb.ResourceTypeInfoProto{Name: proto.String(n), Units: proto.String(map[string]string{records.MemoryMB: "Mi"}[n]), Type: yarnpb.ResourceTypesProto_COUNTABLE.Enum()})
		if n == records.GPU {
			resp.MaximumCapability.ResourceValueMap = append(resp.MaximumCapability.ResourceValueMap,
				&yarnpb.ResourceInformationProto{Key: proto.String(records.GPU), Value: proto.Int64(rm.maxGPU), Units: proto.String("")})
		}
	}
	return resp, nil
}

// allocate answers allocate with the 3.x responseId rule, then the script.
func (rm *fakeRM) allocate(req *yarnpb.AllocateRequestProto) (proto.Message, error) {
	if !rm.registered {
		return nil, &ipctest.Exception{Class: exNotRegistered, Message: "AM is not registered for known application attempt: " + testAttempt + " or RM had restarted after AM registered. AM should re-register."}
	}
	if req.GetResponseId()+1 == rm.lastID && rm.lastResp != nil {
		return rm.lastResp, nil // a resent heartbeat gets the last response again
	}
	if req.GetResponseId() != rm.lastID {
		return nil, &ipctest.Exception{Class: exInvalidAMRequest, Message: fmt.Sprintf(
			"Invalid responseId in AllocateRequest from application attempt: %s expect responseId to be %d but get %d",
			testAttempt, rm.lastID, req.GetResponseId())}
	}
	n := len(rm.requests)
	rm.requests = append(rm.requests, req)
	resp := &yarnpb.AllocateResponseProto{NumClusterNodes: proto.Int32(2)}
	if rm.script != nil {
		if err := rm.script(n, req, resp); err != nil {
			return nil, err
		}
	}
	rm.lastID++
	resp.ResponseId = proto.Int32(rm.lastID)
	rm.lastResp = resp
	return resp, nil
}

// finish answers finishApplicationMaster; it unregisters from call unregisterAfter on.
func (rm *fakeRM) finish(req *yarnpb.FinishApplicationMasterRequestProto) (proto.Message, error) {
	if !rm.registered {
		return nil, &ipctest.Exception{Class: exNotRegistered, Message: "Application Master is trying to unregister before registering for: " + testAttempt}
	}
	rm.finishCalls++
	rm.finishRequests = append(rm.finishRequests, req)
	return &yarnpb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(rm.finishCalls >= rm.unregisterAfter)}, nil
}

// container returns an allocated container with the given GPUs (mutex held by the caller's script).
func (rm *fakeRM) container(prio int32, gpus int64, node string) *yarnpb.ContainerProto {
	id := rm.nextContainer
	rm.nextContainer++
	pid, err := containerIDProto(containerID(rm.t, fmt.Sprintf("container_1700000000000_0001_01_%06d", id)))
	require.NoError(rm.t, err)
	r := &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}
	if gpus > 0 {
		r.ResourceValueMap = []*yarnpb.ResourceInformationProto{{Key: proto.String(records.GPU), Value: proto.Int64(gpus), Units: proto.String("")}}
	}
	host, port := node, int32(45454)
	return &yarnpb.ContainerProto{
		Id:              pid,
		NodeId:          &yarnpb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)},
		NodeHttpAddress: proto.String(host + ":8042"),
		Resource:        r,
		Priority:        &yarnpb.PriorityProto{Priority: proto.Int32(prio)},
		ContainerToken: &commonpb.TokenProto{Identifier: []byte(fmt.Sprintf("ctok-%d", id)), Password: []byte("cpw"),
			Kind: proto.String(records.KindContainerToken), Service: proto.String(fmt.Sprintf("%s:%d", host, port))},
	}
}

var errNotFound = &ipctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException",
	Message: "Application attempt " + testAttempt + " doesn't exist in ApplicationMasterService cache."}
