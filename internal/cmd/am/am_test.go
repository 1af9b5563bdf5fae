package am

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/internal/amrun"
	"github.com/yarn-er/yarn-er/internal/cmdutil"
)

func TestAMTakesNoArguments(t *testing.T) {
	streams, _, _ := cmdutil.TestStreams()
	cmd := NewCmdAM(cmdutil.New(streams, cmdutil.Env{}), func(*Options) error { return nil })
	assert.True(t, cmd.Hidden)
	cmd.SetArgs([]string{"extra"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	assert.Error(t, cmd.Execute())
}

// TestExitCodesMatchTheCLI: the small yarn-er-am binary exits with amrun's codes, yarn-er am with
// the CLI's; they are the same numbers.
func TestExitCodesMatchTheCLI(t *testing.T) {
	assert.Equal(t, cmdutil.ExitOK, amrun.ExitOK)
	assert.Equal(t, cmdutil.ExitError, amrun.ExitFailed)
	assert.Equal(t, cmdutil.ExitFindings, amrun.ExitSpec)
	assert.Equal(t, cmdutil.ExitAuth, amrun.ExitAuth)
	assert.Equal(t, cmdutil.ExitInterrupted, amrun.ExitKilled)
}
