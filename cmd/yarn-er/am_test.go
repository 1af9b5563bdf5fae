package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
)

// TestAMFailsFastOnBadInput: a corrupt or missing spec and a missing token file end the attempt at
// once with a message on stderr (YARN's attempt diagnostics) and the documented exit code.
func TestAMFailsFastOnBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	require.NoError(t, os.WriteFile(corrupt, []byte(`{"version":1,"containers":`), 0o600))
	valid := filepath.Join(dir, "valid.json")
	require.NoError(t, os.WriteFile(valid, []byte(`{"version":1,"name":"x","user":"u","schedulerAddresses":["rm:8030"],
		"containers":1,"restarts":0,"priority":1,"resource":[{"name":"memory-mb","value":128,"units":"Mi"},{"name":"vcores","value":1}],
		"command":["true"],"binary":{"name":"yarn-er","url":"hdfs://nn:8020/s/yarn-er","size":1,"mtimeMillis":1,"type":"FILE"},
		"stagingDir":"hdfs://nn:8020/s"}`), 0o600))
	cases := []struct {
		name string
		env  map[string]string
		code int
		want string
	}{
		{"corrupt spec", map[string]string{"YARN_ER_SPEC": corrupt}, cmdutil.ExitFindings, "corrupt.json: job spec: not JSON"},
		{"missing spec", map[string]string{"YARN_ER_SPEC": filepath.Join(dir, "absent.json")}, cmdutil.ExitFindings, "absent.json"},
		{"not in a container", map[string]string{"YARN_ER_SPEC": valid}, cmdutil.ExitError, "CONTAINER_ID is not set"},
		{"no token file", map[string]string{"YARN_ER_SPEC": valid, "CONTAINER_ID": "container_1700000000000_0001_01_000001"}, cmdutil.ExitAuth, "HADOOP_TOKEN_FILE_LOCATION is not set"},
		{"missing token file", map[string]string{"YARN_ER_SPEC": valid, "CONTAINER_ID": "container_1700000000000_0001_01_000001",
			"HADOOP_TOKEN_FILE_LOCATION": filepath.Join(dir, "absent")}, cmdutil.ExitAuth, "absent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, tc.env, "am")
			assert.Equal(t, tc.code, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.want)
			assert.Empty(t, res.stdout)
		})
	}
}

func TestAMIsHidden(t *testing.T) {
	res := runCLI(t, nil, "--help")
	require.Equal(t, cmdutil.ExitOK, res.code)
	assert.NotContains(t, res.stdout, "\n  am ")
	res = runCLI(t, nil, "am", "--help")
	require.Equal(t, cmdutil.ExitOK, res.code)
	assert.Contains(t, res.stdout, "Exit codes:")
}
