package root

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

// runInProcess is how serve's POST endpoints run the CLI's commands: the same output, message and
// exit code as the binary.
func TestRunInProcess(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "flink-conf.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("taskmanager.memory.process.size: 2g\nexternal-resources: gpu\n"+
		"external-resource.gpu.amount: 2\nexternal-resource.gpu.yarn.config-key: yarn.io/gpu\n"), 0o600))
	f := cmdtest.Factory()
	res := runInProcess(context.Background(), f, []string{"translate", "--flink-conf=" + conf, "--output=json"})
	assert.Equal(t, cmdutil.ExitOK, res.ExitCode, res.Stderr)
	assert.Contains(t, string(res.Stdout), `"yarn.io/gpu": 2`)

	res = runInProcess(context.Background(), f, []string{"translate", "--flink-conf=" + conf, "--dynamic=nokey", "--output=json"})
	assert.Equal(t, cmdutil.ExitUsage, res.ExitCode)
	assert.Contains(t, res.Stderr, "yarn-er: -D nokey: want key=value")
	assert.Empty(t, res.Stdout)
}
