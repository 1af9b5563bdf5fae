package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// appsRM answers /ws/v1/cluster/apps with applications of these ids, in this order, and records
// the queries it was sent.
func appsRM(t *testing.T, ids ...string) (string, func() []string) {
	t.Helper()
	apps := make([]string, len(ids))
	for i, id := range ids {
		apps[i] = fmt.Sprintf(`{"id":%q,"user":"u","name":"n","queue":"default","state":"RUNNING","finalStatus":"UNDEFINED","progress":0}`, id)
	}
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/apps", http.StatusOK, fmt.Sprintf(`{"apps":{"app":[%s]}}`, strings.Join(apps, ",")))
	return rm.URL(), func() []string {
		var queries []string
		for _, r := range rm.Requests() {
			queries = append(queries, r.Query.Encode())
		}
		return queries
	}
}

func runApps(t *testing.T, rm string, args ...string) view.Apps {
	t.Helper()
	f, out, _ := cmdtest.Buffers(cmdutil.EnvFromMap(map[string]string{"HADOOP_USER_NAME": "u"}))
	f.Output = cmdutil.OutputJSON
	cmdtest.Parse(t, NewCmdApps(f, nil), append([]string{"--rm", rm}, args...)...)
	var apps view.Apps
	require.NoError(t, json.Unmarshal(out.Bytes(), &apps))
	return apps
}

func appIDs(apps view.Apps) []string {
	ids := make([]string, len(apps.Apps))
	for i, a := range apps.Apps {
		ids[i] = a.ID
	}
	return ids
}

// TestAppsNewestFirstByNumber: ids sort by cluster timestamp, then by sequence number as a number
// (_10000 is newer than _9999), not as strings.
func TestAppsNewestFirstByNumber(t *testing.T) {
	rm, _ := appsRM(t,
		"application_1700000000000_9999", "application_1700000000000_10000", "application_1600000000000_20000",
		"application_1700000000000_0002", "application_1800000000000_0001")
	got := runApps(t, rm)
	assert.Equal(t, []string{
		"application_1800000000000_0001", "application_1700000000000_10000", "application_1700000000000_9999",
		"application_1700000000000_0002", "application_1600000000000_20000",
	}, appIDs(got))
}

// TestAppsLimitKeepsTheNewest: --limit N shows the N newest applications, whatever order the RM
// answers in; the RM's own limit (which keeps whichever it lists first) is not used.
func TestAppsLimitKeepsTheNewest(t *testing.T) {
	rm, queries := appsRM(t,
		"application_1700000000000_0001", "application_1700000000000_0002", "application_1700000000000_0003",
		"application_1700000000000_10000")
	got := runApps(t, rm, "--limit", "2")
	assert.Equal(t, []string{"application_1700000000000_10000", "application_1700000000000_0003"}, appIDs(got))
	for _, q := range queries() {
		assert.NotContains(t, q, "limit=", "the limit is applied after sorting")
	}
}
