package amrm

import (
	"errors"
	"strings"

	"github.com/yarn-er/yarn-er/internal/ipc"
)

// Sentinels for errors.Is. A *RemoteError matches the sentinel of its Java exception class.
var (
	// ErrNotRegistered: the ResourceManager does not know this AM as registered
	// (ApplicationMasterNotRegisteredException, after an RM restart or failover), or a call that
	// needs registration was made before Register.
	ErrNotRegistered = errors.New("amrm: application master not registered")
	// ErrAttemptNotFound: the application attempt is gone (ApplicationAttemptNotFoundException); exit.
	ErrAttemptNotFound = errors.New("amrm: application attempt not found")
	// ErrInvalidRequest: InvalidApplicationMasterRequestException (e.g. registered twice, wrong responseId).
	ErrInvalidRequest = errors.New("amrm: invalid application master request")
	// ErrInvalidResourceRequest: InvalidResourceRequestException (e.g. an ask over the maximum allocation).
	ErrInvalidResourceRequest = errors.New("amrm: invalid resource request")
	// ErrInvalidToken: the server refused the token (SecretManager$InvalidToken).
	ErrInvalidToken = errors.New("amrm: invalid token")
	// ErrAccessDenied: AccessControlException or AuthorizationException.
	ErrAccessDenied = errors.New("amrm: access denied")
	// ErrUnknownResource: an ask names a resource type the ResourceManager did not declare at
	// registration; the RM would silently drop it, so the ask is refused before anything is sent.
	ErrUnknownResource = errors.New("amrm: unknown resource type")
	// ErrExceedsMaximum: an ask exceeds the maximum capability the ResourceManager reported.
	ErrExceedsMaximum = errors.New("amrm: ask exceeds the maximum allocation")
	// ErrShutdown: the ResourceManager told the AM to shut down (AM_SHUTDOWN).
	ErrShutdown = errors.New("amrm: the ResourceManager asked the application master to shut down")
	// ErrNoToken: no AMRMToken in the credentials, or no NMToken for a node.
	ErrNoToken = errors.New("amrm: no token")

	// ErrConnection is matched by errors about unreachable servers or broken connections.
	ErrConnection = ipc.ErrConnection
	// ErrAuthentication is matched by SASL negotiation failures.
	ErrAuthentication = ipc.ErrAuthentication
	// ErrUnsupportedQOP: the server requires SASL integrity or privacy (hadoop.rpc.protection
	// integrity or privacy); yarn-er supports authentication only.
	ErrUnsupportedQOP = ipc.ErrUnsupportedQOP
)

// Java exception classes the sentinels stand for.
var classSentinels = map[string]error{
	"org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException":  ErrNotRegistered,
	"org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException":      ErrAttemptNotFound,
	"org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException": ErrInvalidRequest,
	"org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException":          ErrInvalidResourceRequest,
	"org.apache.hadoop.security.token.SecretManager$InvalidToken":                ErrInvalidToken,
	"org.apache.hadoop.security.AccessControlException":                          ErrAccessDenied,
	"org.apache.hadoop.security.authorize.AuthorizationException":                ErrAccessDenied,
}

// RemoteError is an exception a ResourceManager or NodeManager reported.
type RemoteError struct {
	// Class is the Java exception class, e.g.
	// org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException.
	Class string
	// Message is the server's message as sent (it may include a Java stack trace).
	Message string
	// Method is the RPC method, e.g. allocate; empty for connection setup.
	Method string
	// Fatal means the server closed the connection.
	Fatal bool
}

// Error formats the error.
func (e *RemoteError) Error() string {
	var b strings.Builder
	b.WriteString("amrm: ")
	if e.Method != "" {
		b.WriteString(e.Method + ": ")
	}
	b.WriteString(shortClass(e.Class))
	if m := ipc.FirstLine(e.Message); m != "" {
		// Java's stringified exceptions start with "<class>: "; don't repeat it.
		m = strings.TrimPrefix(m, e.Class+": ")
		b.WriteString(": " + m)
	}
	return b.String()
}

// Is matches the sentinel of the exception class.
func (e *RemoteError) Is(target error) bool {
	s, ok := classSentinels[e.Class]
	return ok && s == target
}

func shortClass(c string) string {
	if c == "" {
		return "remote exception"
	}
	if i := strings.LastIndexByte(c, '.'); i >= 0 {
		return c[i+1:]
	}
	return c
}

// remoteWrap keeps an error chain while exposing the *RemoteError inside it.
type remoteWrap struct {
	err    error
	remote *RemoteError
}

// Error formats the error.
func (w *remoteWrap) Error() string { return w.err.Error() }

// Unwrap returns the wrapped errors.
func (w *remoteWrap) Unwrap() []error { return []error{w.err, w.remote} }

// convertErr turns the ipc package's remote errors into *RemoteError.
func convertErr(err error) error {
	if err == nil {
		return nil
	}
	var re *ipc.RemoteError
	if !errors.As(err, &re) {
		return err
	}
	are := &RemoteError{Class: re.Class, Message: re.Message, Method: re.Method, Fatal: re.Fatal}
	if err == error(re) {
		return are
	}
	return &remoteWrap{err: err, remote: are}
}

// ContainerError is a NodeManager's refusal for one container in an otherwise successful call.
type ContainerError struct {
	ID ContainerID
	// Remote is the exception the NodeManager reported for the container.
	Remote *RemoteError
}

// Error formats the error.
func (e *ContainerError) Error() string {
	return "amrm: container " + string(e.ID) + ": " + strings.TrimPrefix(e.Remote.Error(), "amrm: ")
}

// Unwrap returns the NodeManager's exception.
func (e *ContainerError) Unwrap() error { return e.Remote }
