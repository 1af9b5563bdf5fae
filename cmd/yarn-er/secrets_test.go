package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/internal/webhdfs/webhdfstest"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// TestNoCanarySecretInAnyOutput feeds canary secrets through the commands that talk to an RM, with
// debug logs in text and JSON, and fails if a canary reaches stdout or stderr: a password in --rm
// (flag, environment and settings file), a delegation token in its query, and an RM error body
// that echoes a secret.
func TestNoCanarySecretInAnyOutput(t *testing.T) {
	const pw, tok, body = "pw-canary-7c1e", "tok-canary-91ab", "body-canary-44f0"
	// Fault injection: an RM error body that echoes the secrets back (any path, any method).
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.Fault("*", yarnfake.Fault{Status: http.StatusInternalServerError, Body: `{"RemoteException":{"exception":"WebApplicationException","message":"bad request ?delegation=` + body +
		` password=` + body + `","javaClassName":"javax.ws.rs.WebApplicationException"}}`})
	withPW := "http://alice:" + pw + "@" + strings.TrimPrefix(rm.URL(), "http://")
	settings := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(settings, []byte("rm: "+withPW+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"cluster", "info", "--rm", withPW}},
		{"env", map[string]string{"YARN_ER_RM": withPW}, []string{"cluster", "nodes"}},
		{"settings file", nil, []string{"--config", settings, "cluster", "apps"}},
		{"delegation query", nil, []string{"cluster", "info", "--rm", rm.URL() + "/?delegation=" + tok}},
		{"error body", nil, []string{"cluster", "info", "--rm", rm.URL(), "--rm-timeout", "2s"}},
	}
	for _, c := range cases {
		for _, format := range []string{"text", "json"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				args := append([]string{"-v", "--log-format", format}, c.args...)
				res := runCLI(t, c.env, args...)
				assert.NotEqual(t, 0, res.code, "a refused or failing request is an error")
				for _, canary := range []string{pw, tok, body} {
					assert.NotContains(t, res.stdout, canary)
					assert.NotContains(t, res.stderr, canary)
				}
			})
		}
	}
	assert.Positive(t, rm.Count("GET /ws/v1/cluster/info"), "the secrets went to the RM and came back")
}

// TestNoCanarySecretInProxyStaging: `submit --do-as` stages through WebHDFS, whose CREATE redirect
// carries the proxy user's delegation token; a DataNode that echoes its request (the token
// included) in its error, with debug logs in text and JSON, prints no token.
func TestNoCanarySecretInProxyStaging(t *testing.T) {
	const tok = "tok-canary-webhdfs-0b7d"
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	if err := rm.ReplyCapture("POST /ws/v1/cluster/apps/new-application", "new-application.json"); err != nil {
		t.Fatal(err)
	}
	web := webhdfstest.New(t, webhdfstest.Options{Dirs: map[string]string{"/user/bob": "bob"}, ProxyUsers: []string{"alice"},
		Token: tok, DataNodeFault: "the DataNode failed"})
	dir := t.TempDir()
	sites := map[string]string{
		"core-site.xml": `<configuration><property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:1</value></property></configuration>`,
		"hdfs-site.xml": `<configuration><property><name>dfs.namenode.http-address</name><value>` + strings.TrimPrefix(web.NameNode, "http://") + `</value></property></configuration>`,
		"yarn-site.xml": `<configuration><property><name>yarn.resourcemanager.scheduler.address</name><value>127.0.0.1:8030</value></property></configuration>`,
	}
	for name, body := range sites {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "yarn-er-binary")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			res := runCLI(t, map[string]string{"HADOOP_CONF_DIR": dir}, "-v", "--log-format", format, "submit", "--rm", rm.URL(), "--user", "alice",
				"--do-as", "bob", "--force", "--yarn-er-binary", bin, "--", "true")
			assert.NotEqual(t, 0, res.code, "the DataNode refused the write")
			assert.Contains(t, res.stderr, "the DataNode failed")
			assert.NotContains(t, res.stdout, tok)
			assert.NotContains(t, res.stderr, tok)
		})
	}
	assert.Positive(t, web.DataNodeRequests(), "the token went to the DataNode and came back")
}
