//go:build integration

package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
)

// fsShellEnv returns the --env flags that let a rank's script call Hadoop's own FsShell as
// `hfs ARGS` (the client jars of the harness build, the cluster's configuration, Java):
// hfsFunc defines hfs. Hadoop's client authenticates with the container's token file.
func fsShellEnv(t *testing.T, ep *Endpoints, env map[string]string) []string {
	t.Helper()
	root := repoRoot(t)
	lib := filepath.Join(root, "docker", "harness", "target", "hadoop-"+ep.HadoopVersion, "current", "lib")
	cp, err := harnessHadoopClasspath(root, ep.HadoopVersion)
	if err == nil {
		// The shaded client logs through slf4j's API, which it does not carry (no binding: silent).
		slf4j, err := filepath.Glob(filepath.Join(lib, "slf4j-api-*.jar"))
		require.NoError(t, err)
		require.Len(t, slf4j, 1, "slf4j-api in the harness build")
		cp += ":" + slf4j[0]
	} else {
		// Lines before 3.5 build the harness from the unshaded hadoop-minicluster: its class path
		// is a client's.
		common, _ := filepath.Glob(filepath.Join(lib, "hadoop-common-*.jar"))
		require.NotEmpty(t, common, "neither the shaded client nor hadoop-common in the harness build: %v", err)
		cp = filepath.Join(lib, "*")
	}
	java, err := javaHome()
	require.NoError(t, err)
	return []string{"--env", "HCONF=" + ep.HadoopConfDir, "--env", "HCP=" + cp, "--env", "JAVA=" + java, "--env", "KRB5_CONFIG=" + env["KRB5_CONFIG"]}
}

// proxyWebHDFS is a WebHDFS client of the cluster as its Kerberos user acting as doAs.
func proxyWebHDFS(t *testing.T, ep *Endpoints, env map[string]string, doAs string) *webhdfs.Client {
	t.Helper()
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: env["HADOOP_CONF_DIR"], Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	bases, err := stage.WebHDFSBases(hc)
	require.NoError(t, err)
	krb, err := kerberos.Login(kerberos.Options{Keytab: ep.Secure.Keytab, Principal: ep.Secure.Principal, Krb5Conf: ep.Secure.Krb5Conf},
		func(string) string { return "" }, nil)
	require.NoError(t, err)
	opts := webhdfs.Options{Bases: bases, DoAs: doAs,
		Authenticate: func(next http.RoundTripper) http.RoundTripper { return yarn.SPNEGOTransport(next, krb, "", nil) }}
	if ca := env["YARN_ER_TLS_CA"]; ca != "" {
		// --https: HDFS's web endpoints too are https only, with the cluster's CA.
		pem, err := os.ReadFile(ca)
		require.NoError(t, err)
		pool := x509.NewCertPool()
		require.True(t, pool.AppendCertsFromPEM(pem), ca)
		opts.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	c, err := webhdfs.New(opts)
	require.NoError(t, err)
	return c
}

// hfsFunc defines the shell function hfs (see fsShellEnv).
const hfsFunc = `hfs() { "$JAVA/bin/java" -Djava.security.krb5.conf="$KRB5_CONFIG" -cp "$HCONF:$HCP" org.apache.hadoop.fs.FsShell "$@"; }
`

// TestSecureProxyUser: on the secure mini-YARN (privacy, https), alice (whose
// hadoop.proxyuser.alice.* let her act as anybody) submits with --do-as bob. The application is
// bob's at the ResourceManager, staged in bob's staging directory, and its ranks hold bob's HDFS
// delegation token: with Hadoop's own client they write a file that is bob's and list bob's
// private staging base (0700); `app logs --do-as bob` reads bob's aggregated logs. bob, who has
// no proxy-user rights, asking for --do-as alice is refused with exit 4 and the rights to give,
// by the ResourceManager and (with --force, which skips the preflight) by HDFS before an
// application id is used; --ship-keytab with --do-as is a usage error.
func TestSecureProxyUser(t *testing.T) {
	ep := secureCluster(t, "privacy", true)
	env := envSh(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	script := hfsFunc + `set -e
echo "rank $YARN_ER_RANK as bob" | hfs -put -f - /user/bob/proxy-$YARN_ER_RANK
owner=$(hfs -stat %u /user/bob/proxy-$YARN_ER_RANK | tail -n 1) # the last line: an unshaded client logs to stdout
test "$owner" = bob || { echo "rank $YARN_ER_RANK: the file is $owner's"; exit 5; }
hfs -ls /user/bob/.yarn-er | grep -q "$YARN_ER_APP_ID" || { echo "rank $YARN_ER_RANK: no staging directory of $YARN_ER_APP_ID"; exit 6; }
hfs -cat /user/bob/proxy-$YARN_ER_RANK
echo "rank $YARN_ER_RANK wrote and read HDFS as $owner"`
	args := append([]string{"submit", "-v", "--do-as", "bob", "--containers", "2", "--memory", "512m", "-o", "json", "--progress", "plain"},
		fsShellEnv(t, ep, env)...)
	sub := secureCLI(t, ctx, env, append(args, "--", "bash", "-c", script)...)
	require.Equal(t, 0, sub.code, sub.stderr)
	res := sub.jsonObject(t)
	appID := res["applicationId"].(string)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"], "both ranks wrote and read HDFS as bob: %s", sub.stderr)
	assert.Contains(t, sub.stderr, "/user/bob/.yarn-er/"+appID, "staged in bob's staging directory")
	// Staged through WebHDFS over https (HDFS serves https only under --https), both hops; no
	// token in the log.
	assert.Contains(t, logLine(sub.stderr, "staging as a proxy user through WebHDFS"), "namenodes=[https://localhost:", sub.stderr)
	assert.Contains(t, logLine(sub.stderr, "writing through a DataNode"), "datanode=https://", sub.stderr)
	assert.NotContains(t, sub.stderr, "delegation=")

	st := secureCLI(t, ctx, env, "app", "status", appID, "-o", "json")
	require.Equal(t, 0, st.code, st.stderr)
	assert.Equal(t, "bob", st.jsonObject(t)["user"], "the application is bob's")

	// bob's aggregated logs (private to bob), read as bob through WebHDFS.
	var logs cliRun
	require.Eventually(t, func() bool {
		logs = secureCLI(t, ctx, env, "app", "logs", "-v", "--do-as", "bob", appID)
		return logs.code == 0 && strings.Count(logs.stdout, "wrote and read HDFS as bob") == 2
	}, time.Minute, time.Second, "app logs --do-as bob shows both ranks' output: %s %s", logs.stdout, logs.stderr)
	dn := logLine(logs.stderr, "reading through a DataNode")
	assert.Contains(t, dn, "namenode=https://localhost:", logs.stderr)
	assert.Contains(t, dn, "datanode=https://", logs.stderr)
	assert.NotContains(t, logs.stderr, "delegation=")

	// The ApplicationMaster removed bob's staging directory with bob's token; what the ranks
	// wrote is bob's.
	web := proxyWebHDFS(t, ep, env, "bob")
	require.Eventually(t, func() bool {
		_, err := web.Stat(ctx, "/user/bob/.yarn-er/"+appID)
		return errors.Is(err, os.ErrNotExist)
	}, time.Minute, time.Second, "the staging directory is removed")
	for _, r := range []string{"0", "1"} {
		fs, err := web.Stat(ctx, "/user/bob/proxy-"+r)
		require.NoError(t, err)
		assert.Equal(t, "bob", fs.Owner)
	}

	// bob has no proxy-user rights.
	bob := without(env, nil, map[string]string{"YARN_ER_KEYTAB": ep.Secure.OtherKeytab, "YARN_ER_PRINCIPAL": ep.Secure.OtherPrincipal})
	for _, tc := range []struct {
		name  string
		extra []string
		by    string
	}{
		{"refused by the ResourceManager", nil, "proxy user refused by the ResourceManager: it does not let bob act as alice"},
		{"refused by HDFS", []string{"--force"}, "proxy user refused by HDFS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"submit", "--do-as", "alice", "--containers", "1", "--memory", "128m"}, tc.extra...)
			r := secureCLI(t, ctx, bob, append(args, "--", "true")...)
			assert.Equal(t, 4, r.code, r.stderr)
			for _, want := range []string{tc.by, "is not allowed to impersonate alice", "fix:", "hadoop.proxyuser.bob.users (alice)", "hadoop.proxyuser.bob.hosts"} {
				assert.Contains(t, r.stderr, want)
			}
			assert.NotContains(t, r.stderr, "goroutine ")
			assert.Empty(t, r.stdout)
		})
	}

	ship := secureCLI(t, ctx, env, "submit", "--do-as", "bob", "--ship-keytab", "--", "true")
	assert.Equal(t, 2, ship.code, ship.stderr)
	assert.Contains(t, ship.stderr, "--ship-keytab: not with --do-as bob")
	assert.False(t, strings.Contains(ship.stderr, "goroutine "))
}

// TestProxyUserSimple: on the mini-YARN without security, whose docker/conf lets the service user
// proxysvc act as anybody (hadoop.proxyuser.proxysvc.*), `submit --user proxysvc --do-as USER` is
// USER's application with USER's staging directory (user.name=proxysvc&doas=USER on WebHDFS), and
// a user without those rights is refused with exit 4 by the ResourceManager and, with --force, by
// HDFS.
func TestProxyUserSimple(t *testing.T) {
	ep := cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sub := runCLI(t, ctx, ep, "submit", "--user", "proxysvc", "--do-as", ep.User, "--keep-staging", "--containers", "1", "--memory", "128m",
		"-o", "json", "--", "true")
	require.Equal(t, 0, sub.code, sub.stderr)
	res := sub.jsonObject(t)
	appID := res["applicationId"].(string)
	assert.Equal(t, "SUCCEEDED", res["finalStatus"])
	dir := "/user/" + ep.User + "/.yarn-er/" + appID
	assert.Equal(t, ep.HDFSURI+dir, res["stagingDir"])
	raw := hdfsClient(t, ep)
	fi, err := raw.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, ep.User, fi.(*hdfs.FileInfo).Owner(), "the staging directory is the proxy user's")
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, raw.RemoveAll(dir))

	st := runCLI(t, ctx, ep, "app", "status", appID, "-o", "json")
	require.Equal(t, 0, st.code, st.stderr)
	assert.Equal(t, ep.User, st.jsonObject(t)["user"], "the application is the proxy user's")

	for _, tc := range []struct {
		extra []string
		by    string
	}{
		{nil, "proxy user refused by the ResourceManager: it does not let carol act as " + ep.User},
		{[]string{"--force"}, "proxy user refused by HDFS"},
	} {
		args := append([]string{"submit", "--user", "carol", "--do-as", ep.User, "--containers", "1", "--memory", "128m"}, tc.extra...)
		r := runCLI(t, ctx, ep, append(args, "--", "true")...)
		assert.Equal(t, 4, r.code, r.stderr)
		assert.Contains(t, r.stderr, tc.by)
		assert.Contains(t, r.stderr, "User: carol is not allowed to impersonate "+ep.User)
		assert.Contains(t, r.stderr, "hadoop.proxyuser.carol.users ("+ep.User+")")
	}
}
