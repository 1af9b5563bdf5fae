package discovery_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		name, in string
		want     uint64
		err      string
	}{
		{"plain", discoverytest.ProcStat(4242, "java", 987654), 987654, ""},
		{"comm with spaces and parens", discoverytest.ProcStat(7, "a) b (c", 12), 12, ""},
		{"no comm", "4242 java S 1", 0, "no \"(comm)\""},
		{"short", "4242 (java) S 1 2 3", 0, "want at least 20"},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 later 0", 0, "starttime \"later\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := discovery.ParseProcStat([]byte(tc.in))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRealProcStat(t *testing.T) {
	proc := discovery.NewProc(discovery.Root{})
	owner, err := proc.Owner(os.Getpid())
	require.NoError(t, err)
	assert.NotZero(t, owner.StartTime)
	assert.NotEmpty(t, owner.BootID)
	l, reason := proc.Check(owner, os.Getuid())
	assert.Equal(t, discovery.Alive, l, reason)
}

func TestOwnerLiveness(t *testing.T) {
	const boot, ns = "8b1f6c1e-2f6a-4d55-9a3e-1b2c3d4e5f60", 4026531836
	tree := discoverytest.New(t)
	tree.Boot(boot, ns)
	tree.Process(100, 5000)
	tree.Process(200, 9999) // pid 200 was reused: recorded with start 6000
	proc := discovery.NewProc(discovery.NewRoot(tree.Root))
	uid := os.Getuid()

	owner, err := proc.Owner(100)
	require.NoError(t, err)
	assert.Equal(t, discovery.Owner{PID: 100, StartTime: 5000, BootID: boot, PIDNS: ns}, owner)
	_, err = proc.Owner(300)
	assert.ErrorContains(t, err, "owner process 300 does not exist")

	cases := []struct {
		name   string
		owner  discovery.Owner
		want   discovery.Liveness
		reason string
	}{
		{"running", discovery.Owner{PID: 100, StartTime: 5000, BootID: boot, PIDNS: ns}, discovery.Alive, "running"},
		{"pid reused", discovery.Owner{PID: 200, StartTime: 6000, BootID: boot, PIDNS: ns}, discovery.Dead, "reused"},
		{"exited", discovery.Owner{PID: 300, StartTime: 1, BootID: boot, PIDNS: ns}, discovery.Dead, "exited"},
		{"earlier boot", discovery.Owner{PID: 100, StartTime: 5000, BootID: "00000000-old", PIDNS: ns}, discovery.Dead, "earlier boot"},
		{"other PID namespace", discovery.Owner{PID: 300, StartTime: 1, BootID: boot, PIDNS: 4026532999}, discovery.Unknown, "another PID namespace"},
		{"namespace unknown", discovery.Owner{PID: 100, StartTime: 5000, BootID: boot}, discovery.Alive, "running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, reason := proc.Check(tc.owner, uid)
			assert.Equal(t, tc.want, l)
			assert.Contains(t, reason, tc.reason)
		})
	}
}
