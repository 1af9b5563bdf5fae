package ipc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
)

// RemoteError is an exception the server reported in a response header.
type RemoteError struct {
	// Class is the server's Java exception class, e.g.
	// org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException.
	Class string
	// Message is the server's errorMsg (often the exception's text followed by a stack trace).
	Message string
	// Fatal is set for status FATAL: the server closes the connection.
	Fatal bool
	// Code is the server's RpcErrorCodeProto name, e.g. ERROR_APPLICATION; empty when not sent.
	Code string
	// Method is the called method; empty for errors during connection setup.
	Method string
}

// Error formats the error.
func (e *RemoteError) Error() string {
	var b strings.Builder
	b.WriteString("hadoop ipc: ")
	if e.Method != "" {
		b.WriteString(e.Method + ": ")
	}
	b.WriteString("remote ")
	if e.Class != "" {
		b.WriteString(e.Class)
	} else {
		b.WriteString("exception")
	}
	if m := FirstLine(e.Message); m != "" {
		b.WriteString(": " + m)
	}
	return b.String()
}

// FirstLine returns the first line of a Java errorMsg without stack trace and without a leading
// "<class>: " that repeats the exception class.
func FirstLine(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return msg
}

func remoteErrorFrom(h *commonpb.RpcResponseHeaderProto, method string) *RemoteError {
	e := &RemoteError{
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

// ErrUnsupportedQOP reports a server that requires SASL integrity or privacy protection.
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
