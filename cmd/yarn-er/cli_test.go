package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/view"
)

// cliResult is what one run of the CLI produced.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs yarn-er in-process with args and only the environment in env.
func runCLI(t testing.TB, env map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, cmdutil.EnvFromMap(env))
	return cliResult{stdout: out.String(), stderr: errOut.String(), code: code}
}

func TestVersionFormats(t *testing.T) {
	res := runCLI(t, nil, "version", "-o", "json")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var bi view.BuildInfo
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &bi))
	assert.NotEmpty(t, bi.Version)
	assert.True(t, strings.HasPrefix(bi.GoVersion, "go"), bi.GoVersion)

	res = runCLI(t, nil, "version", "-o", "yaml")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &m))
	assert.Equal(t, bi.GoVersion, m["goVersion"])

	res = runCLI(t, nil, "version")
	require.Equal(t, cmdutil.ExitOK, res.code)
	assert.Contains(t, res.stdout, "yarn-er "+bi.Version)
	assert.Empty(t, res.stderr)
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"bogus"},
		{"versoin"},
		{"version", "-o", "xml"},
		{"version", "extra-arg"},
		{"version", "--log-level", "loud"},
		{"version", "--log-format", "xml"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := runCLI(t, nil, args...)
			assert.Equal(t, cmdutil.ExitUsage, res.code)
			assert.Empty(t, res.stdout)
			assert.Contains(t, res.stderr, "yarn-er: ")
			assert.Contains(t, res.stderr, "--help")
		})
	}
}

func TestSettingsPrecedence(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "yarn-er.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("output: yaml\n"), 0o600))

	// The file applies when nothing else sets the value.
	res := runCLI(t, nil, "--config", cfg, "version")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "goVersion: go")

	// The environment beats the file.
	res = runCLI(t, map[string]string{"YARN_ER_OUTPUT": "json"}, "--config", cfg, "version")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, `"goVersion": "go`)

	// A flag beats both.
	res = runCLI(t, map[string]string{"YARN_ER_OUTPUT": "json"}, "--config", cfg, "version", "-o", "table")
	require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "yarn-er ")

	// A bad environment value is a usage error naming the variable.
	res = runCLI(t, map[string]string{"YARN_ER_VERBOSE": "maybe"}, "version")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "YARN_ER_VERBOSE")

	// A missing settings file is a usage error naming it.
	res = runCLI(t, nil, "--config", filepath.Join(t.TempDir(), "nope.yaml"), "version")
	assert.Equal(t, cmdutil.ExitUsage, res.code)
	assert.Contains(t, res.stderr, "nope.yaml")
}

func TestCompletionAndHelp(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		res := runCLI(t, nil, "completion", shell)
		require.Equal(t, cmdutil.ExitOK, res.code, res.stderr)
		assert.Contains(t, res.stdout, "yarn-er", shell)
	}
	res := runCLI(t, nil, "help", "exit-codes")
	require.Equal(t, cmdutil.ExitOK, res.code)
	for _, want := range []string{"0  success", "2  usage", "3  validation", "4  authentication", "5  not enough devices", "130  interrupted (SIGINT)", "143  terminated (SIGTERM)"} {
		assert.Contains(t, res.stdout, want)
	}
	res = runCLI(t, nil, "__complete", "version", "-o", "")
	require.Equal(t, cmdutil.ExitOK, res.code)
	assert.Contains(t, res.stdout, "json")
}
