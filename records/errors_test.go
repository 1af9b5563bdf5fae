package records

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errorMsg as the Hadoop 3.5.0 ResourceManager of the mini-YARN sent it for a second
// registerApplicationMaster (captured by TestAMRMGPUContainers; stack trace shortened).
const realAlreadyRegistered = "Application Master is already registered : application_1796033524154_0001\n" +
	"\tat org.apache.hadoop.yarn.server.resourcemanager.ApplicationMasterService.registerApplicationMaster(ApplicationMasterService.java:279)\n" +
	"\tat org.apache.hadoop.ipc.Server$Handler.work(Server.java:3279)\n"

func TestRemoteErrorFromRealIPCMessage(t *testing.T) {
	var err error = &RemoteError{Class: "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException",
		Message: realAlreadyRegistered, Method: "registerApplicationMaster", Code: "ERROR_APPLICATION"}
	assert.EqualError(t, err, "registerApplicationMaster: InvalidApplicationMasterRequestException: "+
		"Application Master is already registered : application_1796033524154_0001")
	assert.ErrorIs(t, err, ErrInvalidRequest)
	var re *RemoteError
	require.ErrorAs(t, fmt.Errorf("amrm: %w", err), &re)
	assert.Equal(t, realAlreadyRegistered, re.Message, "the full message is kept")
}

func TestRemoteErrorIPCSentinels(t *testing.T) {
	ipcSentinels := []error{ErrNotRegistered, ErrAttemptNotFound, ErrInvalidRequest, ErrInvalidResourceRequest, ErrInvalidToken, ErrAccessDenied}
	for class, sentinel := range classSentinels {
		err := &RemoteError{Class: class, Message: "m"}
		assert.ErrorIs(t, err, sentinel, class)
		for _, other := range append(ipcSentinels, ErrUnauthorized, ErrNotFound, ErrForbidden) {
			if other != sentinel {
				assert.NotErrorIs(t, err, other, class)
			}
		}
	}
	assert.NotErrorIs(t, &RemoteError{Class: "java.io.IOException"}, ErrNotRegistered)
	// A Java stringified exception that repeats its class does not repeat it in Error().
	assert.EqualError(t, &RemoteError{Class: "java.io.IOException", Message: "java.io.IOException: disk full\n\tat x"},
		"IOException: disk full")
	assert.EqualError(t, &RemoteError{}, "remote exception")
	assert.EqualError(t, &RemoteError{Method: "allocate", Class: "Plain"}, "allocate: Plain")
}

func TestRemoteErrorREST(t *testing.T) {
	for _, tc := range []struct {
		e    RemoteError
		text string
		is   []error
		not  []error
	}{
		{RemoteError{StatusCode: 404, Method: "GET", URL: "http://rm:8088/ws/v1/cluster/apps/x", Exception: "NotFoundException",
			Class: "org.apache.hadoop.yarn.webapp.NotFoundException", Message: "app not found"},
			"GET http://rm:8088/ws/v1/cluster/apps/x: 404 Not Found: NotFoundException: app not found",
			[]error{ErrNotFound}, []error{ErrForbidden, ErrServer}},
		{RemoteError{StatusCode: 403, Exception: "ForbiddenException", Message: "App submission via REST is disabled."},
			"403 Forbidden: ForbiddenException: App submission via REST is disabled.",
			[]error{ErrForbidden, ErrRESTSubmissionDisabled}, []error{ErrUnauthorized, ErrAccessDenied}},
		{RemoteError{StatusCode: 401, Message: "Authentication required"}, "401 Unauthorized: Authentication required",
			[]error{ErrUnauthorized}, []error{ErrForbidden}},
		{RemoteError{StatusCode: 500, Exception: "AuthorizationException"}, "500 Internal Server Error: AuthorizationException",
			[]error{ErrUnauthorized, ErrServer}, []error{ErrAccessDenied}},
		{RemoteError{StatusCode: 400, Class: "org.apache.hadoop.yarn.webapp.BadRequestException"}, "400 Bad Request",
			[]error{ErrBadRequest}, []error{ErrNotFound}},
		{RemoteError{StatusCode: 405}, "405 Method Not Allowed", []error{ErrMethodNotAllowed}, []error{ErrServer}},
	} {
		assert.EqualError(t, &tc.e, tc.text)
		for _, s := range tc.is {
			assert.ErrorIs(t, &tc.e, s, tc.text)
		}
		for _, s := range tc.not {
			assert.NotErrorIs(t, &tc.e, s, tc.text)
		}
	}
	// Over IPC, AuthorizationException is access denied, not an HTTP 401.
	ipcAuthz := &RemoteError{Class: "org.apache.hadoop.security.authorize.AuthorizationException"}
	assert.ErrorIs(t, ipcAuthz, ErrAccessDenied)
	assert.NotErrorIs(t, ipcAuthz, ErrUnauthorized)
	assert.False(t, errors.Is(errors.New("not found"), ErrNotFound))
}

func TestFirstLineOfJavaMessage(t *testing.T) {
	assert.Equal(t, "a b", firstLine("  a b \r\n\tat x"))
	assert.Equal(t, "", firstLine("\n"))
}
