//go:build unix

package discovery_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

const (
	testBoot = "8b1f6c1e-2f6a-4d55-9a3e-1b2c3d4e5f60"
	testNS   = 4026531836
)

// coordFixture is a fake procfs (owners come and go by writing /proc/<pid>/stat) and a coordination
// directory.
type coordFixture struct {
	t    *testing.T
	proc *discoverytest.Tree
	dir  string
	logs *bytes.Buffer
}

func newCoordFixture(t *testing.T) *coordFixture {
	t.Helper()
	proc := discoverytest.New(t)
	proc.Boot(testBoot, testNS)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	return &coordFixture{t: t, proc: proc, dir: dir, logs: &bytes.Buffer{}}
}

func (f *coordFixture) path() string { return filepath.Join(f.dir, "gpus") }

func (f *coordFixture) coordinator(mod ...func(*discovery.CoordinatorOptions)) *discovery.Coordinator {
	f.t.Helper()
	p := discovery.NewProc(discovery.NewRoot(f.proc.Root))
	opts := discovery.CoordinatorOptions{Path: f.path(), Proc: &p, LockTimeout: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, m := range mod {
		m(&opts)
	}
	c, err := discovery.NewCoordinator(opts)
	require.NoError(f.t, err)
	return c
}

// owner starts a fake process.
func (f *coordFixture) owner(pid int) discovery.Owner {
	f.t.Helper()
	f.proc.Process(pid, uint64(pid)*7)
	return discovery.Owner{PID: pid, StartTime: uint64(pid) * 7, BootID: testBoot, PIDNS: testNS}
}

// gpus returns n NVIDIA GPUs as discovery reports them.
func gpus(t *testing.T, n int) []discovery.Device {
	t.Helper()
	tree := discoverytest.New(t)
	tree.NVIDIAHost(n)
	res, err := discovery.Discover(context.Background(), discovery.VendorNVIDIA, discovery.Options{Root: discovery.NewRoot(tree.Root)})
	require.NoError(t, err)
	require.Len(t, res.Devices, n)
	return res.Devices
}

// newCoordTest is a fixture, its coordinator with the default options, and n fake GPUs.
func newCoordTest(t *testing.T, n int) (*coordFixture, *discovery.Coordinator, []discovery.Device) {
	t.Helper()
	f := newCoordFixture(t)
	return f, f.coordinator(), gpus(t, n)
}

func keys(devs []discovery.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.Key
	}
	return out
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

func TestAcquireRelease(t *testing.T) {
	f, c, devs := newCoordTest(t, 4)
	ctx := context.Background()
	a, b, x := f.owner(100), f.owner(200), f.owner(300)

	got, err := c.Acquire(ctx, a, devs, 2)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[:2]), keys(got))
	lockIno := inode(t, c.LockPath())

	got, err = c.Acquire(ctx, b, devs, 2)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[2:]), keys(got))

	_, err = c.Acquire(ctx, x, devs, 1)
	var insufficient *discovery.InsufficientDevicesError
	require.ErrorAs(t, err, &insufficient)
	assert.Equal(t, 1, insufficient.Wanted)
	assert.Equal(t, 4, insufficient.Visible)
	assert.Equal(t, 0, insufficient.Free)
	assert.Len(t, insufficient.Holders, 4)
	assert.Contains(t, err.Error(), "pid 100 (alive)")

	released, err := c.Release(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[:2]), released)
	got, err = c.Acquire(ctx, x, devs, 1)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[:1]), keys(got))

	// Files: the lock was never replaced; the ledger is this user's, readable by all, and holds a header.
	assert.Equal(t, lockIno, inode(t, c.LockPath()))
	ledger := c.LedgerPath(os.Getuid())
	fi, err := os.Stat(ledger)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	data, err := os.ReadFile(ledger)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 4)
	assert.True(t, strings.HasPrefix(lines[0], "# yarn-er device ledger v1"))
	assert.True(t, strings.HasPrefix(lines[1], "v1 "+devs[2].Key+" 200 1400 "+testBoot+" 4026531836 "), lines[1])
	entries, err := c.Entries(ctx)
	require.NoError(t, err)
	assert.Len(t, entries, 3)
	for _, e := range entries {
		assert.Equal(t, "alive", e.Liveness)
	}
}

func TestSameOwnerAsksTwiceGetsMoreDevices(t *testing.T) {
	// Flink's semantics: every call hands out new devices, also to the same process (several
	// TaskManagers of a MiniCluster share one JVM).
	f, c, devs := newCoordTest(t, 3)
	a := f.owner(100)
	first, err := c.Acquire(context.Background(), a, devs, 1)
	require.NoError(t, err)
	second, err := c.Acquire(context.Background(), a, devs, 1)
	require.NoError(t, err)
	assert.NotEqual(t, first[0].Key, second[0].Key)
	released, err := c.Release(context.Background(), a)
	require.NoError(t, err)
	assert.Len(t, released, 2)
}

func TestDeadOwnersAreReclaimed(t *testing.T) {
	f, c, devs := newCoordTest(t, 4)
	ctx := context.Background()
	_, err := c.Acquire(ctx, f.owner(100), devs, 2)
	require.NoError(t, err)
	_, err = c.Acquire(ctx, f.owner(200), devs, 2)
	require.NoError(t, err)

	f.proc.Kill(100)              // exited
	f.proc.Process(200, 99999999) // pid 200 reused by a newer process
	got, err := c.Acquire(ctx, f.owner(300), devs, 4)
	require.NoError(t, err)
	assert.Equal(t, keys(devs), keys(got))
	assert.Contains(t, f.logs.String(), "reclaimed a device")
	assert.Contains(t, f.logs.String(), "was reused by another process")
	entries, err := c.Entries(ctx)
	require.NoError(t, err)
	require.Len(t, entries, 4)
	for _, e := range entries {
		assert.Equal(t, 300, e.Owner.PID, "dead owners' entries are gone")
	}
}

func TestOneAndElevenAreNeverConfused(t *testing.T) {
	// Flink measured defect (a): with 12 GPUs, reclaiming GPU 1 from a dead owner also deleted the entry
	// of GPU 11, held by a live process, and GPU 11 was handed out a second time.
	f, c, devs := newCoordTest(t, 12)
	require.Equal(t, strings.TrimSuffix(devs[1].Key, "01"), strings.TrimSuffix(devs[11].Key, "11"), "the keys of 1 and 11 differ in one digit")
	ctx := context.Background()
	dead, live, others := f.owner(101), f.owner(111), f.owner(150)
	_, err := c.Acquire(ctx, dead, devs[1:2], 1)
	require.NoError(t, err)
	_, err = c.Acquire(ctx, live, devs[11:12], 1)
	require.NoError(t, err)
	rest := append([]discovery.Device{devs[0]}, devs[2:11]...)
	_, err = c.Acquire(ctx, others, rest, 10)
	require.NoError(t, err)

	f.proc.Kill(101)
	got, err := c.Acquire(ctx, f.owner(200), devs, 1)
	require.NoError(t, err)
	assert.Equal(t, devs[1].Key, got[0].Key)

	_, err = c.Acquire(ctx, f.owner(201), devs, 1)
	require.ErrorIs(t, err, discovery.ErrInsufficientDevices, "GPU 11 is still held by its live owner")
	entries, err := c.Entries(ctx)
	require.NoError(t, err)
	owners := map[string]int{}
	for _, e := range entries {
		owners[e.Key] = e.Owner.PID
	}
	assert.Equal(t, 111, owners[devs[11].Key])
	assert.Equal(t, 200, owners[devs[1].Key])
}

func TestForeignNamespaceOwnersAreNeverRobbed(t *testing.T) {
	f := newCoordFixture(t)
	devs := gpus(t, 2)
	ctx := context.Background()
	now := time.Unix(1764500000, 0)
	foreign := discovery.Owner{PID: 7, StartTime: 1, BootID: testBoot, PIDNS: 4026532999} // a TaskManager in a container
	c := f.coordinator(func(o *discovery.CoordinatorOptions) { o.Now = func() time.Time { return now } })
	_, err := c.Acquire(ctx, foreign, devs, 2)
	require.NoError(t, err)

	_, err = c.Acquire(ctx, f.owner(100), devs, 1)
	require.ErrorIs(t, err, discovery.ErrInsufficientDevices)
	assert.Contains(t, err.Error(), "(unknown)")

	later := f.coordinator(func(o *discovery.CoordinatorOptions) {
		o.Now = func() time.Time { return now.Add(3 * time.Hour) }
		o.ForeignTTL = 2 * time.Hour
	})
	got, err := later.Acquire(ctx, f.owner(100), devs, 2)
	require.NoError(t, err, "past the explicit TTL the foreign entries are reclaimed")
	assert.Len(t, got, 2)
}

func TestRebootFreesEverything(t *testing.T) {
	f, c, devs := newCoordTest(t, 2)
	_, err := c.Acquire(context.Background(), f.owner(100), devs, 2)
	require.NoError(t, err)
	f.proc.Boot("a-new-boot", testNS)
	got, err := c.Acquire(context.Background(), discovery.Owner{PID: 100, StartTime: 700, BootID: "a-new-boot", PIDNS: testNS}, devs, 2)
	require.NoError(t, err)
	assert.Len(t, got, 2)
}

func TestDamagedLedgerLines(t *testing.T) {
	f, c, devs := newCoordTest(t, 4)
	live := f.owner(100)
	good := discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: devs[0].Key, Owner: live, Acquired: time.Unix(1764500000, 0)})
	damaged := strings.Replace(discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: devs[1].Key, Owner: live, Acquired: time.Unix(1764500000, 0)}),
		" 100 700 ", " 100 701 ", 1)
	ledger := strings.Join([]string{"# yarn-er device ledger v1", good, "0 4242", "gar bage", damaged, ""}, "\n")
	require.NoError(t, os.WriteFile(c.LedgerPath(os.Getuid()), []byte(ledger), 0o644))

	got, err := c.Acquire(context.Background(), f.owner(200), devs, 2)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[2:4]), keys(got), "neither the live entry's device nor the damaged line's device is handed out")
	logs := f.logs.String()
	assert.Contains(t, logs, "line=3")
	assert.Contains(t, logs, "line=5")
	assert.Contains(t, logs, "stays held until the line is removed by hand")

	data, err := os.ReadFile(c.LedgerPath(os.Getuid()))
	require.NoError(t, err)
	assert.Contains(t, string(data), damaged, "the damaged line is kept")
	assert.NotContains(t, string(data), "0 4242", "foreign lines are dropped")
	_, err = c.Acquire(context.Background(), f.owner(300), devs, 1)
	require.ErrorIs(t, err, discovery.ErrInsufficientDevices)
	assert.Contains(t, err.Error(), "damaged line")
}

func TestSymlinksAreRefused(t *testing.T) {
	devs := gpus(t, 1)
	t.Run("lock file", func(t *testing.T) {
		f := newCoordFixture(t)
		target := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.WriteFile(target, []byte("precious"), 0o644))
		require.NoError(t, os.Symlink(target, f.path()+".lock"))
		_, err := f.coordinator().Acquire(context.Background(), f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		assert.Contains(t, err.Error(), "gpus.lock: is a symbolic link")
		data, _ := os.ReadFile(target)
		assert.Equal(t, "precious", string(data))
	})
	t.Run("ledger", func(t *testing.T) {
		f := newCoordFixture(t)
		target := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.WriteFile(target, []byte("precious"), 0o644))
		c := f.coordinator()
		require.NoError(t, os.Symlink(target, c.LedgerPath(os.Getuid())))
		_, err := c.Acquire(context.Background(), f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		data, _ := os.ReadFile(target)
		assert.Equal(t, "precious", string(data))
	})
	t.Run("device lock", func(t *testing.T) {
		f := newCoordFixture(t)
		c := f.coordinator()
		require.NoError(t, os.Symlink("/etc/hostname", c.DeviceLockPath(devs[0].Key)))
		_, err := c.Hold(context.Background(), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
	})
	t.Run("directory", func(t *testing.T) {
		f := newCoordFixture(t)
		link := filepath.Join(t.TempDir(), "dirlink")
		require.NoError(t, os.Symlink(f.dir, link))
		p := discovery.NewProc(discovery.NewRoot(f.proc.Root))
		c, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: filepath.Join(link, "gpus"), Proc: &p})
		require.NoError(t, err)
		_, err = c.Acquire(context.Background(), f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		assert.Contains(t, err.Error(), "symbolic link")
	})
	t.Run("fifo", func(t *testing.T) {
		f := newCoordFixture(t)
		require.NoError(t, syscall.Mkfifo(f.path()+".lock", 0o644))
		_, err := f.coordinator().Acquire(context.Background(), f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		assert.Contains(t, err.Error(), "not a regular file")
	})
	t.Run("hard link", func(t *testing.T) {
		f := newCoordFixture(t)
		other := filepath.Join(f.dir, "other")
		require.NoError(t, os.WriteFile(other, nil, 0o644))
		require.NoError(t, os.Link(other, f.path()+".lock"))
		_, err := f.coordinator().Acquire(context.Background(), f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		assert.Contains(t, err.Error(), "hard links")
	})
}

func TestDirectoryPolicy(t *testing.T) {
	devs := gpus(t, 1)
	f := newCoordFixture(t)
	require.NoError(t, os.Chmod(f.dir, 0o777))
	_, err := f.coordinator().Acquire(context.Background(), f.owner(100), devs, 1)
	require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
	assert.Contains(t, err.Error(), "world-writable without the sticky bit")

	require.NoError(t, os.Chmod(f.dir, 0o777|os.ModeSticky))
	_, err = f.coordinator().Acquire(context.Background(), f.owner(100), devs, 1)
	require.NoError(t, err)

	p := discovery.NewProc(discovery.NewRoot(f.proc.Root))
	c, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: filepath.Join(f.dir, "missing", "gpus"), Proc: &p})
	require.NoError(t, err)
	_, err = c.Acquire(context.Background(), f.owner(100), devs, 1)
	assert.ErrorContains(t, err, "does not exist (create it: mkdir -m 1777")
}

func TestFilesOfOtherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	const nobody = 65534
	devs := gpus(t, 3)
	ctx := context.Background()
	shared := func(o *discovery.CoordinatorOptions) { o.Shared = true }

	t.Run("lock of another user, private mode", func(t *testing.T) {
		f := newCoordFixture(t)
		require.NoError(t, os.WriteFile(f.path()+".lock", nil, 0o644))
		require.NoError(t, os.Chown(f.path()+".lock", nobody, nobody))
		_, err := f.coordinator().Acquire(ctx, f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		assert.Contains(t, err.Error(), "owned by uid 65534")
		assert.Contains(t, err.Error(), "--shared-coordination")
	})
	t.Run("shared mode needs a sticky world-writable directory", func(t *testing.T) {
		f := newCoordFixture(t)
		require.NoError(t, os.WriteFile(f.path()+".lock", nil, 0o644))
		require.NoError(t, os.Chown(f.path()+".lock", nobody, nobody))
		_, err := f.coordinator(shared).Acquire(ctx, f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		assert.Contains(t, err.Error(), "not world-writable with the sticky bit")

		require.NoError(t, os.Chmod(f.dir, 0o777|os.ModeSticky))
		got, err := f.coordinator(shared).Acquire(ctx, f.owner(100), devs, 1)
		require.NoError(t, err)
		assert.Equal(t, devs[0].Key, got[0].Key)
	})
	t.Run("another user's ledger is honoured", func(t *testing.T) {
		f := newCoordFixture(t)
		require.NoError(t, os.Chmod(f.dir, 0o777|os.ModeSticky))
		c := f.coordinator(shared)
		other := discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: devs[0].Key, Owner: f.owner(500), Acquired: time.Unix(1764500000, 0)})
		p := c.LedgerPath(nobody)
		require.NoError(t, os.WriteFile(p, []byte(other+"\n"), 0o644))
		require.NoError(t, os.Chown(p, nobody, nobody))
		got, err := c.Acquire(ctx, f.owner(100), devs, 1)
		require.NoError(t, err)
		assert.Equal(t, devs[1].Key, got[0].Key)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, other+"\n", string(data), "another user's ledger is never written")

		// The private mode refuses the same directory.
		_, err = f.coordinator().Acquire(ctx, f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
	})
	t.Run("ledger named for one user, owned by another", func(t *testing.T) {
		f := newCoordFixture(t)
		require.NoError(t, os.Chmod(f.dir, 0o777|os.ModeSticky))
		c := f.coordinator(shared)
		p := c.LedgerPath(1234)
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		require.NoError(t, os.Chown(p, nobody, nobody))
		_, err := c.Acquire(ctx, f.owner(100), devs, 1)
		require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
		assert.Contains(t, err.Error(), "is the ledger of uid 1234 but owned by uid 65534")
	})
}

func TestLockTimeout(t *testing.T) {
	f := newCoordFixture(t)
	c := f.coordinator(func(o *discovery.CoordinatorOptions) { o.LockTimeout = 300 * time.Millisecond })
	devs := gpus(t, 1)
	_, err := c.Acquire(context.Background(), f.owner(100), devs, 1) // creates the lock file
	require.NoError(t, err)
	lock, err := os.Open(c.LockPath())
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))

	_, err = c.Acquire(context.Background(), f.owner(200), devs, 1)
	var timeout *discovery.LockTimeoutError
	require.ErrorAs(t, err, &timeout)
	assert.Equal(t, c.LockPath(), timeout.Path)
	assert.Contains(t, err.Error(), "timed out after 300ms waiting for the coordination lock")
	_, err = c.Release(context.Background(), f.owner(100))
	require.ErrorIs(t, err, discovery.ErrLockTimeout)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Hold(ctx, devs, 1)
	require.ErrorIs(t, err, context.Canceled)
}

func TestHoldAndAcquireExcludeEachOther(t *testing.T) {
	f, c, devs := newCoordTest(t, 4)
	ctx := context.Background()

	h, err := c.Hold(ctx, devs, 2)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[:2]), keys(h.Devices))

	_, err = c.Acquire(ctx, f.owner(100), devs, 3)
	require.ErrorIs(t, err, discovery.ErrInsufficientDevices)
	assert.Contains(t, err.Error(), "a running workload (exec)")
	got, err := c.Acquire(ctx, f.owner(100), devs, 2)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[2:]), keys(got))

	_, err = c.Hold(ctx, devs, 1)
	require.ErrorIs(t, err, discovery.ErrInsufficientDevices, "ledger holders and the other workload's locks are respected")

	require.NoError(t, h.Close())
	h2, err := c.Hold(ctx, devs, 2)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[:2]), keys(h2.Devices))
	require.NoError(t, h2.Inherit())
	require.NoError(t, h2.Close())
}

func TestAtomicWritesLeaveNoDebris(t *testing.T) {
	f, c, devs := newCoordTest(t, 2)
	// A writer that crashed between creating its temporary file and renaming it.
	crashed := c.LedgerPath(os.Getuid()) + ".tmp.deadbeef0000"
	require.NoError(t, os.WriteFile(crashed, []byte("v1 half"), 0o644))
	lockIno := uint64(0)
	for i := 0; i < 50; i++ {
		o := f.owner(1000 + i)
		_, err := c.Acquire(context.Background(), o, devs, 2)
		require.NoError(t, err)
		if lockIno == 0 {
			lockIno = inode(t, c.LockPath())
		}
		_, err = c.Release(context.Background(), o)
		require.NoError(t, err)
	}
	assert.Equal(t, lockIno, inode(t, c.LockPath()), "the lock file is never replaced")
	names, err := os.ReadDir(f.dir)
	require.NoError(t, err)
	var files []string
	for _, n := range names {
		files = append(files, n.Name())
	}
	assert.ElementsMatch(t, []string{"gpus.lock", fmt.Sprintf("gpus.ledger.%d", os.Getuid()),
		"gpus.dev." + devs[0].Key + ".lock", "gpus.dev." + devs[1].Key + ".lock"}, files)
}

func TestConcurrentRequestsOnDeadLedger(t *testing.T) {
	// Flink measured defect (b): 8 concurrent requests for one GPU each, on 8 GPUs whose ledger entries
	// all belong to dead processes, gave one GPU to two requesters in 2 of 30 rounds.
	devs := gpus(t, 8)
	for round := 0; round < 30; round++ {
		f := newCoordFixture(t)
		c := f.coordinator()
		for i, d := range devs {
			o := f.owner(5000 + i)
			_, err := c.Acquire(context.Background(), o, []discovery.Device{d}, 1)
			require.NoError(t, err)
			f.proc.Kill(5000 + i)
		}
		owners := make([]discovery.Owner, 8)
		for i := range owners {
			owners[i] = f.owner(100 + i)
		}
		var wg sync.WaitGroup
		got := make([]string, 8)
		errs := make([]error, 8)
		for i := range owners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := f.coordinator() // its own lock descriptor, as a separate process would have
				d, err := c.Acquire(context.Background(), owners[i], devs, 1)
				errs[i] = err
				if err == nil {
					got[i] = d[0].Key
				}
			}()
		}
		wg.Wait()
		seen := map[string]bool{}
		for i := range got {
			require.NoError(t, errs[i], "round %d", round)
			assert.False(t, seen[got[i]], "round %d: %s handed out twice", round, got[i])
			seen[got[i]] = true
		}
	}
}

// TestDamagedLedgerWarningsAreBounded: every line of a ledger may be damaged (up to 16 MiB of them),
// and each call reads the ledger under the lock; one warning per line would keep the lock for as long
// as the log takes to write (tens of seconds for a full ledger, past every waiter's lock timeout). The
// first lines of a file are reported one by one, the rest in one summary; the devices stay held.
func TestDamagedLedgerWarningsAreBounded(t *testing.T) {
	f, c, devs := newCoordTest(t, 2)
	live := f.owner(100)
	var lines []string
	for i := 0; i < 2000; i++ {
		lines = append(lines, fmt.Sprintf("v1 GPU-damaged-%d x", i), fmt.Sprintf("gar bage %d", i))
	}
	damaged := strings.Replace(discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: devs[0].Key, Owner: live, Acquired: time.Unix(1764500000, 0)}),
		" 100 700 ", " 100 701 ", 1)
	lines = append(lines, damaged)
	require.NoError(t, os.WriteFile(c.LedgerPath(os.Getuid()), []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	got, err := c.Acquire(context.Background(), f.owner(200), devs, 1)
	require.NoError(t, err)
	assert.Equal(t, keys(devs[1:]), keys(got), "the last damaged line, past the ones reported, still holds its device")
	logs := f.logs.String()
	assert.Less(t, strings.Count(logs, "\n"), 100, "a bounded number of log lines")
	assert.Contains(t, logs, "line=1 ")
	assert.Contains(t, logs, "3981 more")
	assert.Contains(t, logs, c.LedgerPath(os.Getuid()))
}

// TestCoordinationFileNamingADirectoryIsRefused: the coordination file is a prefix inside a directory.
// Given the directory itself ("/var/lib/yarn-er" or "/var/lib/yarn-er/"), the files went next to it
// (/var/lib/yarn-er.lock...), so a TaskManager told "/var/lib/yarn-er/" and one told
// "/var/lib/yarn-er/gpus" kept two ledgers and could both get one GPU. Both forms are refused with the
// fix, and nothing is created.
func TestCoordinationFileNamingADirectoryIsRefused(t *testing.T) {
	devs := gpus(t, 1)
	f := newCoordFixture(t)
	p := discovery.NewProc(discovery.NewRoot(f.proc.Root))
	_, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: f.dir + "/", Proc: &p})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(f.dir, "gpus"), "the error shows a file prefix inside the directory")

	c, err := discovery.NewCoordinator(discovery.CoordinatorOptions{Path: f.dir, Proc: &p})
	require.NoError(t, err, "NewCoordinator touches no file")
	_, err = c.Acquire(context.Background(), f.owner(100), devs, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), f.dir+" is a directory")
	assert.Contains(t, err.Error(), filepath.Join(f.dir, "gpus"))
	matches, _ := filepath.Glob(f.dir + ".*")
	assert.Empty(t, matches, "no coordination file is made next to the directory")
}
