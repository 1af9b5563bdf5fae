package amrm

import (
	"errors"

	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/records"
)

// Sentinels for errors.Is. A *records.RemoteError matches the sentinel of its Java exception
// class; those sentinels are package records' own.
var (
	// ErrNotRegistered: the ResourceManager does not know this AM as registered
	// (ApplicationMasterNotRegisteredException, after an RM restart or failover), or a call that
	// needs registration was made before Register.
	ErrNotRegistered = records.ErrNotRegistered
	// ErrAttemptNotFound: the application attempt is gone (ApplicationAttemptNotFoundException); exit.
	ErrAttemptNotFound = records.ErrAttemptNotFound
	// ErrInvalidRequest: InvalidApplicationMasterRequestException (e.g. registered twice, wrong responseId).
	ErrInvalidRequest = records.ErrInvalidRequest
	// ErrInvalidResourceRequest: InvalidResourceRequestException (e.g. an ask over the maximum allocation).
	ErrInvalidResourceRequest = records.ErrInvalidResourceRequest
	// ErrInvalidToken: the server refused the token (SecretManager$InvalidToken).
	ErrInvalidToken = records.ErrInvalidToken
	// ErrAccessDenied: AccessControlException or AuthorizationException.
	ErrAccessDenied = records.ErrAccessDenied
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
	// ErrUnsupportedQOP: the server offers no SASL quality of protection yarn-er speaks (it speaks
	// auth, auth-int, and auth-conf with the rc4 cipher: hadoop.rpc.protection authentication,
	// integrity and privacy).
	ErrUnsupportedQOP = ipc.ErrUnsupportedQOP
)

// ContainerError is a NodeManager's refusal for one container in an otherwise successful call.
type ContainerError struct {
	ID records.ContainerID
	// Remote is the exception the NodeManager reported for the container.
	Remote *records.RemoteError
}

// Error formats the error.
func (e *ContainerError) Error() string {
	return "amrm: container " + e.ID.String() + ": " + e.Remote.Error()
}

// Unwrap returns the NodeManager's exception.
func (e *ContainerError) Unwrap() error { return e.Remote }
