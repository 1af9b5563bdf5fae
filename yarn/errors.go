package yarn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/kerberos"

	"github.com/yarn-er/yarn-er/records"
)

// Sentinel errors. Test with errors.Is; a *records.RemoteError matches the sentinel of its HTTP
// status and Hadoop exception (the sentinels that come from an answer are package records' own).
var (
	// ErrNotFound: the RM has no such application, node, attempt or endpoint (404,
	// NotFoundException).
	ErrNotFound = records.ErrNotFound
	// ErrForbidden: the RM refused the caller (403, ForbiddenException), for example "The default
	// static user cannot carry out this operation." or "Only admins can carry out this operation.".
	ErrForbidden = records.ErrForbidden
	// ErrRESTSubmissionDisabled: the RM answered "App submission via REST is disabled." (403); set
	// yarn.webapp.enable-rest-app-submissions=true on the RM. It also matches ErrForbidden.
	ErrRESTSubmissionDisabled = records.ErrRESTSubmissionDisabled
	// ErrUnauthorized: the RM did not accept the caller's identity (401, AuthorizationException),
	// e.g. no user.name with anonymous access off, or a failed SPNEGO negotiation.
	ErrUnauthorized = records.ErrUnauthorized
	// ErrBadRequest: the RM rejected the request (400, BadRequestException) with Hadoop's own text,
	// such as "Requested more memory than configured max".
	ErrBadRequest = records.ErrBadRequest
	// ErrMethodNotAllowed: the RM does not allow the HTTP method (405), e.g.
	// yarn.resourcemanager.webapp.methods-allowed=GET,HEAD.
	ErrMethodNotAllowed = records.ErrMethodNotAllowed
	// ErrServer: the RM failed (5xx) and retries did not help.
	ErrServer = records.ErrServer
	// ErrNoActiveRM: no ResourceManager was active within Options.Retry.FailoverTimeout (all
	// standby, initializing, or answering "There is no active RM right now.").
	ErrNoActiveRM = errors.New("no active ResourceManager")
	// ErrUnreachable: no ResourceManager address could be connected to.
	ErrUnreachable = errors.New("ResourceManager unreachable")
	// ErrTimeout: a request ran past Options.Timeout (the caller's context did not end).
	ErrTimeout = errors.New("request timed out")
	// ErrAuthentication: the client could not authenticate at all: no user name could be
	// determined, or Kerberos login failed (bad keytab, expired or missing credential cache).
	ErrAuthentication = kerberos.ErrAuthentication
	// ErrNoAddress: no ResourceManager address was given and none could be derived from the Hadoop
	// configuration.
	ErrNoAddress = errors.New("no ResourceManager address")
	// ErrUnexpectedResponse: the RM answered with a body this client cannot decode.
	ErrUnexpectedResponse = errors.New("unexpected response from the ResourceManager")
)

// remoteExceptionJSON is Hadoop's error body, {"RemoteException": {...}}, or Jetty's JSON error
// page (Hadoop 3.5 answers a request that accepts JSON with {"servlet", "message", "url",
// "status"} when a filter, such as authentication, refuses it).
type remoteExceptionJSON struct {
	RemoteException *struct {
		Exception     jsonString `json:"exception"`
		Message       jsonString `json:"message"`
		JavaClassName jsonString `json:"javaClassName"`
	} `json:"RemoteException"`
	Message *jsonString `json:"message"`
}

// maxErrorBody is how much of an error body is read.
const maxErrorBody = 64 << 10

var (
	htmlTitle = regexp.MustCompile(`(?is)<title>(.*?)</title>`)
	htmlPre   = regexp.MustCompile(`(?is)<pre>(.*?)</pre>`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// DecodeRemoteError turns an error answer of the RM into a *records.RemoteError. body may be Hadoop's
// RemoteException JSON, a Jetty HTML error page, or plain text; it is never an error itself.
func DecodeRemoteError(status int, contentType string, body []byte) *records.RemoteError {
	e := &records.RemoteError{StatusCode: status}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var re remoteExceptionJSON
		err := json.Unmarshal(trimmed, &re)
		switch {
		case err == nil && re.RemoteException != nil:
			e.Exception = string(re.RemoteException.Exception)
			e.Message = string(re.RemoteException.Message)
			e.Class = string(re.RemoteException.JavaClassName)
			if e.Exception == "" && e.Class != "" {
				e.Exception = e.Class[strings.LastIndexByte(e.Class, '.')+1:]
			}
			return e
		case err == nil && re.Message != nil:
			e.Message = string(*re.Message)
			return e
		}
	}
	e.Message = bodyText(contentType, trimmed)
	return e
}

// bodyText extracts a readable one-paragraph message from a non-JSON error body.
func bodyText(contentType string, body []byte) string {
	s := string(body)
	if strings.Contains(strings.ToLower(contentType), "html") || strings.HasPrefix(strings.ToLower(s), "<html") ||
		strings.HasPrefix(strings.ToLower(s), "<!doctype") {
		// Jetty's error page: <title>Error 401 Authentication required</title> and
		// <pre>Authentication required</pre>; prefer the <pre> (the servlet's message).
		if m := htmlPre.FindStringSubmatch(s); m != nil {
			s = m[1]
		} else if m := htmlTitle.FindStringSubmatch(s); m != nil {
			s = m[1]
		} else {
			s = htmlTag.ReplaceAllString(s, " ")
		}
		s = html.UnescapeString(htmlTag.ReplaceAllString(s, ""))
	}
	s = strings.Join(strings.Fields(s), " ")
	const maxLen = 1000
	if len(s) > maxLen {
		s = s[:maxLen] + "…"
	}
	return s
}

// RequestError is a request that failed without an answer from the RM (connection refused, reset,
// timeout, TLS failure) or whose answer could not be read.
type RequestError struct {
	Method string
	URL    string // without credentials
	Err    error
}

// Error renders "METHOD URL: cause".
func (e *RequestError) Error() string { return e.Method + " " + e.URL + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

// timeoutError is a per-request deadline that expired while the caller's context was still live.
type timeoutError struct{ err error }

func (e *timeoutError) Error() string {
	return "request timed out (raise the client timeout): " + e.err.Error()
}
func (e *timeoutError) Unwrap() []error { return []error{ErrTimeout, e.err} }

// IsAuthError reports whether err means the ResourceManager refused the caller's identity or the
// client could not authenticate at all: it matches ErrUnauthorized, ErrForbidden or
// ErrAuthentication.
func IsAuthError(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) || errors.Is(err, ErrAuthentication)
}

// unexpected wraps a decoding failure as ErrUnexpectedResponse (once) with what was being read.
func unexpected(what string, err error) error {
	if errors.Is(err, ErrUnexpectedResponse) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w: %w", what, ErrUnexpectedResponse, err)
}

// DeadlineError is a request cut short by Options.Deadline: the client's whole time for the
// ResourceManager, retries included, was spent. It matches ErrTimeout.
type DeadlineError struct {
	// Deadline is Options.Deadline.
	Deadline time.Time
	// Err is why the request had not succeeded by then (the attempt in flight, or the last one).
	Err error
}

// Error says that the time ran out, and what the last attempt got.
func (e *DeadlineError) Error() string {
	if e.Err == nil || errors.Is(e.Err, context.DeadlineExceeded) && e.Err.Error() == context.DeadlineExceeded.Error() {
		return "the ResourceManager did not answer in time, retries included"
	}
	return fmt.Sprintf("%v; out of time for the ResourceManager, retries included", e.Err)
}

// Unwrap returns ErrTimeout and the last attempt's error.
func (e *DeadlineError) Unwrap() []error { return []error{ErrTimeout, e.Err} }
