// Package cmdtest holds what the command packages' tests share: a factory on buffers and a given
// environment, a runner that executes a command on given arguments, and Capture, which runs a
// command whose runF keeps its options, so that no test of flags reaches a ResourceManager.
package cmdtest

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

// Buffers returns a factory on buffer streams and the environment env, with the buffers its
// stdout and stderr write to.
func Buffers(env cmdutil.Env) (f *cmdutil.Factory, out, errOut *bytes.Buffer) {
	streams, out, errOut := cmdutil.TestStreams()
	return cmdutil.New(streams, env), out, errOut
}

// Factory returns a factory on buffer streams and an empty environment.
func Factory() *cmdutil.Factory {
	f, _, _ := Buffers(cmdutil.Env{})
	return f
}

// Execute runs cmd on args (never the test binary's own), without cobra's own printing of usage
// and errors, and returns its error.
func Execute(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(append([]string{}, args...))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.Execute()
}

// Capture runs the command newCmd makes on args, with Factory and a runF that keeps the options
// it is called with, and returns those options; it fails the test when the command fails or does
// not call runF.
func Capture[T any](t testing.TB, newCmd func(*cmdutil.Factory, func(T) error) *cobra.Command, args ...string) T {
	t.Helper()
	var got T
	ran := false
	Parse(t, newCmd(Factory(), func(o T) error { got, ran = o, true; return nil }), args...)
	require.True(t, ran, "the command did not call runF")
	return got
}

// Parse runs cmd on args and fails the test when it fails; cmd's runF captures the options.
func Parse(t testing.TB, cmd *cobra.Command, args ...string) {
	t.Helper()
	require.NoError(t, Execute(cmd, args...))
}
