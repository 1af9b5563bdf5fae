package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/view"
)

// The ranks table shows what the AM's log (which any program of the application can write to)
// names, escaped, one rank a line.
func TestRanksTableIsTerminalSafe(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeRanks(&b, []view.AppRank{
		{Role: "worker", Rank: 0, Container: "container_1_0001_01_000002", Node: "nm:1", Restarts: 1, Live: true},
		{Role: cmdtest.Hostile, Rank: 1, Container: cmdtest.Hostile, Node: cmdtest.Hostile},
	}))
	out := b.String()
	cmdtest.AssertTerminalSafe(t, out)
	assert.Contains(t, out, "ROLE")
	assert.Contains(t, out, "worker")
	assert.Equal(t, 4, strings.Count(out, "\n"), "a blank line, the header and one line per rank: %q", out)
	b.Reset()
	require.NoError(t, writeRanks(&b, nil))
	assert.Empty(t, b.String())
}
