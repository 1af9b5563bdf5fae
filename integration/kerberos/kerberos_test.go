//go:build integration

// Package kerberos tests yarn-er against a real Kerberized HDFS: Hadoop's MiniKdc and a
// MiniDFSCluster with hadoop.security.authentication=kerberos, started by the harness's
// SecureHdfsHarness (docker/harness). Run with
//
//	docker/mini-yarn build && go test -tags integration -count=1 -v ./integration/kerberos/
//
// MINI_YARN_HADOOP_VERSION picks the harness build, as for docker/mini-yarn.
package kerberos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/integration"
	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/stage"
)

// endpoints is what SecureHdfsHarness writes to endpoints.json.
type endpoints struct {
	Realm             string `json:"realm"`
	KDC               string `json:"kdc"`
	Krb5Conf          string `json:"krb5Conf"`
	Principal         string `json:"principal"`
	Keytab            string `json:"keytab"`
	NameNodePrincipal string `json:"nameNodePrincipal"`
	HDFSURI           string `json:"hdfsUri"`
	NameNodeAddress   string `json:"nameNodeAddress"`
	HadoopConf        string `json:"hadoopConf"`
}

// harnessBuild returns the current harness build directory of the Hadoop line under test.
func harnessBuild(t *testing.T) string {
	root, err := integration.RepoRoot()
	require.NoError(t, err)
	version := os.Getenv("MINI_YARN_HADOOP_VERSION")
	if version == "" {
		pom, err := os.ReadFile(filepath.Join(root, "docker", "harness", "pom.xml"))
		require.NoError(t, err)
		m := regexp.MustCompile(`<hadoop.version>([^<]+)</hadoop.version>`).FindSubmatch(pom)
		require.NotNil(t, m, "hadoop.version in docker/harness/pom.xml")
		version = string(m[1])
	}
	dir := filepath.Join(root, "docker", "harness", "target", "hadoop-"+version, "current")
	if _, err := os.Stat(filepath.Join(dir, "mini-yarn-harness.jar")); err != nil {
		t.Fatalf("no harness build for Hadoop %s in %s: run docker/mini-yarn build first", version, dir)
	}
	return dir
}

// startSecureHDFS starts SecureHdfsHarness with hadoop.rpc.protection=protection and waits for
// its endpoints; t.Cleanup stops it.
func startSecureHDFS(t *testing.T, protection string) *endpoints {
	build := harnessBuild(t)
	state := t.TempDir()
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	logFile, err := os.Create(filepath.Join(state, "secure-hdfs.log"))
	require.NoError(t, err)
	tmp := filepath.Join(state, "tmp") // Jetty's and Hadoop's scratch files: not /tmp, which outlives the test
	require.NoError(t, os.Mkdir(tmp, 0o700))
	cmd := exec.Command(java, "-Xmx768m", "-Dmini.yarn.log.level=INFO", "-Djava.io.tmpdir="+tmp,
		"-cp", filepath.Join(build, "mini-yarn-harness.jar")+string(os.PathListSeparator)+filepath.Join(build, "lib", "*"),
		"dev.yarner.miniyarn.SecureHdfsHarness", "--state", state, "--watch-pid", strconv.Itoa(os.Getpid()),
		"--rpc-protection", protection)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				if len(b) > 8000 {
					b = b[len(b)-8000:]
				}
				t.Logf("secure HDFS log tail:\n%s", b)
			}
		}
	})
	deadline := time.Now().Add(4 * time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(state, "endpoints.json"))
		if err == nil {
			var e endpoints
			require.NoError(t, json.Unmarshal(b, &e))
			return &e
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("SecureHdfsHarness exited before it was ready: %v (log %s)", err, logFile.Name())
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("SecureHdfsHarness not ready after 4 minutes (log %s)", logFile.Name())
		}
	}
}

// TestKerberizedHDFS obtains an HDFS delegation token from the real NameNode over yarn-er's IPC
// with SASL GSSAPI, proves the token authenticates (SASL DIGEST-MD5) on the NameNode as a
// NodeManager's localizer would use it, and stages files with Kerberos, reading back their size
// and modification time.
func TestKerberizedHDFS(t *testing.T) {
	testKerberizedHDFS(t, "authentication")
}

// TestKerberizedHDFSIntegrity is TestKerberizedHDFS with hadoop.rpc.protection=integrity: every
// IPC message after SASL travels in GSS-API wrap tokens.
func TestKerberizedHDFSIntegrity(t *testing.T) {
	testKerberizedHDFS(t, "integrity")
}

// TestKerberizedHDFSPrivacy is TestKerberizedHDFS with hadoop.rpc.protection=privacy: the
// Kerberos connections use sealed GSS-API wrap tokens, the token connections DIGEST-MD5 with
// rc4.
func TestKerberizedHDFSPrivacy(t *testing.T) {
	testKerberizedHDFS(t, "privacy")
}

func testKerberizedHDFS(t *testing.T, protection string) {
	e := startSecureHDFS(t, protection)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The login goes through the same hardened path as the CLI's --keytab/--principal; it logs
	// in on first use, as the CLI's does.
	krb, err := kerberos.Login(kerberos.Options{Keytab: e.Keytab, Principal: e.Principal, Krb5Conf: e.Krb5Conf}, nil, nil)
	require.NoError(t, err)

	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: e.HadoopConf})
	require.NoError(t, err)

	sc, err := stage.Dial(ctx, stage.Options{HadoopConf: hc, Kerberos: krb})
	require.NoError(t, err)
	defer sc.Close()
	assert.True(t, sc.Kerberized())
	assert.Equal(t, "alice", sc.User())

	renewer := "rm/localhost@" + e.Realm
	tok, err := sc.DelegationToken(ctx, renewer)
	require.NoError(t, err)
	assert.Equal(t, namenode.KindDelegationToken, tok.Kind)
	assert.Equal(t, e.NameNodeAddress, tok.Service, "service ip:port, as Hadoop's client names it")
	require.NotEmpty(t, tok.Identifier)
	require.NotEmpty(t, tok.Password)
	// The identifier holds owner, renewer (short name) and real user as Writable texts.
	assert.True(t, bytes.Contains(tok.Identifier, []byte(e.Principal)), "owner is the login")
	assert.True(t, bytes.Contains(tok.Identifier, []byte("\x02rm")), "renewer is rm")
	// REST credentials form round-trips.
	back, err := records.DecodeTokenURLString(tok.EncodeToURLString())
	require.NoError(t, err)
	assert.Equal(t, tok, back)

	// The token authenticates on its own: a call over SASL TOKEN/DIGEST-MD5 reaches the
	// NameNode as alice (which then refuses to issue a token to a token login, as Hadoop does).
	cl, err := ipc.NewClient(ipc.Config{
		Addrs: []string{e.NameNodeAddress}, Protocol: namenode.Protocol,
		Token: func() (*ipc.Token, error) {
			return &ipc.Token{Identifier: tok.Identifier, Password: tok.Password, Kind: tok.Kind, Service: tok.Service}, nil
		},
	})
	require.NoError(t, err)
	defer cl.Close()
	err = cl.Call(ctx, "getDelegationToken", &commonpb.GetDelegationTokenRequestProto{Renewer: &renewer}, &commonpb.GetDelegationTokenResponseProto{}, ipc.CallOptions{})
	require.Error(t, err)
	// With integrity, DIGEST-MD5 negotiates qop auth-int and the call and its answer travel
	// wrapped; either way the answer is the NameNode's, not a SASL failure.
	var re *records.RemoteError
	require.True(t, errors.As(err, &re), "an answer from an authenticated call, not a SASL failure: %v", err)
	assert.Contains(t, re.Message, "can be issued only with kerberos or web authentication")

	// Stage with Kerberos and read size and mtime back.
	dir := t.TempDir()
	local := filepath.Join(dir, "payload.bin")
	data := bytes.Repeat([]byte("kerberos"), 300_000) // 2.4 MB: more than one upload chunk
	require.NoError(t, os.WriteFile(local, data, 0o600))
	item, err := stage.ParseItem(local+"#payload.bin", records.LocalFile)
	require.NoError(t, err)
	appID := "application_1_" + strconv.FormatInt(time.Now().UnixMilli()%10000, 10)
	d, files, err := sc.Stage(ctx, appID, []stage.Item{item}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Remove(context.Background()) })
	require.Len(t, files, 1)
	assert.Equal(t, int64(len(data)), files[0].Size)
	assert.Greater(t, files[0].MtimeMillis, time.Now().Add(-time.Hour).UnixMilli())
	assert.True(t, strings.HasPrefix(files[0].URL, e.HDFSURI+"/user/alice/.yarn-er/"+appID+"/"), files[0].URL)
	there, err := d.Exists(ctx)
	require.NoError(t, err)
	assert.True(t, there)

	// The ApplicationMaster's clean-up: no Kerberos login in a container, only the delegation
	// token in its credentials (beside tokens of other kinds).
	creds := records.NewCredentials()
	creds.Tokens["amrm"] = records.Token{Identifier: []byte("x"), Password: []byte("y"), Kind: "YARN_AM_RM_TOKEN", Service: e.NameNodeAddress}
	creds.Tokens[tok.Service] = tok
	st, err := am.OpenStaging(e.HDFSURI+"/user/alice/.yarn-er/"+appID, appID, "", creds)
	require.NoError(t, err)
	require.NoError(t, st.Remove(ctx))
	require.NoError(t, st.Close())
	there, err = d.Exists(ctx)
	require.NoError(t, err)
	assert.False(t, there, "the AM removed the staging directory with the delegation token (hadoop.rpc.protection=%s)", protection)

	require.NoError(t, sc.CancelDelegationToken(ctx, tok))
	_, err = sc.DelegationToken(ctx, renewer)
	require.NoError(t, err, "a new token after a cancel")
}
