// Package tabletest holds the checks that the packages' table tests share.
package tabletest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WantErr checks the error of a table case. With want set, err must be an error whose message
// contains want and that matches each of targets (errors.Is); WantErr then returns true: the case
// has nothing more to check. With want empty, err must be nil and WantErr returns false.
func WantErr(t testing.TB, err error, want string, targets ...error) bool {
	t.Helper()
	if want == "" {
		require.NoError(t, err)
		return false
	}
	require.Error(t, err)
	for _, target := range targets {
		assert.ErrorIs(t, err, target)
	}
	assert.Contains(t, err.Error(), want)
	return true
}
