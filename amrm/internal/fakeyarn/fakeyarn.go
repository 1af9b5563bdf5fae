// Package fakeyarn holds the protocol rules of the fake ResourceManager scheduler and fake
// NodeManagers that amrm's unit tests and package amrmfake share, so that they exist once:
// Hadoop IPC servers on 127.0.0.1 that accept a token over SASL DIGEST-MD5, the 3.x
// ResourceManager's registration, responseId and unregistration rules, recordings of what the
// ApplicationMaster sent, and the application's ids.
//
// What a registration answers, what a heartbeat allocates and what a container start does belong
// to the owner, which passes hooks: amrmfake schedules like a ResourceManager, amrm's tests
// script each answer. It is for tests only.
package fakeyarn

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/records"
)

// The protocols the fakes serve.
const (
	SchedulerProtocol = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"
	ContainerProtocol = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB"
)

// The Java exceptions the fakes answer with, as the 3.x ResourceManager and NodeManager do.
const (
	ExNotRegistered   = "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException"
	ExInvalidRequest  = "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException"
	ExAttemptNotFound = "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException"
	ExYarn            = "org.apache.hadoop.yarn.exceptions.YarnException"
)

// ClusterTimestamp and AppNumber make up the fake application's id; its attempt is number 1.
const (
	ClusterTimestamp = 1700000000000
	AppNumber        = 1
)

// Attempt is the fake application's attempt; AppID and AttemptID are its ids as text.
var (
	Attempt   = records.ApplicationAttemptID{Application: records.ApplicationID{ClusterTimestamp: ClusterTimestamp, ID: AppNumber}, Attempt: 1}
	AppID     = Attempt.Application.String()
	AttemptID = Attempt.String()
)

// RMHooks are the owner's part of a fake scheduler. They run with RM.Mu held.
type RMHooks struct {
	// Register answers a registration that the rules accepted (nil: Registration(4)).
	Register func(req *yarnpb.RegisterApplicationMasterRequestProto) *yarnpb.RegisterApplicationMasterResponseProto
	// Allocate fills the answer to heartbeat n (from 0) that the rules accepted; the RM sets the
	// response id afterwards. An error is the call's answer instead (an *ipctest.Exception to
	// send a Java exception). Nil leaves each answer empty but for the node count.
	Allocate func(n int, req *yarnpb.AllocateRequestProto, resp *yarnpb.AllocateResponseProto) error
}

// RM is a fake ResourceManager's ApplicationMasterProtocol server with the 3.x rules: one
// registration per attempt, a strict responseId, calls before registration refused with
// ApplicationMasterNotRegisteredException, and an unregistration that may need several calls.
//
// The responseId rule is ApplicationMasterService.allocate's (Hadoop 3.1 to 3.5): a request whose
// id is the one before the last answer's (NextResponseID(id) == LastID) gets the last answer again;
// one with the last answer's id is a new heartbeat, answered with NextResponseID(LastID); any other
// is InvalidApplicationMasterRequestException with InvalidResponseIDMessage (and a stack trace
// line, as over IPC). Ids count from 0 at registration and wrap from 2147483647 to 0.
type RM struct {
	// Server is the IPC server; Server.Addr is the scheduler address.
	Server *ipctest.Server
	// Token is the AMRMToken the server accepts.
	Token records.Token

	// Mu guards the fields below, and whatever the hooks touch: they run with it held.
	Mu sync.Mutex
	// Registered is true from a registration until Forget (a hook may clear it, as an
	// AM_RESYNC does).
	Registered bool
	// Registers counts the accepted registrations.
	Registers int
	// Registration is the last accepted registration request.
	Registration *yarnpb.RegisterApplicationMasterRequestProto
	// LastID is the last response id sent (0 after a registration); a test may move it, as an RM
	// that went on without the AM (whose last answer, should the AM resend the id before it, is
	// then an empty one).
	LastID int32
	// Hadoop31 makes the refusal of a wrong responseId use Hadoop 3.1's wording (commas before
	// "expect" and "but"; see InvalidResponseIDMessage).
	Hadoop31 bool
	// Requests are the accepted allocate requests in order; a resent one is not counted again.
	Requests []*yarnpb.AllocateRequestProto
	// Finishes are the finishApplicationMaster requests.
	Finishes []*yarnpb.FinishApplicationMasterRequestProto
	// UnregisterAfter is the finishApplicationMaster call, counted from 1, from which the
	// unregistration is confirmed (0 and 1: the first).
	UnregisterAfter int

	lastResp *yarnpb.AllocateResponseProto
	hooks    RMHooks
}

// NewRM starts a fake scheduler that accepts token; t.Cleanup stops it.
func NewRM(t testing.TB, token records.Token, hooks RMHooks) *RM {
	t.Helper()
	rm := &RM{Token: token, hooks: hooks}
	rm.Server = ipctest.NewServer(t, ipctest.NewProtocol(SchedulerProtocol, &rm.Mu,
		ipctest.Answer("registerApplicationMaster", rm.register),
		ipctest.Answer("allocate", rm.allocate),
		ipctest.Answer("finishApplicationMaster", rm.finish),
	).Handle)
	rm.Server.AddToken(token.Identifier, token.Password)
	return rm
}

// Credentials returns credentials holding the RM's AMRMToken under the alias "amrm".
func (rm *RM) Credentials() *records.Credentials {
	cr := records.NewCredentials()
	cr.AddToken("amrm", rm.Token)
	return cr
}

// Forget makes the scheduler forget the AM's registration and drops its connections, as an RM
// restart or failover without the attempt's state does: the AM must register again.
func (rm *RM) Forget() {
	rm.Mu.Lock()
	rm.Registered = false
	rm.LastID = 0
	rm.lastResp = nil
	rm.Mu.Unlock()
	rm.Server.DropConnections()
}

// AllocateRequests returns a copy of Requests.
func (rm *RM) AllocateRequests() []*yarnpb.AllocateRequestProto {
	rm.Mu.Lock()
	defer rm.Mu.Unlock()
	return append([]*yarnpb.AllocateRequestProto(nil), rm.Requests...)
}

func (rm *RM) register(req *yarnpb.RegisterApplicationMasterRequestProto) (proto.Message, error) {
	if rm.Registered {
		return nil, &ipctest.Exception{Class: ExInvalidRequest, Message: "Application Master is already registered : " + AppID}
	}
	rm.Registered, rm.Registration = true, req
	rm.Registers++
	// The registration's own answer with id 0 is the last one: an allocate with id -1 gets it.
	rm.LastID, rm.lastResp = 0, &yarnpb.AllocateResponseProto{ResponseId: proto.Int32(0)}
	if rm.hooks.Register != nil {
		return rm.hooks.Register(req), nil
	}
	return Registration(4), nil
}

func (rm *RM) allocate(req *yarnpb.AllocateRequestProto) (proto.Message, error) {
	if !rm.Registered {
		return nil, &ipctest.Exception{Class: ExNotRegistered, Message: "AM is not registered for known application attempt: " +
			AttemptID + " or RM had restarted after AM registered. AM should re-register."}
	}
	if id := req.GetResponseId(); NextResponseID(id) == rm.LastID {
		if rm.lastResp == nil || rm.lastResp.GetResponseId() != rm.LastID {
			rm.lastResp = &yarnpb.AllocateResponseProto{ResponseId: proto.Int32(rm.LastID)} // a test moved LastID
		}
		return rm.lastResp, nil
	} else if id != rm.LastID {
		return nil, &ipctest.Exception{Class: ExInvalidRequest, Message: InvalidResponseIDMessage(AttemptID, rm.LastID, id, rm.Hadoop31) +
			"\n\tat org.apache.hadoop.yarn.server.resourcemanager.ApplicationMasterService.allocate(ApplicationMasterService.java:428)"}
	}
	n := len(rm.Requests)
	rm.Requests = append(rm.Requests, req)
	resp := &yarnpb.AllocateResponseProto{NumClusterNodes: proto.Int32(2)}
	if rm.hooks.Allocate != nil {
		if err := rm.hooks.Allocate(n, req, resp); err != nil {
			return nil, err
		}
	}
	rm.LastID = NextResponseID(rm.LastID)
	resp.ResponseId = proto.Int32(rm.LastID)
	rm.lastResp = resp
	return resp, nil
}

func (rm *RM) finish(req *yarnpb.FinishApplicationMasterRequestProto) (proto.Message, error) {
	if !rm.Registered {
		return nil, &ipctest.Exception{Class: ExNotRegistered, Message: "Application Master is trying to unregister before registering for: " + AttemptID}
	}
	rm.Finishes = append(rm.Finishes, req)
	return &yarnpb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(len(rm.Finishes) >= rm.UnregisterAfter)}, nil
}

// NextResponseID is the id the ResourceManager answers a heartbeat with id with: id+1, wrapping
// from 2147483647 to 0 (Hadoop's getNextResponseId).
func NextResponseID(id int32) int32 { return int32((int64(id) + 1) & math.MaxInt32) }

// InvalidResponseIDMessage is the message of the ResourceManager's
// InvalidApplicationMasterRequestException for an allocate call of attempt with responseId got
// when it expected expected (its last answer's id): Hadoop 3.2 and later's wording, or with
// hadoop31 3.1's, which has a comma before "expect" and before "but".
func InvalidResponseIDMessage(attempt string, expected, got int32, hadoop31 bool) string {
	if hadoop31 {
		return fmt.Sprintf("Invalid responseId in AllocateRequest from application attempt: %s, expect responseId to be %d, but get %d",
			attempt, expected, got)
	}
	return fmt.Sprintf("Invalid responseId in AllocateRequest from application attempt: %s expect responseId to be %d but get %d",
		attempt, expected, got)
}

// Registration is a registration answer with a maximum capability of 8192 MiB, 8 vcores and
// maxGPU yarn.io/gpu, the types memory-mb (Mi), vcores and yarn.io/gpu, and the queue "default".
func Registration(maxGPU int64) *yarnpb.RegisterApplicationMasterResponseProto {
	ri := func(k string, v int64, u string) *yarnpb.ResourceInformationProto {
		return &yarnpb.ResourceInformationProto{Key: proto.String(k), Value: proto.Int64(v), Units: proto.String(u)}
	}
	rt := func(k, u string) *yarnpb.ResourceTypeInfoProto {
		return &yarnpb.ResourceTypeInfoProto{Name: proto.String(k), Units: proto.String(u), Type: yarnpb.ResourceTypesProto_COUNTABLE.Enum()}
	}
	return &yarnpb.RegisterApplicationMasterResponseProto{
		MaximumCapability: &yarnpb.ResourceProto{
			Memory: proto.Int64(8192), VirtualCores: proto.Int32(8),
			ResourceValueMap: []*yarnpb.ResourceInformationProto{
				ri(records.MemoryMB, 8192, "Mi"), ri(records.VCores, 8, ""), ri(records.GPU, maxGPU, ""),
			},
		},
		Queue:         proto.String("default"),
		ResourceTypes: []*yarnpb.ResourceTypeInfoProto{rt(records.MemoryMB, "Mi"), rt(records.VCores, ""), rt(records.GPU, "")},
	}
}

// ContainerIDProto encodes a container id.
func ContainerIDProto(id records.ContainerID) *yarnpb.ContainerIdProto {
	a := id.Attempt.Application
	app := func() *yarnpb.ApplicationIdProto {
		return &yarnpb.ApplicationIdProto{Id: proto.Int32(a.ID), ClusterTimestamp: proto.Int64(a.ClusterTimestamp)}
	}
	return &yarnpb.ContainerIdProto{
		AppId:        app(),
		AppAttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: app(), AttemptId: proto.Int32(id.Attempt.Attempt)},
		Id:           proto.Int64(id.Number()),
	}
}

// ContainerID decodes a container id the AM sent.
func ContainerID(p *yarnpb.ContainerIdProto) records.ContainerID {
	app := p.GetAppAttemptId().GetApplicationId()
	att := records.ApplicationAttemptID{
		Application: records.ApplicationID{ClusterTimestamp: app.GetClusterTimestamp(), ID: app.GetId()},
		Attempt:     p.GetAppAttemptId().GetAttemptId(),
	}
	return records.ContainerIDFromNumber(att, p.GetId())
}

// Container is the fake attempt's container number seq, allocated on the NodeManager at
// host:port with resource r at priority prio. Its container token's identifier is the container
// id as text, which is how the fake NodeManagers recognise it.
func Container(seq int64, host string, port int32, r *yarnpb.ResourceProto, prio int32) *yarnpb.ContainerProto {
	id := records.ContainerIDFromNumber(Attempt, seq)
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	return &yarnpb.ContainerProto{
		Id:              ContainerIDProto(id),
		NodeId:          &yarnpb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)},
		NodeHttpAddress: proto.String(host + ":8042"),
		Resource:        r,
		Priority:        &yarnpb.PriorityProto{Priority: proto.Int32(prio)},
		ContainerToken: &commonpb.TokenProto{Identifier: []byte(id.String()), Password: []byte("container-token-password"),
			Kind: proto.String(records.KindContainerToken), Service: proto.String(addr)},
	}
}

// NMToken is the NMToken entry of an allocate answer for the node at host:port.
func NMToken(host string, port int32, tok records.Token) *yarnpb.NMTokenProto {
	return &yarnpb.NMTokenProto{
		NodeId: &yarnpb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)},
		Token: &commonpb.TokenProto{Identifier: tok.Identifier, Password: tok.Password, Kind: proto.String(records.KindNMToken),
			Service: proto.String(net.JoinHostPort(host, strconv.Itoa(int(port))))},
	}
}

// NMHooks are the owner's part of a fake NodeManager. A nil hook answers with the default: every
// start and stop succeeds, every container is running.
type NMHooks struct {
	// Lock, when not nil, is held while a hook runs.
	Lock sync.Locker
	// Start answers startContainers.
	Start func(req *yarnpb.StartContainersRequestProto) (*yarnpb.StartContainersResponseProto, error)
	// Stop answers stopContainers.
	Stop func(req *yarnpb.StopContainersRequestProto) (*yarnpb.StopContainersResponseProto, error)
	// Statuses answers getContainerStatuses.
	Statuses func(req *yarnpb.GetContainerStatusesRequestProto) (*yarnpb.GetContainerStatusesResponseProto, error)
}

// NM is a fake NodeManager's ContainerManagementProtocol server.
type NM struct {
	// Server is the IPC server; Server.Addr is the node's address.
	Server *ipctest.Server
	// Host and Port are Server.Addr's parts, the node id.
	Host string
	Port int32
	// Token is the NMToken the server accepts.
	Token records.Token
}

// NewNM starts a fake NodeManager that accepts token (a nil Identifier: one of its own, made
// from its address); t.Cleanup stops it.
func NewNM(t testing.TB, token records.Token, hooks NMHooks) *NM {
	t.Helper()
	start, stop, statuses := hooks.Start, hooks.Stop, hooks.Statuses
	if start == nil {
		start = StartAll
	}
	if stop == nil {
		stop = func(req *yarnpb.StopContainersRequestProto) (*yarnpb.StopContainersResponseProto, error) {
			return &yarnpb.StopContainersResponseProto{SucceededRequests: req.GetContainerId()}, nil
		}
	}
	if statuses == nil {
		statuses = func(req *yarnpb.GetContainerStatusesRequestProto) (*yarnpb.GetContainerStatusesResponseProto, error) {
			resp := &yarnpb.GetContainerStatusesResponseProto{}
			for _, id := range req.GetContainerId() {
				resp.Status = append(resp.Status, &yarnpb.ContainerStatusProto{ContainerId: id, State: yarnpb.ContainerStateProto_C_RUNNING.Enum()})
			}
			return resp, nil
		}
	}
	nm := &NM{Token: token}
	nm.Server = ipctest.NewServer(t, ipctest.NewProtocol(ContainerProtocol, hooks.Lock,
		answer("startContainers", start), answer("stopContainers", stop), answer("getContainerStatuses", statuses),
	).Handle)
	host, port, err := net.SplitHostPort(nm.Server.Addr)
	if err != nil {
		t.Fatalf("fakeyarn: %v", err)
	}
	p, _ := strconv.Atoi(port)
	nm.Host, nm.Port = host, int32(p)
	if nm.Token.Identifier == nil {
		nm.Token = records.Token{Identifier: []byte("fake-nm-" + nm.Server.Addr), Password: []byte("nm-password-" + port), Kind: records.KindNMToken}
	}
	nm.Server.AddToken(nm.Token.Identifier, nm.Token.Password)
	return nm
}

// StartAll answers startContainers as a NodeManager that starts every container asked for. The
// container is the one named by its container token's identifier (see Container); a token that
// names none is a failed request.
func StartAll(req *yarnpb.StartContainersRequestProto) (*yarnpb.StartContainersResponseProto, error) {
	resp := &yarnpb.StartContainersResponseProto{}
	for _, r := range req.GetStartContainerRequest() {
		id, err := records.ParseContainerID(string(r.GetContainerToken().GetIdentifier()))
		if err != nil {
			resp.FailedRequests = append(resp.FailedRequests, Failed(ContainerIDProto(id), ExYarn, "not a container token: "+err.Error()))
			continue
		}
		resp.SucceededRequests = append(resp.SucceededRequests, ContainerIDProto(id))
	}
	return resp, nil
}

// answer is ipctest.Answer for a hook that returns its response type.
func answer[Req any, Resp proto.Message, P interface {
	*Req
	proto.Message
}](name string, f func(P) (Resp, error)) ipctest.Method {
	return ipctest.Answer(name, func(req P) (proto.Message, error) {
		resp, err := f(req)
		if err != nil {
			return nil, err
		}
		return resp, nil
	})
}

// Failed is a failed_requests entry: the start or stop of container id failed with a Java
// exception of class and message.
func Failed(id *yarnpb.ContainerIdProto, class, message string) *yarnpb.ContainerExceptionMapProto {
	return &yarnpb.ContainerExceptionMapProto{
		ContainerId: id,
		Exception:   &yarnpb.SerializedExceptionProto{ClassName: proto.String(class), Message: proto.String(message)},
	}
}
