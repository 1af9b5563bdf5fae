//go:build linux

package discovery_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

// notOurPID is above the kernel's pid_max limit (2^22): no process of the test has it.
const notOurPID = 4194305

// TestProcfsOfAnotherPIDNamespace: a /proc that shows another PID namespace's processes (a container
// that kept the host's /proc, `unshare --pid` without --mount-proc, --proc-root naming the host's /proc
// from inside a container) names different processes by the pids this process knows. Reading an owner's
// start time there records an unrelated process (a kernel thread that never ends: the devices leak) and
// judges a live owner by an unrelated pid (gone: the devices are handed out again). Such a /proc is
// recognised by its /proc/self, which names another pid than this process's (or, by NSpid, a pid of an
// ancestor namespace); there no owner is recorded, and no entry of this namespace is judged dead.
func TestProcfsOfAnotherPIDNamespace(t *testing.T) {
	const boot, ns = "8b1f6c1e-2f6a-4d55-9a3e-1b2c3d4e5f60", 4026531836
	cases := []struct {
		name    string
		self    string // /proc/self's target; "" makes it a directory (a fake tree that cannot tell)
		status  string // /proc/<self>/status
		foreign bool
	}{
		{"another pid", fmt.Sprint(notOurPID), fmt.Sprintf("Name:\tjava\nNSpid:\t%d\n", notOurPID), true},
		{"our pid, but NSpid shows an ancestor namespace", fmt.Sprint(os.Getpid()), fmt.Sprintf("NSpid:\t%d\t%d\n", os.Getpid(), os.Getpid()), true},
		{"our own namespace", fmt.Sprint(os.Getpid()), fmt.Sprintf("NSpid:\t%d\n", os.Getpid()), false},
		{"our pid, a kernel without NSpid", fmt.Sprint(os.Getpid()), "Name:\tjava\n", false},
		{"a fake tree without the link", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tree := discoverytest.New(t)
			tree.File("/proc/sys/kernel/random/boot_id", boot+"\n")
			if tc.self == "" {
				tree.Link("/proc/self/ns/pid", fmt.Sprintf("pid:[%d]", ns))
			} else {
				tree.Link("/proc/"+tc.self+"/ns/pid", fmt.Sprintf("pid:[%d]", ns))
				tree.File("/proc/"+tc.self+"/status", tc.status)
				tree.Link("/proc/self", tc.self)
			}
			tree.Process(100, 5000)
			proc := discovery.NewProc(discovery.NewRoot(tree.Root))

			_, err := proc.Owner(100)
			gone := discovery.Owner{PID: 300, StartTime: 1, BootID: boot, PIDNS: ns}
			l, reason := proc.Check(gone, os.Getuid())
			if !tc.foreign {
				require.NoError(t, err)
				assert.Equal(t, discovery.Dead, l, reason)
				return
			}
			require.Error(t, err, "no owner is recorded from another namespace's /proc")
			assert.Contains(t, err.Error(), "another PID namespace")
			assert.Equal(t, discovery.Unknown, l, "a pid of this namespace missing from that /proc may still run")
			assert.Contains(t, reason, "another PID namespace")
			rebooted := gone
			rebooted.BootID = "00000000-old"
			l, _ = proc.Check(rebooted, os.Getuid())
			assert.Equal(t, discovery.Dead, l, "a reboot still frees everything")
		})
	}
}

// TestOwnNamespaceUnreadable: an entry of a known PID namespace cannot be judged by pid when this
// process cannot read its own namespace: the pid may be another namespace's.
func TestOwnNamespaceUnreadable(t *testing.T) {
	const boot = "8b1f6c1e-2f6a-4d55-9a3e-1b2c3d4e5f60"
	tree := discoverytest.New(t)
	tree.File("/proc/sys/kernel/random/boot_id", boot+"\n")
	proc := discovery.NewProc(discovery.NewRoot(tree.Root))
	l, reason := proc.Check(discovery.Owner{PID: 300, StartTime: 1, BootID: boot, PIDNS: 4026532999}, os.Getuid())
	assert.Equal(t, discovery.Unknown, l, reason)
	l, reason = proc.Check(discovery.Owner{PID: 300, StartTime: 1, BootID: boot}, os.Getuid())
	assert.Equal(t, discovery.Dead, l, "neither namespace known (a kernel without PID namespaces): the pid is checked, "+reason)
}

const procNSEnv = "YARN_ER_DISCOVERY_PIDNS_HELPER"

// TestRealProcfsOfTheParentNamespace runs a helper in a new PID namespace that keeps the parent's /proc
// (what `unshare --pid --fork` without --mount-proc makes): there the helper is pid 1, and /proc/1 is
// the host's init. Needs the right to make a PID namespace (root).
func TestRealProcfsOfTheParentNamespace(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestRealProcfsHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), procNSEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		t.Skipf("cannot start a process in a new PID namespace here: %v", err)
	}
	var got struct {
		PID      int
		OwnerErr string
		Liveness string
	}
	require.NoError(t, json.Unmarshal(out, &got), string(out))
	require.Equal(t, 1, got.PID, "the helper is init of its namespace")
	assert.Contains(t, got.OwnerErr, "another PID namespace", "the host's init is not recorded as the helper")
	assert.Equal(t, "unknown", got.Liveness)
}

// TestRealProcfsHelper is the process of TestRealProcfsOfTheParentNamespace.
func TestRealProcfsHelper(t *testing.T) {
	if os.Getenv(procNSEnv) == "" {
		t.Skip("a helper process of TestRealProcfsOfTheParentNamespace")
	}
	proc := discovery.NewProc(discovery.Root{})
	got := struct {
		PID      int
		OwnerErr string
		Liveness string
	}{PID: os.Getpid()}
	if _, err := proc.Owner(os.Getpid()); err != nil {
		got.OwnerErr = err.Error()
	}
	boot, err := proc.BootID()
	require.NoError(t, err)
	// A live process of this namespace (pid 1 here) that the host's /proc knows under another pid.
	l, _ := proc.Check(discovery.Owner{PID: 1, StartTime: 1, BootID: boot, PIDNS: proc.PIDNS("self")}, os.Getuid())
	got.Liveness = l.String()
	raw, err := json.Marshal(got)
	require.NoError(t, err)
	_, _ = os.Stdout.Write(raw)
	os.Exit(0) // nothing but the JSON on stdout
}
