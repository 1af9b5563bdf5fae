package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/amrun/amruntest"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

// TestAMFailsFastOnBadInput: a corrupt or missing spec and a missing token file end the attempt at
// once with a message on stderr (YARN's attempt diagnostics) and the documented exit code (amrun's
// codes are the CLI's: cmd/internal/commands/am's TestExitCodesMatchTheCLI).
func TestAMFailsFastOnBadInput(t *testing.T) {
	for _, tc := range amruntest.BadInputs(t) {
		t.Run(tc.Name, func(t *testing.T) {
			res := runCLI(t, tc.Env, "am")
			assert.Equal(t, tc.Code, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.Want)
			assert.Empty(t, res.stdout)
		})
	}
}

func TestAMIsHidden(t *testing.T) {
	res := runCLI(t, nil, "--help")
	require.Equal(t, cmdutil.ExitOK, res.code)
	assert.NotContains(t, res.stdout, "\n  am ")
	res = runCLI(t, nil, "am", "--help")
	require.Equal(t, cmdutil.ExitOK, res.code)
	assert.Contains(t, res.stdout, "Exit codes:")
}
