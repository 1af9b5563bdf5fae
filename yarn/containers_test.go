package yarn

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/records"
)

func TestDecodeAppContainers(t *testing.T) {
	captured, err := os.ReadFile("yarnfake/captures/hadoop-3.5.0/attempt-containers.json")
	require.NoError(t, err)
	jersey1 := `{"containers":{"container":{"containerId":"container_1_0001_01_000002","allocatedMB":2048,"allocatedVCores":2,` +
		`"nodeId":"nm1:8041","containerState":"RUNNING","allocatedResources":{"entry":{"key":"yarn.io/gpu","value":2}}}}}`
	for _, tc := range []struct {
		name, body string
		want       []AppContainer
		err        string
	}{
		{name: "3.5.0 capture", body: string(captured), want: []AppContainer{{
			ID: "container_1796116205617_0001_01_000001", State: "RUNNING", NodeID: "localhost:44511",
			NodeHTTPAddress: "http://localhost:35695", StartedTime: millis(1796116535841),
			LogURL:   "http://localhost:35695/node/containerlogs/container_1796116205617_0001_01_000001/root",
			Resource: records.ResourcesOf(records.Resource{Name: records.MemoryMB, Value: 256, Units: records.MemoryUnits}, records.Resource{Name: records.VCores, Value: 1}, records.Resource{Name: records.GPU}, records.Resource{Name: records.FPGA}),
		}}},
		{name: "jersey 1 single", body: jersey1, want: []AppContainer{{
			ID: "container_1_0001_01_000002", State: "RUNNING", NodeID: "nm1:8041",
			Resource: records.NewResources(2048, 2, records.Resource{Name: records.GPU, Value: 2}),
		}}},
		{name: "empty", body: `{}`, want: []AppContainer{}},
		{name: "null", body: `{"containers":null}`, want: []AppContainer{}},
		{name: "bad value", body: `{"container":[{"allocatedResources":{"entry":[{"key":"yarn.io/gpu","value":"x"}]}}]}`, err: "allocatedResources"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeAppContainers(strings.NewReader(tc.body))
			if tabletest.WantErr(t, err, tc.err, ErrUnexpectedResponse) {
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
