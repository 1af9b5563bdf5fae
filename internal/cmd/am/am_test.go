package am

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil/cmdtest"
)

func TestAMTakesNoArguments(t *testing.T) {
	cmd := NewCmdAM(cmdtest.Factory(), func(*Options) error { return nil })
	assert.True(t, cmd.Hidden)
	assert.Error(t, cmdtest.Execute(cmd, "extra"))
}

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
