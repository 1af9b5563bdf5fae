package submit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/records"
)

func capture(t *testing.T, args ...string) *Options {
	t.Helper()
	return cmdtest.Capture(t, NewCmdSubmit, args...)
}

func TestSubmitFlags(t *testing.T) {
	got := capture(t, "--gpus", "1", "--fpgas", "2", "--resource", "nvidia.com/gpu=1", "--resource", "x.io/y=3",
		"--memory", "4g", "--vcores", "2", "--containers", "8", "--queue", "gpu", "--name", "train", "--tags", "a,b",
		"--priority", "5", "--node-label", "gpu", "--am-memory", "512m", "--am-vcores", "2", "--max-attempts", "3",
		"--restarts", "1", "--env", "A=1", "--env", "B=2", "--file", "data.csv#input.csv", "--archive", "venv.tgz#venv",
		"--yarn-er-binary", "/opt/yarn-er", "--am-binary", "/opt/yarn-er-am", "--keep-staging", "--ship-keytab", "--force", "--detach", "--progress", "plain",
		"--rm", "http://rm:8088", "--hadoop-conf", "/etc/hadoop/conf", "--user", "alice",
		"--", "python", "train.py", "--epochs", "3")
	r := got.Req
	assert.Equal(t, int64(1), r.GPUs)
	assert.Equal(t, int64(2), r.FPGAs)
	assert.Equal(t, []string{"nvidia.com/gpu=1", "x.io/y=3"}, r.Resources)
	assert.Equal(t, "4g", r.Memory)
	assert.Equal(t, int64(2), r.VCores)
	assert.Equal(t, 8, r.Containers)
	assert.Equal(t, "gpu", r.Queue)
	assert.Equal(t, "train", r.Name)
	assert.Equal(t, []string{"a", "b"}, r.Tags)
	assert.Equal(t, "gpu", r.NodeLabel)
	assert.Equal(t, int32(2), r.AMVCores)
	assert.Equal(t, int32(3), r.MaxAttempts)
	assert.Equal(t, 1, r.Restarts)
	assert.Equal(t, "/opt/yarn-er", r.Binary)
	assert.Equal(t, "/opt/yarn-er-am", r.AMBinary)
	assert.True(t, r.KeepStaging)
	assert.True(t, r.ShipKeytab)
	assert.True(t, r.Force)
	assert.Equal(t, int32(5), got.Priority)
	assert.True(t, got.PrioritySet)
	assert.Equal(t, "512m", got.AMMemory)
	assert.Equal(t, []string{"A=1", "B=2"}, got.Env)
	assert.Equal(t, []string{"data.csv#input.csv"}, got.Files)
	assert.Equal(t, []string{"venv.tgz#venv"}, got.Archives)
	assert.True(t, got.Detach)
	assert.Equal(t, "plain", got.Progress)
	assert.Equal(t, []string{"http://rm:8088"}, got.Conn.RM.Addrs)
	assert.Equal(t, "/etc/hadoop/conf", got.Conn.Hadoop.Dir)
	assert.Equal(t, "alice", got.Conn.RM.User)
	assert.Equal(t, []string{"python", "train.py", "--epochs", "3"}, got.Args, "flags after the command are the command's")
	assert.NotNil(t, got.Ctx)
}

func TestSubmitFlagDefaults(t *testing.T) {
	got := capture(t, "nvidia-smi", "-L")
	assert.Equal(t, 1, got.Req.Containers)
	assert.Equal(t, "auto", got.Progress)
	assert.False(t, got.PrioritySet)
	assert.False(t, got.Detach)
	assert.Empty(t, got.Flink.Path)
	assert.Equal(t, []string{"nvidia-smi", "-L"}, got.Args, "the first non-flag word starts the command")
}

func TestBuildRequest(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.csv")
	venv := filepath.Join(dir, "venv.tgz")
	require.NoError(t, os.WriteFile(data, []byte("1,2\n"), 0o600))
	require.NoError(t, os.WriteFile(venv, []byte("\x1f\x8bz"), 0o600)) // gzip's magic number

	got := capture(t, "--priority", "0", "--am-memory", "1g", "--env", "MODE=test", "--file", data+"#input.csv",
		"--archive", venv+"#venv", "--", "true")
	r, err := buildRequest(got)
	require.NoError(t, err)
	require.NotNil(t, r.Priority, "--priority 0 is given, not the queue's default")
	assert.Equal(t, int32(0), *r.Priority)
	assert.Equal(t, int64(1024), r.AMMemoryMB)
	assert.Equal(t, map[string]string{"MODE": "test"}, r.Env)
	require.Len(t, r.Files, 1)
	assert.Equal(t, "input.csv", r.Files[0].Name)
	assert.Equal(t, records.LocalFile, r.Files[0].Type)
	require.Len(t, r.Archives, 1)
	assert.Equal(t, records.LocalArchive, r.Archives[0].Type)
	assert.Equal(t, []string{"true"}, r.Command)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "no command"},
		{[]string{"--containers", "0", "--", "true"}, "--containers 0"},
		{[]string{"--am-memory", "lots", "--", "true"}, `--am-memory: "lots": want a size such as 4g`},
		{[]string{"--am-memory", "0", "--", "true"}, `--am-memory "0": must be more than 0`},
		{[]string{"--am-memory", "1k", "--", "true"}, `--am-memory: "1k" is not a whole number of MiB`},
		{[]string{"--am-memory", "99999999999999999999", "--", "true"}, "too large"},
		{[]string{"--env", "NOEQUALS", "--", "true"}, `--env "NOEQUALS"`},
		{[]string{"--env", "A=1", "--env", "A=2", "--", "true"}, "--env A is given twice (A=1 and A=2)"},
		{[]string{"--vcores", "0", "--", "true"}, "--vcores 0: must be 1 or more (leave it out for the default, 1)"},
		{[]string{"--am-vcores", "0", "--", "true"}, "--am-vcores 0: must be 1 or more"},
		{[]string{"--max-attempts", "0", "--", "true"}, "--max-attempts 0: must be 1 or more"},
		{[]string{"--file", filepath.Join(dir, "absent"), "--", "true"}, "absent"},
		{[]string{"--progress", "loud", "--", "true"}, "--progress"},
	} {
		_, err := buildRequest(capture(t, tc.args...))
		var usage *cmdutil.UsageError
		require.ErrorAs(t, err, &usage, tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestBuildRequestFromSpec(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(doc), 0o600))
		return p
	}
	one := write("one.yaml", "name: from-file\nqueue: q1\nenv: {A: file, B: file}\nroles:\n  worker:\n    count: 2\n    gpus: 1\n    command: [python, t.py]\n")
	two := write("two.yaml", "roles:\n  ps: {command: x}\n  worker: {count: 2, command: y}\n")
	bad := write("bad.yaml", "roles:\n  worker:\n    count: 2\n    gpu: 1\n    command: [x]\n")

	r, err := buildRequest(capture(t, "--spec", one))
	require.NoError(t, err)
	assert.Equal(t, "from-file", r.Name)
	assert.Equal(t, "q1", r.Queue)
	require.Len(t, r.Roles, 1)
	assert.Equal(t, 2, r.Roles[0].Containers)
	assert.Equal(t, int64(1), r.Roles[0].GPUs)
	assert.Empty(t, r.Command)

	// Flags override the file; --env adds to its env, winning.
	r, err = buildRequest(capture(t, "--spec", one, "--queue", "q2", "--containers", "4", "--gpus", "2", "--env", "B=flag", "--", "python", "other.py"))
	require.NoError(t, err)
	assert.Equal(t, "q2", r.Queue)
	assert.Equal(t, 4, r.Roles[0].Containers)
	assert.Equal(t, int64(2), r.Roles[0].GPUs)
	assert.Equal(t, []string{"python", "other.py"}, r.Roles[0].Command)
	assert.Equal(t, map[string]string{"A": "file", "B": "flag"}, r.Env)

	// Role flags need a file of one role.
	_, err = buildRequest(capture(t, "--spec", two, "--gpus", "1"))
	var usage *cmdutil.UsageError
	require.ErrorAs(t, err, &usage)
	assert.ErrorContains(t, err, "--gpus: "+two+" has 2 roles (ps, worker)")

	// A bad job file is a usage error (exit 2) naming file:line, the field and the fix.
	_, err = buildRequest(capture(t, "--spec", bad))
	require.ErrorAs(t, err, &usage)
	assert.ErrorContains(t, err, bad+":4: roles.worker.gpu: unknown field (fix: did you mean gpus?")
	assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))

	_, err = buildRequest(capture(t, "--spec", one, "--flink-conf", one))
	require.ErrorAs(t, err, &usage)
	assert.ErrorContains(t, err, "does not go with --spec")
}

// --dry-run prints a job file's names, commands and values escaped.
func TestDryRunIsTerminalSafe(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "job.yaml")
	require.NoError(t, os.WriteFile(p, []byte("name: \"job\\e[31m\"\nenv: {A: \"x\\e]0;t\\a\"}\nroles:\n  w:\n    command: [\"echo\", \"\\e[2J\\u202e\"]\n"), 0o600))
	for _, output := range []string{cmdutil.OutputTable, cmdutil.OutputJSON} {
		f, out, errOut := cmdtest.Buffers(cmdutil.Env{})
		f.Output = output
		require.NoError(t, cmdtest.Execute(NewCmdSubmit(f, nil), "--spec", p, "--dry-run"), errOut.String())
		cmdtest.AssertTerminalSafe(t, out.String())
		assert.Contains(t, out.String(), "echo")
	}
}
