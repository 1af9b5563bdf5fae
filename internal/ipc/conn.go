package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/records"
)

// Token is a Hadoop security token used for SASL TOKEN authentication.
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// ProtocolVersion is the clientProtocolVersion of YARN's protobuf protocols.
const ProtocolVersion = 1

// connConfig is what one connection needs; Client fills it.
type connConfig struct {
	addr            string
	protocol        string
	clientID        []byte
	token           *Token   // SASL TOKEN/DIGEST-MD5
	kerberos        Kerberos // SASL KERBEROS/GSSAPI, when token is nil; both nil: SIMPLE as user
	user            string
	doAs            string // the proxy user; "" acts as the authenticated (or SIMPLE) user
	maxResponseSize int
	writeTimeout    time.Duration
	maxIdle         time.Duration // > 0: close the connection after this long without calls
	logger          *slog.Logger
}

type result struct {
	header *commonpb.RpcResponseHeaderProto
	body   []byte
	err    error
}

// conn is one authenticated TCP connection with a reader goroutine; calls are pipelined.
type conn struct {
	cfg *connConfig
	nc  net.Conn

	wmu sync.Mutex // serializes writes of whole packets

	mu       sync.Mutex
	pending  map[int32]chan result
	closed   bool
	closeErr error
	lastUsed time.Time
	done     chan struct{}
	idle     *time.Timer
}

// dialConn connects, authenticates and sends the connection context.
func dialConn(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *connConfig, handshakeTimeout time.Duration) (*conn, error) {
	nc, err := dial(ctx, "tcp", cfg.addr)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		return nil, &ConnError{Addr: cfg.addr, Err: err}
	}
	if handshakeTimeout > 0 {
		_ = nc.SetDeadline(time.Now().Add(handshakeTimeout))
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	raw := nc
	nc, err = handshake(ctx, raw, cfg)
	if !stop() || ctx.Err() != nil {
		_ = raw.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("hadoop ipc: connect to %s: %w", cfg.addr, errors.Join(ctx.Err(), err))
	}
	if err != nil {
		_ = raw.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	c := &conn{
		cfg:      cfg,
		nc:       nc,
		pending:  make(map[int32]chan result),
		lastUsed: time.Now(),
		done:     make(chan struct{}),
	}
	if cfg.maxIdle > 0 {
		c.mu.Lock()
		c.idle = time.AfterFunc(cfg.maxIdle, c.idleCheck)
		c.mu.Unlock()
	}
	go c.readLoop()
	return c, nil
}

// idleCheck closes the connection once it has had no call in flight for maxIdle, like Hadoop's
// client does after ipc.client.connection.maxidletime; the next call reconnects.
func (c *conn) idleCheck() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	idleFor := time.Since(c.lastUsed)
	if len(c.pending) == 0 && idleFor >= c.cfg.maxIdle {
		c.mu.Unlock()
		c.fail(errIdle)
		return
	}
	wait := c.cfg.maxIdle - idleFor
	if wait <= 0 {
		wait = c.cfg.maxIdle
	}
	c.idle.Reset(wait)
	c.mu.Unlock()
}

var errIdle = errors.New("closed after being idle")

// handshake writes the preamble, authenticates and sends the connection context. It returns
// the connection to use from then on: nc, or nc inside a SASL integrity layer.
func handshake(ctx context.Context, nc net.Conn, cfg *connConfig) (net.Conn, error) {
	sasl := cfg.token != nil || cfg.kerberos != nil
	if _, err := nc.Write(Preamble(sasl)); err != nil {
		return nil, &ConnError{Addr: cfg.addr, Err: err}
	}
	var userInfo *commonpb.UserInformationProto
	if sasl {
		simple, wrapped, err := saslConnect(ctx, nc, cfg)
		if err != nil {
			return nil, err
		}
		nc = wrapped
		if simple {
			userInfo = simpleUserInfo(cfg)
		} else {
			userInfo = authenticatedUserInfo(cfg)
		}
	} else {
		userInfo = simpleUserInfo(cfg)
	}
	ctxMsg := &commonpb.IpcConnectionContextProto{
		UserInfo: userInfo,
		Protocol: proto.String(cfg.protocol),
	}
	pkt, err := EncodePacket(RequestHeader(ConnectionContextCallID, cfg.clientID, InvalidRetryCount), ctxMsg)
	if err != nil {
		return nil, err
	}
	if _, err := nc.Write(pkt); err != nil {
		return nil, &ConnError{Addr: cfg.addr, Err: err}
	}
	return nc, nil
}

// simpleUserInfo is the connection context's users under SIMPLE, where the connection
// establishes none: the effective user, and the real user when acting as a proxy user (as
// Hadoop's ProtoUtil.makeIpcConnectionContext sends them).
func simpleUserInfo(cfg *connConfig) *commonpb.UserInformationProto {
	ui := &commonpb.UserInformationProto{}
	switch {
	case cfg.doAs != "":
		ui.EffectiveUser = proto.String(cfg.doAs)
		if cfg.user != "" && cfg.user != cfg.doAs {
			ui.RealUser = proto.String(cfg.user)
		}
	case cfg.user != "":
		ui.EffectiveUser = proto.String(cfg.user)
	}
	return ui
}

// authenticatedUserInfo is the connection context's users after SASL: under TOKEN and KERBEROS
// the connection establishes the real user, so none is sent, except the effective user of a
// proxy-user request under KERBEROS (the server then checks the principal's proxy-user rights).
func authenticatedUserInfo(cfg *connConfig) *commonpb.UserInformationProto {
	ui := &commonpb.UserInformationProto{}
	if cfg.doAs != "" && cfg.token == nil {
		ui.EffectiveUser = proto.String(cfg.doAs)
	}
	return ui
}

func (c *conn) readLoop() {
	for {
		p, err := ReadPacket(c.nc, c.cfg.maxResponseSize)
		if err != nil {
			if errors.Is(err, ErrResponseTooLarge) {
				err = fmt.Errorf("%w (hadoop ipc: raise the maximum response size)", err)
			} else if errors.Is(err, io.EOF) {
				err = fmt.Errorf("server closed the connection: %w", err)
			}
			c.fail(err)
			return
		}
		h, body, err := ParseResponse(p)
		if err != nil {
			c.fail(err)
			return
		}
		id := CallID(h)
		c.mu.Lock()
		ch, ok := c.pending[id]
		if ok {
			delete(c.pending, id)
		}
		c.lastUsed = time.Now()
		c.mu.Unlock()
		fatal := h.GetStatus() == commonpb.RpcResponseHeaderProto_FATAL
		if fatal {
			// The server closes the connection after a FATAL response; every other call fails with
			// it. Mark it closed before the caller learns of the error, so that its next call
			// dials a new connection instead of racing onto this one.
			c.fail(remoteErrorFrom(h, ""))
		}
		if ok {
			ch <- result{header: h, body: body}
		} else {
			c.cfg.logger.Debug("hadoop ipc: response for an unknown or abandoned call", "addr", c.cfg.addr, "callId", id)
		}
		if fatal {
			return
		}
	}
}

// fail closes the connection and fails every pending call with err.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.closeErr = err
	pending := c.pending
	c.pending = nil
	if c.idle != nil {
		c.idle.Stop()
	}
	c.mu.Unlock()
	_ = c.nc.Close()
	close(c.done)
	for _, ch := range pending {
		ch <- result{err: err}
	}
	c.cfg.logger.Debug("hadoop ipc: connection closed", "addr", c.cfg.addr, "reason", err)
}

func (c *conn) close() { c.fail(ErrClosed) }

// usable reports whether the connection is open and, with maxIdle > 0, was used within maxIdle.
func (c *conn) usable(maxIdle time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	return maxIdle <= 0 || len(c.pending) > 0 || time.Since(c.lastUsed) < maxIdle
}

// call sends one request and waits for its response.
func (c *conn) call(ctx context.Context, callID, retry int32, method string, req, resp proto.Message) error {
	rh := &commonpb.RequestHeaderProto{
		MethodName:                 proto.String(method),
		DeclaringClassProtocolName: proto.String(c.cfg.protocol),
		ClientProtocolVersion:      proto.Uint64(ProtocolVersion),
	}
	pkt, err := EncodePacket(RequestHeader(callID, c.cfg.clientID, retry), rh, req)
	if err != nil {
		return err
	}
	ch := make(chan result, 1)
	c.mu.Lock()
	if c.closed {
		err := c.closeErr
		c.mu.Unlock()
		return &ConnError{Addr: c.cfg.addr, Err: err}
	}
	c.pending[callID] = ch
	c.lastUsed = time.Now()
	c.mu.Unlock()

	if err := ctx.Err(); err != nil {
		c.forget(callID)
		return err
	}
	if err := c.write(ctx, pkt); err != nil {
		ctxErr := ctx.Err()
		if d, ok := ctx.Deadline(); ok && ctxErr == nil && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(d) {
			ctxErr = context.DeadlineExceeded // the socket deadline fired just before the context's timer
		}
		if ctxErr != nil {
			// The context's deadline cut the write short; the stream may hold half a packet.
			c.fail(ctxErr)
			return ctxErr
		}
		// The server may have explained why it closed the connection (a FATAL response, e.g. an
		// authentication failure): let the reader get to it before giving up on the connection.
		select {
		case <-c.done:
		case <-time.After(time.Second):
		}
		c.fail(err)
		c.mu.Lock()
		if c.closeErr != nil {
			var re *records.RemoteError
			if errors.As(c.closeErr, &re) {
				err = re
			}
		}
		c.mu.Unlock()
		// A partial write may have reached the server.
		return &ConnError{Addr: c.cfg.addr, Sent: true, Err: err}
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return &ConnError{Addr: c.cfg.addr, Sent: true, Err: r.err}
		}
		switch r.header.GetStatus() {
		case commonpb.RpcResponseHeaderProto_SUCCESS:
			if r.body == nil {
				return nil
			}
			if err := proto.Unmarshal(r.body, resp); err != nil {
				return fmt.Errorf("%w: %s response: %v", ErrProtocol, method, err)
			}
			return nil
		default:
			return remoteErrorFrom(r.header, method)
		}
	case <-ctx.Done():
		c.forget(callID)
		return ctx.Err()
	}
}

// forget drops a call the caller stopped waiting for; its response, should it come, is discarded.
func (c *conn) forget(callID int32) {
	c.mu.Lock()
	delete(c.pending, callID) // nil once the connection failed: a no-op then
	c.mu.Unlock()
}

func (c *conn) write(ctx context.Context, pkt []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	deadline := time.Now().Add(c.cfg.writeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.nc.SetWriteDeadline(deadline)
	_, err := c.nc.Write(pkt)
	return err
}
