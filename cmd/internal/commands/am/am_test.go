package am

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/cmd/internal/amrun"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

func TestAMTakesNoArguments(t *testing.T) {
	cmd := NewCmdAM(cmdtest.Factory(), func(*Options) error { return nil })
	assert.True(t, cmd.Hidden)
	assert.Error(t, cmdtest.Execute(cmd, "extra"))
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
