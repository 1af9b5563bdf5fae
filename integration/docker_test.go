//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubmitImageOnPlainNodeManagers: the mini-YARN runs DefaultContainerExecutor (LCE's setuid
// container-executor is not on Maven Central), so `submit --image` is refused by the preflight's
// yarn.docker-runtime, exit 3, before anything is submitted. With --force the ranks are submitted
// anyway: the real NodeManagers take the launch contexts with the Docker runtime's variables
// (which DefaultContainerExecutor ignores, running the ranks plainly), and each rank's yarn-er
// exec uses the coordination file below the directory that Docker would have mounted.
func TestSubmitImageOnPlainNodeManagers(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	apps := appIDs(t, ep)
	r := runCLI(t, ctx, ep, "submit", "--gpus", "1", "--memory", "128m", "--image", "library/ubuntu:22.04", "--", "true")
	assert.Equal(t, 3, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "yarn.docker-runtime")
	assert.Contains(t, r.stderr, "runs no Docker container")
	assert.Contains(t, r.stderr, "does not allow docker")
	assert.Equal(t, apps, appIDs(t, ep), "nothing submitted")

	share, coord := t.TempDir(), t.TempDir()
	require.NoError(t, os.Chmod(coord, 0o755))
	script := `env | grep -E '^(YARN_CONTAINER_RUNTIME_|YARN_ER_COORDINATION_FILE=|CUDA_VISIBLE_DEVICES=)' | sort > "$SHARE/rank-$YARN_ER_RANK"`
	r = runCLI(t, ctx, ep, "submit", "--containers", "2", "--gpus", "1", "--memory", "128m", "--force",
		"--image", "library/ubuntu:22.04", "--docker-network", "host", "--docker-mount", "/etc/passwd:/etc/passwd:ro",
		"--docker-coordination-dir", coord, "--env", "SHARE="+share, "-o", "json", "--", "sh", "-c", script)
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	for rank := range 2 {
		b, err := os.ReadFile(filepath.Join(share, fmt.Sprintf("rank-%d", rank)))
		require.NoError(t, err, "rank %d ran", rank)
		env := strings.Split(strings.TrimSpace(string(b)), "\n")
		assert.Contains(t, env, "YARN_CONTAINER_RUNTIME_TYPE=docker")
		assert.Contains(t, env, "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE=library/ubuntu:22.04")
		assert.Contains(t, env, "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS="+coord+":"+coord+":rw,/etc/passwd:/etc/passwd:ro")
		assert.Contains(t, env, "YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK=host")
		assert.Contains(t, env, "YARN_ER_COORDINATION_FILE="+filepath.Join(coord, "yarn-er-coordination"))
		assert.NotContains(t, strings.Join(env, "\n"), "PRIVILEGED", "never asked for")
		assert.Regexp(t, `CUDA_VISIBLE_DEVICES=GPU-`, strings.Join(env, "\n"), "exec ran in front of the program")
	}
	locks, err := filepath.Glob(filepath.Join(coord, "yarn-er-coordination*"))
	require.NoError(t, err)
	assert.NotEmpty(t, locks, "exec coordinated in the mounted directory")
}
