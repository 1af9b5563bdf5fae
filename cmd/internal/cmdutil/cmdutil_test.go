package cmdutil_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/yarn"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/discovery"
)

func TestExitCodeMapping(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, cmdutil.ExitOK},
		{"plain", assert.AnError, cmdutil.ExitError},
		{"usage", cmdutil.Usagef("bad"), cmdutil.ExitUsage},
		{"findings", &cmdutil.FindingsError{Summary: "2 checks failed"}, cmdutil.ExitFindings},
		{"silent", &cmdutil.SilentError{Code: cmdutil.ExitNoDevices}, cmdutil.ExitNoDevices},
		{"canceled", context.Canceled, cmdutil.ExitInterrupted},
		{"application failed", &submit.AppError{App: &yarn.App{ID: "application_1_0001", State: records.AppFinished, FinalStatus: records.FinalFailed}}, cmdutil.ExitAppFailed},
		{"application killed", &submit.AppError{App: &yarn.App{ID: "application_1_0001", State: records.AppKilled, FinalStatus: records.FinalKilled}}, cmdutil.ExitAppKilled},
		{"preflight refused", fmt.Errorf("submit: %w", submit.ErrPreflight), cmdutil.ExitFindings},
		{"proxy user refused by HDFS", fmt.Errorf("staging: %w: User: bob is not allowed to impersonate alice", submit.ErrProxyUser), cmdutil.ExitAuth},
		{"WebHDFS certificate not trusted", fmt.Errorf("WebHDFS OPEN /f: read from the DataNode dn:9865: %w: x509: certificate signed by unknown authority", webhdfs.ErrCertificate), cmdutil.ExitAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, cmdutil.ExitCode(tc.err))
		})
	}
}

func TestYAMLKeepsOrderAndExactIntegers(t *testing.T) {
	var buf bytes.Buffer
	v := struct {
		B   int64   `json:"b"`
		A   string  `json:"a"`
		F   float64 `json:"f"`
		N   any     `json:"n"`
		L   []int   `json:"l"`
		Yes string  `json:"yes"`
	}{B: 9223372036854775807, A: "x: y", F: 1.5, L: []int{1, 2}, Yes: "yes"}
	require.NoError(t, cmdutil.WriteYAML(&buf, v))
	assert.Equal(t, "b: 9223372036854775807\na: 'x: y'\nf: 1.5\n\"n\": null\nl:\n  - 1\n  - 2\n\"yes\": \"yes\"\n", buf.String())
}

func TestExitCodesOfDiscoveryErrors(t *testing.T) {
	assert.Equal(t, cmdutil.ExitNoDevices, cmdutil.ExitCode(&discovery.InsufficientDevicesError{Wanted: 1}))
	assert.Equal(t, cmdutil.ExitNoDevices, cmdutil.ExitCode(&discovery.NoDevicesError{}))
	assert.Equal(t, cmdutil.ExitNoDevices, cmdutil.ExitCode(fmt.Errorf("wrapped: %w", &discovery.LockTimeoutError{Path: "x"})))
	assert.Equal(t, cmdutil.ExitError, cmdutil.ExitCode(&discovery.UnsafeFileError{Path: "x", Reason: "y"}))
}
