package cmdutil_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/yarn"
)

// TestRMFlagsWithoutRM: OptionalRMClient reports "no RM configured" as cmdutil.ErrNoRM (and yarn's
// ErrNoAddress), RMClient as a usage error with the same text; other problems are unchanged.
func TestRMFlagsWithoutRM(t *testing.T) {
	parse := func(t *testing.T, args ...string) *cmdutil.ClusterConn {
		t.Helper()
		cmd := &cobra.Command{Use: "x"}
		cc := cmdtest.Factory().NewClusterConn(cmd)
		require.NoError(t, cmd.Flags().Parse(args))
		return cc
	}
	f := parse(t)
	c, err := f.OptionalRMClient()
	assert.Nil(t, c)
	require.ErrorIs(t, err, cmdutil.ErrNoRM)
	assert.ErrorIs(t, err, yarn.ErrNoAddress)
	var ue *cmdutil.UsageError
	assert.False(t, errors.As(err, &ue), "not a usage error by itself")
	assert.Contains(t, err.Error(), "give --rm URL")

	_, uerr := f.RMClient()
	require.ErrorAs(t, uerr, &ue)
	assert.ErrorIs(t, uerr, cmdutil.ErrNoRM)
	assert.Equal(t, err.Error(), uerr.Error())
	assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(uerr))

	// A Hadoop configuration without an RM address: the directory and conf.s reason are named.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte("<configuration/>"), 0o600))
	_, err = parse(t, "--hadoop-conf", dir).OptionalRMClient()
	require.ErrorIs(t, err, cmdutil.ErrNoRM)
	assert.ErrorIs(t, err, conf.ErrNoRMAddress)
	assert.Contains(t, err.Error(), "no ResourceManager known from the Hadoop configuration in "+dir)
	assert.Contains(t, err.Error(), "yarn.resourcemanager.hostname")

	// With --rm: a client.
	c, err = parse(t, "--rm", "http://rm1:8088,rm2:8088").OptionalRMClient()
	require.NoError(t, err)
	assert.Equal(t, []string{"http://rm1:8088", "http://rm2:8088"}, c.Addresses())

	// Bad flags are usage errors, not "no RM".
	_, err = parse(t, "--auth", "ntlm").OptionalRMClient()
	require.ErrorAs(t, err, &ue)
	assert.NotErrorIs(t, err, cmdutil.ErrNoRM)
	// A client that cannot be built is an error of its own.
	_, err = parse(t, "--rm", "ftp://x").OptionalRMClient()
	require.Error(t, err)
	assert.NotErrorIs(t, err, cmdutil.ErrNoRM)
	assert.False(t, errors.As(err, &ue))
}
