package version

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
	"github.com/yarn-er/yarn-er/view"
)

func TestVersionFlagsReachRunF(t *testing.T) {
	streams, _, _ := cmdutil.TestStreams()
	called := false
	cmd := NewCmdVersion(cmdutil.New(streams, cmdutil.Env{}), func(*Options) error { called = true; return nil })
	cmd.SetArgs(nil)
	require.NoError(t, cmd.Execute())
	assert.True(t, called)
}

func TestVersionRunUsesTheStamp(t *testing.T) {
	streams, out, _ := cmdutil.TestStreams()
	f := cmdutil.New(streams, cmdutil.Env{})
	f.Output = cmdutil.OutputJSON
	f.Build = cmdutil.BuildStamp{Version: "v9.8.7", Commit: "0123456789abcdef", Date: "2026-01-02T03:04:05Z"}
	require.NoError(t, versionRun(&Options{Base: cmdutil.Base{F: f}}))
	var bi view.BuildInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &bi))
	assert.Equal(t, "v9.8.7", bi.Version)
	assert.Equal(t, "0123456789abcdef", bi.Commit)
	assert.Equal(t, "2026-01-02T03:04:05Z", bi.Date)
	assert.Equal(t, "v9.8.7 (0123456789ab)", String(f.Build))
}
