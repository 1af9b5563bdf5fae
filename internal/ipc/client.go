package ipc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/records"
)

// Config configures a Client.
type Config struct {
	// Addrs are the server addresses (host:port), tried in order when connecting; the client
	// stays with the one that worked (ResourceManager HA: the standby refuses connections).
	Addrs []string
	// Protocol is the protocol name, e.g. org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB.
	Protocol string
	// Token returns the token to authenticate each new connection with (SASL TOKEN/DIGEST-MD5);
	// it is called on every (re)connect so a rolled token is picked up. Nil means SIMPLE.
	Token func() (*Token, error)
	// Kerberos, when set and Token is nil, authenticates with SASL KERBEROS/GSSAPI (a *gss.Kerberos
	// of package internal/ipc/gss).
	Kerberos Kerberos
	// User is the effective user sent under SIMPLE authentication.
	User string
	// DoAs, when set, is the user to act as (a proxy user, Hadoop's UserGroupInformation.createProxyUser):
	// under KERBEROS it is sent as the effective user, the principal being the real user; under
	// SIMPLE as the effective user with User as the real user. The server then checks the real
	// user's hadoop.proxyuser.<real>.* rights. Not allowed with Token: a token's connection acts
	// as the token's owner.
	DoAs string
	// ClientID is the 16-byte client id; random when empty.
	ClientID []byte
	// MaxIdle closes a connection that had no call in flight for this long (Hadoop's
	// ipc.client.connection.maxidletime, default 10s); the next call reconnects. Negative keeps
	// connections open.
	MaxIdle time.Duration
	// HandshakeTimeout bounds connecting and authenticating (default 20s).
	HandshakeTimeout time.Duration
	// WriteTimeout bounds writing one request (default 60s).
	WriteTimeout time.Duration
	// MaxResponseSize caps one response packet (default 128 MiB).
	MaxResponseSize int
	// Dial opens TCP connections; default net.Dialer with a 10s timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives debug logs; default discards. Token bytes are never logged.
	Logger *slog.Logger
}

// Client calls one Hadoop protobuf protocol on one server (or an HA set), reconnecting as needed.
// Calls from several goroutines share one connection and are pipelined.
type Client struct {
	cfg    Config
	logger *slog.Logger
	callID atomic.Int32

	mu      sync.Mutex
	conn    *conn
	addrIdx int
	closed  bool
	dials   int
}

// NewClient returns a client; it connects on the first call.
func NewClient(cfg Config) (*Client, error) {
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("hadoop ipc: no server address")
	}
	if cfg.Protocol == "" {
		return nil, errors.New("hadoop ipc: no protocol name")
	}
	if cfg.DoAs != "" && cfg.Token != nil {
		return nil, errors.New("hadoop ipc: a token authenticates its owner: no proxy user (DoAs) with a token")
	}
	if k := cfg.Kerberos; k != nil && cfg.Token == nil {
		if err := k.Check(); err != nil {
			return nil, fmt.Errorf("hadoop ipc: %w", err)
		}
	}
	if len(cfg.ClientID) == 0 {
		cfg.ClientID = make([]byte, 16)
		if _, err := rand.Read(cfg.ClientID); err != nil {
			return nil, err
		}
		// A version-4 UUID, like Java's ClientId.getClientId().
		cfg.ClientID[6] = cfg.ClientID[6]&0x0f | 0x40
		cfg.ClientID[8] = cfg.ClientID[8]&0x3f | 0x80
	}
	if cfg.MaxIdle == 0 {
		cfg.MaxIdle = 10 * time.Second
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = 20 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = time.Minute
	}
	if cfg.MaxResponseSize == 0 {
		cfg.MaxResponseSize = DefaultMaxResponseSize
	}
	if cfg.Dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		cfg.Dial = d.DialContext
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: cfg, logger: logger}, nil
}

// CallOptions tune one call.
type CallOptions struct {
	// Idempotent allows resending the request on a new connection when the old one broke after
	// the request was sent (the response was lost).
	Idempotent bool
}

// maxSends bounds how often one call is sent over fresh connections.
const maxSends = 3

// Call invokes method with req and decodes the response into resp. Remote exceptions come back as
// *records.RemoteError; connection failures as errors matching ErrConnection.
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message, opts CallOptions) error {
	// Java numbers calls per client and keeps (clientId, callId) across retries, with retryCount
	// counting up, so a server retry cache can recognise a resent call.
	callID := c.callID.Add(1) - 1
	if callID < 0 {
		c.callID.Store(1)
		callID = 0
	}
	var lastErr error
	for send := 0; send < maxSends; send++ {
		cn, err := c.getConn(ctx)
		if err != nil {
			return err
		}
		err = cn.call(ctx, callID, int32(send), method, req, resp)
		if err == nil {
			return nil
		}
		var re *records.RemoteError
		answered := errors.As(err, &re)
		// The server serves no such protocol: the address is another service's (a ResourceManager's
		// client port configured as its scheduler's, or another program's server on the port).
		if answered && re.Class == "org.apache.hadoop.ipc.RpcNoSuchProtocolException" {
			return fmt.Errorf("%w (fix: %s serves no %s: check that the address configured for it is that service's own port)",
				err, cn.cfg.addr, c.cfg.Protocol)
		}
		lastErr = err
		var ce *ConnError
		if !errors.As(err, &ce) || ctx.Err() != nil {
			return err
		}
		// Not sent again: a call that may have run, or one the server answered FATAL (a refused
		// proxy user, say) before it closed the connection, which a new connection would get too.
		if ce.Sent && !opts.Idempotent || answered {
			return err
		}
		c.logger.Debug("hadoop ipc: connection lost, resending", "method", method, "callId", callID, "retry", send+1, "err", err)
	}
	return lastErr
}

// getConn returns the current connection, or dials a new one.
func (c *Client) getConn(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.conn != nil {
		if c.conn.usable(c.cfg.MaxIdle) {
			return c.conn, nil
		}
		c.conn.close()
		c.conn = nil
	}
	var tok *Token
	if c.cfg.Token != nil {
		t, err := c.cfg.Token()
		if err != nil {
			return nil, fmt.Errorf("hadoop ipc: token for %s: %w", c.cfg.Protocol, err)
		}
		tok = t
	}
	var errs []error
	for i := range c.cfg.Addrs {
		idx := (c.addrIdx + i) % len(c.cfg.Addrs)
		cfg := &connConfig{
			addr:            c.cfg.Addrs[idx],
			protocol:        c.cfg.Protocol,
			clientID:        c.cfg.ClientID,
			token:           tok,
			kerberos:        c.cfg.Kerberos,
			user:            c.cfg.User,
			doAs:            c.cfg.DoAs,
			maxResponseSize: c.cfg.MaxResponseSize,
			writeTimeout:    c.cfg.WriteTimeout,
			maxIdle:         c.cfg.MaxIdle,
			logger:          c.logger,
		}
		c.dials++
		c.logger.Debug("hadoop ipc: connecting", "addr", cfg.addr, "protocol", c.cfg.Protocol)
		cn, err := dialConn(ctx, c.cfg.Dial, cfg, c.cfg.HandshakeTimeout)
		if err == nil {
			c.addrIdx = idx
			c.conn = cn
			c.logger.Debug("hadoop ipc: connected", "addr", cfg.addr, "protocol", c.cfg.Protocol)
			return cn, nil
		}
		errs = append(errs, err)
		// Only a refused or unreachable server makes the next address worth trying.
		var ce *ConnError
		if !errors.As(err, &ce) || ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// Connect opens the connection now, if none is open, instead of at the next call: a caller that
// must make one call quickly later (an ApplicationMaster's clean-up after SIGTERM) pays for
// connecting and authenticating up front.
func (c *Client) Connect(ctx context.Context) error {
	_, err := c.getConn(ctx)
	return err
}

// Dials returns how many connections the client has opened (for tests and diagnostics).
func (c *Client) Dials() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dials
}

// Addr returns the address of the server the client last connected to.
func (c *Client) Addr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Addrs[c.addrIdx]
}

// Reset closes the current connection; the next call reconnects (and authenticates again).
func (c *Client) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.close()
		c.conn = nil
	}
}

// Close closes the connection; later calls fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.close()
		c.conn = nil
	}
	return nil
}
