package amrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/am"
)

func TestReadSpec(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, make([]byte, 5<<20), 0o600))
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "absent.json"), "absent.json"},
		{big, "big.json"},
	} {
		_, err := readSpec(tc.path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{&SpecError{Err: errors.New("job.json: not JSON")}, ExitSpec},
		{fmt.Errorf("attempt: %w", &AuthError{Err: errors.New("token refused")}), ExitAuth},
		{fmt.Errorf("%w: %w", am.ErrKilled, context.Canceled), ExitKilled},
		{&am.RankError{Rank: 2}, ExitFailed},
		{errors.New("ResourceManager unreachable"), ExitFailed},
	} {
		assert.Equal(t, tc.want, ExitCode(tc.err), "%v", tc.err)
	}
}

// TestRunFailsFastOnBadInput: a bad spec or missing token ends Run at once with the class of
// error that names the exit code.
func TestRunFailsFastOnBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	require.NoError(t, os.WriteFile(corrupt, []byte(`{"version":1,"containers":`), 0o600))
	env := map[string]string{"YARN_ER_SPEC": corrupt, "GOGC": "100"}
	var stderr bytes.Buffer
	err := Run(context.Background(), Config{Getenv: func(k string) string { return env[k] }, Stderr: &stderr})
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "corrupt.json: job spec: not JSON")
	assert.Equal(t, ExitSpec, ExitCode(err))
}
