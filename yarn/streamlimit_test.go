package yarn

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNodesOverTheOldBodyLimit: a 40,000-node /nodes answer of about 108 MB, more than the 100 MiB
// a list answer was bounded by as a whole, is read: a streamed list is bounded per record, by its
// records' count and kept memory, and by time, not by its bytes on the wire.
func TestNodesOverTheOldBodyLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 108 MB answer")
	}
	node := `{"id":"host-x:45454","rack":"/default-rack","state":"RUNNING","nodeHostName":"host-x","nodeHTTPAddress":"host-x:8042","version":"3.5.0",` +
		`"totalResource":{"memory":65536,"vCores":32,"resourceInformations":{"resourceInformation":[{"name":"memory-mb","value":65536,"units":"Mi"},{"name":"vcores","value":32,"units":""},{"name":"yarn.io/gpu","value":8,"units":""}]}},` +
		`"usedResource":{"memory":0,"vCores":0},"availableResource":{"memory":65536,"vCores":32}` + strings.Repeat(" ", 2300) + `}`
	const n = 40000
	rm := newFakeRM(t)
	rm.Handle("GET "+pathNodes, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, repeatReader(`{"nodes":{"node":[`, []byte(node+","), n-1, node+`]}}`))
	})
	c := testClient(t, Options{}, rm.URL())
	nodes, err := c.Nodes(context.Background(), NodesQuery{})
	require.NoError(t, err)
	assert.Len(t, nodes, n)
	assert.Greater(t, int64(len(node)+1)*n, int64(MaxListBody), "the answer is larger than the whole-list limit was")
	assert.Equal(t, int64(8), nodes[n-1].Total.Value("yarn.io/gpu"))
}

type fatRecord struct{ X int }

func (fatRecord) retainedBytes() int64 { return MaxListRetained / 2 }

// TestListRetainedBound: the records a list keeps are bounded by their estimated memory.
func TestListRetainedBound(t *testing.T) {
	body := `{"things":{"thing":[{"X":1},{"X":2},{"X":3}]}}`
	_, err := decodeList(strings.NewReader(body), "things", "thing", func(j *fatRecord) (fatRecord, error) { return *j, nil })
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrResponseTooLarge)
	assert.Contains(t, err.Error(), "records kept exceeds")

	got, err := decodeList(strings.NewReader(`{"things":{"thing":[{"X":1}]}}`), "things", "thing", func(j *fatRecord) (fatRecord, error) { return *j, nil })
	require.NoError(t, err)
	assert.Len(t, got, 1)
	n := Node{ID: "h:1", HealthReport: strings.Repeat("x", 1000)}
	assert.Greater(t, n.retainedBytes(), int64(1000))
}
