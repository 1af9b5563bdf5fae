//go:build unix

package discovery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Coordinator hands devices out so that no device is held by two processes at once. It is safe for
// use by many processes and users at once, and one Coordinator by many goroutines (it keeps no state
// between calls).
type Coordinator struct {
	dir, base string
	opts      CoordinatorOptions
	proc      Proc
	uid       int
}

// NewCoordinator checks the options; it touches no file.
func NewCoordinator(opts CoordinatorOptions) (*Coordinator, error) {
	if opts.Path == "" {
		return nil, errors.New("no coordination file given")
	}
	p := filepath.Clean(opts.Path)
	base := filepath.Base(p)
	if base == "." || base == "/" || base == ".." || strings.HasPrefix(base, ".") && len(base) == 1 {
		return nil, fmt.Errorf("coordination file %q names no file", opts.Path)
	}
	if strings.HasSuffix(opts.Path, "/") {
		return nil, fmt.Errorf("coordination file %q names a directory: give the prefix of the files inside it, e.g. %s", opts.Path, filepath.Join(p, "gpus"))
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	proc := NewProc(Root{})
	if opts.Proc != nil {
		proc = *opts.Proc
	}
	return &Coordinator{dir: filepath.Dir(p), base: base, opts: opts, proc: proc, uid: os.Getuid()}, nil
}

// LockPath is the lock file's path.
func (c *Coordinator) LockPath() string { return filepath.Join(c.dir, c.base+".lock") }

// LedgerPath is the ledger file of the user uid.
func (c *Coordinator) LedgerPath(uid int) string { return filepath.Join(c.dir, c.ledgerName(uid)) }

// DeviceLockPath is the per-device lock file of a device key.
func (c *Coordinator) DeviceLockPath(key string) string {
	return filepath.Join(c.dir, c.devLockName(key))
}

func (c *Coordinator) ledgerName(uid int) string { return c.base + ".ledger." + strconv.Itoa(uid) }
func (c *Coordinator) devLockName(key string) string {
	return c.base + ".dev." + keyUnsafe.ReplaceAllString(key, "_") + ".lock"
}

// session is one critical section: the directory and the held lock.
type session struct {
	c         *Coordinator
	dir       *os.File
	dirfd     int
	sharedDir bool
	lock      *os.File
}

func (s *session) close() {
	if s.lock != nil {
		_ = s.lock.Close() // closing the last descriptor drops the flock
	}
	if s.dir != nil {
		_ = s.dir.Close()
	}
}

func (c *Coordinator) unsafe(name, reason, fix string) error {
	return &UnsafeFileError{Path: filepath.Join(c.dir, name), Reason: reason, Fix: fix}
}

// openDir opens the coordination directory without following a symbolic link and checks it.
func (c *Coordinator) openDir() (*session, error) {
	fd, err := unix.Open(c.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, unix.ELOOP):
			return nil, &UnsafeFileError{Path: c.dir, Reason: "the coordination directory is a symbolic link", Fix: "name the real directory"}
		case errors.Is(err, unix.ENOTDIR):
			return nil, &UnsafeFileError{Path: c.dir, Reason: "is not a directory (or is a symbolic link)", Fix: "name the real directory"}
		case errors.Is(err, unix.ENOENT):
			return nil, fmt.Errorf("coordination directory %s does not exist (create it: mkdir -m 1777 %s for one shared by all users, or mkdir -m 0755 for one of your own)", c.dir, c.dir)
		}
		return nil, &os.PathError{Op: "open", Path: c.dir, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: c.dir, Err: err}
	}
	// An owner is a pid, boot and PID namespace of this host: on a file system that other hosts
	// share, each host takes the others' entries for those of an earlier boot, reclaims them, and
	// its own devices are then handed out again behind their owners' backs.
	if fs := sharedFileSystem(fd); fs != "" {
		_ = unix.Close(fd)
		return nil, &UnsafeFileError{Path: c.dir, Reason: "the coordination directory is on " + fs + ", a file system other hosts share, so each host would reclaim the devices the others hold",
			Fix: "use a directory on a local file system of each host, such as the default /var/tmp"}
	}
	worldWritable := st.Mode&0o002 != 0
	sticky := st.Mode&unix.S_ISVTX != 0
	if worldWritable && !sticky {
		_ = unix.Close(fd)
		return nil, &UnsafeFileError{Path: c.dir, Reason: "the coordination directory is world-writable without the sticky bit, so anyone could replace the lock",
			Fix: "chmod +t " + c.dir + ", or use a directory of your own"}
	}
	// The files are named after the path, beside it: a directory there was meant to hold them.
	if err := unix.Fstatat(fd, c.base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		_ = unix.Close(fd)
		p := filepath.Join(c.dir, c.base)
		return nil, fmt.Errorf("coordination file %s is a directory: give the prefix of the files inside it, e.g. %s", p, filepath.Join(p, "gpus"))
	}
	return &session{c: c, dir: os.NewFile(uintptr(fd), c.dir), dirfd: fd, sharedDir: worldWritable && sticky}, nil
}

// openFile opens name in the directory read-only, creating it (mode perm, umask ignored) if missing.
// It never follows a symbolic link, never blocks on a FIFO, and never opens with O_CREAT a file that
// exists (fs.protected_regular refuses that for files of other users in sticky directories).
func (s *session) openFile(name string, perm uint32) (*os.File, unix.Stat_t, error) {
	return s.open(name, perm, true)
}

// open opens name like openFile; without create, a missing file is an error wrapping os.ErrNotExist.
func (s *session) open(name string, perm uint32, create bool) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	for attempt := 0; attempt < 5; attempt++ {
		fd, err := unix.Openat(s.dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			fd, err = unix.Openat(s.dirfd, name, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
			if errors.Is(err, unix.EEXIST) {
				continue // created by someone else meanwhile: open theirs
			}
			if err != nil && !errors.Is(err, unix.ELOOP) {
				return nil, st, s.writeError("create", name, err)
			}
			if err == nil {
				_ = unix.Fchmod(fd, perm)
			}
		}
		if err != nil {
			if errors.Is(err, unix.ELOOP) {
				return nil, st, s.c.unsafe(name, "is a symbolic link", "remove it; yarn-er creates its files itself")
			}
			return nil, st, &os.PathError{Op: "open", Path: filepath.Join(s.c.dir, name), Err: err}
		}
		f := os.NewFile(uintptr(fd), filepath.Join(s.c.dir, name))
		if err := unix.Fstat(fd, &st); err != nil {
			_ = f.Close()
			return nil, st, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
		}
		if err := s.checkFile(name, &st); err != nil {
			_ = f.Close()
			return nil, st, err
		}
		return f, st, nil
	}
	return nil, st, fmt.Errorf("%s: created and removed repeatedly by another process", filepath.Join(s.c.dir, name))
}

// writeError is the error of op (create, write...) on the coordination file name: it names the file
// (never a temporary one, which is gone by then) and says what to do about a directory this user cannot
// write, a read-only file system and a full one.
func (s *session) writeError(op, name string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	e := &os.PathError{Op: op, Path: filepath.Join(s.c.dir, name), Err: err}
	var fix string
	switch {
	case errors.Is(err, unix.EROFS):
		fix = "point --coordination-file at a directory on a writable file system"
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		fix = fmt.Sprintf("uid %d cannot create files in %s: make it writable for this user (mkdir -m 1777 for a directory shared by all users), or point --coordination-file elsewhere", s.c.uid, s.c.dir)
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		fix = "the file system of " + s.c.dir + " is full, or this user's quota there is spent: free some space"
	default:
		return e
	}
	return fmt.Errorf("%w (%s)", e, fix)
}

// checkFile applies the ownership policy to a coordination file.
func (s *session) checkFile(name string, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return s.c.unsafe(name, "is not a regular file", "remove it; yarn-er creates its files itself")
	}
	if st.Nlink > 1 {
		return s.c.unsafe(name, fmt.Sprintf("has %d hard links", st.Nlink), "remove it; yarn-er creates its files itself")
	}
	if int(st.Uid) == s.c.uid {
		return nil
	}
	if !s.c.opts.Shared {
		return s.c.unsafe(name, fmt.Sprintf("is owned by uid %d, not by this user (uid %d)", st.Uid, s.c.uid),
			"pass --shared-coordination when users share the directory on purpose, or give each user a --coordination-file of their own")
	}
	if !s.sharedDir {
		return s.c.unsafe(name, fmt.Sprintf("is owned by uid %d and its directory is not world-writable with the sticky bit", st.Uid),
			"keep shared coordination files in a directory like /var/tmp (mode 1777)")
	}
	return nil
}

// lock opens the directory and takes the lock, waiting at most the lock timeout. Two locks are taken:
// the lock file (which releases of yarn-er before the directory lock also take, so that they keep
// coordinating with this one) and then the directory itself. The directory lock is what makes mutual
// exclusion survive a lock file removed by a tmp cleaner while its holder is inside: a process that
// finds the path empty creates a new lock file and locks it, but cannot lock the directory.
func (c *Coordinator) lock(ctx context.Context) (*session, error) {
	s, err := c.openDir()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.opts.LockTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	name := c.base + ".lock"
	for {
		f, st, err := s.openFile(name, 0o644)
		if err != nil {
			s.close()
			return nil, err
		}
		if err := c.flockWait(ctx, int(f.Fd()), c.LockPath(), deadline); err != nil {
			_ = f.Close()
			s.close()
			return nil, err
		}
		// The lock must still be the file at the path: had someone replaced it, two processes could
		// hold locks on two different files.
		var now unix.Stat_t
		if err := unix.Fstatat(s.dirfd, name, &now, unix.AT_SYMLINK_NOFOLLOW); err == nil && now.Ino == st.Ino && now.Dev == st.Dev {
			s.lock = f
			break
		}
		_ = f.Close()
		if time.Now().After(deadline) {
			s.close()
			return nil, &LockTimeoutError{Path: c.LockPath(), Timeout: c.opts.LockTimeout}
		}
	}
	err = c.flockWait(ctx, s.dirfd, c.dir, deadline)
	switch {
	case err == nil:
	case errors.Is(err, unix.EBADF), errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
		// Some network file systems cannot lock a directory; the lock file alone still excludes
		// others as long as nobody removes it.
		c.opts.Logger.Warn("the coordination directory cannot be locked; mutual exclusion relies on the lock file alone, which must not be removed while in use",
			"dir", c.dir, "err", err)
	default:
		s.close()
		return nil, err
	}
	// The directory must still be the one at the path (a directory removed and made again would be
	// locked by nobody else).
	var dst, now unix.Stat_t
	if err := unix.Fstat(s.dirfd, &dst); err != nil {
		s.close()
		return nil, &os.PathError{Op: "fstat", Path: c.dir, Err: err}
	}
	if err := unix.Lstat(c.dir, &now); err != nil || now.Ino != dst.Ino || now.Dev != dst.Dev {
		s.close()
		return nil, fmt.Errorf("coordination directory %s was removed or replaced while in use; try again", c.dir)
	}
	return s, nil
}

// flockWait takes an exclusive flock on fd, polling until deadline. Errors other than a timeout or a
// cancelled ctx are *os.PathError naming path.
func (c *Coordinator) flockWait(ctx context.Context, fd int, path string, deadline time.Time) error {
	wait := 500 * time.Microsecond
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return &os.PathError{Op: "flock", Path: path, Err: err}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			e := &LockTimeoutError{Path: path, Timeout: c.opts.LockTimeout}
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil {
				e.Holder = c.proc.flockHolder(uint64(st.Dev), st.Ino)
			}
			return e
		}
		time.Sleep(wait/2 + time.Duration(mrand.Int64N(int64(wait))))
		wait = min(wait*2, 10*time.Millisecond)
	}
}

// maxLineWarnings is how many skipped or damaged lines of one ledger are reported one by one at each
// read; the rest are counted in one warning.
const maxLineWarnings = 20

// heldEntry is a ledger entry with the verdict on its owner.
type heldEntry struct {
	LedgerEntry
	fileUID  int
	file     string
	liveness Liveness
	reason   string
	// damaged is the raw text of a damaged line that still names a device; its owner is unknown.
	damaged string
}

// readLedgers reads every user's ledger in the directory. Entries whose owners are dead are returned
// with that verdict; the caller drops its own and ignores others'.
func (s *session) readLedgers() ([]heldEntry, error) {
	names, err := s.readdir()
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	prefix := s.c.base + ".ledger."
	view := s.c.proc.view()
	now := s.c.opts.Now()
	var out []heldEntry
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		uid, err := strconv.Atoi(rest)
		if err != nil || uid < 0 {
			if !strings.Contains(rest, ".tmp.") {
				s.c.opts.Logger.Warn("ignoring a file that is not a ledger", "file", filepath.Join(s.c.dir, name))
			}
			continue
		}
		f, st, err := s.open(name, 0, false)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the directory was listed
		}
		if err != nil {
			return nil, err
		}
		if int(st.Uid) != uid {
			_ = f.Close()
			return nil, s.c.unsafe(name, fmt.Sprintf("is the ledger of uid %d but owned by uid %d", uid, st.Uid), "remove it")
		}
		if st.Mode&0o022 != 0 {
			// The sticky directory keeps others from replacing it, not from rewriting it in place.
			_ = f.Close()
			return nil, s.c.unsafe(name, fmt.Sprintf("is writable by users other than its owner (mode %04o), so what it records cannot be trusted", st.Mode&0o7777),
				"inspect it, then chmod go-w it; yarn-er writes its ledgers with mode 0644")
		}
		path := filepath.Join(s.c.dir, name)
		if st.Size > MaxLedgerBytes {
			_ = f.Close()
			return nil, &LedgerUnreadableError{Path: path, Reason: fmt.Sprintf("%d bytes, more than the %d a ledger may have", st.Size, MaxLedgerBytes)}
		}
		data, err := io.ReadAll(io.LimitReader(f, MaxLedgerBytes+1))
		_ = f.Close()
		if err != nil {
			return nil, &LedgerUnreadableError{Path: path, Reason: "read failed", Err: err}
		}
		if len(data) > MaxLedgerBytes {
			return nil, &LedgerUnreadableError{Path: path, Reason: fmt.Sprintf("grew past the %d bytes a ledger may have while it was read", MaxLedgerBytes)}
		}
		entries, problems, err := parseLedger(data)
		if err != nil {
			return nil, &LedgerUnreadableError{Path: path, Reason: err.Error()}
		}
		for i, p := range problems {
			// The lock is held while this logs: one warning per line of a ledger full of damage would
			// keep it for longer than anyone waits, so the rest of a file is summed up in one line.
			report := i < maxLineWarnings
			if i == maxLineWarnings {
				s.c.opts.Logger.Warn(fmt.Sprintf("%d more damaged or foreign ledger lines, not listed one by one (damaged v1 lines keep their devices held)", len(problems)-i),
					"file", path)
			}
			if p.Key == "" {
				if report {
					s.c.opts.Logger.Warn("skipping a ledger line that is not yarn-er's (it is dropped at the next write)",
						"file", path, "line", p.Line, "reason", p.Reason)
				}
				continue
			}
			if report {
				s.c.opts.Logger.Warn("damaged ledger line: its device stays held until the line is removed by hand",
					"file", path, "line", p.Line, "device", p.Key, "reason", p.Reason)
			}
			out = append(out, heldEntry{LedgerEntry: LedgerEntry{Key: p.Key}, fileUID: uid, file: name, liveness: Unknown,
				reason: fmt.Sprintf("damaged line %d of %s", p.Line, name), damaged: p.Text})
		}
		for _, e := range entries {
			h := heldEntry{LedgerEntry: e, fileUID: uid, file: name}
			h.liveness, h.reason = s.c.proc.check(e.Owner, uid, view)
			foreign := e.Owner.PIDNS != 0 && view.self != 0 && e.Owner.PIDNS != view.self
			if foreign && h.liveness == Unknown && s.c.opts.ForeignTTL > 0 && now.Sub(e.Acquired) > s.c.opts.ForeignTTL {
				h.liveness, h.reason = Dead, fmt.Sprintf("%s; older than the foreign TTL %s", h.reason, s.c.opts.ForeignTTL)
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// writeLedger replaces this user's ledger atomically: a new file in the same directory, synced, renamed
// over the old one, and the directory synced. The lock file is never touched.
func (s *session) writeLedger(entries []LedgerEntry, damaged []string) error {
	name := s.c.ledgerName(s.c.uid)
	data := formatLedger(entries, damaged)
	if len(data) > MaxLedgerBytes {
		// Written, it would be refused by every later call (damaged lines are kept at each rewrite).
		return &LedgerUnreadableError{Path: filepath.Join(s.c.dir, name),
			Reason: fmt.Sprintf("a rewrite would grow it to %d bytes, past the %d bytes a ledger may have (%d damaged lines are kept in it)", len(data), MaxLedgerBytes, len(damaged))}
	}
	tmpPrefix := name + ".tmp."
	if names, err := s.readdir(); err == nil {
		for _, n := range names {
			if strings.HasPrefix(n, tmpPrefix) {
				_ = unix.Unlinkat(s.dirfd, n, 0) // left behind by a writer that crashed; only ours match
			}
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := tmpPrefix + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(s.dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return s.writeError("write", name, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(s.c.dir, tmp))
	cleanup := func(err error) error {
		_ = f.Close()
		_ = unix.Unlinkat(s.dirfd, tmp, 0)
		return err
	}
	if err := unix.Fchmod(fd, 0o644); err != nil {
		return cleanup(&os.PathError{Op: "chmod", Path: f.Name(), Err: err})
	}
	if _, err := f.Write(data); err != nil {
		return cleanup(s.writeError("write", name, err))
	}
	if err := f.Sync(); err != nil {
		return cleanup(s.writeError("write", name, err))
	}
	if err := f.Close(); err != nil {
		_ = unix.Unlinkat(s.dirfd, tmp, 0)
		return s.writeError("write", name, err)
	}
	if err := unix.Renameat(s.dirfd, tmp, s.dirfd, name); err != nil {
		_ = unix.Unlinkat(s.dirfd, tmp, 0)
		return &os.PathError{Op: "rename", Path: filepath.Join(s.c.dir, name), Err: err}
	}
	if err := unix.Fsync(s.dirfd); err != nil && !errors.Is(err, unix.EINVAL) {
		return &os.PathError{Op: "fsync", Path: s.c.dir, Err: err}
	}
	return nil
}

// readdir lists the coordination directory.
func (s *session) readdir() ([]string, error) {
	if _, err := s.dir.Seek(0, 0); err != nil {
		return nil, &os.PathError{Op: "seek", Path: s.c.dir, Err: err}
	}
	names, err := s.dir.Readdirnames(-1)
	if err != nil {
		return nil, &os.PathError{Op: "readdir", Path: s.c.dir, Err: err}
	}
	return names, nil
}

// deviceLockBusy reports whether a workload (exec mode) holds the device's lock. It takes the lock for a
// moment and drops it; that is safe because every taker holds the coordination lock while trying.
func (s *session) deviceLockBusy(key string) (bool, error) {
	f, err := s.tryDeviceLock(key)
	if err != nil {
		return false, err
	}
	if f == nil {
		return true, nil
	}
	return false, f.Close()
}

// tryDeviceLock takes a device's lock without waiting; nil when another process holds it. The locked
// file must be the one at the path once locked (a file removed meanwhile is locked by nobody who
// matters), otherwise the lock is taken again on the new file.
func (s *session) tryDeviceLock(key string) (*os.File, error) {
	name := s.c.devLockName(key)
	for attempt := 0; attempt < 50; attempt++ {
		f, st, err := s.openFile(name, 0o644)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, nil
			}
			return nil, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		var now unix.Stat_t
		if err := unix.Fstatat(s.dirfd, name, &now, unix.AT_SYMLINK_NOFOLLOW); err == nil && now.Ino == st.Ino && now.Dev == st.Dev {
			return f, nil
		}
		_ = f.Close()
	}
	return nil, fmt.Errorf("%s: removed repeatedly by another process while being locked", s.c.DeviceLockPath(key))
}

// lockAndRead takes the coordination lock and reads every user's ledger. The caller closes the
// session, which releases the lock.
func (c *Coordinator) lockAndRead(ctx context.Context) (*session, []heldEntry, error) {
	s, err := c.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	entries, err := s.readLedgers()
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, entries, nil
}

// holders indexes live (or uncheckable) ledger entries by device key.
func (c *Coordinator) holders(entries []heldEntry) map[string]heldEntry {
	held := map[string]heldEntry{}
	for _, e := range entries {
		if e.liveness == Dead {
			continue
		}
		if prev, dup := held[e.Key]; dup {
			if prev.damaged == "" && e.damaged == "" {
				c.opts.Logger.Warn("device recorded twice in the ledgers", "device", e.Key, "owner1", prev.Owner.PID, "owner2", e.Owner.PID)
			}
			continue
		}
		held[e.Key] = e
	}
	return held
}

// holderString says who holds d: a running exec workload (its device lock is held; the workload is
// also in the ledger), a damaged ledger line, or the owner of the ledger entry.
func (s *session) holderString(d Device, h heldEntry) string {
	if h.damaged != "" {
		return fmt.Sprintf("%s: %s", d.ID, h.reason)
	}
	if busy, err := s.deviceLockBusy(d.Key); err == nil && busy {
		return fmt.Sprintf("%s: a running workload (exec), pid %d", d.ID, h.Owner.PID)
	}
	return fmt.Sprintf("%s: pid %d (%s)", d.ID, h.Owner.PID, h.liveness)
}

// choose offers candidates, in order, to take until it has accepted n of them. A device that held
// (the ledger entries of live owners, by key) records is skipped without asking take; take refuses
// (false) a device whose lock an exec-mode workload holds. It returns a description of every
// device skipped, or take's first error.
func (s *session) choose(candidates []Device, held map[string]heldEntry, n int, take func(Device) (bool, error)) ([]string, error) {
	if err := checkKeys(candidates); err != nil {
		return nil, err
	}
	var busy []string
	taken := 0
	offered := map[string]bool{}
	for _, d := range candidates {
		if taken == n {
			break
		}
		if offered[d.Key] {
			continue // the same device listed twice: it is one device
		}
		offered[d.Key] = true
		if h, ok := held[d.Key]; ok {
			busy = append(busy, s.holderString(d, h))
			continue
		}
		ok, err := take(d)
		if err != nil {
			return nil, err
		}
		if !ok {
			busy = append(busy, d.ID+": a running workload (exec)")
			continue
		}
		taken++
	}
	return busy, nil
}

// checkKeys refuses candidates whose keys a ledger line cannot carry: the reader would skip such a line
// as another tool's and drop it, and the device would be handed out again.
func checkKeys(candidates []Device) error {
	for _, d := range candidates {
		if !ledgerKeyRE.MatchString(d.Key) {
			return fmt.Errorf("device %q has the coordination key %q, which cannot be recorded in a ledger (1 to 256 of A-Z a-z 0-9 . _ : -): nothing was handed out",
				truncate(d.ID, 80), truncate(d.Key, 80))
		}
	}
	return nil
}

// Acquire hands n of candidates (taken in order) to owner and records them in this user's ledger, so
// that they stay taken until owner ends (or releases them). Devices recorded for a live owner, or held
// by an exec-mode workload, are skipped. Fewer than n free devices is an *InsufficientDevicesError and
// changes nothing.
func (c *Coordinator) Acquire(ctx context.Context, owner Owner, candidates []Device, n int) ([]Device, error) {
	if n <= 0 {
		return []Device{}, nil
	}
	s, entries, err := c.lockAndRead(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var picks []Device
	busy, err := s.choose(candidates, c.holders(entries), n, func(d Device) (bool, error) {
		locked, err := s.deviceLockBusy(d.Key)
		if err != nil || locked {
			return false, err
		}
		picks = append(picks, d)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if len(picks) < n {
		return nil, &InsufficientDevicesError{Wanted: n, Visible: len(candidates), Free: len(picks), Holders: busy}
	}
	if err := s.writeOwn(entries, owner, picks); err != nil {
		return nil, err
	}
	return picks, nil
}

// forget drops the entries of devs recorded for owner from this user's ledger (a Holding closed
// without exec).
func (c *Coordinator) forget(ctx context.Context, owner Owner, devs []Device) error {
	drop := map[string]bool{}
	for _, d := range devs {
		drop[d.Key] = true
	}
	s, entries, err := c.lockAndRead(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	var keep []LedgerEntry
	var damaged []string
	for _, e := range entries {
		switch {
		case e.fileUID != c.uid:
		case e.damaged != "":
			damaged = append(damaged, e.damaged)
		case e.Owner.same(owner) && drop[e.Key]:
		case e.liveness == Dead:
		default:
			keep = append(keep, e.LedgerEntry)
		}
	}
	return s.writeLedger(keep, damaged)
}

// Release frees every device recorded for owner in this user's ledger (and drops dead owners' entries)
// and returns the keys released.
func (c *Coordinator) Release(ctx context.Context, owner Owner) ([]string, error) {
	s, entries, err := c.lockAndRead(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var keep []LedgerEntry
	var damaged []string
	released := []string{}
	own := false
	for _, e := range entries {
		if e.fileUID != c.uid {
			continue
		}
		own = true
		switch {
		case e.damaged != "":
			damaged = append(damaged, e.damaged)
		case e.Owner.same(owner):
			released = append(released, e.Key)
		case e.liveness == Dead:
		default:
			keep = append(keep, e.LedgerEntry)
		}
	}
	if !own {
		return released, nil
	}
	if err := s.writeLedger(keep, damaged); err != nil {
		return nil, err
	}
	return released, nil
}

// WriteFileAtomic writes data to path so that readers see the old or the new content, never a part: a
// new file in the same directory (created exclusively, never through a symbolic link, mode perm
// regardless of the umask), synced, then renamed over path.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp."+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Inherit makes the lock descriptors survive exec(2), so that a program this process becomes keeps the
// devices locked for as long as it runs.
func (h *Holding) Inherit() error {
	for _, f := range h.Files {
		if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
			return &os.PathError{Op: "fcntl", Path: f.Name(), Err: err}
		}
	}
	return nil
}

// Hold locks n of candidates (in order) for a workload, skipping devices recorded in a ledger for a live
// owner and devices another workload holds. The locks are the record; the devices are also entered in
// this user's ledger for this process (the workload keeps its pid across exec), so that either record
// alone keeps them held.
func (c *Coordinator) Hold(ctx context.Context, candidates []Device, n int) (*Holding, error) {
	h := &Holding{Devices: []Device{}}
	if n <= 0 {
		return h, nil
	}
	s, entries, err := c.lockAndRead(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	busy, err := s.choose(candidates, c.holders(entries), n, func(d Device) (bool, error) {
		f, err := s.tryDeviceLock(d.Key)
		if err != nil || f == nil {
			return false, err
		}
		h.Devices = append(h.Devices, d)
		h.Files = append(h.Files, f)
		return true, nil
	})
	if err != nil {
		_ = h.Close()
		return nil, err
	}
	if len(h.Devices) < n {
		free := len(h.Devices)
		_ = h.Close()
		return nil, &InsufficientDevicesError{Wanted: n, Visible: len(candidates), Free: free, Holders: busy}
	}
	// The locks are the record; the ledger gets a second one, owned by this process (which the
	// workload replaces by exec, keeping its pid and start time), so that a tmp cleaner removing the
	// device lock files while the workload runs does not free its devices.
	if self, err := c.proc.Owner(os.Getpid()); err == nil {
		if err := s.writeOwn(entries, self, h.Devices); err != nil {
			_ = h.Close()
			return nil, err
		}
		h.forget = func() error { return c.forget(context.Background(), self, h.Devices) }
	} else {
		c.opts.Logger.Debug("this process cannot be named as an owner; the device locks are the only record", "err", err)
	}
	return h, nil
}

// writeOwn rewrites this user's ledger with its live and damaged entries plus devs for owner.
func (s *session) writeOwn(entries []heldEntry, owner Owner, devs []Device) error {
	var keep []LedgerEntry
	var damaged []string
	for _, e := range entries {
		switch {
		case e.fileUID != s.c.uid:
		case e.damaged != "":
			damaged = append(damaged, e.damaged)
		case e.liveness == Dead:
			s.c.opts.Logger.Info("reclaimed a device", "device", e.Key, "from", e.Owner.PID, "reason", e.reason)
		default:
			keep = append(keep, e.LedgerEntry)
		}
	}
	at := s.c.opts.Now().Truncate(time.Second)
	for _, d := range devs {
		keep = append(keep, LedgerEntry{Key: d.Key, Owner: owner, Acquired: at})
	}
	return s.writeLedger(keep, damaged)
}

// Entries lists every ledger entry with the verdict on its owner (for status output and tests).
func (c *Coordinator) Entries(ctx context.Context) ([]HeldDevice, error) {
	s, entries, err := c.lockAndRead(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	out := make([]HeldDevice, 0, len(entries))
	for _, e := range entries {
		out = append(out, HeldDevice{LedgerEntry: e.LedgerEntry, UID: e.fileUID, Liveness: e.liveness.String(), Reason: e.reason})
	}
	return out, nil
}

// HeldDevice is a ledger entry as Entries reports it.
type HeldDevice struct {
	LedgerEntry
	// UID is the user whose ledger records the entry.
	UID int `json:"uid"`
	// Liveness is alive, dead or unknown.
	Liveness string `json:"liveness"`
	// Reason explains the verdict.
	Reason string `json:"reason"`
}
