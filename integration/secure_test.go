//go:build integration

package integration

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// The secure mini-YARN (docker/mini-yarn start --kerberos [--rpc-protection P] [--https]): every
// command against a Kerberized ResourceManager, NodeManagers and HDFS, with nothing but the
// exports of `docker/mini-yarn env`, for each value of hadoop.rpc.protection.

// envSecureState names a running secure mini-YARN to reuse; it is used for the protection it was
// started with (its endpoints.json says which), and a cluster of its own is started for the others.
const envSecureState = "YARN_ER_MINIYARN_SECURE_STATE"

// secureClusters are the secure mini-YARNs of the run, one per protection (and https), each started
// on first use and shared by the tests that ask for it (TestMain stops them).
var (
	secureMu       sync.Mutex
	secureClusters = map[string]*lazyCluster{}
)

// secureCluster returns a secure mini-YARN made from docker/conf with this protection (and
// https): the running one of $YARN_ER_MINIYARN_SECURE_STATE when it matches, else the run's own,
// started on first use.
func secureCluster(t *testing.T, protection string, https bool) *Endpoints {
	t.Helper()
	if dir := os.Getenv(envSecureState); dir != "" {
		if c, err := Reuse(context.Background(), dir); err == nil && c.Endpoints.Secure != nil &&
			c.Endpoints.Secure.RPCProtection == protection && (c.Endpoints.Secure.TLSCA != "") == https {
			return c.Endpoints
		}
	}
	ep := secureLazy(protection, https).endpoints(t)
	require.NotNil(t, ep.Secure, "endpoints.json of a --kerberos cluster has its secure fields")
	return ep
}

// secureLazy returns the run's secure cluster of this protection (and https), not started yet
// (secureCluster starts it), e.g. for its guard.
func secureLazy(protection string, https bool) *lazyCluster {
	flags := []string{"--kerberos", "--rpc-protection", protection}
	name := "mini-yarn-secure-" + protection
	if https {
		flags = append(flags, "--https")
		name += "-https"
	}
	secureMu.Lock()
	defer secureMu.Unlock()
	l := secureClusters[name]
	if l == nil {
		l = &lazyCluster{what: "secure (" + strings.Join(flags, " ") + ")", conf: "conf", state: name, flags: flags}
		secureClusters[name] = l
	}
	return l
}

// secureRunClusters are the secure clusters this run started, for TestMain to stop.
func secureRunClusters() []*MiniYARN {
	secureMu.Lock()
	defer secureMu.Unlock()
	var out []*MiniYARN
	for _, l := range secureClusters {
		out = append(out, l.cluster)
	}
	return out
}

// envSh reads the exports of the cluster's env.sh (what `docker/mini-yarn env` prints).
func envSh(t *testing.T, ep *Endpoints) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(ep.StateDir, "env.sh"))
	require.NoError(t, err)
	defer f.Close()
	line := regexp.MustCompile(`^export ([A-Z0-9_]+)='(.*)'$`)
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		require.NotNil(t, m, "env.sh line %q", sc.Text())
		out[m[1]] = strings.ReplaceAll(m[2], `'\''`, `'`)
	}
	require.NoError(t, sc.Err())
	return out
}

// secureCLI runs yarn-er with only the process basics and the given environment (env.sh's
// exports, changed by the test): no HADOOP_USER_NAME, no credential cache of the user running the
// tests.
func secureCLI(t *testing.T, ctx context.Context, env map[string]string, args ...string) cliRun {
	t.Helper()
	cmd := exec.CommandContext(ctx, yarnErBinary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir(), "NO_COLOR=1",
		"KRB5CCNAME=FILE:" + filepath.Join(t.TempDir(), "no-ccache")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return runCommand(t, cmd)
}

// without returns env less the named keys, with the changes of set.
func without(env map[string]string, drop []string, set map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for _, k := range drop {
		delete(out, k)
	}
	for k, v := range set {
		out[k] = v
	}
	return out
}

// TestSecureEndToEnd: on the secure mini-YARN, with each hadoop.rpc.protection (and TLS on the
// web endpoints for two of them), `eval "$(docker/mini-yarn env)"` is all yarn-er needs: the
// cluster commands and the preflight over SPNEGO (and TLS), a GPU submit whose AM registers with
// its AMRMToken and starts ranks with NMTokens over the negotiated SASL layer, whose staging uses
// Kerberized HDFS and whose ranks get the HDFS delegation token, then app status, logs, wait and
// kill.
func TestSecureEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		protection string
		https      bool
		full       bool // the whole command set, not only submit, status and logs
	}{
		{"privacy", true, true},
		{"integrity", false, false},
		{"authentication", true, false},
	} {
		t.Run(fmt.Sprintf("%s,https=%t", tc.protection, tc.https), func(t *testing.T) {
			// Each protection has a cluster of its own: they start and run side by side.
			t.Parallel()
			ep := secureCluster(t, tc.protection, tc.https)
			env := envSh(t, ep)
			for _, k := range []string{"HADOOP_CONF_DIR", "KRB5_CONFIG", "YARN_ER_KEYTAB", "YARN_ER_PRINCIPAL", "YARN_ER_RM"} {
				assert.NotEmpty(t, env[k], k)
			}
			if tc.https {
				assert.True(t, strings.HasPrefix(env["YARN_ER_RM"], "https://localhost:"), env["YARN_ER_RM"])
				assert.FileExists(t, env["YARN_ER_TLS_CA"])
				// HDFS's web endpoints are https only as well, and the client configuration says so.
				hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: env["HADOOP_CONF_DIR"], Getenv: func(string) string { return "" }})
				require.NoError(t, err)
				assert.Equal(t, "HTTPS_ONLY", hc.Get("dfs.http.policy"))
				assert.True(t, strings.HasPrefix(hc.Get("dfs.namenode.https-address"), "localhost:"), hc.Get("dfs.namenode.https-address"))
				assert.Equal(t, hc.Get("dfs.namenode.https-address"), ep.NamenodeHTTPSAddress)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()

			if tc.full {
				info := secureCLI(t, ctx, env, "cluster", "info", "-o", "json")
				require.Equal(t, 0, info.code, info.stderr)
				assert.Equal(t, "STARTED", info.jsonObject(t)["state"])

				nodes := secureCLI(t, ctx, env, "cluster", "nodes", "-o", "json")
				require.Equal(t, 0, nodes.code, nodes.stderr)
				assert.Equal(t, 2, strings.Count(nodes.stdout, `"state": "RUNNING"`), nodes.stdout)
				q := secureCLI(t, ctx, env, "cluster", "queues", "-o", "json")
				assert.Equal(t, 0, q.code, q.stderr)
				assert.Contains(t, q.stdout, "default")

				pf := secureCLI(t, ctx, without(env, nil, map[string]string{"FLINK_HOME": preflightFlinkHome(t)}),
					"preflight", "--flink-conf", filepath.Join(repoRoot(t), "examples", "flink-conf.yaml"), "-o", "json")
				assert.Equal(t, 0, pf.code, pf.stderr)
				rep := pf.jsonObject(t)
				assert.Equal(t, true, rep["ok"], pf.stdout)
				want := map[string][2]string{
					"cluster.reachable":           {"pass", env["YARN_ER_RM"]},
					"security.login":              {"pass", "logged in as alice@" + ep.Secure.Realm + " from a keytab"},
					"security.principals":         {"pass", "yarn.resourcemanager.principal = hadoop/localhost@" + ep.Secure.Realm},
					"security.rpc-protection":     {"pass", "privacy here, privacy on the ResourceManager"},
					"security.https":              {"pass", "HTTPS_ONLY and the ResourceManager's certificate verifies"},
					"security.container-executor": {"warn", "DefaultContainerExecutor"},
				}
				for _, c := range rep["checks"].([]any) {
					m := c.(map[string]any)
					if w, ok := want[m["id"].(string)]; ok {
						assert.Equal(t, w[0], m["status"], m)
						assert.Contains(t, m["message"], w[1], m)
						delete(want, m["id"].(string))
					}
				}
				assert.Empty(t, want, "checks missing from the report")
			}

			// A rank checks that its container carries the HDFS delegation token (its Hadoop
			// clients read HDFS with it).
			script := `echo "rank $YARN_ER_RANK gpu $CUDA_VISIBLE_DEVICES"; ` +
				`test -s "$HADOOP_TOKEN_FILE_LOCATION" && grep -c HDFS_DELEGATION_TOKEN "$HADOOP_TOKEN_FILE_LOCATION" >/dev/null && echo "rank $YARN_ER_RANK has the HDFS token"`
			sub := secureCLI(t, ctx, env, "submit", "--containers", "2", "--gpus", "1", "--memory", "128m", "-o", "json",
				"--progress", "plain", "--", "sh", "-c", script)
			require.Equal(t, 0, sub.code, sub.stderr)
			res := sub.jsonObject(t)
			appID := res["applicationId"].(string)
			assert.Equal(t, "SUCCEEDED", res["finalStatus"], sub.stderr)

			st := secureCLI(t, ctx, env, "app", "status", appID, "-o", "json")
			require.Equal(t, 0, st.code, st.stderr)
			status := st.jsonObject(t)
			assert.Equal(t, "alice", status["user"], "the application is the Kerberos user's")
			assert.Equal(t, "FINISHED", status["state"])

			var logs cliRun
			require.Eventually(t, func() bool {
				logs = secureCLI(t, ctx, env, "app", "logs", "-v", appID)
				return logs.code == 0 && strings.Contains(logs.stdout, "rank 0 has the HDFS token") &&
					strings.Contains(logs.stdout, "rank 1 has the HDFS token")
			}, time.Minute, time.Second, "app logs shows both ranks' output, aggregated in the Kerberized HDFS")
			if tc.protection != "authentication" {
				// A DataNode security layer: the logs are read through WebHDFS, over https when
				// HDFS serves https only, on both hops; no token in the log.
				scheme := map[bool]string{true: "https://localhost:", false: "http://"}[tc.https]
				assert.Contains(t, logLine(logs.stderr, "reading aggregated logs through WebHDFS"), "namenodes=["+scheme, logs.stderr)
				dn := logLine(logs.stderr, "reading through a DataNode")
				assert.Contains(t, dn, "namenode="+scheme, logs.stderr)
				assert.Contains(t, dn, "datanode="+strings.TrimSuffix(scheme, "localhost:"), logs.stderr)
				assert.NotContains(t, logs.stderr, "delegation=")
			}

			if tc.full {
				// wait, then kill a running application.
				w := secureCLI(t, ctx, env, "app", "wait", appID, "-q")
				assert.Equal(t, 0, w.code, w.stderr)
				det := secureCLI(t, ctx, env, "submit", "--detach", "--containers", "1", "--gpus", "1", "--memory", "128m",
					"-o", "json", "--", "sleep", "300")
				require.Equal(t, 0, det.code, det.stderr)
				sleeper := det.jsonObject(t)["applicationId"].(string)
				require.Eventually(t, func() bool {
					s := secureCLI(t, ctx, env, "app", "status", sleeper, "-o", "json")
					return s.code == 0 && s.jsonObject(t)["state"] == "RUNNING"
				}, 2*time.Minute, time.Second)
				k := secureCLI(t, ctx, env, "app", "kill", sleeper)
				assert.Equal(t, 0, k.code, k.stderr)
				assert.Contains(t, k.stdout, sleeper+" KILLED/KILLED")
				apps := secureCLI(t, ctx, env, "cluster", "apps", "-o", "json")
				require.Equal(t, 0, apps.code, apps.stderr)
				assert.Contains(t, apps.stdout, sleeper)
			}
		})
	}
}

// TestSecureBadCredentials: on the secure mini-YARN (privacy, https), every way of having no
// usable credentials ends with exit 4 and a message that names the fix, never a hang, a retry
// loop or a stack trace, and never a key or a ticket; the submit stops before staging anything.
func TestSecureBadCredentials(t *testing.T) {
	ep := secureCluster(t, "privacy", true)
	env := envSh(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	otherCA := writeOtherCA(t)
	for _, tc := range []struct {
		name string
		drop []string
		set  map[string]string
		args []string
		want []string
	}{
		{"no ticket or keytab", []string{"YARN_ER_KEYTAB", "YARN_ER_PRINCIPAL"}, nil, nil,
			[]string{"credential cache", "kinit"}},
		{"keytab without the principal", nil, map[string]string{"YARN_ER_PRINCIPAL": "carol@" + ep.Secure.Realm}, nil,
			[]string{"holds no key of carol@" + ep.Secure.Realm, "only of alice@" + ep.Secure.Realm}},
		{"another user's keytab", nil, map[string]string{"YARN_ER_KEYTAB": ep.Secure.OtherKeytab}, nil,
			[]string{"holds no key of alice@", "bob@"}},
		{"wrong realm", nil, map[string]string{"YARN_ER_PRINCIPAL": "alice@WRONG.EXAMPLE"}, nil,
			[]string{"holds no key of alice@WRONG.EXAMPLE"}},
		{"principal unknown to the KDC", nil, map[string]string{"YARN_ER_PRINCIPAL": "carol@" + ep.Secure.Realm,
			"YARN_ER_KEYTAB": writeKeytabOf(t, "carol", ep.Secure.Realm)}, nil,
			[]string{"the KDC does not know the principal carol@" + ep.Secure.Realm}},
		{"server principal that does not match", nil, map[string]string{"YARN_ER_RM": strings.Replace(env["YARN_ER_RM"], "localhost", "127.0.0.2", 1)}, nil,
			[]string{"does not know the service principal HTTP/127.0.0.2", "_HOST"}},
		{"a CA that did not sign the RM's certificate", nil, map[string]string{"YARN_ER_TLS_CA": otherCA}, nil,
			[]string{"certificate signed by unknown authority", "--tls-ca"}},
		{"no CA", []string{"YARN_ER_TLS_CA"}, nil, nil,
			[]string{"certificate signed by unknown authority", "YARN_ER_TLS_CA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := without(env, tc.drop, tc.set)
			for _, args := range [][]string{{"cluster", "nodes"}, {"submit", "--containers", "2", "--gpus", "1", "--", "true"}} {
				r := secureCLI(t, ctx, e, args...)
				assert.Equal(t, 4, r.code, "%v: %s", args, r.stderr)
				for _, w := range tc.want {
					assert.Contains(t, r.stderr, w, args)
				}
				assert.Contains(t, r.stderr, "fix:", args)
				assert.NotContains(t, r.stderr, "goroutine ", args)
				assert.NotContains(t, r.stderr, "retrying", args)
				assert.Empty(t, r.stdout, args)
			}
		})
	}
}

// logLine returns the first line of a debug log (stderr) whose message is msg; "" when none is.
func logLine(stderr, msg string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, `msg="`+msg+`"`) {
			return l
		}
	}
	return ""
}

// writeOtherCA writes a self-signed CA certificate that signed nothing of the cluster's.
func writeOtherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "other-ca.pem")
	require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return p
}

// writeKeytabOf writes a keytab with a key of user@realm that the KDC has never heard of.
func writeKeytabOf(t *testing.T, user, realm string) string {
	t.Helper()
	kt := keytab.New()
	require.NoError(t, kt.AddEntry(user, realm, "not-known-to-the-kdc", time.Now(), 1, etypeID.AES128_CTS_HMAC_SHA1_96))
	b, err := kt.Marshal()
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), user+".keytab")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// secureYarnClient is a REST client of the secure cluster's ResourceManager as its Kerberos user.
func secureYarnClient(t *testing.T, ep *Endpoints) *yarn.Client {
	t.Helper()
	c, err := yarn.NewClient(yarn.Options{
		Addresses: []string{ep.RMWebAddress},
		Auth:      yarn.AuthKerberos,
		Kerberos:  yarn.KerberosOptions{Options: kerberos.Options{Principal: ep.Secure.Principal, Keytab: ep.Secure.Keytab, Krb5Conf: ep.Secure.Krb5Conf}},
		TLS:       yarn.TLSOptions{CAFile: ep.Secure.TLSCA},
	})
	require.NoError(t, err)
	return c
}

// TestFlinkOnSecureYARN: Flink's GPU report job in application mode on the secure mini-YARN
// (privacy, https), logged in with Flink's own security.kerberos.login.* (the keytab shipped to
// the JobManager and TaskManagers), yarn-er as the discovery script: both TaskManagers get GPUs
// of their own and the job succeeds.
func TestFlinkOnSecureYARN(t *testing.T) {
	parallelOn(t, &secureLazy("privacy", true).guard)
	ep := secureCluster(t, "privacy", true)
	version := flinkVersions()[0]
	opts, err := exec.Command(filepath.Join(repoRoot(t), "docker", "flink", "build"), "java17-opts").Output()
	require.NoError(t, err)
	s := newFlinkSetup(t, ep, version, 8, map[string]string{
		"security.kerberos.login.keytab":           ep.Secure.Keytab,
		"security.kerberos.login.principal":        ep.Secure.Principal,
		"security.kerberos.login.use-ticket-cache": "false",
		"security.kerberos.krb5-conf.path":         ep.Secure.Krb5Conf,
		// The client's JVM and the containers' find the realm's KDC in the cluster's krb5.conf.
		"env.java.opts.all": strings.TrimSpace(string(opts)) + " -Djava.security.krb5.conf=" + ep.Secure.Krb5Conf +
			" -Dsun.security.krb5.rcache=none",
	})
	// The client's JVM (bin/flink takes JVM_ARGS).
	s.env = append(s.env, "JVM_ARGS=-Djava.security.krb5.conf="+ep.Secure.Krb5Conf+" -Dsun.security.krb5.rcache=none")
	c := secureYarnClient(t, ep)

	app := s.deploy(t, "flink-gpu-secure-"+version)
	t.Cleanup(func() {
		if a, err := c.App(context.Background(), app); err == nil && !a.State.Terminal() {
			_, _, _ = c.KillApplication(context.Background(), app)
		}
	})
	reps := s.waitReports(t, c, app, "report-0-0.json", "report-1-0.json")
	r0, r1 := reps["report-0-0.json"], reps["report-1-0.json"]
	assert.NotEqual(t, r0.ResourceID, r1.ResourceID, "both subtasks ran in one TaskManager")
	assertDisjoint(t, []tmReport{r0, r1})
	a, err := c.App(context.Background(), app)
	require.NoError(t, err)
	assert.Equal(t, "alice", a.User, "the application is the Kerberos user's")
	assert.NotEmpty(t, s.grepContainerLogs(app, "Login successful for user"), "the JobManager logged in from the shipped keytab")

	require.NoError(t, os.WriteFile(s.release, nil, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), flinkFinishBudget)
	defer cancel()
	a, err = c.WaitApp(ctx, app, time.Second, nil)
	require.NoError(t, err, "application %s did not end", app)
	assert.Equal(t, records.AppFinished, a.State, a.Diagnostics)
	assert.Equal(t, records.FinalSucceeded, a.FinalStatus, a.Diagnostics)
}
