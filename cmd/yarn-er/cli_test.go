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
	getenv := func(k string) string { return env[k] }
	code := Main(context.Background(), args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, getenv)
	return cliResult{stdout: out.String(), stderr: errOut.String(), code: code}
}

func TestVersionFormats(t *testing.T) {
	res := runCLI(t, nil, "version", "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	var bi buildInfo
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &bi))
	assert.NotEmpty(t, bi.Version)
	assert.True(t, strings.HasPrefix(bi.GoVersion, "go"), bi.GoVersion)

	res = runCLI(t, nil, "version", "-o", "yaml")
	require.Equal(t, exitOK, res.code, res.stderr)
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &m))
	assert.Equal(t, bi.GoVersion, m["goVersion"])

	res = runCLI(t, nil, "version")
	require.Equal(t, exitOK, res.code)
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
			assert.Equal(t, exitUsage, res.code)
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
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "goVersion: go")

	// The environment beats the file.
	res = runCLI(t, map[string]string{"YARN_ER_OUTPUT": "json"}, "--config", cfg, "version")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, `"goVersion": "go`)

	// A flag beats both.
	res = runCLI(t, map[string]string{"YARN_ER_OUTPUT": "json"}, "--config", cfg, "version", "-o", "table")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "yarn-er ")

	// A bad environment value is a usage error naming the variable.
	res = runCLI(t, map[string]string{"YARN_ER_VERBOSE": "maybe"}, "version")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, "YARN_ER_VERBOSE")

	// A missing settings file is a usage error naming it.
	res = runCLI(t, nil, "--config", filepath.Join(t.TempDir(), "nope.yaml"), "version")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, "nope.yaml")
}

func TestCompletionAndHelp(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		res := runCLI(t, nil, "completion", shell)
		require.Equal(t, exitOK, res.code, res.stderr)
		assert.Contains(t, res.stdout, "yarn-er", shell)
	}
	res := runCLI(t, nil, "help", "exit-codes")
	require.Equal(t, exitOK, res.code)
	for _, want := range []string{"0  success", "2  usage", "3  validation", "4  authentication", "5  not enough devices"} {
		assert.Contains(t, res.stdout, want)
	}
	res = runCLI(t, nil, "__complete", "version", "-o", "")
	require.Equal(t, exitOK, res.code)
	assert.Contains(t, res.stdout, "json")
}

func TestExitCodeMapping(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"plain", assert.AnError, exitError},
		{"usage", usageErrorf("bad"), exitUsage},
		{"findings", &findingsError{summary: "2 checks failed"}, exitFindings},
		{"silent", &silentError{code: exitNoDevices}, exitNoDevices},
		{"canceled", context.Canceled, exitInterrupted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, exitCode(tc.err))
		})
	}
}

func TestYAMLKeepsOrderAndExactIntegers(t *testing.T) {
	var buf bytes.Buffer
	v := struct {
		B   int64   `json:"b"`
		A   string  `json:"a"`
		F   float64 `json:"f"`
		N   any     `json:"n"`
		L   []int   `json:"l"`
		Yes string  `json:"yes"`
	}{B: 9223372036854775807, A: "x: y", F: 1.5, L: []int{1, 2}, Yes: "yes"}
	require.NoError(t, writeYAML(&buf, v))
	assert.Equal(t, "b: 9223372036854775807\na: 'x: y'\nf: 1.5\n\"n\": null\nl:\n  - 1\n  - 2\n\"yes\": \"yes\"\n", buf.String())
}
