package cmdutil_test

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

// TestGroupCommand: a group runs its subcommands, prints its help without one and fails with a
// usage error, with a suggestion, on an unknown one.
func TestGroupCommand(t *testing.T) {
	ran := false
	group := func() (*cobra.Command, *bytes.Buffer) {
		sub := &cobra.Command{Use: "status", RunE: func(*cobra.Command, []string) error { ran = true; return nil }}
		g := cmdutil.NewGroupCommand("app", "Applications", "All about applications.", sub)
		var out bytes.Buffer
		g.SetOut(&out)
		return g, &out
	}

	g, _ := group()
	require.NoError(t, cmdtest.Execute(g, "status"))
	assert.True(t, ran)

	g, out := group()
	require.NoError(t, cmdtest.Execute(g))
	assert.Contains(t, out.String(), "All about applications.")
	assert.Contains(t, out.String(), "status")

	g, _ = group()
	err := cmdtest.Execute(g, "statu")
	var usage *cmdutil.UsageError
	require.ErrorAs(t, err, &usage)
	assert.Contains(t, err.Error(), `unknown command "statu" for "app"; did you mean status?`)
}
