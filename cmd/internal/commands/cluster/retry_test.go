package cluster

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// runNodesLogged runs `cluster nodes` against rm with extra args, logging at warn (the default)
// to the returned stderr.
func runNodesLogged(t *testing.T, rm string, args ...string) (error, string, string) {
	t.Helper()
	f, out, errOut := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"HADOOP_USER_NAME": "u"}))
	require.NoError(t, f.SetupLogger())
	err := cmdtest.Execute(NewCmdNodes(f, nil), append([]string{"--rm", rm}, args...)...)
	return err, out.String(), errOut.String()
}

// TestRetriesAreLoggedAtWarn: each retry of a failing RM request is a warning on stderr, so that an
// interactive command is not silent while it retries.
func TestRetriesAreLoggedAtWarn(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/nodes", http.StatusOK, `{"nodes":null}`)
	rm.Fault("GET /ws/v1/cluster/nodes", yarnfake.Fault{Status: http.StatusServiceUnavailable, ContentType: "text/plain", Body: "busy", Times: 2})
	err, out, stderr := runNodesLogged(t, rm.URL())
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "(no nodes)")
	assert.Equal(t, 3, rm.Count("GET /ws/v1/cluster/nodes"))
	assert.Contains(t, stderr, "level=WARN")
	assert.Contains(t, stderr, "retrying")
	assert.Contains(t, stderr, "attempt=1")
	assert.Contains(t, stderr, "attempt=2")
}

// TestHungRMStopsAtTheTimeoutAndNamesTheFlag: against an RM that never answers, --rm-timeout bounds
// the command's requests, retries included (one attempt fills it), and the error names the flag.
func TestHungRMStopsAtTheTimeoutAndNamesTheFlag(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.Fault("GET /ws/v1/cluster/nodes", yarnfake.Fault{Hang: true})
	err, out, _ := runNodesLogged(t, rm.URL(), "--rm-timeout", "300ms")
	require.Error(t, err)
	assert.Contains(t, reported(err), "--rm-timeout")
	assert.Equal(t, cmdutil.ExitError, cmdutil.ExitCode(err))
	assert.Empty(t, out)
	assert.Equal(t, 1, rm.Count("GET /ws/v1/cluster/nodes"), "no retry once the --rm-timeout budget is spent")
}

// TestRMTimeoutBoundsTheWholeCommand: --rm-timeout is one deadline for the command, retries
// included, not one per attempt: after a quick 503 and its retry, the attempt in flight against a
// hung RM is cut at the command's deadline (the error is the yarn client's DeadlineError, not a
// per-attempt timeout followed by a refused retry), and the message names the flag.
func TestRMTimeoutBoundsTheWholeCommand(t *testing.T) {
	rm := yarnfake.New(t)
	rm.Fault("GET /ws/v1/cluster/nodes", yarnfake.Fault{Status: http.StatusServiceUnavailable, Times: 1})
	rm.Fault("GET /ws/v1/cluster/nodes", yarnfake.Fault{Hang: true})
	start := time.Now()
	err, out, _ := runNodesLogged(t, rm.URL(), "--rm-timeout", "1s")
	elapsed := time.Since(start)
	require.Error(t, err)
	var de *yarn.DeadlineError
	require.ErrorAs(t, err, &de, "%v", err)
	assert.ErrorIs(t, err, yarn.ErrTimeout)
	assert.Equal(t, 2, rm.Count("GET /ws/v1/cluster/nodes"), "one 503, then one hung attempt cut by the deadline")
	assert.Empty(t, out)
	assert.Equal(t, cmdutil.ExitError, cmdutil.ExitCode(err))
	// A sanity bound only (4× the timeout): the count above is the real check.
	assert.Less(t, elapsed, 4*time.Second)

	assert.Contains(t, reported(err), "--rm-timeout bounds the whole command")
}

// TestUnreachableRMSaysWhereTheAddressComesFrom: a ResourceManager that refuses the connection
// is reported as unreachable, with where its address is set.
func TestUnreachableRMSaysWhereTheAddressComesFrom(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	err, out, _ := runNodesLogged(t, dead, "--rm-timeout", "5s")
	require.Error(t, err)
	assert.ErrorIs(t, err, yarn.ErrUnreachable)
	assert.Empty(t, out)
	msg := reported(err)
	assert.Contains(t, msg, "connection refused")
	assert.Contains(t, msg, "check --rm, or yarn.resourcemanager.webapp.address")
	assert.Equal(t, cmdutil.ExitError, cmdutil.ExitCode(err))
}

// reported is what yarn-er prints for err.
func reported(err error) string {
	f, _, errOut := cmdtest.Buffers(cmdutil.Env{})
	f.ReportError(NewCmdNodes(f, nil), nil, err)
	return errOut.String()
}
