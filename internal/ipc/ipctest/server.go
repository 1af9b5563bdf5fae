// Package ipctest is an in-process fake Hadoop IPC server for tests: preamble, SASL TOKEN with
// server-side DIGEST-MD5, SASL KERBEROS with a server-side GSSAPI acceptor, connection context, protobuf calls answered by a handler, remote
// exceptions, and hooks to drop connections or roll tokens.
package ipctest

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rc4"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/etype"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/ipc"
)

// Kerberos makes a Server a Kerberized Hadoop server: it offers TOKEN/DIGEST-MD5 and then
// KERBEROS/GSSAPI, as a secure NameNode does, and verifies the client's AP-REQ with Keytab.
type Kerberos struct {
	// Keytab holds the service's key.
	Keytab *keytab.Keytab
	// Principal is the service principal without realm, service/host (e.g. nn/127.0.0.1); the
	// offer announces it as protocol "nn", serverId "127.0.0.1".
	Principal string
	// Layers is the RFC 4752 security-layer mask offered: 1 none (hadoop.rpc.protection
	// authentication, the default), 2 integrity, 4 privacy. With integrity chosen, everything
	// after SASL is wrapped in GSS wrap tokens both ways.
	Layers byte
	// BadKey makes the server checksum its security-layer message with a wrong key (a server that
	// could not read the ticket).
	BadKey bool
}

// Call is one request the server received.
type Call struct {
	Conn       int // index of the connection, from 0
	CallID     int32
	Retry      int32
	ClientID   []byte
	Method     string
	Protocol   string
	Body       []byte
	Identifier []byte // the token identifier the connection authenticated with
	// User is the user the call acts as: the connection context's effective user when the
	// connection acts as a proxy user, else the Kerberos principal (or the effective user under
	// SIMPLE); "" for a token's connection.
	User string
}

// Decode unmarshals the request message.
func (c *Call) Decode(m proto.Message) error { return proto.Unmarshal(c.Body, m) }

// Exception is an error a handler returns to send an ERROR (or FATAL) response.
type Exception struct {
	Class   string
	Message string
	Fatal   bool
}

// Error formats the error.
func (e *Exception) Error() string { return e.Class + ": " + e.Message }

// Handler answers one call. Returning an *Exception sends it as a remote exception; any other error
// is sent as java.io.IOException. Returning (nil, nil) sends a success without a body.
type Handler func(*Call) (proto.Message, error)

// Server is a fake Hadoop IPC server listening on 127.0.0.1.
type Server struct {
	// Addr is host:port.
	Addr string
	// QOP is the qop list offered in the DIGEST-MD5 challenge (default "auth").
	QOP string
	// Ciphers is the cipher list offered with qop auth-conf (default Java's:
	// 3des,rc4,des,rc4-56,rc4-40); the server seals with rc4 only.
	Ciphers string
	// BadRspauth makes the server answer with a wrong rspauth (a server not knowing the secret).
	BadRspauth bool
	// Simple makes the server accept the preamble's SIMPLE auth byte and answer NEGOTIATE with SUCCESS.
	Simple bool
	// NoChallengeInNegotiate sends the DIGEST-MD5 challenge in a CHALLENGE round instead.
	NoChallengeInNegotiate bool
	// Kerberos, when set, offers KERBEROS/GSSAPI besides TOKEN.
	Kerberos *Kerberos
	// ProxyUsers are the real users (a Kerberos principal as user@REALM, or the real user of a
	// SIMPLE connection context) that may act as any other user, as hadoop.proxyuser.<user>.* of
	// a Hadoop server allows. A connection whose context asks for another effective user of a
	// real user not listed is refused as Hadoop refuses it: a FATAL AuthorizationException
	// "User: <real> is not allowed to impersonate <effective>".
	ProxyUsers []string
	// StandbyTokens refuses every token login with a FATAL StandbyException, as the standby
	// NameNode of an HA pair does (its secret manager cannot check a delegation token; seen on
	// Hadoop 3.5's mini-YARN --hdfs-ha --kerberos).
	StandbyTokens bool

	handler Handler
	ln      net.Listener

	mu       sync.Mutex
	tokens   map[string][]byte // base64(identifier) -> password
	conns    []net.Conn
	logins   [][]byte
	princs   []string
	wrapped  int
	contexts []*commonpb.IpcConnectionContextProto
	open     int
	calls    []*Call
	wg       sync.WaitGroup
}

// NewServer starts a server; t.Cleanup stops it.
func NewServer(t testing.TB, h Handler) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ipctest: listen: %v", err)
	}
	s := &Server{Addr: ln.Addr().String(), QOP: "auth", handler: h, ln: ln, tokens: map[string][]byte{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// AddToken makes the server accept a token.
func (s *Server) AddToken(identifier, password []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[base64.StdEncoding.EncodeToString(identifier)] = password
}

// RemoveToken makes the server refuse a token on new connections.
func (s *Server) RemoveToken(identifier []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, base64.StdEncoding.EncodeToString(identifier))
}

// DropConnections closes every open connection, as a server does with idle ones or on restart.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

// Connections returns how many connections the server accepted.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// OpenConnections returns how many connections are open now (the server has not seen them close).
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// copyLocked returns a copy of *s taken with mu held (nil when *s is empty), for the accessors of
// what the server recorded.
func copyLocked[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *s...)
}

// Logins returns the token identifiers connections authenticated with, in order.
func (s *Server) Logins() [][]byte { return copyLocked(&s.mu, &s.logins) }

// Principals returns the Kerberos principals connections authenticated as, in order.
func (s *Server) Principals() []string { return copyLocked(&s.mu, &s.princs) }

// IntegrityConnections returns how many connections negotiated the SASL integrity layer.
func (s *Server) IntegrityConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wrapped
}

// Contexts returns the connection contexts received, in order.
func (s *Server) Contexts() []*commonpb.IpcConnectionContextProto {
	return copyLocked(&s.mu, &s.contexts)
}

// Calls returns the calls received, in order.
func (s *Server) Calls() []*Call { return copyLocked(&s.mu, &s.calls) }

// MethodCalls returns the calls of one method.
func (s *Server) MethodCalls(method string) []*Call {
	var out []*Call
	for _, c := range s.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Close stops the server and closes its connections.
func (s *Server) Close() {
	_ = s.ln.Close()
	s.DropConnections()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		idx := len(s.conns)
		s.conns = append(s.conns, nc)
		s.open++
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				s.open--
				s.mu.Unlock()
			}()
			defer nc.Close()
			s.serve(idx, nc)
		}()
	}
}

type serverConn struct {
	s   *Server
	idx int
	nc  net.Conn
	wmu sync.Mutex
	id  []byte
	// principal is the Kerberos principal (user@REALM) of a KERBEROS connection.
	principal string
}

// callUser is the user a connection's calls act as, after Hadoop's Server.processConnectionContext
// and authorizeConnection: a different effective user than the authenticated (or SIMPLE real)
// one is a proxy-user request, allowed only for the ProxyUsers.
func (c *serverConn) callUser(cc *commonpb.IpcConnectionContextProto) (string, error) {
	eff, real := cc.GetUserInfo().GetEffectiveUser(), cc.GetUserInfo().GetRealUser()
	switch {
	case c.principal != "":
		real = c.principal
	case c.id != nil:
		return "", nil // a token's owner
	}
	if eff == "" || real == "" || eff == real {
		if eff == "" {
			eff = real
		}
		return eff, nil
	}
	if !slices.Contains(c.s.ProxyUsers, real) {
		return "", fmt.Errorf("User: %s is not allowed to impersonate %s", real, eff)
	}
	return eff, nil
}

func (c *serverConn) send(callID int32, status commonpb.RpcResponseHeaderProto_RpcStatusProto, exc *Exception, body proto.Message) {
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(uint32(callID)),
		Status:              status.Enum(),
		ServerIpcVersionNum: proto.Uint32(ipc.RPCVersion),
	}
	msgs := []proto.Message{h}
	if exc != nil {
		h.ExceptionClassName = proto.String(exc.Class)
		h.ErrorMsg = proto.String(exc.Message)
		if exc.Fatal {
			h.ErrorDetail = commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum()
		} else {
			h.ErrorDetail = commonpb.RpcResponseHeaderProto_ERROR_APPLICATION.Enum()
		}
	} else if body != nil {
		msgs = append(msgs, body)
	}
	pkt, err := ipc.EncodePacket(msgs...)
	if err != nil {
		panic(err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.nc.Write(pkt)
}

func (c *serverConn) fatal(callID int32, class, msg string) {
	c.send(callID, commonpb.RpcResponseHeaderProto_FATAL, &Exception{Class: class, Message: msg, Fatal: true}, nil)
}

// readRequest reads one request packet: header, then the remaining delimited messages.
func (c *serverConn) readRequest() (*commonpb.RpcRequestHeaderProto, [][]byte, error) {
	p, err := ipc.ReadPacket(c.nc, 64<<20)
	if err != nil {
		return nil, nil, err
	}
	parts, err := ipc.SplitDelimited(p, 3)
	if err != nil || len(parts) == 0 {
		return nil, nil, fmt.Errorf("bad request packet: %v", err)
	}
	h := &commonpb.RpcRequestHeaderProto{}
	if err := proto.Unmarshal(parts[0], h); err != nil {
		return nil, nil, err
	}
	return h, parts[1:], nil
}

func (s *Server) serve(idx int, nc net.Conn) {
	c := &serverConn{s: s, idx: idx, nc: nc}
	pre := make([]byte, 7)
	if _, err := io.ReadFull(nc, pre); err != nil {
		return
	}
	if !bytes.Equal(pre[:6], []byte{'h', 'r', 'p', 'c', 9, 0}) {
		return
	}
	switch {
	case pre[6] == 0xDF:
		if !c.sasl() {
			return
		}
	case pre[6] == 0 && s.Simple:
	default:
		c.fatal(-1, "org.apache.hadoop.security.AccessControlException", "SIMPLE authentication is not enabled.  Available:[TOKEN]")
		return
	}
	// Connection context.
	h, parts, err := c.readRequest()
	if err != nil || h.GetCallId() != ipc.ConnectionContextCallID || len(parts) != 1 {
		return
	}
	cc := &commonpb.IpcConnectionContextProto{}
	if err := proto.Unmarshal(parts[0], cc); err != nil {
		return
	}
	s.mu.Lock()
	s.contexts = append(s.contexts, cc)
	s.mu.Unlock()
	user, err := c.callUser(cc)
	if err != nil {
		c.fatal(ipc.ConnectionContextCallID, "org.apache.hadoop.security.authorize.AuthorizationException", err.Error())
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		h, parts, err := c.readRequest()
		if err != nil {
			return
		}
		if h.RpcOp == nil || h.RpcKind == nil {
			c.fatal(h.GetCallId(), "org.apache.hadoop.ipc.RpcServerException", " IPC Server: No rpc op in rpcRequestHeader")
			return
		}
		if len(parts) != 2 {
			c.fatal(h.GetCallId(), "org.apache.hadoop.ipc.RpcServerException", "bad request")
			return
		}
		rh := &commonpb.RequestHeaderProto{}
		if err := proto.Unmarshal(parts[0], rh); err != nil {
			c.fatal(h.GetCallId(), "org.apache.hadoop.ipc.RpcServerException", err.Error())
			return
		}
		call := &Call{
			Conn: idx, CallID: h.GetCallId(), Retry: h.GetRetryCount(), ClientID: h.GetClientId(),
			Method: rh.GetMethodName(), Protocol: rh.GetDeclaringClassProtocolName(), Body: parts[1], Identifier: c.id, User: user,
		}
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.handler(call)
			var exc *Exception
			switch {
			case err == nil:
				c.send(call.CallID, commonpb.RpcResponseHeaderProto_SUCCESS, nil, resp)
				return
			case errors.As(err, &exc):
			default:
				exc = &Exception{Class: "java.io.IOException", Message: err.Error()}
			}
			if exc.Fatal {
				c.send(call.CallID, commonpb.RpcResponseHeaderProto_FATAL, exc, nil)
				_ = c.nc.Close()
				return
			}
			c.send(call.CallID, commonpb.RpcResponseHeaderProto_ERROR, exc, nil)
		}()
	}
}

// sasl runs the server side of SASL TOKEN/DIGEST-MD5; it reports success.
func (c *serverConn) sasl() bool {
	s := c.s
	readSASL := func() (*commonpb.RpcSaslProto, bool) {
		h, parts, err := c.readRequest()
		if err != nil || len(parts) != 1 || h.GetCallId() != ipc.SASLCallID {
			return nil, false
		}
		m := &commonpb.RpcSaslProto{}
		if proto.Unmarshal(parts[0], m) != nil {
			return nil, false
		}
		return m, true
	}
	reply := func(m *commonpb.RpcSaslProto) {
		c.send(ipc.SASLCallID, commonpb.RpcResponseHeaderProto_SUCCESS, nil, m)
	}
	m, ok := readSASL()
	if !ok || m.GetState() != commonpb.RpcSaslProto_NEGOTIATE {
		return false
	}
	if s.Simple {
		reply(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum()})
		return true
	}
	nb := make([]byte, 12)
	_, _ = rand.Read(nb)
	nonce := base64.StdEncoding.EncodeToString(nb)
	challenge := []byte(fmt.Sprintf(`realm="default",nonce="%s",qop="%s",charset=utf-8,algorithm=md5-sess`, nonce, s.QOP))
	if strings.Contains(s.QOP, "auth-conf") {
		ciphers := s.Ciphers
		if ciphers == "" {
			ciphers = "3des,rc4,des,rc4-56,rc4-40" // what a Java DIGEST-MD5 server offers
		}
		challenge = append(challenge, fmt.Sprintf(`,cipher="%s"`, ciphers)...)
	}
	auth := &commonpb.RpcSaslProto_SaslAuth{
		Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"),
		Protocol: proto.String(""), ServerId: proto.String("default"),
	}
	offer := proto.CloneOf(auth)
	if !s.NoChallengeInNegotiate {
		offer.Challenge = challenge
	}
	offers := []*commonpb.RpcSaslProto_SaslAuth{offer}
	if k := s.Kerberos; k != nil {
		svc, host, _ := strings.Cut(k.Principal, "/")
		offers = append(offers, &commonpb.RpcSaslProto_SaslAuth{
			Method: proto.String("KERBEROS"), Mechanism: proto.String("GSSAPI"),
			Protocol: proto.String(svc), ServerId: proto.String(host),
		})
	}
	reply(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum(), Auths: offers})
	m, ok = readSASL()
	if !ok || m.GetState() != commonpb.RpcSaslProto_INITIATE || len(m.GetAuths()) != 1 || m.GetAuths()[0].Challenge != nil {
		c.fatal(ipc.SASLCallID, "javax.security.sasl.SaslException", "bad INITIATE")
		return false
	}
	if m.GetAuths()[0].GetMethod() == "KERBEROS" && s.Kerberos != nil {
		return c.gssapi(m, readSASL, reply)
	}
	resp := m.GetToken()
	if s.NoChallengeInNegotiate {
		reply(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_CHALLENGE.Enum(), Token: challenge})
		m, ok = readSASL()
		if !ok || m.GetState() != commonpb.RpcSaslProto_RESPONSE {
			return false
		}
		resp = m.GetToken()
	}
	dirs, err := ipc.ParseDigestDirectives(string(resp))
	if err != nil {
		c.fatal(ipc.SASLCallID, "javax.security.sasl.SaslException", err.Error())
		return false
	}
	d := map[string]string{}
	for _, x := range dirs {
		d[x.Key] = x.Value
	}
	s.mu.Lock()
	pw, known := s.tokens[d["username"]]
	standby := s.StandbyTokens
	s.mu.Unlock()
	if standby {
		c.fatal(ipc.SASLCallID, "org.apache.hadoop.ipc.StandbyException", "Operation category READ is not supported in state standby")
		return false
	}
	if !known {
		c.fatal(ipc.SASLCallID, "org.apache.hadoop.security.token.SecretManager$InvalidToken", "token is not known to this fake server")
		return false
	}
	password := base64.StdEncoding.EncodeToString(pw)
	qop, suffix := d["qop"], ""
	if qop == "auth-int" || qop == "auth-conf" {
		suffix = ":00000000000000000000000000000000"
	}
	if qop == "auth-conf" && d["cipher"] != "rc4" {
		c.fatal(ipc.SASLCallID, "javax.security.sasl.SaslException", "DIGEST-MD5: this fake server seals with rc4 only")
		return false
	}
	if d["nonce"] != nonce || d["digest-uri"] != "/default" || !slices.Contains(strings.Split(s.QOP, ","), qop) || d["realm"] != "default" ||
		d["response"] != kd(d["username"], d["realm"], password, nonce, d["cnonce"], d["nc"], qop, "AUTHENTICATE:/default"+suffix) {
		c.fatal(ipc.SASLCallID, "javax.security.sasl.SaslException", "DIGEST-MD5: digest response format violation. Mismatched response.")
		return false
	}
	rsp := kd(d["username"], d["realm"], password, nonce, d["cnonce"], d["nc"], qop, ":/default"+suffix)
	if s.BadRspauth {
		rsp = strings.Repeat("0", 32)
	}
	id, _ := base64.StdEncoding.DecodeString(d["username"])
	c.id = id
	s.mu.Lock()
	s.logins = append(s.logins, id)
	s.mu.Unlock()
	reply(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum(), Token: []byte("rspauth=" + rsp)})
	if qop == "auth-int" || qop == "auth-conf" {
		s.mu.Lock()
		s.wrapped++
		s.mu.Unlock()
		ha1 := digestHA1(d["username"], d["realm"], password, nonce, d["cnonce"])
		dl := &digestLayer{
			recvKey: md5.Sum(append(ha1[:], "Digest session key to client-to-server signing key magic constant"...)),
			sendKey: md5.Sum(append(ha1[:], "Digest session key to server-to-client signing key magic constant"...)),
		}
		if qop == "auth-conf" {
			kcc := md5.Sum(append(ha1[:], "Digest H(A1) to client-to-server sealing key magic constant"...))
			kcs := md5.Sum(append(ha1[:], "Digest H(A1) to server-to-client sealing key magic constant"...))
			dl.recvRC4, _ = rc4.NewCipher(kcc[:])
			dl.sendRC4, _ = rc4.NewCipher(kcs[:])
		}
		c.nc = &integrityConn{Conn: c.nc, layer: dl}
	}
	return true
}

// gssapi runs the acceptor side of SASL GSSAPI (RFC 4752) after the INITIATE message m: verify
// the AP-REQ, send the security-layer offer wrapped under the session key, check the client's
// choice, answer SUCCESS.
func (c *serverConn) gssapi(m *commonpb.RpcSaslProto, readSASL func() (*commonpb.RpcSaslProto, bool), reply func(*commonpb.RpcSaslProto)) bool {
	k := c.s.Kerberos
	const saslExc = "javax.security.sasl.SaslException"
	var tok spnego.KRB5Token
	if err := tok.Unmarshal(m.GetToken()); err != nil || !tok.IsAPReq() {
		c.fatal(ipc.SASLCallID, saslExc, fmt.Sprintf("GSS initiate failed: not an AP-REQ (%v)", err))
		return false
	}
	ok, creds, err := service.VerifyAPREQ(&tok.APReq, service.NewSettings(k.Keytab, service.DecodePAC(false)))
	if err != nil || !ok {
		c.fatal(ipc.SASLCallID, saslExc, fmt.Sprintf("GSS initiate failed: %v", err))
		return false
	}
	key := tok.APReq.Ticket.DecryptedEncPart.Key
	layers := k.Layers
	if layers == 0 {
		layers = 1
	}
	offer := gssapi.WrapToken{Flags: 0x01, EC: 12, Payload: []byte{layers, 0x01, 0x00, 0x00}}
	sealKey := key
	if k.BadKey {
		sealKey.KeyValue = bytes.Repeat([]byte{0x42}, len(key.KeyValue))
	}
	if err := offer.SetCheckSum(sealKey, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
		c.fatal(ipc.SASLCallID, saslExc, err.Error())
		return false
	}
	b, err := offer.Marshal()
	if err != nil {
		c.fatal(ipc.SASLCallID, saslExc, err.Error())
		return false
	}
	reply(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_CHALLENGE.Enum(), Token: b})
	m, ok = readSASL()
	if !ok || m.GetState() != commonpb.RpcSaslProto_RESPONSE {
		return false
	}
	var answer gssapi.WrapToken
	if err := answer.Unmarshal(m.GetToken(), false); err != nil {
		c.fatal(ipc.SASLCallID, saslExc, "Final handshake failed: "+err.Error())
		return false
	}
	if ok, err := answer.Verify(key, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
		c.fatal(ipc.SASLCallID, saslExc, fmt.Sprintf("Final handshake failed: %v", err))
		return false
	}
	if len(answer.Payload) < 4 || answer.Payload[0]&layers == 0 || bits(answer.Payload[0]) != 1 {
		c.fatal(ipc.SASLCallID, saslExc, "Client selected unsupported protection")
		return false
	}
	c.s.mu.Lock()
	c.s.princs = append(c.s.princs, creds.UserName()+"@"+creds.Domain())
	c.principal = creds.UserName() + "@" + creds.Domain()
	if answer.Payload[0] != 1 {
		c.s.wrapped++
	}
	c.s.mu.Unlock()
	reply(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum()})
	switch answer.Payload[0] {
	case 2:
		c.nc = &integrityConn{Conn: c.nc, layer: &gssLayer{key: key}}
	case 4:
		c.nc = &integrityConn{Conn: c.nc, layer: &gssSealLayer{key: key}}
	}
	return true
}

// integrityConn is the server side of a SASL integrity layer (GSSAPI's or DIGEST-MD5's): it
// unwraps the client's WRAP packets and wraps every response into one.
type integrityConn struct {
	net.Conn
	layer interface {
		unwrap(tok []byte) ([]byte, error)
		wrap(p []byte) ([]byte, error)
	}
	pending []byte
}

func (w *integrityConn) Read(p []byte) (int, error) {
	for len(w.pending) == 0 {
		pkt, err := ipc.ReadPacket(w.Conn, 64<<20)
		if err != nil {
			return 0, err
		}
		parts, err := ipc.SplitDelimited(pkt, 2)
		if err != nil || len(parts) != 2 {
			return 0, fmt.Errorf("ipctest: not a WRAP packet: %v", err)
		}
		h := &commonpb.RpcRequestHeaderProto{}
		m := &commonpb.RpcSaslProto{}
		if proto.Unmarshal(parts[0], h) != nil || h.GetCallId() != ipc.SASLCallID || proto.Unmarshal(parts[1], m) != nil || m.GetState() != commonpb.RpcSaslProto_WRAP {
			return 0, errors.New("ipctest: not a WRAP packet")
		}
		if w.pending, err = w.layer.unwrap(m.GetToken()); err != nil {
			return 0, err
		}
	}
	n := copy(p, w.pending)
	w.pending = w.pending[n:]
	return n, nil
}

func (w *integrityConn) Write(p []byte) (int, error) {
	tok, err := w.layer.wrap(p)
	if err != nil {
		return 0, err
	}
	id := ipc.SASLCallID
	pkt, err := ipc.EncodePacket(&commonpb.RpcResponseHeaderProto{
		CallId: proto.Uint32(uint32(id)), Status: commonpb.RpcResponseHeaderProto_SUCCESS.Enum(),
	}, &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_WRAP.Enum(), Token: tok})
	if err != nil {
		return 0, err
	}
	if _, err := w.Conn.Write(pkt); err != nil {
		return 0, err
	}
	return len(p), nil
}

// gssLayer is the acceptor's side of GSSAPI integrity (RFC 4121 wrap tokens, not sealed).
type gssLayer struct {
	key types.EncryptionKey
	seq uint64
}

func (g *gssLayer) unwrap(tok []byte) ([]byte, error) {
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(tok, false); err != nil {
		return nil, err
	}
	if ok, err := wt.Verify(g.key, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
		return nil, fmt.Errorf("ipctest: integrity check failed: %v", err)
	}
	return wt.Payload, nil
}

func (g *gssLayer) wrap(p []byte) ([]byte, error) {
	wt := gssapi.WrapToken{Flags: 0x01, EC: 12, SndSeqNum: g.seq, Payload: p}
	g.seq++
	if err := wt.SetCheckSum(g.key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
		return nil, err
	}
	return wt.Marshal()
}

// gssSealLayer is the acceptor's side of GSSAPI privacy (RFC 4121 sealed wrap tokens), written
// apart from package ipc's: it sends with RRC 28 (as MIT's library does), so the client's
// rotation handling is exercised.
type gssSealLayer struct {
	key types.EncryptionKey
	seq uint64
}

func (g *gssSealLayer) etype() (etype.EType, error) { return crypto.GetEtype(g.key.KeyType) }

func (g *gssSealLayer) unwrap(tok []byte) ([]byte, error) {
	et, err := g.etype()
	if err != nil {
		return nil, err
	}
	if len(tok) < 16 || tok[2] != 0x02 {
		return nil, errors.New("ipctest: not a sealed initiator wrap token")
	}
	rrc := int(binary.BigEndian.Uint16(tok[6:]))
	data := tok[16:]
	if r := rrc % len(data); r != 0 {
		data = append(append([]byte(nil), data[r:]...), data[:r]...)
	}
	plain, err := et.DecryptMessage(g.key.KeyValue, data, keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		return nil, fmt.Errorf("ipctest: unseal: %v", err)
	}
	ec := int(binary.BigEndian.Uint16(tok[4:]))
	if len(plain) < 16+ec || !bytes.Equal(plain[len(plain)-16:len(plain)-10], tok[:6]) {
		return nil, errors.New("ipctest: sealed token's inner header differs")
	}
	return plain[:len(plain)-16-ec], nil
}

func (g *gssSealLayer) wrap(p []byte) ([]byte, error) {
	et, err := g.etype()
	if err != nil {
		return nil, err
	}
	h := make([]byte, 16)
	h[0], h[1], h[2], h[3] = 0x05, 0x04, 0x01|0x02, 0xff
	binary.BigEndian.PutUint64(h[8:], g.seq)
	g.seq++
	_, ct, err := et.EncryptMessage(g.key.KeyValue, append(append([]byte(nil), p...), h...), keyusage.GSSAPI_ACCEPTOR_SEAL)
	if err != nil {
		return nil, err
	}
	const rrc = 28
	binary.BigEndian.PutUint16(h[6:], rrc)
	r := rrc % len(ct)
	rotated := append(append([]byte(nil), ct[len(ct)-r:]...), ct[:len(ct)-r]...)
	return append(h, rotated...), nil
}

// digestLayer is the server's side of DIGEST-MD5 integrity (RFC 2831 auth-int), written apart
// from package ipc's: message, HMAC-MD5(key, seq || message)[:10], type 1, seq.
type digestLayer struct {
	sendKey, recvKey [md5.Size]byte
	sendSeq, recvSeq uint32
	// sendRC4 and recvRC4, with qop auth-conf, encrypt message and MAC (RFC 2831 section 2.4).
	sendRC4, recvRC4 *rc4.Cipher
}

func digestLayerMAC(key [md5.Size]byte, seq uint32, msg []byte) []byte {
	m := hmac.New(md5.New, key[:])
	_ = binary.Write(m, binary.BigEndian, seq)
	m.Write(msg)
	return m.Sum(nil)[:10]
}

func (l *digestLayer) unwrap(tok []byte) ([]byte, error) {
	if len(tok) < 16 {
		return nil, errors.New("ipctest: DIGEST-MD5 wrapped message too short")
	}
	n := len(tok) - 16
	if l.recvRC4 != nil {
		tok = bytes.Clone(tok)
		l.recvRC4.XORKeyStream(tok[:n+10], tok[:n+10])
	}
	msg := tok[:n]
	if binary.BigEndian.Uint16(tok[n+10:]) != 1 || binary.BigEndian.Uint32(tok[n+12:]) != l.recvSeq ||
		!hmac.Equal(tok[n:n+10], digestLayerMAC(l.recvKey, l.recvSeq, msg)) {
		return nil, errors.New("ipctest: DIGEST-MD5 integrity check failed")
	}
	l.recvSeq++
	return msg, nil
}

func (l *digestLayer) wrap(p []byte) ([]byte, error) {
	out := append(append([]byte(nil), p...), digestLayerMAC(l.sendKey, l.sendSeq, p)...)
	if l.sendRC4 != nil {
		l.sendRC4.XORKeyStream(out, out)
	}
	out = append(out, 0, 1)
	out = binary.BigEndian.AppendUint32(out, l.sendSeq)
	l.sendSeq++
	return out, nil
}

func bits(b byte) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}

// kd computes an RFC 2831 md5-sess response value, independently of package ipc.
func kd(user, realm, pass, nonce, cnonce, nc, qop, a2 string) string {
	hx := func(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }
	ha1 := digestHA1(user, realm, pass, nonce, cnonce)
	return hx([]byte(hex.EncodeToString(ha1[:]) + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + hx([]byte(a2))))
}

// digestHA1 is MD5(A1) of md5-sess, A1 = MD5(user ":" realm ":" pass) ":" nonce ":" cnonce.
func digestHA1(user, realm, pass, nonce, cnonce string) [md5.Size]byte {
	urp := md5.Sum([]byte(user + ":" + realm + ":" + pass))
	return md5.Sum(append(urp[:], ":"+nonce+":"+cnonce...))
}
