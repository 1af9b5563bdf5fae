package tokens

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
)

func TestFollowFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdTokens, "follow", "--dir", "hdfs://nn:8020/user/a/.yarn-er/app_1", "--every", "5s", "--parent", "42")
	assert.Equal(t, "hdfs://nn:8020/user/a/.yarn-er/app_1", got.Dir)
	assert.Equal(t, 5*time.Second, got.Every)
	assert.Equal(t, 42, got.Parent)
}

func TestFollowRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts FollowOptions
		want string
	}{
		{"no dir", FollowOptions{}, "--dir is required"},
		{"negative interval", FollowOptions{Dir: "hdfs://nn:1/x", Every: -time.Second}, "must not be negative"},
		{"not hdfs", FollowOptions{Dir: "file:///tmp/x"}, "want the staging directory's hdfs://"},
		{"no token file", FollowOptions{Dir: "hdfs://nn:1/x"}, "HADOOP_TOKEN_FILE_LOCATION is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := cmdtest.Buffers(cmdutil.Env{})
			tc.opts.Base = cmdutil.Base{F: f, Ctx: t.Context()}
			err := followRun(&tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
