package preflight

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secureHadoop is goodHadoop Kerberized as a real cluster's client configuration is.
func secureHadoop() hadoopFiles {
	return goodHadoop().
		with("core-site.xml", "hadoop.security.authentication", "kerberos").
		with("core-site.xml", "fs.defaultFS", "hdfs://nn.example.com:8020").
		with("core-site.xml", "hadoop.rpc.protection", "privacy").
		with("hdfs-site.xml", "dfs.namenode.kerberos.principal", "nn/_HOST@EXAMPLE.COM").
		with("yarn-site.xml", "yarn.resourcemanager.principal", "rm/_HOST@EXAMPLE.COM").
		with("yarn-site.xml", "yarn.resourcemanager.scheduler.address", "rm.example.com:8030").
		with("yarn-site.xml", "yarn.nodemanager.container-executor.class", linuxExecutor)
}

// rmConfWithProtection is the captured /conf of the mini-YARN with the RM's hadoop.rpc.protection
// replaced.
func rmConfWithProtection(t *testing.T, p string) []byte {
	t.Helper()
	b := capture(t, "yarn/yarnfake/captures/hadoop-3.5.0/conf.json")
	old := []byte(`"key":"hadoop.rpc.protection","value":"authentication"`)
	require.Equal(t, 1, bytes.Count(b, old))
	return bytes.Replace(b, old, []byte(`"key":"hadoop.rpc.protection","value":"`+p+`"`), 1)
}

// TestSecurityChecksOffline: the security area from the files alone (no RM client).
func TestSecurityChecksOffline(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files hadoopFiles
		id    string
		want  Status
		parts []string
	}{
		{"simple cluster", goodHadoop(), IDLogin, StatusPass, []string{"does not use Kerberos"}},
		{"simple cluster principals", goodHadoop(), IDPrincipals, StatusPass, []string{"no service principals needed"}},
		{"simple cluster executor", goodHadoop(), IDSecureExecutor, StatusPass, []string{"does not use Kerberos"}},
		{"no client, no login to check", secureHadoop(), IDLogin, StatusSkip, []string{"no ResourceManager client"}},
		{"_HOST resolved from the addresses", secureHadoop(), IDPrincipals, StatusPass,
			[]string{"rm/rm.example.com@EXAMPLE.COM", "nn/nn.example.com@EXAMPLE.COM"}},
		{"no RM principal", secureHadoop().with("yarn-site.xml", "yarn.resourcemanager.principal", ""), IDPrincipals, StatusFail,
			[]string{"yarn.resourcemanager.principal is not set", "renewer"}},
		{"no NameNode principal", secureHadoop().with("hdfs-site.xml", "dfs.namenode.kerberos.principal", ""), IDPrincipals, StatusFail,
			[]string{"dfs.namenode.kerberos.principal is not set"}},
		{"_HOST without a host", secureHadoop().with("yarn-site.xml", "yarn.resourcemanager.scheduler.address", "0.0.0.0:8030"), IDPrincipals, StatusFail,
			[]string{"names no host"}},
		{"a full principal", secureHadoop().with("yarn-site.xml", "yarn.resourcemanager.principal", "rm/rm1.example.com@EXAMPLE.COM"), IDPrincipals, StatusPass,
			[]string{"rm/rm1.example.com@EXAMPLE.COM"}},
		{"bad protection", secureHadoop().with("core-site.xml", "hadoop.rpc.protection", "privacy,secret"), IDRPCProtection, StatusFail,
			[]string{"knows no secret"}},
		{"bad data transfer protection", secureHadoop().with("hdfs-site.xml", "dfs.data.transfer.protection", "encrypted"), IDRPCProtection, StatusFail,
			[]string{"dfs.data.transfer.protection", "knows no encrypted"}},
		{"protection without the RM's", secureHadoop(), IDRPCProtection, StatusPass, []string{"privacy", "not read"}},
		{"DefaultContainerExecutor under Kerberos", secureHadoop().with("yarn-site.xml", "yarn.nodemanager.container-executor.class", ""), IDSecureExecutor, StatusWarn,
			[]string{"DefaultContainerExecutor", "NodeManager's own user"}},
		{"LinuxContainerExecutor", secureHadoop(), IDSecureExecutor, StatusPass, []string{"submitting user"}},
		{"http policy", secureHadoop(), IDHTTPS, StatusPass, []string{"HTTP_ONLY"}},
		{"https policy without a client", secureHadoop().with("yarn-site.xml", "yarn.http.policy", "HTTPS_ONLY"), IDHTTPS, StatusSkip, []string{"no ResourceManager client"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: tc.files.load(t), NoClientReason: "no --rm"})
			requireOne(t, rep, tc.id, tc.want, tc.parts...)
		})
	}
}

// TestSecurityChecksLive: against the fake RM, a simple client on a Kerberized configuration
// fails the login, protections the RM does not share fail, and an https policy reached over http
// fails.
func TestSecurityChecksLive(t *testing.T) {
	bodies := goodCaptures(t)
	bodies["/conf"] = rmConfWithProtection(t, "integrity")
	rm := newFakeRM(t, bodies)
	client := rmClient(t, rm.URL())
	for _, tc := range []struct {
		name  string
		files hadoopFiles
		id    string
		want  Status
		parts []string
	}{
		{"no Kerberos login", secureHadoop(), IDLogin, StatusFail, []string{"no Kerberos login", "authentication simple"}},
		{"no shared protection", secureHadoop(), IDRPCProtection, StatusFail, []string{"privacy", "integrity", "No common protection layer"}},
		{"shared protection", secureHadoop().with("core-site.xml", "hadoop.rpc.protection", "privacy, integrity"), IDRPCProtection, StatusPass,
			[]string{"privacy,integrity here, integrity on the ResourceManager"}},
		{"https policy over http", secureHadoop().with("yarn-site.xml", "yarn.http.policy", "HTTPS_ONLY"), IDHTTPS, StatusFail,
			[]string{"HTTPS_ONLY", rm.URL()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: tc.files.load(t), Client: client})
			requireOne(t, rep, tc.id, tc.want, tc.parts...)
		})
	}
	// A simple cluster with the same client: nothing to find.
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t), Client: client})
	for _, id := range []string{IDLogin, IDPrincipals, IDRPCProtection, IDHTTPS, IDSecureExecutor} {
		assert.Equal(t, []Status{StatusPass}, rep.statuses(id), id)
	}
}
