//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envProfilesState names a running mini-YARN started from docker/conf-profiles, to reuse.
const envProfilesState = "YARN_ER_MINIYARN_PROFILES_STATE"

var profilesMiniYARN = &lazyCluster{what: "profiles", env: envProfilesState, conf: "conf-profiles", state: "mini-yarn-profiles"}

// TestResourceProfiles: on a mini-YARN with resource profiles on (docker/conf-profiles), preflight
// reads the RM's resource-profiles.json and flags the profile above the maximum allocation;
// `submit --profile gpu-1` asks by the profile (the AM resolves it from its registration) and
// succeeds with a GPU per rank; a profile the RM does not have is refused before anything is
// staged.
func TestResourceProfiles(t *testing.T) {
	parallelOn(t, &profilesMiniYARN.guard)
	ep := profilesMiniYARN.endpoints(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	root, err := RepoRoot()
	require.NoError(t, err)
	pf := runCLI(t, ctx, ep, "preflight", "--flink-conf", filepath.Join(root, "examples", "flink-conf.yaml"), "-o", "json")
	var rep struct {
		Checks []struct{ ID, Status, Message, Fix string } `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(pf.stdout), &rep), "stdout: %s\nstderr: %s", pf.stdout, pf.stderr)
	status := map[string][]string{}
	for _, ch := range rep.Checks {
		status[ch.ID] = append(status[ch.ID], ch.Status+": "+ch.Message+" (fix: "+ch.Fix+")")
	}
	require.Len(t, status["yarn.resource-profiles"], 1)
	assert.Contains(t, status["yarn.resource-profiles"][0], "pass: 5 profiles: default, gpu-1, gpu-2, huge, small")
	require.Len(t, status["yarn.profile-max-allocation"], 1, "%v", status["yarn.profile-max-allocation"])
	assert.Contains(t, status["yarn.profile-max-allocation"][0], "warn: profile huge asks for 65536Mi of memory-mb, above")
	assert.Equal(t, 0, pf.code, "a warning: exit 0: %s", pf.stderr)

	tr := runCLI(t, ctx, ep, "translate", "-D", "taskmanager.memory.process.size=1g")
	require.Equal(t, 0, tr.code, tr.stderr)
	assert.Contains(t, tr.stdout, "Smallest resource profile that holds it: default <memory-mb:1024, vcores:1>")

	before, apps := stagingEntries(t, ep), appIDs(t, ep)
	bad := runCLI(t, ctx, ep, "submit", "--profile", "nope", "--", "true")
	assert.Equal(t, 2, bad.code, bad.stderr)
	assert.Contains(t, bad.stderr, `"nope" is not a resource profile of the ResourceManager`)
	assert.Contains(t, bad.stderr, "default, gpu-1, gpu-2, huge, small")
	assert.Equal(t, before, stagingEntries(t, ep), "nothing staged")
	assert.Equal(t, apps, appIDs(t, ep), "nothing submitted")

	share := t.TempDir()
	r := runCLI(t, ctx, ep, append([]string{"submit", "--profile", "gpu-1", "--containers", "2", "-o", "json"},
		append(shareEnv(share), "--", "sh", "-c", `test -n "$CUDA_VISIBLE_DEVICES" && echo "$CUDA_VISIBLE_DEVICES" > "$SHARE/rank-$YARN_ER_RANK"`)...)...)
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.Equal(t, "SUCCEEDED", res["finalStatus"])
	appID, _ := res["applicationId"].(string)
	logs := runCLI(t, ctx, ep, "app", "logs", appID, "--file", "stderr")
	require.Equal(t, 0, logs.code, logs.stderr)
	assert.Contains(t, logs.stdout, `msg="am: asking by resource profile" role=main profile=gpu-1`)
}
