package conf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadYarnSite writes a yarn-site.xml with props and loads it.
func loadYarnSite(t *testing.T, props map[string]string) *HadoopConfig {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for k, v := range props {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, v)
	}
	b.WriteString("</configuration>\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(b.String()), 0o600))
	hc, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return hc
}

func urls(as []RMAddress) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.URL()
	}
	return out
}

func TestRMWebAddresses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  []string
		ids   []string
		err   string
	}{
		{"webapp address", map[string]string{"yarn.resourcemanager.webapp.address": "rm.example.com:8088"},
			[]string{"http://rm.example.com:8088"}, []string{""}, ""},
		{"hostname only", map[string]string{"yarn.resourcemanager.hostname": "rm.example.com"},
			[]string{"http://rm.example.com:8088"}, []string{""}, ""},
		{"host without port", map[string]string{"yarn.resourcemanager.webapp.address": "rm"},
			[]string{"http://rm:8088"}, []string{""}, ""},
		{"IPv6 literal", map[string]string{"yarn.resourcemanager.webapp.address": "[::1]:18088"},
			[]string{"http://[::1]:18088"}, []string{""}, ""},
		{"wildcard bind address", map[string]string{"yarn.resourcemanager.webapp.address": "0.0.0.0:18088", "yarn.resourcemanager.hostname": "rm"},
			[]string{"http://rm:18088"}, []string{""}, ""},
		{"wildcard without hostname", map[string]string{"yarn.resourcemanager.webapp.address": "0.0.0.0:8088"},
			nil, nil, "yarn.resourcemanager.webapp.address (" /* names file:line */},
		{"wildcard hostname", map[string]string{"yarn.resourcemanager.hostname": "0.0.0.0"},
			nil, nil, "sets neither yarn.resourcemanager.webapp.address nor yarn.resourcemanager.hostname"},
		{"https policy", map[string]string{"yarn.http.policy": "HTTPS_ONLY", "yarn.resourcemanager.webapp.address": "rm:8088",
			"yarn.resourcemanager.webapp.https.address": "rm:8090"}, []string{"https://rm:8090"}, []string{""}, ""},
		{"https policy, any case", map[string]string{"yarn.http.policy": " https_only ", "yarn.resourcemanager.webapp.https.address": "rm:9443"},
			[]string{"https://rm:9443"}, []string{""}, ""},
		{"https policy, hostname", map[string]string{"yarn.http.policy": "HTTPS_ONLY", "yarn.resourcemanager.hostname": "rm"},
			[]string{"https://rm:8090"}, []string{""}, ""},
		{"https only ignores the http address", map[string]string{"yarn.http.policy": "HTTPS_ONLY", "yarn.resourcemanager.webapp.address": "rm:8088"},
			nil, nil, "sets neither yarn.resourcemanager.webapp.https.address nor yarn.resourcemanager.hostname"},
		{"HTTP_AND_HTTPS uses http", map[string]string{"yarn.http.policy": "HTTP_AND_HTTPS", "yarn.resourcemanager.hostname": "rm"},
			[]string{"http://rm:8088"}, []string{""}, ""},
		{"HA", map[string]string{
			"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1, rm2,rm3",
			"yarn.resourcemanager.webapp.address.rm1": "a:8088", "yarn.resourcemanager.hostname.rm2": "b",
			"yarn.resourcemanager.webapp.address.rm3": "0.0.0.0:9000", "yarn.resourcemanager.hostname.rm3": "c",
			"yarn.resourcemanager.webapp.address": "ignored:1"},
			[]string{"http://a:8088", "http://b:8088", "http://c:9000"}, []string{"rm1", "rm2", "rm3"}, ""},
		{"HA ids: empty items dropped, duplicates once", map[string]string{
			"yarn.resourcemanager.ha.enabled": "TRUE", "yarn.resourcemanager.ha.rm-ids": ",rm1,,rm2 ,rm1,",
			"yarn.resourcemanager.hostname.rm1": "a", "yarn.resourcemanager.hostname.rm2": "b"},
			[]string{"http://a:8088", "http://b:8088"}, []string{"rm1", "rm2"}, ""},
		{"HA off ignores the ids", map[string]string{"yarn.resourcemanager.ha.rm-ids": "rm1,rm2", "yarn.resourcemanager.hostname": "rm"},
			[]string{"http://rm:8088"}, []string{""}, ""},
		{"HA https", map[string]string{"yarn.http.policy": "HTTPS_ONLY",
			"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
			"yarn.resourcemanager.webapp.https.address.rm1": "a:9443", "yarn.resourcemanager.hostname.rm2": "b"},
			[]string{"https://a:9443", "https://b:8090"}, []string{"rm1", "rm2"}, ""},
		{"HA without ids", map[string]string{"yarn.resourcemanager.ha.enabled": "true"}, nil, nil, "lists no ids"},
		{"HA with only empty ids", map[string]string{"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": " , "},
			nil, nil, "lists no ids"},
		{"HA id without address", map[string]string{"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1"},
			nil, nil, "neither yarn.resourcemanager.webapp.address.rm1 nor yarn.resourcemanager.hostname.rm1"},
		{"nothing", map[string]string{"yarn.nodemanager.resource.memory-mb": "1"}, nil, nil,
			"sets neither yarn.resourcemanager.webapp.address nor yarn.resourcemanager.hostname"},
		{"bad port", map[string]string{"yarn.resourcemanager.webapp.address": "rm:http"}, nil, nil, `bad port "http"`},
		{"port out of range", map[string]string{"yarn.resourcemanager.webapp.address": "rm:65536"}, nil, nil, `bad port "65536"`},
		{"URL instead of host:port", map[string]string{"yarn.resourcemanager.webapp.address": "http://rm:8088"}, nil, nil, "yarn.resourcemanager.webapp.address ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadYarnSite(t, tc.props).RMWebAddresses()
			if tc.err != "" {
				require.ErrorIs(t, err, ErrNoRMAddress)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, urls(got))
			ids := make([]string, len(got))
			for i, a := range got {
				ids[i] = a.RMID
				assert.Contains(t, a.Source.String(), "yarn-site.xml:", "%s: the address names its file and line", a.Key)
			}
			assert.Equal(t, tc.ids, ids)
		})
	}

	hc := loadYarnSite(t, map[string]string{"yarn.resourcemanager.webapp.address": "0.0.0.0:8088"})
	_, err := hc.RMWebAddresses()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "yarn-site.xml:", "the error names the file and line")

	var none *HadoopConfig
	_, err = none.RMWebAddresses()
	assert.ErrorIs(t, err, ErrNoRMAddress)
}

func TestRMIPCAddresses(t *testing.T) {
	for _, tc := range []struct {
		name             string
		props            map[string]string
		scheduler, admin []string
		keys             []string
		err              string
	}{
		{"explicit", map[string]string{"yarn.resourcemanager.scheduler.address": "rm:18030", "yarn.resourcemanager.admin.address": "rm:18033"},
			[]string{"rm:18030"}, []string{"rm:18033"}, []string{"yarn.resourcemanager.scheduler.address"}, ""},
		{"hostname defaults", map[string]string{"yarn.resourcemanager.hostname": "rm"},
			[]string{"rm:8030"}, []string{"rm:8033"}, []string{"yarn.resourcemanager.hostname"}, ""},
		{"wildcard bind address", map[string]string{"yarn.resourcemanager.scheduler.address": "0.0.0.0:8030",
			"yarn.resourcemanager.admin.address": "0.0.0.0:8033", "yarn.resourcemanager.hostname": "rm"},
			[]string{"rm:8030"}, []string{"rm:8033"}, []string{"yarn.resourcemanager.scheduler.address"}, ""},
		{"HA", map[string]string{"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
			"yarn.resourcemanager.scheduler.address.rm1": "a:9030", "yarn.resourcemanager.hostname.rm1": "a",
			"yarn.resourcemanager.hostname.rm2": "b", "yarn.resourcemanager.scheduler.address": "ignored:1"},
			[]string{"a:9030", "b:8030"}, []string{"a:8033", "b:8033"},
			[]string{"yarn.resourcemanager.scheduler.address.rm1", "yarn.resourcemanager.hostname.rm2"}, ""},
		{"missing", map[string]string{"yarn.resourcemanager.webapp.address": "rm:8088"}, nil, nil, nil,
			"sets neither yarn.resourcemanager.scheduler.address nor yarn.resourcemanager.hostname"},
		{"HA id missing", map[string]string{"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
			"yarn.resourcemanager.hostname.rm1": "a"}, nil, nil, nil,
			"neither yarn.resourcemanager.scheduler.address.rm2 nor yarn.resourcemanager.hostname.rm2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := loadYarnSite(t, tc.props)
			sched, err := hc.RMSchedulerAddresses()
			if tc.err != "" {
				require.ErrorIs(t, err, ErrNoRMAddress)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			admin, err := hc.RMAdminAddresses()
			require.NoError(t, err)
			assert.Equal(t, tc.scheduler, urls(sched))
			assert.Equal(t, tc.admin, urls(admin))
			keys := make([]string, len(sched))
			for i, a := range sched {
				keys[i] = a.Key
				assert.Empty(t, a.Scheme)
			}
			assert.Equal(t, tc.keys, keys)
		})
	}
}

func TestRMWebAuthSettings(t *testing.T) {
	hc := loadYarnSite(t, map[string]string{"hadoop.http.authentication.type": " Kerberos ",
		"yarn.resourcemanager.webapp.spnego-principal": " HTTP/_HOST@EXAMPLE.COM "})
	assert.True(t, hc.RMWebKerberos())
	assert.Equal(t, "HTTP/_HOST@EXAMPLE.COM", hc.RMWebSPNEGOPrincipal())
	hc = loadYarnSite(t, map[string]string{"hadoop.http.authentication.type": "simple"})
	assert.False(t, hc.RMWebKerberos())
	assert.Empty(t, hc.RMWebSPNEGOPrincipal())
	var none *HadoopConfig
	assert.False(t, none.RMWebKerberos())
	assert.False(t, none.YARNHTTPSOnly())
	assert.Empty(t, none.RMWebSPNEGOPrincipal())
}

func TestDefaultFileSystem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
		err   string
	}{
		{"unset", map[string]string{}, "file:///", ""},
		{"blank", map[string]string{"fs.defaultFS": "  "}, "file:///", ""},
		{"hdfs", map[string]string{"fs.defaultFS": " hdfs://nn.example.com:8020 "}, "hdfs://nn.example.com:8020", ""},
		{"HA name service", map[string]string{"fs.defaultFS": "hdfs://mycluster"}, "hdfs://mycluster", ""},
		{"deprecated host:port", map[string]string{"fs.defaultFS": "nn:8020"}, "hdfs://nn:8020", ""},
		{"deprecated local", map[string]string{"fs.defaultFS": "local"}, "file:///", ""},
		{"no scheme", map[string]string{"fs.defaultFS": "://nn:8020"}, "", "fs.defaultFS"},
		{"bad URI", map[string]string{"fs.defaultFS": "hdfs://nn:port"}, "", "is not a file system URI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, src, err := loadYarnSite(t, tc.props).DefaultFileSystem()
			if tc.err != "" {
				var ce *Error
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, KeyDefaultFS, ce.Key)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "yarn-site.xml:")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, u.String())
			if _, set := tc.props[KeyDefaultFS]; set && strings.TrimSpace(tc.props[KeyDefaultFS]) != "" {
				assert.Contains(t, src.String(), "yarn-site.xml:")
			}
		})
	}
	var none *HadoopConfig
	u, _, err := none.DefaultFileSystem()
	require.NoError(t, err)
	assert.Equal(t, "file:///", u.String())
}

func TestTrimmedStringCollection(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, TrimmedStringCollection(" a ,, b,a,\n"))
	assert.Nil(t, TrimmedStringCollection(" , ,"))
	assert.Nil(t, TrimmedStringCollection(""))
}
