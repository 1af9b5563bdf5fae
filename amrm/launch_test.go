package amrm

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func TestLocalResourceURLLikeHadoop(t *testing.T) {
	// Hadoop 3.5.0 URL.fromURI: file:///tmp/a%20b/x -> scheme "file" port -1 file "/tmp/a b/x";
	// hdfs://nn:8020/user/x -> scheme "hdfs" host "nn" port 8020 file "/user/x".
	p, err := localResourceProto(records.LocalResource{URL: "file:///tmp/a%20b/x", Size: 1, Timestamp: 2})
	require.NoError(t, err)
	assert.Equal(t, "file", p.GetResource().GetScheme())
	assert.Nil(t, p.GetResource().Host)
	assert.Equal(t, int32(-1), p.GetResource().GetPort())
	assert.Equal(t, "/tmp/a b/x", p.GetResource().GetFile())
	assert.Equal(t, "FILE", p.GetType().String())
	assert.Equal(t, "APPLICATION", p.GetVisibility().String())

	p, err = localResourceProto(records.LocalResource{URL: "hdfs://nn:8020/user/x", Size: 10, Timestamp: 20, Type: records.LocalArchive, Visibility: records.VisibilityPublic})
	require.NoError(t, err)
	assert.Equal(t, "hdfs", p.GetResource().GetScheme())
	assert.Equal(t, "nn", p.GetResource().GetHost())
	assert.Equal(t, int32(8020), p.GetResource().GetPort())
	assert.Equal(t, "/user/x", p.GetResource().GetFile())
	assert.Equal(t, int64(10), p.GetSize())
	assert.Equal(t, int64(20), p.GetTimestamp())
	assert.Equal(t, "ARCHIVE", p.GetType().String())
	assert.Equal(t, "PUBLIC", p.GetVisibility().String())

	for _, bad := range []records.LocalResource{
		{URL: "relative/path", Size: 1, Timestamp: 1},
		{URL: "hdfs://nn:8020/x", Size: -1, Timestamp: 1},
		{URL: "hdfs://nn:8020/x", Size: 1},
		{URL: "hdfs://nn:99999/x", Size: 1, Timestamp: 1},
		{URL: "::", Size: 1, Timestamp: 1},
	} {
		_, err := localResourceProto(bad)
		assert.Error(t, err, bad.URL)
	}
}

func TestFileResource(t *testing.T) {
	p := filepath.Join(t.TempDir(), "am bin")
	require.NoError(t, os.WriteFile(p, []byte("12345"), 0o755))
	mt := time.UnixMilli(1700000000123)
	require.NoError(t, os.Chtimes(p, mt, mt))
	r, err := records.FileResource(p)
	require.NoError(t, err)
	assert.Equal(t, int64(5), r.Size)
	assert.Equal(t, int64(1700000000123), r.Timestamp)
	pp, err := localResourceProto(r)
	require.NoError(t, err)
	assert.Equal(t, p, pp.GetResource().GetFile())
	_, err = records.FileResource(filepath.Dir(p))
	assert.Error(t, err)
}

func TestLaunchContextFiltersAMRMToken(t *testing.T) {
	creds := javaCredentials(t)
	creds.AddToken("hdfs", records.Token{Identifier: []byte("dt"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: "nn:8020"})
	lc := NewLaunchContext("./worker", "1>", "<LOG_DIR>/stdout").
		WithEnv("B", "2").WithEnv("A", "1").
		WithLocalResource("worker", records.LocalResource{URL: "file:///w", Size: 3, Timestamp: 4}).
		WithCredentials(creds)
	p, err := lc.proto()
	require.NoError(t, err)
	assert.Equal(t, []string{"./worker", "1>", "<LOG_DIR>/stdout"}, p.GetCommand())
	require.Len(t, p.GetEnvironment(), 2)
	assert.Equal(t, "A", p.GetEnvironment()[0].GetKey(), "sorted, deterministic")
	require.Len(t, p.GetLocalResources(), 1)
	assert.Equal(t, "worker", p.GetLocalResources()[0].GetKey())

	got, err := records.ParseCredentials(p.GetTokens())
	require.NoError(t, err)
	assert.Equal(t, records.FormatWritable, got.Format)
	_, _, hasAMRM := got.TokenByKind(records.KindAMRMToken)
	assert.False(t, hasAMRM, "the AMRMToken never reaches a container")
	assert.Contains(t, got.Tokens, "hdfs")
	assert.Contains(t, creds.Tokens, "amrm-alias", "the caller's credentials are untouched")

	_, err = NewLaunchContext().proto()
	assert.Error(t, err)
}

func TestLocalResourceProtoEnums(t *testing.T) {
	for _, tc := range []struct {
		typ  records.LocalResourceType
		vis  records.LocalResourceVisibility
		want [2]string
	}{
		{"", "", [2]string{"FILE", "APPLICATION"}},
		{records.LocalPattern, records.VisibilityPrivate, [2]string{"PATTERN", "PRIVATE"}},
		{records.LocalFile, records.VisibilityPublic, [2]string{"FILE", "PUBLIC"}},
	} {
		p, err := localResourceProto(records.LocalResource{URL: "hdfs://nn/x", Size: 1, Timestamp: 1, Type: tc.typ, Visibility: tc.vis, Pattern: "*.so"})
		require.NoError(t, err)
		assert.Equal(t, tc.want, [2]string{p.GetType().String(), p.GetVisibility().String()})
		assert.Equal(t, tc.typ == records.LocalPattern, p.Pattern != nil)
	}
	_, err := localResourceProto(records.LocalResource{URL: "hdfs://nn/x", Size: 1, Timestamp: 1, Type: "ZIP"})
	assert.ErrorContains(t, err, `type "ZIP"`)
}

func TestAMRMAttempt(t *testing.T) {
	tok := javaCredentials(t).Tokens["amrm-alias"]
	a, err := AMRMAttempt(tok)
	require.NoError(t, err)
	// Hadoop's AMRMTokenIdentifier.getUser() for this identifier.
	assert.Equal(t, "appattempt_1700000000000_0001_000001", a.String())
	_, err = AMRMAttempt(records.Token{Kind: records.KindNMToken})
	assert.Error(t, err)
	_, err = AMRMAttempt(records.Token{Kind: records.KindAMRMToken, Identifier: []byte{0xff}})
	assert.Error(t, err)
}
