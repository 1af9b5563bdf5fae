package amrm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/records"
)

// NMTokenSource gives the NMToken for a NodeManager address (host:port). *Client is one: it caches
// the NMTokens the ResourceManager hands out.
type NMTokenSource interface {
	NMToken(node string) (records.Token, bool)
}

// NMConfig configures an NMClient.
type NMConfig struct {
	// Tokens supplies NMTokens, usually the *Client.
	Tokens NMTokenSource
	// MaxIdle closes a NodeManager connection unused for this long (default 10s).
	MaxIdle time.Duration
	// Dial opens TCP connections (default net.Dialer with a 10s timeout).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives debug logs (default discards).
	Logger *slog.Logger
}

// NMClient starts, stops and queries containers on NodeManagers (ContainerManagementProtocol),
// authenticating to each NodeManager with its NMToken. Safe for concurrent use.
type NMClient struct {
	cfg    NMConfig
	logger *slog.Logger

	mu      sync.Mutex
	clients map[string]*ipc.Client
	closed  bool
}

// NewNMClient returns a NodeManager client.
func NewNMClient(cfg NMConfig) (*NMClient, error) {
	if cfg.Tokens == nil {
		return nil, errors.New("amrm: NMConfig.Tokens is required (use the *amrm.Client)")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &NMClient{cfg: cfg, logger: logger, clients: map[string]*ipc.Client{}}, nil
}

func (n *NMClient) client(node string) (*ipc.Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ipc.ErrClosed
	}
	if c, ok := n.clients[node]; ok {
		return c, nil
	}
	c, err := ipc.NewClient(ipc.Config{
		Addrs:    []string{node},
		Protocol: cmProtocol,
		Token: func() (*ipc.Token, error) {
			t, ok := n.cfg.Tokens.NMToken(node)
			if !ok {
				return nil, fmt.Errorf("%w: no NMToken for NodeManager %s (the ResourceManager sends one with the first container on each node)", ErrNoToken, node)
			}
			return ipcToken(t), nil
		},
		MaxIdle: n.cfg.MaxIdle,
		Dial:    n.cfg.Dial,
		Logger:  n.logger,
	})
	if err != nil {
		return nil, err
	}
	n.clients[node] = c
	return c, nil
}

func failedError(f *yarnpb.ContainerExceptionMapProto, method string) *ContainerError {
	ex := f.GetException()
	msg := ex.GetMessage()
	if ex.GetTrace() != "" && msg == "" {
		msg = ex.GetTrace()
	}
	return &ContainerError{
		ID:     containerIDFromProto(f.GetContainerId()),
		Remote: &records.RemoteError{Class: ex.GetClassName(), Message: msg, Method: method},
	}
}

// StartContainer starts an allocated container. It is never retried on a lost connection: a
// NodeManager refuses a second start with the same container token.
func (n *NMClient) StartContainer(ctx context.Context, c Container, lc *LaunchContext) error {
	if c.pid == nil || c.token.IsZero() {
		return fmt.Errorf("amrm: container %s has no container token; start only containers from Allocate", c.ID)
	}
	clc, err := lc.proto()
	if err != nil {
		return err
	}
	cl, err := n.client(c.Node)
	if err != nil {
		return err
	}
	req := &yarnpb.StartContainersRequestProto{StartContainerRequest: []*yarnpb.StartContainerRequestProto{{
		ContainerLaunchContext: clc,
		ContainerToken:         tokenProto(c.token),
	}}}
	resp := &yarnpb.StartContainersResponseProto{}
	if err := cl.Call(ctx, "startContainers", req, resp, ipc.CallOptions{}); err != nil {
		return fmt.Errorf("amrm: start container %s on %s: %w", c.ID, c.Node, err)
	}
	for _, f := range resp.GetFailedRequests() {
		return failedError(f, "startContainers")
	}
	for _, id := range resp.GetSucceededRequests() {
		if containerIDFromProto(id) == c.ID {
			n.logger.Debug("amrm: container started", "container", c.ID.String(), "node", c.Node)
			return nil
		}
	}
	return fmt.Errorf("amrm: start container %s on %s: the NodeManager reported neither success nor failure", c.ID, c.Node)
}

// StopContainer stops a container on the NodeManager at node (host:port).
func (n *NMClient) StopContainer(ctx context.Context, node string, id records.ContainerID) error {
	pid, err := containerIDProto(id)
	if err != nil {
		return err
	}
	cl, err := n.client(node)
	if err != nil {
		return err
	}
	resp := &yarnpb.StopContainersResponseProto{}
	req := &yarnpb.StopContainersRequestProto{ContainerId: []*yarnpb.ContainerIdProto{pid}}
	if err := cl.Call(ctx, "stopContainers", req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
		return fmt.Errorf("amrm: stop container %s on %s: %w", id, node, err)
	}
	for _, f := range resp.GetFailedRequests() {
		return failedError(f, "stopContainers")
	}
	return nil
}

// ContainerStatus asks the NodeManager at node (host:port) for a container's status.
func (n *NMClient) ContainerStatus(ctx context.Context, node string, id records.ContainerID) (*ContainerStatus, error) {
	pid, err := containerIDProto(id)
	if err != nil {
		return nil, err
	}
	cl, err := n.client(node)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.GetContainerStatusesResponseProto{}
	req := &yarnpb.GetContainerStatusesRequestProto{ContainerId: []*yarnpb.ContainerIdProto{pid}}
	if err := cl.Call(ctx, "getContainerStatuses", req, resp, ipc.CallOptions{Idempotent: true}); err != nil {
		return nil, fmt.Errorf("amrm: status of container %s on %s: %w", id, node, err)
	}
	for _, f := range resp.GetFailedRequests() {
		return nil, failedError(f, "getContainerStatuses")
	}
	for _, s := range resp.GetStatus() {
		st := statusFromProto(s, nil)
		if st.ID == id {
			return &st, nil
		}
	}
	return nil, fmt.Errorf("amrm: the NodeManager %s reported no status for container %s", node, id)
}

// Close closes every NodeManager connection.
func (n *NMClient) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for _, c := range n.clients {
		_ = c.Close()
	}
	n.clients = nil
	return nil
}
