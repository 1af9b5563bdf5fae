package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// TestStatusRMTimeoutIsOneDeadline: `app status` asks the RM twice (the application, then its
// attempts); each answer takes 600 ms, within a 1 s --rm-timeout per request, but not both
// together: the command's one deadline ends it with the yarn client's DeadlineError. `app wait`,
// which follows an application, has a per-request bound only and gets its answer from the same RM.
func TestStatusRMTimeoutIsOneDeadline(t *testing.T) {
	const id = "application_1796117006310_0001"
	rm := yarnfake.New(t)
	rm.Fault("GET /ws/v1/cluster/apps/"+id, yarnfake.Fault{Delay: 600 * time.Millisecond})
	rm.Fault("GET /ws/v1/cluster/apps/"+id+"/appattempts", yarnfake.Fault{Delay: 600 * time.Millisecond})

	factory := func() *cmdutil.Factory {
		f, _, _ := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"HADOOP_USER_NAME": "yarner"}))
		return f
	}
	start := time.Now()
	err := cmdtest.Execute(NewCmdStatus(factory(), nil), id, "--rm", rm.URL(), "--rm-timeout", "1s")
	elapsed := time.Since(start)
	var de *yarn.DeadlineError
	require.ErrorAs(t, err, &de, "%v", err)
	assert.Equal(t, 1, rm.Count("GET /ws/v1/cluster/apps/"+id+"/appattempts"), "the second request was cut, not retried")
	assert.Less(t, elapsed, 4*time.Second) // sanity bound only

	err = cmdtest.Execute(NewCmdWait(factory(), nil), id, "--rm", rm.URL(), "--rm-timeout", "1s", "--quiet")
	// The recorded application ended FAILED: wait got the answer and exits as submit does.
	assert.Equal(t, cmdutil.ExitAppFailed, cmdutil.ExitCode(err), "%v", err)
	assert.NotErrorAs(t, err, &de)
}
