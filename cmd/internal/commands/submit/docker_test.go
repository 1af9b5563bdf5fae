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

func TestDockerFlags(t *testing.T) {
	got := capture(t, "--gpus", "1", "--image", "registry.example.com:5000/ml/torch:2.4", "--docker-network", "host",
		"--docker-run-privileged", "--docker-mount", "/etc/passwd:/etc/passwd:ro", "--docker-mount", "/data:/data",
		"--docker-coordination-dir", "/data/coord", "--", "python", "t.py")
	r, err := buildRequest(got)
	require.NoError(t, err)
	require.NotNil(t, r.Docker)
	assert.Equal(t, "registry.example.com:5000/ml/torch:2.4", r.Docker.Image)
	assert.Equal(t, "host", r.Docker.Network)
	assert.True(t, r.Docker.Privileged)
	assert.Equal(t, "/data/coord", r.Docker.CoordinationDir)
	assert.Equal(t, []records.DockerMount{{Source: "/etc/passwd", Target: "/etc/passwd", ReadOnly: true}, {Source: "/data", Target: "/data"}}, r.Docker.Mounts)

	r, err = buildRequest(capture(t, "--gpus", "1", "--", "x"))
	require.NoError(t, err)
	assert.Nil(t, r.Docker, "no Docker flag: plain containers")

	_, err = buildRequest(capture(t, "--image", "r/i", "--docker-mount", "data:/data", "--", "x"))
	var usage *cmdutil.UsageError
	require.ErrorAs(t, err, &usage)
	assert.ErrorContains(t, err, `--docker-mount: docker mount "data:/data": the source "data" is not an absolute path`)
}

// TestDockerDryRun: --dry-run shows each role's Docker container; --image overrides the job
// file's image: and a role's own image stays.
func TestDockerDryRun(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "job.yaml")
	require.NoError(t, os.WriteFile(p, []byte("image: library/ubuntu:22.04\nroles:\n  ps: {command: x}\n  w: {gpus: 1, image: r/w:1, command: y}\n"), 0o600))
	f, out, errOut := cmdtest.Buffers(cmdutil.Env{})
	f.Output = cmdutil.OutputJSON
	require.NoError(t, cmdtest.Execute(NewCmdSubmit(f, nil), "--spec", p, "--dry-run"), errOut.String())
	assert.Contains(t, out.String(), `"docker": {
        "image": "library/ubuntu:22.04"
      }`)
	assert.Contains(t, out.String(), `"image": "r/w:1",
        "mounts": [
          "/var/lib/yarn-er:/var/lib/yarn-er:rw"
        ],
        "coordinationFile": "/var/lib/yarn-er/yarn-er-coordination"`)

	f, out, errOut = cmdtest.Buffers(cmdutil.Env{})
	require.NoError(t, cmdtest.Execute(NewCmdSubmit(f, nil), "--spec", p, "--image", "r/other:2", "--dry-run"), errOut.String())
	assert.Contains(t, out.String(), "image: r/other:2")
	assert.Contains(t, out.String(), "image: r/w:1")
	assert.NotContains(t, out.String(), "ubuntu")
}
