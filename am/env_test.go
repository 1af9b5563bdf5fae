package am

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "container_tokens")
	creds := records.NewCredentials()
	creds.AddToken("amrm", records.Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: records.KindAMRMToken})
	require.NoError(t, records.WriteTokenFile(tokenFile, creds, records.FormatWritable))
	noAMRM := filepath.Join(dir, "no_amrm")
	require.NoError(t, records.WriteTokenFile(noAMRM, records.NewCredentials(), records.FormatWritable))
	garbage := filepath.Join(dir, "garbage")
	require.NoError(t, os.WriteFile(garbage, []byte("not a token file"), 0o600))

	good := map[string]string{
		EnvContainerID:       "container_e17_1700000000000_0042_02_000001",
		records.EnvTokenFile: tokenFile,
		EnvSubmitTime:        "1700000000123",
		EnvMaxAttempts:       "2",
		EnvNMHost:            "nm1.example.com",
	}
	opts, err := FromEnv(envMap(good))
	require.NoError(t, err)
	id, got := opts.Identity, opts.Credentials
	assert.Equal(t, Identity{
		AppID: "application_1700000000000_0042", AttemptID: "appattempt_1700000000000_0042_000002", Attempt: 2, MaxAttempts: 2,
		ContainerID: mustContainerID(t, "container_e17_1700000000000_0042_02_000001"), SubmitTime: time.UnixMilli(1700000000123), Host: "nm1.example.com",
	}, id)
	assert.True(t, id.LastAttempt())
	_, tok, ok := got.TokenByKind(records.KindAMRMToken)
	require.True(t, ok)
	assert.Equal(t, []byte("id"), tok.Identifier)

	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name string
		env  map[string]string
		want string
		is   error
	}{
		{"no container id", with(EnvContainerID, ""), "CONTAINER_ID is not set", ErrEnvironment},
		{"bad container id", with(EnvContainerID, "container_x"), `CONTAINER_ID="container_x"`, ErrEnvironment},
		{"attempt 0", with(EnvContainerID, "container_1_0001_00_000001"), `CONTAINER_ID="container_1_0001_00_000001"`, ErrEnvironment},
		{"no token file variable", with(records.EnvTokenFile, ""), "HADOOP_TOKEN_FILE_LOCATION is not set", amrm.ErrNoToken},
		{"missing token file", with(records.EnvTokenFile, filepath.Join(dir, "absent")), "absent", os.ErrNotExist},
		{"corrupt token file", with(records.EnvTokenFile, garbage), "garbage", records.ErrBadTokenFile},
		{"no AMRMToken", with(records.EnvTokenFile, noAMRM), "holds no YARN_AM_RM_TOKEN", amrm.ErrNoToken},
		{"bad submit time", with(EnvSubmitTime, "yesterday"), "APP_SUBMIT_TIME_ENV", ErrEnvironment},
		{"bad max attempts", with(EnvMaxAttempts, "-1"), "MAX_APP_ATTEMPTS", ErrEnvironment},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromEnv(envMap(tc.env))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.ErrorIs(t, err, tc.is)
		})
	}
}

// TestCommandSurvivesTheLaunchScript runs the command words the way the NodeManager's launch
// script does (joined with spaces inside `exec /bin/bash -c "..."`) and checks that the program
// receives its arguments byte for byte.
func TestCommandSurvivesTheLaunchScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	args := []string{"plain", "two words", `dq"uote`, "sq'uote", "$HOME", "`id`", `back\slash`, "", "a;b|c&d", "*", "~", "x=y", "tab\there", "new\nline"}
	spec := &jobspec.Spec{Command: append([]string{"printf", `%s\0`}, args...)}
	words := Command(spec)
	require.Equal(t, []string{"1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"}, words[len(words)-2:])
	joined := strings.Join(words[:len(words)-2], " ") + " 1>" + filepath.Join(dir, "out")
	script := filepath.Join(dir, "launch_container.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/bash\nexec /bin/bash -c \""+joined+"\"\n"), 0o700))
	out, err := exec.Command(bash, script).CombinedOutput()
	require.NoError(t, err, "%s", out)
	got, err := os.ReadFile(filepath.Join(dir, "out"))
	require.NoError(t, err)
	assert.Equal(t, strings.Join(args, "\x00")+"\x00", string(got))
}

func TestCapabilityUnits(t *testing.T) {
	reg := &amrm.Registration{ResourceTypes: []amrm.ResourceType{{Name: "memory-mb", Units: "Mi"}, {Name: "vcores"}, {Name: "yarn.io/gpu"}, {Name: "example.com/mem", Units: "Mi"}}}
	spec := &jobspec.Spec{Resource: []jobspec.Quantity{
		{Name: "memory-mb", Value: 2, Units: "Gi"}, {Name: "vcores", Value: 2}, {Name: "yarn.io/gpu", Value: 1}, {Name: "example.com/mem", Value: 1, Units: "Gi"},
	}}
	r, err := Capability(spec, reg)
	require.NoError(t, err)
	assert.Equal(t, records.NewResources(2048, 2, records.Resource{Name: "yarn.io/gpu", Value: 1}, records.Resource{Name: "example.com/mem", Value: 1024, Units: "Mi"}), r)

	spec.Resource[0].Units = "parsecs"
	_, err = Capability(spec, reg)
	assert.ErrorContains(t, err, "memory-mb=2parsecs")
}

func mustContainerID(t *testing.T, s string) records.ContainerID {
	t.Helper()
	id, err := records.ParseContainerID(s)
	require.NoError(t, err)
	return id
}

// TestLastAttemptWithAValidityWindow: with an attempt-failures-validity-interval an attempt whose
// number reaches the maximum may still be followed by another, so the AM keeps the staging
// directory and its ranks record (bench/soak.sh: attempt 6 of a job found its files removed).
func TestLastAttemptWithAValidityWindow(t *testing.T) {
	for _, tc := range []struct {
		attempt, max int
		validity     int64
		want         bool
	}{
		{1, 2, 0, false},
		{2, 2, 0, true},
		{2, 2, 60000, false},
		{6, 2, 60000, false},
		{1, 0, 0, true},
		{3, 2, -1, true},
	} {
		id := Identity{Attempt: tc.attempt, MaxAttempts: tc.max}
		assert.Equal(t, tc.want, lastAttempt(id, &jobspec.Spec{AttemptFailuresValidityMillis: tc.validity}), "%+v", tc)
	}
}
