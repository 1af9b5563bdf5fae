package am

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/records"
)

// TestHDFSStaging removes an HDFS staging directory through a NameNode speaking Hadoop IPC: with
// the HDFS delegation token for that NameNode when the credentials hold one (a Kerberized
// cluster), else as the application's user.
func TestHDFSStaging(t *testing.T) {
	dt := records.Token{Identifier: []byte("hdfs-dt"), Password: []byte("pw"), Kind: namenode.KindDelegationToken}
	for _, tc := range []struct {
		name      string
		withToken bool
	}{{"delegation token", true}, {"simple", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := "/user/alice/.yarn-er/" + amrmfake.AppID
			nn := namenodetest.New(t, namenodetest.Options{Paths: []string{dir + "/yarn-er", dir + "/yarn-er-job.json"}})
			creds := records.NewCredentials()
			creds.Tokens["amrm"] = records.Token{Identifier: []byte("amrm"), Kind: "YARN_AM_RM_TOKEN", Service: nn.Addr}
			if tc.withToken {
				tok := dt
				tok.Service = nn.Addr
				creds.Tokens["hdfs"] = tok
				nn.AddToken(tok.Identifier, tok.Password)
			} else {
				nn.Simple = true
			}
			st, err := OpenStaging("hdfs://"+nn.Addr+dir, amrmfake.AppID, "alice", creds)
			require.NoError(t, err)
			defer st.Close()
			// With SIMPLE the client waits for no answer before it returns, so the server may not
			// have accepted yet: wait for it, still before any removal is asked.
			assert.Eventually(t, func() bool { return nn.Connections() == 1 }, 5*time.Second, 2*time.Millisecond,
				"connected while the AM starts, not at removal")

			require.NoError(t, st.Remove(context.Background()))
			require.NoError(t, st.Remove(context.Background()), "already gone is fine")
			assert.Equal(t, []namenodetest.Delete{{Path: dir, Recursive: true}, {Path: dir, Recursive: true}}, nn.Deletes())
			assert.False(t, nn.Exists(dir))
			assert.Equal(t, 1, nn.Connections(), "removal reuses the connection")
			if tc.withToken {
				assert.Equal(t, [][]byte{dt.Identifier}, nn.Logins(), "the HDFS token, never the AMRMToken")
			} else {
				assert.Empty(t, nn.Logins())
				assert.Equal(t, "alice", nn.Contexts()[0].GetUserInfo().GetEffectiveUser())
			}
		})
	}

	// An HA nameservice: the staging URL names it, the spec lists its NameNodes; the first is
	// a standby, so the removal goes to the other, with the token of the nameservice's service.
	t.Run("nameservice", func(t *testing.T) {
		dir := "/user/alice/.yarn-er/" + amrmfake.AppID
		standby := namenodetest.New(t, namenodetest.Options{Standby: true, Paths: []string{dir + "/yarn-er"}})
		active := namenodetest.New(t, namenodetest.Options{Paths: []string{dir + "/yarn-er"}})
		tok := dt
		tok.Service = "ha-hdfs:ns1"
		creds := records.NewCredentials()
		creds.Tokens["hdfs"] = tok
		standby.AddToken(tok.Identifier, tok.Password)
		active.AddToken(tok.Identifier, tok.Password)
		st, err := openStaging("hdfs://ns1"+dir, []string{standby.Addr, active.Addr}, amrmfake.AppID, "alice",
			func() *records.Credentials { return creds })
		require.NoError(t, err)
		defer st.Close()
		require.NoError(t, st.Remove(context.Background()))
		assert.False(t, active.Exists(dir), "removed on the active NameNode")
		assert.Equal(t, []namenodetest.Delete{{Path: dir, Recursive: true}}, active.Deletes())

		_, err = OpenStaging("hdfs://ns1"+dir, amrmfake.AppID, "alice", creds)
		require.ErrorIs(t, err, ErrStaging)
		assert.Contains(t, err.Error(), "ns1 names no NameNode port and the job spec lists no NameNodes (stagingNameNodes)")
	})

	t.Run("NameNode down", func(t *testing.T) {
		nn := namenodetest.New(t, namenodetest.Options{})
		addr := nn.Addr
		nn.Close()
		_, err := OpenStaging("hdfs://"+addr+"/s/"+amrmfake.AppID, amrmfake.AppID, "alice", nil)
		require.ErrorIs(t, err, ErrStaging)
		assert.Contains(t, err.Error(), "connect to the NameNode")
	})
}
