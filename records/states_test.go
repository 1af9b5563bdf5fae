package records

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplicationStates(t *testing.T) {
	for _, s := range ApplicationStates() {
		got, err := ParseApplicationState(string(s))
		require.NoError(t, err)
		assert.Equal(t, s, got)
	}
	got, err := ParseApplicationState(" running ")
	require.NoError(t, err)
	assert.Equal(t, AppRunning, got)
	_, err = ParseApplicationState("BOGUS")
	assert.EqualError(t, err, `unknown application state "BOGUS" (valid: NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED)`)
	for s, want := range map[ApplicationState]bool{AppFinished: true, AppFailed: true, AppKilled: true, "killed": true,
		AppRunning: false, AppNew: false, AppAccepted: false, "": false} {
		assert.Equal(t, want, s.Terminal(), s)
	}
	// A container state is a type of its own: NEW of an application is not NEW of a container.
	assert.NotEqual(t, any(AppNew), any(ContainerNew))
}

func TestFinalStatus(t *testing.T) {
	// FinalApplicationStatusProto numbers of Hadoop 3.5.0.
	for n, name := range map[FinalStatus]string{0: "UNDEFINED", 1: "SUCCEEDED", 2: "FAILED", 3: "KILLED", 4: "ENDED"} {
		assert.Equal(t, name, n.String())
		got, err := ParseFinalStatus(name)
		require.NoError(t, err)
		assert.Equal(t, n, got)
		got, err = ParseFinalStatus("app_" + name)
		require.NoError(t, err)
		assert.Equal(t, n, got)
	}
	assert.Equal(t, "FinalStatus(9)", FinalStatus(9).String())
	assert.Equal(t, "FinalStatus(-1)", FinalStatus(-1).String())
	_, err := ParseFinalStatus("DONE")
	assert.ErrorContains(t, err, "valid: UNDEFINED, SUCCEEDED, FAILED, KILLED, ENDED")
	b, err := json.Marshal(struct{ S FinalStatus }{FinalSucceeded})
	require.NoError(t, err)
	assert.JSONEq(t, `{"S":"SUCCEEDED"}`, string(b))
	var v struct{ S FinalStatus }
	require.NoError(t, json.Unmarshal([]byte(`{"S":"killed"}`), &v))
	assert.Equal(t, FinalKilled, v.S)
}
