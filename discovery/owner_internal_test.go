package discovery

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

func TestHidepidKeepsOtherUsersOwnersAlive(t *testing.T) {
	tree := discoverytest.New(t)
	tree.Boot("b", 1)
	tree.File("/proc/self/mountinfo", "22 1 0:21 / /proc rw,nosuid - proc proc rw,hidepid=invisible\n")
	proc := Proc{root: NewRoot(tree.Root), uid: 1000} // an unprivileged user: root sees through hidepid
	gone := Owner{PID: 55, StartTime: 1, BootID: "b", PIDNS: 1}
	l, reason := proc.Check(gone, 1001)
	assert.Equal(t, Unknown, l, "another user's process may just be invisible")
	assert.Contains(t, reason, "hidepid")
	l, _ = proc.Check(gone, 1000)
	assert.Equal(t, Dead, l, "this user's own processes are visible despite hidepid")

	tree.File("/proc/self/mountinfo", "22 1 0:21 / /proc rw,nosuid - proc proc rw\n")
	l, _ = proc.Check(gone, 1001)
	assert.Equal(t, Dead, l, "without hidepid a missing process has exited")
}
