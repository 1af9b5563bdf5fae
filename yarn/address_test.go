package yarn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
)

// loadYarnSite writes a yarn-site.xml with props and loads it with the conf package.
func loadYarnSite(t *testing.T, props map[string]string) *conf.HadoopConfig {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for k, v := range props {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, v)
	}
	b.WriteString("</configuration>\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(b.String()), 0o600))
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: dir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return hc
}

func TestAddressesFromConf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  []string
		err   string
	}{
		{"webapp address", map[string]string{"yarn.resourcemanager.webapp.address": "rm.example.com:8088"},
			[]string{"http://rm.example.com:8088"}, ""},
		{"hostname only", map[string]string{"yarn.resourcemanager.hostname": "rm.example.com"},
			[]string{"http://rm.example.com:8088"}, ""},
		{"wildcard bind address", map[string]string{"yarn.resourcemanager.webapp.address": "0.0.0.0:18088", "yarn.resourcemanager.hostname": "rm"},
			[]string{"http://rm:18088"}, ""},
		{"wildcard without hostname", map[string]string{"yarn.resourcemanager.webapp.address": "0.0.0.0:8088"},
			nil, "yarn.resourcemanager.webapp.address (" /* names file:line */},
		{"https policy", map[string]string{"yarn.http.policy": "HTTPS_ONLY", "yarn.resourcemanager.webapp.address": "rm:8088",
			"yarn.resourcemanager.webapp.https.address": "rm:8090"}, []string{"https://rm:8090"}, ""},
		{"https policy, hostname", map[string]string{"yarn.http.policy": "HTTPS_ONLY", "yarn.resourcemanager.hostname": "rm"},
			[]string{"https://rm:8090"}, ""},
		{"HTTP_AND_HTTPS uses http", map[string]string{"yarn.http.policy": "HTTP_AND_HTTPS", "yarn.resourcemanager.hostname": "rm"},
			[]string{"http://rm:8088"}, ""},
		{"HA", map[string]string{
			"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1, rm2,rm3",
			"yarn.resourcemanager.webapp.address.rm1": "a:8088", "yarn.resourcemanager.hostname.rm2": "b",
			"yarn.resourcemanager.webapp.address.rm3": "0.0.0.0:9000", "yarn.resourcemanager.hostname.rm3": "c",
			"yarn.resourcemanager.webapp.address": "ignored:1"},
			[]string{"http://a:8088", "http://b:8088", "http://c:9000"}, ""},
		{"HA https", map[string]string{"yarn.http.policy": "HTTPS_ONLY",
			"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
			"yarn.resourcemanager.webapp.https.address.rm1": "a:9443", "yarn.resourcemanager.hostname.rm2": "b"},
			[]string{"https://a:9443", "https://b:8090"}, ""},
		{"HA without ids", map[string]string{"yarn.resourcemanager.ha.enabled": "true"}, nil, "lists no ids"},
		{"HA id without address", map[string]string{"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1"},
			nil, "neither yarn.resourcemanager.webapp.address.rm1 nor yarn.resourcemanager.hostname.rm1"},
		{"nothing", map[string]string{"yarn.nodemanager.resource.memory-mb": "1"}, nil, "sets neither yarn.resourcemanager.webapp.address nor"},
		{"bad port", map[string]string{"yarn.resourcemanager.webapp.address": "rm:http"}, nil, "invalid port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := loadYarnSite(t, tc.props)
			c, err := NewClient(Options{HadoopConf: hc, User: "u"})
			if tc.err != "" {
				require.ErrorIs(t, err, ErrNoAddress)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Addresses())
		})
	}

	hc := loadYarnSite(t, map[string]string{"yarn.resourcemanager.webapp.address": "0.0.0.0:8088"})
	_, err := NewClient(Options{HadoopConf: hc, User: "u"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "yarn-site.xml:", "the error names the file and line")

	_, err = NewClient(Options{User: "u"})
	assert.ErrorIs(t, err, ErrNoAddress)
}

func TestAddressOption(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
		err  string
	}{
		{[]string{"rm1:8088,rm2:8088"}, []string{"http://rm1:8088", "http://rm2:8088"}, ""},
		{[]string{"https://rm1", "http://rm2/ws/v1/cluster/"}, []string{"https://rm1:8090", "http://rm2:8088"}, ""},
		{[]string{"rm1:8088", " rm1:8088 ", ""}, []string{"http://rm1:8088"}, ""},
		{[]string{"[::1]:8088"}, []string{"http://[::1]:8088"}, ""},
		{[]string{"ftp://rm"}, nil, "neither http nor https"},
		{[]string{"http://user:pw@rm:8088"}, nil, "credentials in the URL"},
		{[]string{"rm:99999"}, nil, "bad port"},
		{[]string{"http://"}, nil, "no host"},
	} {
		c, err := NewClient(Options{Addresses: tc.in, User: "u"})
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, c.Addresses())
	}
	// The https policy of the Hadoop configuration applies to host:port addresses.
	hc := loadYarnSite(t, map[string]string{"yarn.http.policy": "HTTPS_ONLY"})
	c, err := NewClient(Options{Addresses: []string{"rm:9443"}, HadoopConf: hc, User: "u"})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://rm:9443"}, c.Addresses())
}

func TestRequestURLKeepsEscapes(t *testing.T) {
	rm := newFakeRM(t)
	rm.capture("GET /ws/v1/cluster/nodes/host:1", "node.json")
	c := testClient(t, Options{}, rm.URL())
	_, err := c.Node(context.Background(), "host:1")
	require.NoError(t, err)
	_, err = c.Node(context.Background(), "a/b")
	require.ErrorIs(t, err, ErrNotFound)
	reqs := rm.requests()
	assert.Equal(t, "/ws/v1/cluster/nodes/a/b", reqs[1].Path, "the id is escaped on the wire, decoded by the server")
}
