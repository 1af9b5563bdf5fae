package shared

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

func TestValidateDiscoverArgs(t *testing.T) {
	for _, ok := range [][]string{
		nil, {"null"}, {"--enable-coordination-mode"}, {"--enable-coordination-mode", "--coordination-file", "/var/tmp/x"},
		{"--coordination-file=/x", "--vendor", "nvidia", "-v"}, {"--format", "json", "--log-level", "debug"},
	} {
		assert.NoError(t, ValidateDiscoverArgs(ok), "%q", ok)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--enable-coordination"}, "did you mean --enable-coordination-mode"},
		{[]string{"--bogus"}, "unknown flag"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--coordination-file"}, "needs an argument"},
		{[]string{"--release"}, "--release"},
		{[]string{"--help"}, "help"},
	} {
		err := ValidateDiscoverArgs(tc.args)
		require.Error(t, err, "%q", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
}

func TestParseDiscoverAmount(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		release bool
		want    int
		err     string
	}{
		{[]string{"2"}, false, 2, ""},
		{[]string{"1", "null"}, false, 1, ""},
		{nil, true, 0, ""},
		{nil, false, 0, "missing AMOUNT"},
		{[]string{"-1"}, false, 0, "whole number"},
		{[]string{"4097"}, false, 0, "no host has that many"},
		{[]string{"1", "2"}, false, 0, "unexpected arguments"},
		{[]string{"1"}, true, 0, "--release"},
	} {
		n, err := ParseDiscoverAmount(tc.args, tc.release)
		if tc.err != "" {
			require.Error(t, err, "%q", tc.args)
			assert.Contains(t, err.Error(), tc.err)
			assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))
			continue
		}
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.want, n)
	}
}
