//go:build unix

package discovery

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// procLocks is /proc/locks as Linux 6.x writes it, captured with a flock holder (4242), a waiter on the
// same file (4243, "->"), a POSIX lock and an OFD lock on that inode number on another device, a lease
// and a lock on a device with a major number over 255.
const procLocks = `1: POSIX  ADVISORY  WRITE 1001 00:19:9977878 0 EOF
2: FLOCK  ADVISORY  WRITE 4242 fe:00:9977878 0 EOF
2: -> FLOCK  ADVISORY  WRITE 4243 fe:00:9977878 0 EOF
3: OFDLCK ADVISORY  READ  -1 fe:01:9977878 0 EOF
4: LEASE  ACTIVE    READ  1002 fe:00:12 0 EOF
5: FLOCK  ADVISORY  WRITE 7 103:02:55 0 EOF
6: FLOCK  ADVISORY  WRITE 0 fe:00:66 0 EOF
`

// fakeLockProc is a Proc over a fake /proc holding locks and the processes named.
func fakeLockProc(t testing.TB, locks string, procs map[int][2]string) Proc {
	dir := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	write("proc/locks", locks)
	for pid, cs := range procs {
		write("proc/"+strconv.Itoa(pid)+"/comm", cs[0]+"\n")
		write("proc/"+strconv.Itoa(pid)+"/stat", strconv.Itoa(pid)+" ("+cs[0]+") "+cs[1]+" 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n")
	}
	return Proc{root: NewRoot(dir), uid: os.Getuid()}
}

func TestFlockHolder(t *testing.T) {
	p := fakeLockProc(t, procLocks, map[int][2]string{
		4242: {"yarn-er", "T"},
		4243: {"yarn-er", "S"},
		7:    {"java (TaskManager) x", "R"},
	})
	for _, tc := range []struct {
		name     string
		dev, ino uint64
		want     string
	}{
		{"the holder, stopped", unix.Mkdev(0xfe, 0), 9977878, "pid 4242 (yarn-er), which is stopped (resume it with kill -CONT 4242, or end it)"},
		{"POSIX and OFD locks are not flock's", unix.Mkdev(0, 0x19), 9977878, ""},
		{"an OFD lock's pid is -1", unix.Mkdev(0xfe, 1), 9977878, ""},
		{"a lease is not a lock", unix.Mkdev(0xfe, 0), 12, ""},
		{"a major number over 255, a comm with parentheses", unix.Mkdev(0x103, 2), 55, "pid 7 (java (TaskManager) x)"},
		{"pid 0: the holder is outside this PID namespace", unix.Mkdev(0xfe, 0), 66, ""},
		{"not listed", unix.Mkdev(0xfe, 0), 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, p.flockHolder(tc.dev, tc.ino))
		})
	}
}

// A holder whose /proc entries are gone (it ended) or were never readable is still named by its pid.
func TestFlockHolderWithoutProcEntries(t *testing.T) {
	p := fakeLockProc(t, procLocks, nil)
	assert.Equal(t, "pid 4242", p.flockHolder(unix.Mkdev(0xfe, 0), 9977878))
	assert.Empty(t, fakeLockProc(t, "", nil).flockHolder(unix.Mkdev(0xfe, 0), 9977878))
}

var holderText = regexp.MustCompile(`^pid [1-9][0-9]*( \(.*\))?(, which is stopped \(resume it with kill -CONT [1-9][0-9]*, or end it\))?$`)

// FuzzFlockHolder: whatever /proc/locks and the named process's comm and stat hold, flockHolder does
// not panic, names a pid that a FLOCK line of the file lists for the device and inode asked about, and
// keeps the comm it shows short. Seeds: testdata/fuzz/FuzzFlockHolder.
func FuzzFlockHolder(f *testing.F) {
	f.Add(procLocks, "yarn-er", "4242 (yarn-er) T 1 1", uint64(0xfe00), uint64(9977878))
	f.Add("2: FLOCK  ADVISORY  WRITE 99999999999999999999 fe:00:1 0 EOF\n", "x", "", uint64(0xfe00), uint64(1))
	f.Add("1: FLOCK ADVISORY WRITE 5 00:00:0\n", "a)b", "5 (a)b) t", uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, locks, comm, stat string, dev, ino uint64) {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "proc"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "proc/locks"), []byte(locks), 0o644))
		p := Proc{root: NewRoot(dir), uid: os.Getuid()}
		// every pid the file names gets the fuzzed comm and stat
		for _, line := range strings.Split(locks, "\n") {
			if f := strings.Fields(line); len(f) > 4 {
				if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
					pd := filepath.Join(dir, "proc", strconv.Itoa(pid))
					require.NoError(t, os.MkdirAll(pd, 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(pd, "comm"), []byte(comm), 0o644))
					require.NoError(t, os.WriteFile(filepath.Join(pd, "stat"), []byte(stat), 0o644))
				}
			}
		}
		got := p.flockHolder(dev, ino)
		if got == "" {
			return
		}
		if !holderText.MatchString(got) || len(got) > 200 {
			t.Fatalf("holder %q is not of the form pid N (comm)[, which is stopped …]", got)
		}
		pid, _ := strconv.Atoi(strings.TrimSuffix(strings.Fields(got)[1], ","))
		listed := false
		for _, line := range strings.Split(locks, "\n") {
			f := strings.Fields(line)
			if len(f) > 5 && f[1] == "FLOCK" && strings.HasSuffix(f[5], ":"+strconv.FormatUint(ino, 10)) {
				n, err := strconv.Atoi(f[4])
				listed = listed || (err == nil && n == pid)
			}
		}
		if !listed {
			t.Fatalf("holder %q is not a FLOCK line's pid for inode %d in %q", got, ino, locks)
		}
	})
}

// A process that names itself with a newline or a terminal escape is shown quoted, so that the lock
// timeout's message stays one line and cannot drive the terminal of the operator who reads it.
func TestFlockHolderQuotesHostileComm(t *testing.T) {
	p := fakeLockProc(t, procLocks, map[int][2]string{4242: {"x\x1b[2J\nfake: ok", "S"}})
	assert.Equal(t, `pid 4242 ("x\x1b[2J\nfake: ok")`, p.flockHolder(unix.Mkdev(0xfe, 0), 9977878))
}
