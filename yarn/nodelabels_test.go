package yarn

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/records"
)

func TestDecodeNodeLabels(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []NodeLabel
		err        string
	}{
		{"none (3.x)", `{}`, []NodeLabel{}, ""},
		{"null list", `{"nodeLabelInfo": null}`, []NodeLabel{}, ""},
		{"one, Jersey 1 object", `{"nodeLabelInfo": {"name": "gpu", "exclusivity": "true"}}`, []NodeLabel{{"gpu", true}}, ""},
		{"two", `{"nodeLabelInfo": [{"name": "gpu", "exclusivity": true, "partitionInfo": {}}, {"name": "spare", "exclusivity": false}]}`,
			[]NodeLabel{{"gpu", true}, {"spare", false}}, ""},
		{"exclusivity missing is Hadoop's default, exclusive", `{"nodeLabelInfo": [{"name": "gpu"}]}`, []NodeLabel{{"gpu", true}}, ""},
		{"bare names (2.x)", `{"nodeLabels": ["a", "b"]}`, []NodeLabel{{"a", true}, {"b", true}}, ""},
		{"nameless", `{"nodeLabelInfo": [{"exclusivity": true}]}`, nil, "label #1 has no name"},
		{"not JSON", `<html>`, nil, "node labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeNodeLabels(strings.NewReader(tc.body))
			if tabletest.WantErr(t, err, tc.err) {
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestDecodeUserLimitsFromCaptures: every captured CapacityScheduler line reports the default
// queue's user limits (user-limit-factor 1, minimum-user-limit-percent 100) and its capacity in
// the default partition.
func TestDecodeUserLimitsFromCaptures(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("yarnfake", "captures", "hadoop-3.*", "scheduler.json"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, path := range dirs {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			s, err := decodeScheduler(bytes.NewReader(b))
			require.NoError(t, err)
			q := s.Queue("default")
			require.NotNil(t, q)
			assert.True(t, q.UserLimitsReported)
			assert.Equal(t, 1.0, q.UserLimitFactor)
			assert.Equal(t, 100.0, q.UserLimitPercent)
			assert.Equal(t, int64(10000), q.MaxApplicationsPerUser)
			assert.Empty(t, q.Users)
			p := q.Partition("")
			require.NotNil(t, p, "default partition")
			assert.Equal(t, 100.0, p.AbsoluteCapacity)
			assert.Positive(t, p.EffectiveMin.Value(records.MemoryMB))
			assert.Equal(t, q.MaxEffectiveCapacity, p.EffectiveMax)
			assert.Nil(t, q.Partition("gpu"))
		})
	}
}

func TestDecodeQueueUsersAndPartitions(t *testing.T) {
	body := `{"scheduler":{"schedulerInfo":{"type":"capacityScheduler","queueName":"root","queues":{"queue":[
	 {"type":"capacitySchedulerLeafQueueInfo","queueName":"a","defaultNodeLabelExpression":" gpu ","userLimitFactor":"2.5","userLimit":25,
	  "users":{"user":{"username":"alice","numActiveApplications":1,"numPendingApplications":0,
	    "resourcesUsed":{"memory":2048,"vCores":2},"userResourceLimit":{"memory":4096,"vCores":4}}},
	  "capacities":{"queueCapacitiesByPartition":[{"partitionName":"","absoluteCapacity":40},
	    {"partitionName":"gpu","capacity":50,"maxCapacity":100,"absoluteCapacity":50,"absoluteMaxCapacity":100,
	     "effectiveMinResource":{"memory":8192,"vCores":8},"effectiveMaxResource":{"memory":16384,"vCores":16}}]}}]}}}}`
	s, err := decodeScheduler(strings.NewReader(body))
	require.NoError(t, err)
	q := s.Queue("a")
	require.NotNil(t, q)
	assert.True(t, q.UserLimitsReported)
	assert.Equal(t, "gpu", q.DefaultNodeLabelExpression)
	assert.Equal(t, 2.5, q.UserLimitFactor)
	assert.Equal(t, 25.0, q.UserLimitPercent)
	require.Len(t, q.Users, 1)
	assert.Equal(t, "alice", q.Users[0].Name)
	assert.Equal(t, int64(1), q.Users[0].ActiveApplications)
	assert.Equal(t, int64(2048), q.Users[0].Used.Value(records.MemoryMB))
	assert.Equal(t, int64(4096), q.Users[0].Limit.Value(records.MemoryMB))
	p := q.Partition("gpu")
	require.NotNil(t, p)
	assert.Equal(t, 50.0, p.AbsoluteCapacity)
	assert.Equal(t, int64(8192), p.EffectiveMin.Value(records.MemoryMB))
	assert.Equal(t, int64(16), p.EffectiveMax.Value(records.VCores))
	assert.Zero(t, q.Partition("").EffectiveMin.Len(), "not reported")
	// No nodeLabels in a CapacityScheduler leaf that reports its capacities: no label at all.
	assert.Equal(t, []string{}, q.NodeLabels)
	// A queue without the fields: not reported.
	assert.False(t, s.Root.UserLimitsReported)
	assert.Nil(t, s.Root.Partitions)
}

func FuzzDecodeNodeLabels(f *testing.F) {
	f.Add([]byte(`{"nodeLabelInfo":[{"name":"gpu","exclusivity":true},{"name":"x","exclusivity":"false"}]}`))
	f.Add([]byte(`{"nodeLabels":"a"}`))
	fuzzDecode(f, decodeNodeLabels, func(t *testing.T, data []byte, labels []NodeLabel) {
		for _, l := range labels {
			if l.Name == "" {
				t.Fatalf("a nameless label from %q", data)
			}
		}
	})
}
