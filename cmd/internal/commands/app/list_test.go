package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// TestListLimitKeepsTheNewest: `app list --limit N` shows the N newest applications (by id),
// whatever order the RM answers in, and does not hand the limit to the RM, which keeps whichever
// applications it lists first (before, the first N of the RM's answer).
func TestListLimitKeepsTheNewest(t *testing.T) {
	var apps []string
	for i, id := range []string{"application_1700000000000_0001", "application_1700000000000_10000",
		"application_1700000000000_0003", "application_1700000000000_0002"} {
		// The oldest application started last: the order is the ids', not the start times'.
		apps = append(apps, fmt.Sprintf(`{"id":%q,"user":"u","name":"n","queue":"default","state":"RUNNING",`+
			`"finalStatus":"UNDEFINED","progress":0,"startedTime":%d}`, id, 1700000000000+int64(10-i)*1000))
	}
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	rm.ReplyJSON("GET /ws/v1/cluster/apps", http.StatusOK, fmt.Sprintf(`{"apps":{"app":[%s]}}`, strings.Join(apps, ",")))
	err, out, stderr := runApp(t, cmdutil.OutputJSON, func(f *cmdutil.Factory) *cobra.Command { return NewCmdList(f, nil) },
		"--rm", rm.URL(), "--limit", "2")
	require.NoError(t, err, stderr)
	var got []view.AppInfo
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	ids := make([]string, len(got))
	for i, a := range got {
		ids[i] = a.ID
	}
	assert.Equal(t, []string{"application_1700000000000_10000", "application_1700000000000_0003"}, ids)
	for _, r := range rm.Requests() {
		assert.NotContains(t, r.Query.Encode(), "limit=", "the limit is applied after sorting")
	}
}
