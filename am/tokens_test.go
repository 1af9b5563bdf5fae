package am

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// fakeRefresher hands out tokens "fresh-1", "fresh-2"... for alias "hdfs", failing first as
// often as failures says, and records what it published.
type fakeRefresher struct {
	mu        sync.Mutex
	failures  int
	n         int
	published []*records.Credentials
	refreshed chan struct{}
}

func (f *fakeRefresher) Refresh(_ context.Context, current *records.Credentials) (map[string]records.Token, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failures > 0 {
		f.failures--
		return nil, time.Time{}, errors.New("KDC unreachable")
	}
	if _, ok := current.Tokens["hdfs"]; !ok {
		return nil, time.Time{}, errors.New("no hdfs token to replace")
	}
	f.n++
	tok := records.Token{Identifier: []byte("fresh-" + string(rune('0'+f.n))), Password: []byte("pw"), Kind: namenode.KindDelegationToken, Service: "nn:8020"}
	return map[string]records.Token{"hdfs": tok}, time.Now().Add(time.Hour), nil
}

func (f *fakeRefresher) Publish(_ context.Context, c *records.Credentials) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, c)
	if len(f.published) == 1 {
		close(f.refreshed)
	}
	return nil
}

// TestTokenRefresh: with spec.Tokens the AM refreshes the HDFS token after registering (a failed
// refresh is retried), publishes the fresh one, and a rank started after that gets it in its
// container's credentials; every rank's launch command starts `yarn-er tokens follow` first.
func TestTokenRefresh(t *testing.T) {
	ref := &fakeRefresher{refreshed: make(chan struct{})}
	var mu sync.Mutex
	first := true
	f := newFixture(t, 2, amrmfake.Options{Exit: func(l amrmfake.Launch) amrmfake.Outcome {
		mu.Lock()
		defer mu.Unlock()
		if l.Environment[jobspec.EnvRank] == "1" && first {
			first = false
			<-ref.refreshed // the rank fails once the tokens are fresh: its restart gets them
			return amrmfake.Outcome{ExitStatus: 1}
		}
		return amrmfake.Outcome{}
	}})
	f.spec.Restarts = 1
	f.spec.Tokens = &jobspec.TokenRefresh{Principal: "alice@EXAMPLE.COM", KeytabFile: "yarn-er.keytab", NameNodePrincipal: "nn/_HOST@EXAMPLE.COM",
		RenewIntervalMillis: 80_000}
	opts := f.options(t)
	opts.Tokens = ref

	res, err := f.run(t, opts)
	require.NoError(t, err)
	assert.Equal(t, records.FinalSucceeded, res.Status)
	require.Len(t, ref.published, 1)
	_, pub, ok := ref.published[0].TokenByKind(namenode.KindDelegationToken)
	require.True(t, ok)
	assert.Equal(t, "fresh-1", string(pub.Identifier))
	_, _, amrm := ref.published[0].TokenByKind(records.KindAMRMToken)
	assert.False(t, amrm, "the AMRMToken is never published")

	ls := f.cluster.Launches()
	require.Len(t, ls, 3)
	last := ls[len(ls)-1]
	assert.Equal(t, "1", last.Environment[jobspec.EnvRank])
	creds, err := records.ParseCredentials(last.Tokens)
	require.NoError(t, err)
	assert.Equal(t, "fresh-1", string(creds.Tokens["hdfs"].Identifier), "the restarted rank gets the fresh token")
	for _, l := range ls {
		require.Greater(t, len(l.Commands), 15)
		assert.Equal(t, []string{"./yarn-er", "tokens", "follow", "--log-level", "info", "--dir", launchQuote(f.spec.StagingDir), "--every", "10s", "--parent", `\$\$`,
			"</dev/null", ">/dev/null", "2><LOG_DIR>/" + TokensLog, "&"}, l.Commands[:15])
	}
}

// TestTokenRefreshNeedsARefresher: the small AM binary (no Kerberos) refuses a job that needs one.
func TestTokenRefreshNeedsARefresher(t *testing.T) {
	f := newFixture(t, 1, amrmfake.Options{})
	f.spec.Tokens = &jobspec.TokenRefresh{Principal: "alice@EXAMPLE.COM", KeytabFile: "k", NameNodePrincipal: "nn/_HOST@R"}
	_, err := f.run(t, f.options(t))
	assert.ErrorIs(t, err, ErrNoTokenRefresher)
}

func TestTokenPollInterval(t *testing.T) {
	for _, tc := range []struct {
		millis int64
		want   time.Duration
	}{{0, 10 * time.Minute}, {20_000, 2500 * time.Millisecond}, {8_000, 2 * time.Second}, {80_000, 10 * time.Second}, {3_600_000, 450 * time.Second}} {
		assert.Equal(t, tc.want, TokenPollInterval(&jobspec.TokenRefresh{RenewIntervalMillis: tc.millis}), tc.millis)
	}
	assert.Equal(t, 10*time.Minute, TokenPollInterval(nil))
}

// TestFollowTokensNameservice: on an HA nameservice the follower reads the published tokens from
// the active NameNode of those it is given (--namenodes), past a standby.
func TestFollowTokensNameservice(t *testing.T) {
	old := records.Token{Identifier: []byte("old"), Password: []byte("pw0"), Kind: namenode.KindDelegationToken, Service: "ha-hdfs:ns1"}
	fresh := records.Token{Identifier: []byte("new"), Password: []byte("pw1"), Kind: namenode.KindDelegationToken, Service: "ha-hdfs:ns1"}
	const dir = "/user/alice/.yarn-er/app_1"
	standby := namenodetest.New(t, namenodetest.Options{Standby: true, Paths: []string{dir + "/yarn-er"}})
	active := namenodetest.New(t, namenodetest.Options{Paths: []string{dir + "/yarn-er"}})
	for _, nn := range []*namenodetest.NameNode{standby, active} {
		nn.AddToken(old.Identifier, old.Password)
	}
	file := filepath.Join(t.TempDir(), "container_tokens")
	creds := records.NewCredentials()
	creds.AddToken("hdfs", old)
	require.NoError(t, records.WriteTokenFile(file, creds, records.FormatWritable))
	pub := records.NewCredentials()
	pub.AddToken("hdfs", fresh)
	b, err := pub.Marshal(records.FormatWritable)
	require.NoError(t, err)
	ctx := context.Background()
	c, err := namenode.Dial(ctx, namenode.Config{Addrs: []string{standby.Addr, active.Addr}, Token: &old})
	require.NoError(t, err)
	require.NoError(t, c.SetXAttr(ctx, dir, TokenXAttr, b), "the publisher's write goes past the standby too")
	require.NoError(t, c.Close())

	changed, err := followOnce(ctx, "ns1", []string{standby.Addr, active.Addr}, dir, file)
	require.NoError(t, err)
	assert.True(t, changed)
	got, err := records.ReadTokenFile(file)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got.Tokens["hdfs"].Identifier))

	err = FollowTokens(ctx, FollowOptions{Dir: "hdfs://ns1" + dir, TokenFile: file})
	assert.ErrorContains(t, err, "lists no NameNodes (stagingNameNodes) of that nameservice (fix: --namenodes host:port,...)")
}

// TestFollowTokens: the follower replaces the token file's HDFS token with the published one
// (keeping the others), leaves the file alone while nothing new is published, and stops when its
// parent process is gone.
func TestFollowTokens(t *testing.T) {
	old := records.Token{Identifier: []byte("old"), Password: []byte("pw0"), Kind: namenode.KindDelegationToken}
	fresh := records.Token{Identifier: []byte("new"), Password: []byte("pw1"), Kind: namenode.KindDelegationToken}
	nn := namenodetest.New(t, namenodetest.Options{Paths: []string{"/user/alice/.yarn-er/app_1/yarn-er"}})
	nn.AddToken(old.Identifier, old.Password)
	nn.AddToken(fresh.Identifier, fresh.Password)
	old.Service, fresh.Service = nn.Addr, nn.Addr

	dir := t.TempDir()
	file := filepath.Join(dir, "container_tokens")
	creds := records.NewCredentials()
	creds.AddToken("hdfs", old)
	creds.AddToken("other", records.Token{Identifier: []byte("x"), Password: []byte("y"), Kind: "TIMELINE_DELEGATION_TOKEN"})
	require.NoError(t, records.WriteTokenFile(file, creds, records.FormatWritable))
	staging := "hdfs://" + nn.Addr + "/user/alice/.yarn-er/app_1"

	ctx := context.Background()
	changed, err := followOnce(ctx, nn.Addr, []string{nn.Addr}, "/user/alice/.yarn-er/app_1", file)
	require.NoError(t, err)
	assert.False(t, changed, "nothing published yet")

	pub := records.NewCredentials()
	pub.AddToken("hdfs", fresh)
	b, err := pub.Marshal(records.FormatWritable)
	require.NoError(t, err)
	c, err := namenode.Dial(ctx, namenode.Config{Addrs: []string{nn.Addr}, Token: &old})
	require.NoError(t, err)
	require.NoError(t, c.SetXAttr(ctx, "/user/alice/.yarn-er/app_1", TokenXAttr, b))
	require.NoError(t, c.Close())

	// The parent is a process that ends soon: FollowTokens reads once, then stops.
	parent := startSleeper(t)
	done := make(chan error, 1)
	go func() {
		done <- FollowTokens(ctx, FollowOptions{Dir: staging, TokenFile: file, Every: 20 * time.Millisecond, Parent: parent.Process.Pid})
	}()
	require.Eventually(t, func() bool {
		got, err := records.ReadTokenFile(file)
		return err == nil && string(got.Tokens["hdfs"].Identifier) == "new"
	}, 10*time.Second, 10*time.Millisecond)
	got, err := records.ReadTokenFile(file)
	require.NoError(t, err)
	assert.Equal(t, "x", string(got.Tokens["other"].Identifier), "other tokens kept")
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	changed, err = followOnce(ctx, nn.Addr, []string{nn.Addr}, "/user/alice/.yarn-er/app_1", file)
	require.NoError(t, err)
	assert.False(t, changed, "the same tokens again: the file is left alone")

	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("FollowTokens did not stop when its parent ended")
	}
}

func TestFollowTokensRefusesBadInput(t *testing.T) {
	for _, o := range []FollowOptions{
		{Dir: "file:///tmp/x", TokenFile: "f"},
		{Dir: "hdfs:///no-host", TokenFile: "f"},
		{Dir: "hdfs://nn:8020/x"},
	} {
		assert.Error(t, FollowTokens(context.Background(), o), "%+v", o)
	}
}

// startSleeper starts a process that lives until killed.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}
