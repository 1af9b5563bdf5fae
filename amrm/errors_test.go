package amrm

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-er/yarn-er/internal/ipc"
)

// errorMsg as the Hadoop 3.5.0 ResourceManager of the mini-YARN sent it for a second
// registerApplicationMaster (captured by TestAMRMGPUContainers; stack trace shortened).
const realAlreadyRegistered = "Application Master is already registered : application_1796033524154_0001\n" +
	"\tat org.apache.hadoop.yarn.server.resourcemanager.ApplicationMasterService.registerApplicationMaster(ApplicationMasterService.java:279)\n" +
	"\tat org.apache.hadoop.ipc.Server$Handler.work(Server.java:3279)\n"

func TestRemoteErrorFromRealMessage(t *testing.T) {
	err := convertErr(&ipc.RemoteError{Class: "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException",
		Message: realAlreadyRegistered, Method: "registerApplicationMaster", Code: "ERROR_APPLICATION"})
	assert.EqualError(t, err, "amrm: registerApplicationMaster: InvalidApplicationMasterRequestException: "+
		"Application Master is already registered : application_1796033524154_0001")
	assert.ErrorIs(t, err, ErrInvalidRequest)
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, realAlreadyRegistered, re.Message, "the full message is kept")
}

func TestRemoteErrorSentinels(t *testing.T) {
	for class, sentinel := range classSentinels {
		err := convertErr(&ipc.RemoteError{Class: class, Message: "m"})
		assert.ErrorIs(t, err, sentinel, class)
		for _, other := range []error{ErrNotRegistered, ErrAttemptNotFound, ErrInvalidRequest, ErrInvalidResourceRequest, ErrInvalidToken} {
			if other != sentinel {
				assert.NotErrorIs(t, err, other, class)
			}
		}
	}
	assert.NotErrorIs(t, convertErr(&ipc.RemoteError{Class: "java.io.IOException"}), ErrNotRegistered)
	// A Java stringified exception that repeats its class does not repeat it in Error().
	err := convertErr(&ipc.RemoteError{Class: "java.io.IOException", Message: "java.io.IOException: disk full"})
	assert.EqualError(t, err, "amrm: IOException: disk full")
}

func TestConvertErrKeepsChain(t *testing.T) {
	inner := &ipc.RemoteError{Class: "org.apache.hadoop.security.token.SecretManager$InvalidToken", Message: "expired", Fatal: true}
	err := convertErr(&ipc.SASLError{Addr: "rm:8030", Err: inner})
	assert.ErrorIs(t, err, ErrAuthentication)
	assert.ErrorIs(t, err, ErrInvalidToken)
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	assert.True(t, re.Fatal)
	assert.Contains(t, err.Error(), "rm:8030")
	plain := errors.New("x")
	assert.Equal(t, plain, convertErr(plain))
	assert.NoError(t, convertErr(nil))
}
