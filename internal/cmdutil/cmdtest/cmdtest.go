// Package cmdtest holds what the command packages' flag tests share: a factory on buffers and an
// empty environment, and a parser that runs a command whose runF captures its options, so that
// no test of flags reaches a ResourceManager.
package cmdtest

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
)

// Factory returns a factory on buffer streams and an empty environment.
func Factory() *cmdutil.Factory {
	streams, _, _ := cmdutil.TestStreams()
	return cmdutil.New(streams, cmdutil.Env{})
}

// Parse runs cmd on args and fails the test when it fails; cmd's runF captures the options.
func Parse(t testing.TB, cmd *cobra.Command, args ...string) {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	require.NoError(t, cmd.Execute())
}
