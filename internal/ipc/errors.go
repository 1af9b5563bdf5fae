package ipc

import (
	"errors"
	"fmt"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/records"
)

// remoteErrorFrom returns the exception of an error response header.
func remoteErrorFrom(h *commonpb.RpcResponseHeaderProto, method string) *records.RemoteError {
	e := &records.RemoteError{
		Class:   h.GetExceptionClassName(),
		Message: h.GetErrorMsg(),
		Fatal:   h.GetStatus() == commonpb.RpcResponseHeaderProto_FATAL,
		Method:  method,
	}
	if h.ErrorDetail != nil {
		e.Code = h.GetErrorDetail().String()
	}
	return e
}

// ErrConnection is matched (errors.Is) by every error about a broken or unusable connection.
var ErrConnection = errors.New("hadoop ipc: connection failed")

// ErrClosed is returned by calls on a closed Client or connection.
var ErrClosed = errors.New("hadoop ipc: connection closed")

// ConnError reports a connection that failed during a call.
type ConnError struct {
	// Addr is the server address.
	Addr string
	// Sent is true when the request may have reached the server.
	Sent bool
	Err  error
}

// Error formats the error.
func (e *ConnError) Error() string {
	s := "hadoop ipc: connection to " + e.Addr + " failed"
	if e.Sent {
		s += " after the request was sent"
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the wrapped errors.
func (e *ConnError) Unwrap() []error { return []error{ErrConnection, e.Err} }

// ErrUnsupportedQOP reports a server that requires a SASL security layer yarn-er does not speak
// (DIGEST-MD5 privacy with block ciphers only, an unknown GSSAPI layer).
var ErrUnsupportedQOP = errors.New("hadoop ipc: SASL quality of protection not supported")

// ErrAuthentication reports a SASL negotiation that failed on the client side.
var ErrAuthentication = errors.New("hadoop ipc: authentication failed")

// SASLError reports a SASL negotiation failure with its cause.
type SASLError struct {
	Addr string
	Err  error
}

// Error formats the error.
func (e *SASLError) Error() string {
	return fmt.Sprintf("hadoop ipc: SASL with %s: %v", e.Addr, e.Err)
}

// Unwrap returns the wrapped errors.
func (e *SASLError) Unwrap() []error { return []error{ErrAuthentication, e.Err} }
