package yarn

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func readVariant(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "variants", name))
	require.NoError(t, err)
	return b
}

// TestDecodeFairSchedulerPaths is the "root.root.default" bug: the FairScheduler's queueName is
// already the full path, so the path must not get the parent's prefix a second time.
func TestDecodeFairSchedulerPaths(t *testing.T) {
	s, err := decodeScheduler(bytes.NewReader(readVariant(t, "scheduler-fair.json")))
	require.NoError(t, err)
	assert.Equal(t, FairScheduler, s.Type)

	type row struct {
		Path, Name, Policy string
		Leaf               bool
		Apps               int64
	}
	var got []row
	for _, q := range s.Queues() {
		got = append(got, row{q.Path, q.Name, q.SchedulingPolicy, q.Leaf, q.NumApplications})
		assert.NotContains(t, q.Path, "root.root", "path of %s", q.Name)
	}
	assert.Equal(t, []row{
		{"root", "root", "DRF", false, 0},
		{"root.default", "default", "fair", true, 3}, // 2 active + 1 pending
		{"root.gpu", "gpu", "DRF", false, 0},
		{"root.gpu.train", "train", "DRF", true, 1},
	}, got)

	// Lookup by path and by own name.
	train := s.Queue("root.gpu.train")
	require.NotNil(t, train)
	assert.Same(t, train, s.Queue("train"))
	assert.Nil(t, s.Queue("root.root.gpu.train"))

	// maxContainerAllocation is the queue's maximum allocation.
	assert.Equal(t, qmap{records.MemoryMB: {Value: 8192, Units: "Mi"}, records.VCores: {Value: 16, Units: ""}, records.GPU: {Value: 2, Units: ""}}, quantities(train.MaximumAllocation))
	assert.Equal(t, int64(4), s.Root.MaximumAllocation.Value(records.GPU))
	assert.Equal(t, qmap{records.MemoryMB: {Value: 16384, Units: "Mi"}, records.VCores: {Value: 32, Units: ""}}, quantities(s.Queue("root.default").MaximumAllocation))
	assert.Equal(t, int64(2), train.Used.Value(records.GPU))
	assert.Equal(t, int64(8), s.Root.MaxResources.Value(records.GPU))
	assert.Equal(t, int64(10000), s.Queue("root.gpu").MinResources.Value(records.MemoryMB))
	// The FairScheduler reports no scheduler-wide maximum in /scheduler.
	assert.Zero(t, s.MaximumAllocation.Len())
}

func TestQueuePath(t *testing.T) {
	for _, tc := range []struct {
		parent, path, name string
		wantPath, wantName string
	}{
		{"", "", "root", "root", "root"},
		{"root", "", "default", "root.default", "default"},                                // CapacityScheduler before queuePath
		{"root", "root.default", "default", "root.default", "default"},                    // CapacityScheduler 3.x
		{"root", "", "root.default", "root.default", "default"},                           // FairScheduler
		{"root.a", "", "root.a.b", "root.a.b", "b"},                                       // FairScheduler, deeper
		{"root.a", "", "root.ab", "root.a.root.ab", "root.ab"},                            // not below the parent: joined
		{"root", "", "root.", "root.root.", "root."},                                      // nothing after the prefix
		{"root", "", "", "", ""},                                                          // nameless
		{"root", "custom.path", "root.x", "custom.path", "x"},                             // the RM's path wins
		{"root.gpu", "", "root.gpu.train", "root.gpu.train", "train"},                     // three levels
		{"root", "", "rootdefault", "root.rootdefault", "rootdefault"},                    // prefix without the dot
		{"root.default", "", "root.default", "root.default.root.default", "root.default"}, // same as the parent
	} {
		p, n := queuePath(tc.parent, tc.path, tc.name)
		assert.Equal(t, tc.wantPath, p, "%+v", tc)
		assert.Equal(t, tc.wantName, n, "%+v", tc)
	}
}

func TestDecodeSchedulerOverview(t *testing.T) {
	// Hadoop 3.5 (Jersey 2): wrapped in "scheduler"; captured from the mini-YARN.
	o, err := decodeSchedulerOverview(bytes.NewReader(loadCapture(t, "scheduler-overview.json").body))
	require.NoError(t, err)
	assert.Equal(t, "Capacity Scheduler", o.SchedulerType)
	assert.Equal(t, []string{records.MemoryMB, records.VCores, records.FPGA, records.GPU}, o.ResourceTypes)
	assert.Equal(t, "memory-mb (unit=Mi),vcores,yarn.io/fpga,yarn.io/gpu", o.SchedulingResourceType)
	// The effective maximum: the configured one (unbounded GPUs) capped by the largest node.
	assert.Equal(t, qmap{records.MemoryMB: {Value: 16384, Units: "Mi"}, records.VCores: {Value: 40, Units: ""}, records.GPU: {Value: 4, Units: ""}, records.FPGA: {Value: 2, Units: ""}}, quantities(o.MaximumAllocation))
	assert.Equal(t, qmap{records.MemoryMB: {Value: 64, Units: "Mi"}, records.VCores: {Value: 1, Units: ""}, records.GPU: {Value: 0, Units: ""}, records.FPGA: {Value: 0, Units: ""}}, quantities(o.MinimumAllocation))
	assert.Zero(t, o.SchedulerBusy)

	// Hadoop 3.4 (Jersey 1): the same object without the root element.
	o, err = decodeSchedulerOverview(bytes.NewReader(readVariant(t, "scheduler-overview-3.4.json")))
	require.NoError(t, err)
	assert.Equal(t, "Fair Scheduler", o.SchedulerType)
	assert.Equal(t, []string{records.MemoryMB, records.VCores, records.GPU}, o.ResourceTypes)
	assert.Equal(t, int64(2), o.MaximumAllocation.Value(records.GPU))
	assert.Equal(t, int64(8192), o.MaximumAllocation.Value(records.MemoryMB))
	assert.Equal(t, int64(-1), o.SchedulerBusy)

	for name, body := range map[string]string{
		"null":          `null`,
		"empty":         `{}`,
		"null root":     `{"scheduler":null}`,
		"array":         `[1]`,
		"bad number":    `{"scheduler":{"schedulerType":"x","schedulerBusy":1.5}}`,
		"nameless type": `{"schedulerType":"x","maximumAllocation":{"resourceInformations":[{"value":1}]}}`,
		"not json":      `<html>`,
	} {
		_, err := decodeSchedulerOverview(strings.NewReader(body))
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrUnexpectedResponse, name)
	}
	// Long.MAX_VALUE survives.
	o, err = decodeSchedulerOverview(strings.NewReader(`{"scheduler":{"maximumAllocation":{"memory":9223372036854775807,"vCores":1}}}`))
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), o.MaximumAllocation.Value(records.MemoryMB))
	assert.Nil(t, o.ResourceTypes)
}

func TestParseSchedulingResourceType(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                       nil,
		"memory-mb (unit=Mi),vcores":             {"memory-mb", "vcores"},
		" memory-mb (unit=Mi) , vcores ,":        {"memory-mb", "vcores"},
		"a,b (unit=k),nvidia.com/gpu":            {"a", "b", "nvidia.com/gpu"},
		",,,":                                    nil,
		"memory-mb (unit=Mi),vcores,yarn.io/gpu": {"memory-mb", "vcores", "yarn.io/gpu"},
	} {
		assert.Equal(t, want, parseSchedulingResourceType(in), "%q", in)
	}
}

func TestReplaySchedulerOverview(t *testing.T) {
	rm, c := replayRM(t, "GET /ws/v1/cluster/scheduler-overview", "scheduler-overview.json")
	o, err := c.SchedulerOverview(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(4), o.MaximumAllocation.Value(records.GPU))
	reqs := rm.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, http.MethodGet, reqs[0].Method)
	assert.Equal(t, []string{"yarner"}, reqs[0].Query["user.name"])

	// An RM before 3.4 has no such endpoint.
	old := newFakeRM(t)
	_, err = testClient(t, Options{Retry: RetryPolicy{MaxAttempts: 1}}, old.URL()).SchedulerOverview(context.Background())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotFound)
	var re *records.RemoteError
	assert.True(t, errors.As(err, &re))
}

func TestSchedulerOverviewCaptureMatchesScheduler(t *testing.T) {
	// The same cluster's /scheduler reports the configured maximum (unbounded GPUs); the
	// overview the effective one. Both list the same types.
	s, err := decodeScheduler(bytes.NewReader(loadCapture(t, "scheduler.json").body))
	require.NoError(t, err)
	o, err := decodeSchedulerOverview(bytes.NewReader(loadCapture(t, "scheduler-overview.json").body))
	require.NoError(t, err)
	assert.ElementsMatch(t, slices.Collect(maps.Keys(quantities(s.MaximumAllocation))), slices.Collect(maps.Keys(quantities(o.MaximumAllocation))))
	assert.Equal(t, int64(math.MaxInt64), s.MaximumAllocation.Value(records.GPU))
	c, err := quantities(o.MaximumAllocation)[records.GPU].Cmp(quantities(s.MaximumAllocation)[records.GPU])
	require.NoError(t, err)
	assert.Equal(t, -1, c)
}
