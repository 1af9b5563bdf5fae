//go:build integration

package integration

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokenLifetime is the maximum lifetime, in seconds, of the HDFS delegation tokens of the
// short-token secure mini-YARN (docker/mini-yarn start --token-lifetime; renewal interval half
// of it).
const tokenLifetime = 90

// shortTokenMiniYARN is a secure mini-YARN (privacy) whose HDFS delegation tokens live
// tokenLifetime seconds, and whose HDFS is an HA nameservice (--hdfs-ha: the first NameNode a
// standby, as production clusters' HDFS mostly is).
var shortTokenMiniYARN = &lazyCluster{what: "secure, short-lived tokens, HA HDFS", env: "YARN_ER_MINIYARN_TOKENS_STATE", conf: "conf",
	state: "mini-yarn-secure-tokens", flags: []string{"--kerberos", "--rpc-protection", "privacy", "--token-lifetime", fmt.Sprint(tokenLifetime), "--hdfs-ha"}}

// TestSecureLongRunningTokens: `submit --ship-keytab` on a secure mini-YARN whose HDFS delegation
// tokens live at most tokenLifetime seconds, its HDFS an HA nameservice: the AM refreshes and
// publishes the tokens, and the followers read them, through the active NameNode past the standby. The job's ranks run for three such lifetimes, then write and read
// HDFS with Hadoop's own client (the harness build's client jars) from their container's token file:
// only the fresh tokens the ApplicationMaster fetched with the shipped keytab, and that `yarn-er
// tokens follow` put into each rank's token file, can do that. The ranks never get the keytab.
func TestSecureLongRunningTokens(t *testing.T) {
	parallelWaitingOn(t, &shortTokenMiniYARN.guard)
	ep := shortTokenMiniYARN.endpoints(t)
	require.NotNil(t, ep.Secure)
	require.Equal(t, "mini-ns", ep.HDFSNameservice, "the cluster's HDFS is an HA nameservice")
	env := envSh(t, ep)

	rounds := 3 * tokenLifetime / 5
	// Each rank: records its token file's digest every 5 s, checks that no keytab reached it,
	// then writes and reads HDFS with Hadoop's client, which reads $HADOOP_TOKEN_FILE_LOCATION.
	script := hfsFunc + `for i in $(seq 1 ` + fmt.Sprint(rounds) + `); do md5sum < "$HADOOP_TOKEN_FILE_LOCATION" | cut -c1-12 >> digests; sleep 5; done
echo "rank $YARN_ER_RANK: $(sort -u digests | wc -l) token files"
ls *.keytab 2>/dev/null && { echo "rank $YARN_ER_RANK holds a keytab"; exit 9; }
echo "rank $YARN_ER_RANK wrote this after $(wc -l < digests) rounds" | hfs -put -f - /tmp/long-running-$YARN_ER_RANK || exit 7
hfs -cat /tmp/long-running-$YARN_ER_RANK || exit 8`
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(3*tokenLifetime)*time.Second+6*time.Minute)
	defer cancel()
	args := append([]string{"submit", "--ship-keytab", "--containers", "2", "--memory", "512m", "-o", "json", "--progress", "plain"},
		fsShellEnv(t, ep, env)...)
	sub := secureCLI(t, ctx, env, append(args, "--", "bash", "-c", script)...)
	require.Equal(t, 0, sub.code, sub.stderr)
	res := sub.jsonObject(t)
	appID := res["applicationId"].(string)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"], "both ranks read HDFS after %d s with tokens that live %d s: %s", 3*tokenLifetime, tokenLifetime, sub.stderr)

	// The NodeManagers aggregate the logs with the tokens the ResourceManager fetched for them
	// (yarn.resourcemanager.proxy-user-privileges.enabled). The AM's log quotes the command, so
	// only whole lines count.
	wrote := regexp.MustCompile(`(?m)^rank [01] wrote this after [0-9]+ rounds$`)
	var logs cliRun
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(2 * time.Second) {
		logs = secureCLI(t, ctx, env, "app", "logs", appID, "--file", "stdout,stderr,yarn-er-tokens.log")
		if logs.code == 0 && len(wrote.FindAllString(logs.stdout, -1)) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("app logs does not show both ranks' HDFS round trip (exit %d):\n%s\n%s", logs.code, logs.stdout, logs.stderr)
		}
	}
	for r := 0; r < 2; r++ {
		m := fmt.Sprintf("rank %d: ", r)
		i := strings.Index(logs.stdout, m)
		require.GreaterOrEqual(t, i, 0, logs.stdout)
		var n int
		_, err := fmt.Sscanf(logs.stdout[i+len(m):], "%d token files", &n)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, 3, "rank %d's token file was replaced over and over", r)
	}
	assert.Contains(t, logs.stdout, "tokens follow: fresh tokens written", "the follower's log (yarn-er-tokens.log) is in the application's logs")
	// The AM reached the nameservice's active NameNode with the application's tokens.
	assert.NotContains(t, logs.stdout, "ranks record not written")
	assert.Contains(t, logs.stdout, "am: staging directory removed")
}
