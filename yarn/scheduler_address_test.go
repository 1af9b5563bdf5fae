package yarn

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchedulerAddresses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  []string
		err   string
	}{
		{"address", map[string]string{"yarn.resourcemanager.scheduler.address": "rm.example.com:8030"}, []string{"rm.example.com:8030"}, ""},
		{"hostname and default port", map[string]string{"yarn.resourcemanager.hostname": "rm.example.com"}, []string{"rm.example.com:8030"}, ""},
		{"host without port", map[string]string{"yarn.resourcemanager.scheduler.address": "rm.example.com"}, []string{"rm.example.com:8030"}, ""},
		{"wildcard bind address", map[string]string{
			"yarn.resourcemanager.scheduler.address": "0.0.0.0:18030", "yarn.resourcemanager.hostname": "rm.example.com"},
			[]string{"rm.example.com:18030"}, ""},
		{"wildcard without hostname", map[string]string{"yarn.resourcemanager.scheduler.address": "0.0.0.0:8030"}, nil,
			"set yarn.resourcemanager.hostname"},
		{"nothing", map[string]string{}, nil, "neither yarn.resourcemanager.scheduler.address nor yarn.resourcemanager.hostname"},
		{"bad port", map[string]string{"yarn.resourcemanager.scheduler.address": "rm:http"}, nil, `bad port "http"`},
		{"HA per id", map[string]string{
			"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1, rm2",
			"yarn.resourcemanager.scheduler.address.rm1": "rm1.example.com:8030",
			"yarn.resourcemanager.hostname.rm2":          "rm2.example.com",
			"yarn.resourcemanager.scheduler.address":     "ignored:1"},
			[]string{"rm1.example.com:8030", "rm2.example.com:8030"}, ""},
		{"HA without ids", map[string]string{"yarn.resourcemanager.ha.enabled": "true"}, nil, "lists no ids"},
		{"HA id without address", map[string]string{
			"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
			"yarn.resourcemanager.hostname.rm1": "a"}, nil, "yarn.resourcemanager.hostname.rm2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SchedulerAddresses(loadYarnSite(t, tc.props))
			if tc.err != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrNoAddress)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := SchedulerAddresses(nil)
	require.ErrorIs(t, err, ErrNoAddress)
}
