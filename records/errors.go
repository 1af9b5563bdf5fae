package records

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels a *RemoteError matches (errors.Is) by its HTTP status or Java exception. The REST
// client (yarn) and the IPC clients (amrm) export them under their own names as well.
var (
	// ErrNotFound: no such application, node, attempt or endpoint (HTTP 404, NotFoundException).
	ErrNotFound = errors.New("not found")
	// ErrForbidden: the server refused the caller (HTTP 403, ForbiddenException).
	ErrForbidden = errors.New("forbidden")
	// ErrRESTSubmissionDisabled: "App submission via REST is disabled." (403); set
	// yarn.webapp.enable-rest-app-submissions=true on the RM. It also matches ErrForbidden.
	ErrRESTSubmissionDisabled = errors.New("application submission over REST is disabled on this ResourceManager")
	// ErrUnauthorized: the server did not accept the caller's identity (HTTP 401,
	// AuthorizationException or AuthenticationException).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrBadRequest: the server rejected the request (HTTP 400, BadRequestException).
	ErrBadRequest = errors.New("bad request")
	// ErrMethodNotAllowed: the server does not allow the HTTP method (405).
	ErrMethodNotAllowed = errors.New("method not allowed")
	// ErrServer: the server failed (HTTP 5xx).
	ErrServer = errors.New("ResourceManager error")

	// ErrNotRegistered: the ResourceManager does not know the ApplicationMaster as registered
	// (ApplicationMasterNotRegisteredException, after an RM restart or failover).
	ErrNotRegistered = errors.New("application master not registered")
	// ErrAttemptNotFound: the application attempt is gone (ApplicationAttemptNotFoundException).
	ErrAttemptNotFound = errors.New("application attempt not found")
	// ErrInvalidRequest: InvalidApplicationMasterRequestException (e.g. registered twice, wrong
	// responseId).
	ErrInvalidRequest = errors.New("invalid application master request")
	// ErrInvalidResourceRequest: InvalidResourceRequestException (e.g. an ask over the maximum
	// allocation).
	ErrInvalidResourceRequest = errors.New("invalid resource request")
	// ErrInvalidToken: the server refused the token (SecretManager$InvalidToken).
	ErrInvalidToken = errors.New("invalid token")
	// ErrAccessDenied: AccessControlException or AuthorizationException over IPC.
	ErrAccessDenied = errors.New("access denied")
)

// classSentinels maps the Java exception classes of IPC answers to their sentinels.
var classSentinels = map[string]error{
	"org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException":  ErrNotRegistered,
	"org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException":      ErrAttemptNotFound,
	"org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException": ErrInvalidRequest,
	"org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException":          ErrInvalidResourceRequest,
	"org.apache.hadoop.security.token.SecretManager$InvalidToken":                ErrInvalidToken,
	"org.apache.hadoop.security.AccessControlException":                          ErrAccessDenied,
	"org.apache.hadoop.security.authorize.AuthorizationException":                ErrAccessDenied,
}

// RemoteError is an exception a Hadoop server reported: over IPC (the response header's exception
// class and message) or over REST (Hadoop's {"RemoteException": {...}} body, or the text of
// another error page, with the HTTP status). The fields keep what the server sent.
type RemoteError struct {
	// Class is the Java exception class, e.g.
	// org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException; "" when the
	// server named none.
	Class string
	// Exception is the short exception name, e.g. "NotFoundException": REST's exception field, or
	// the last part of Class.
	Exception string
	// Message is the server's message as sent (over IPC it may include a Java stack trace).
	Message string
	// Method is the RPC method (allocate) or the HTTP method (GET); "" for IPC connection setup.
	Method string
	// URL is the REST request's URL, without credentials; "" over IPC.
	URL string
	// StatusCode is the HTTP status; 0 over IPC.
	StatusCode int
	// Code is the IPC RpcErrorCodeProto name, e.g. ERROR_APPLICATION; "" when not sent.
	Code string
	// Fatal means the IPC server closed the connection.
	Fatal bool
}

// Error renders a REST answer as "METHOD URL: 404 Not Found: NotFoundException: message" and an
// IPC exception as "method: ShortClass: first line of the message".
func (e *RemoteError) Error() string {
	var b strings.Builder
	if e.StatusCode != 0 {
		if e.Method != "" || e.URL != "" {
			b.WriteString(strings.TrimSpace(e.Method + " " + e.URL))
			b.WriteString(": ")
		}
		b.WriteString(strconv.Itoa(e.StatusCode) + " " + statusText(e.StatusCode))
		if e.Exception != "" {
			b.WriteString(": " + e.Exception)
		}
		if e.Message != "" {
			b.WriteString(": " + e.Message)
		}
		return b.String()
	}
	if e.Method != "" {
		b.WriteString(e.Method + ": ")
	}
	b.WriteString(e.shortName())
	if m := firstLine(e.Message); m != "" {
		// Java's stringified exceptions start with "<class>: "; don't repeat it.
		if e.Class != "" {
			m = strings.TrimPrefix(m, e.Class+": ")
		}
		b.WriteString(": " + m)
	}
	return b.String()
}

// shortName is Exception, else the last part of Class, else "remote exception".
func (e *RemoteError) shortName() string {
	switch {
	case e.Exception != "":
		return e.Exception
	case e.Class != "":
		return e.Class[strings.LastIndexByte(e.Class, '.')+1:]
	}
	return "remote exception"
}

// Is matches the sentinels by HTTP status and by Java exception.
func (e *RemoteError) Is(target error) bool {
	if s, ok := classSentinels[e.Class]; ok && s == target {
		return true
	}
	ex := e.shortName()
	switch target {
	case ErrNotFound:
		return e.StatusCode == statusNotFound || ex == "NotFoundException"
	case ErrForbidden:
		return e.StatusCode == statusForbidden || ex == "ForbiddenException"
	case ErrRESTSubmissionDisabled:
		return (e.StatusCode == statusForbidden || ex == "ForbiddenException") &&
			strings.Contains(e.Message, "App submission via REST is disabled")
	case ErrUnauthorized:
		return e.StatusCode == statusUnauthorized ||
			(e.StatusCode != 0 && (ex == "AuthorizationException" || ex == "AuthenticationException"))
	case ErrBadRequest:
		return e.StatusCode == statusBadRequest || ex == "BadRequestException"
	case ErrMethodNotAllowed:
		return e.StatusCode == statusMethodNotAllowed
	case ErrServer:
		return e.StatusCode >= 500
	}
	return false
}

// firstLine returns the first line of a Java exception message, trimmed, without its stack trace.
func firstLine(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return msg
}
