package discovery

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Owner identifies a process across time: a pid alone may be reused, so the process's start time, the
// boot it belongs to and its PID namespace come with it.
type Owner struct {
	// PID is the process id, as seen in the PID namespace PIDNS.
	PID int `json:"pid"`
	// StartTime is field 22 of /proc/<pid>/stat: clock ticks from boot to the process's start.
	StartTime uint64 `json:"startTime"`
	// BootID is /proc/sys/kernel/random/boot_id, which changes at every boot.
	BootID string `json:"bootId"`
	// PIDNS is the inode of the PID namespace the pid belongs to (0 = unknown).
	PIDNS uint64 `json:"pidns"`
}

// String names the owner by its pid.
func (o Owner) String() string { return fmt.Sprintf("pid %d", o.PID) }

// same reports whether a and b are the same process.
func (o Owner) same(b Owner) bool {
	return o.PID == b.PID && o.StartTime == b.StartTime && o.BootID == b.BootID && o.PIDNS == b.PIDNS
}

// HostPIDNamespace is the inode of the host's initial PID namespace (PROC_PID_INIT_INO in the kernel).
const HostPIDNamespace = 0xEFFFFFFC

// Proc reads process facts from a procfs mounted at Root.Path("/proc").
type Proc struct {
	root Root
	// UID is the real uid of this process, compared with ledger owners (hidepid handling).
	uid int
}

// NewProc returns a Proc reading below root (the zero Root reads /proc).
func NewProc(root Root) Proc { return Proc{root: root, uid: os.Getuid()} }

// ParseProcStat returns field 22 (starttime) of a /proc/<pid>/stat line. The command name (field 2)
// may hold spaces and parentheses, so fields are counted after its last ')'.
func ParseProcStat(data []byte) (uint64, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 || bytes.IndexByte(data, '(') < 0 {
		return 0, errors.New("no \"(comm)\" field")
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 20", len(fields))
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("starttime %q is not a number", truncate(fields[19], 24))
	}
	return v, nil
}

// StartTime reads the start time of pid.
func (p Proc) StartTime(pid int) (uint64, error) {
	data, err := p.root.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	st, err := ParseProcStat(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.root.Path(fmt.Sprintf("/proc/%d/stat", pid)), err)
	}
	return st, nil
}

// BootID reads the current boot id.
func (p Proc) BootID() (string, error) {
	s, err := p.root.ReadString("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", fmt.Errorf("%s is empty", p.root.Path("/proc/sys/kernel/random/boot_id"))
	}
	return s, nil
}

// PIDNS reads the PID namespace inode of pid ("self" for this process); 0 when it cannot be read.
func (p Proc) PIDNS(pid string) uint64 {
	link, err := p.root.Readlink("/proc/" + pid + "/ns/pid")
	if err != nil {
		return 0
	}
	// "pid:[4026531836]"
	s := strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// Comm reads the command name of pid, "" when it cannot be read.
func (p Proc) Comm(pid int) string {
	s, _ := p.root.ReadString(fmt.Sprintf("/proc/%d/comm", pid))
	return s
}

// Owner describes the live process pid. The namespace recorded is this process's own: pid is always
// its parent or a process it was told about, both named in this namespace. A /proc that shows another
// PID namespace's processes cannot describe it, and is refused.
func (p Proc) Owner(pid int) (Owner, error) {
	if pid <= 0 {
		return Owner{}, fmt.Errorf("owner pid %d is not a process id", pid)
	}
	if why := p.foreignProcfs(); why != "" {
		return Owner{}, fmt.Errorf("owner process %d cannot be looked up: %s (mount a /proc of this PID namespace, or point --proc-root at one)", pid, why)
	}
	st, err := p.StartTime(pid)
	if err != nil {
		if isNotExist(err) {
			return Owner{}, fmt.Errorf("owner process %d does not exist", pid)
		}
		return Owner{}, fmt.Errorf("owner process %d: %w", pid, err)
	}
	boot, err := p.BootID()
	if err != nil {
		return Owner{}, err
	}
	return Owner{PID: pid, StartTime: st, BootID: boot, PIDNS: p.PIDNS("self")}, nil
}

// Liveness is the verdict on a recorded owner.
type Liveness int

// The verdicts. Unknown owners are treated as alive: a device is never taken from an owner that might
// still run.
const (
	Alive Liveness = iota
	Dead
	Unknown
)

// String returns alive, dead or unknown.
func (l Liveness) String() string {
	switch l {
	case Alive:
		return "alive"
	case Dead:
		return "dead"
	}
	return "unknown"
}

// Check says whether the recorded owner o still runs, and why. fileUID is the uid that owns the record
// (the ledger file's owner): with hidepid, processes of other users are invisible rather than gone.
func (p Proc) Check(o Owner, fileUID int) (Liveness, string) {
	return p.check(o, fileUID, p.view())
}

// procView is what the verdicts on a batch of owners share, read once per batch.
type procView struct {
	// boot is the current boot id, "" when unknown.
	boot string
	// self is this process's PID namespace, 0 when unknown.
	self uint64
	// foreign says why this /proc does not show this process's PID namespace ("" when it does).
	foreign string
	// hidepid reports whether /proc hides other users' processes; asked only when needed.
	hidepid func() bool
}

// view reads the facts the verdicts of one batch of owners share.
func (p Proc) view() procView {
	boot, _ := p.BootID()
	return procView{boot: boot, self: p.PIDNS("self"), foreign: p.foreignProcfs(), hidepid: sync.OnceValue(p.hidepid)}
}

// check is Check with the facts of view v.
func (p Proc) check(o Owner, fileUID int, v procView) (Liveness, string) {
	if v.boot != "" && o.BootID != "" && o.BootID != v.boot {
		return Dead, "recorded in an earlier boot"
	}
	if o.PIDNS != 0 && v.self != 0 && o.PIDNS != v.self {
		return Unknown, fmt.Sprintf("pid %d lives in another PID namespace (%d) and cannot be checked from here", o.PID, o.PIDNS)
	}
	if o.PIDNS != 0 && v.self == 0 {
		return Unknown, fmt.Sprintf("pid %d belongs to PID namespace %d, and this process cannot read its own, so the pid may be another namespace's", o.PID, o.PIDNS)
	}
	if v.foreign != "" {
		return Unknown, fmt.Sprintf("pid %d cannot be checked: %s", o.PID, v.foreign)
	}
	st, err := p.StartTime(o.PID)
	switch {
	case err == nil && st == o.StartTime:
		return Alive, fmt.Sprintf("pid %d is running", o.PID)
	case err == nil:
		return Dead, fmt.Sprintf("pid %d was reused by another process (start time %d, recorded %d)", o.PID, st, o.StartTime)
	case isNotExist(err) || errors.Is(err, syscall.ESRCH):
		if fileUID != p.uid && p.uid != 0 && v.hidepid() {
			return Unknown, fmt.Sprintf("pid %d of uid %d is invisible (procfs hidepid)", o.PID, fileUID)
		}
		return Dead, fmt.Sprintf("pid %d has exited", o.PID)
	}
	return Unknown, fmt.Sprintf("pid %d cannot be checked: %v", o.PID, err)
}

// foreignProcfs says why the /proc below the root shows the processes of another PID namespace than
// this process's, so that the pids this process knows name other processes there: a container that
// kept the host's /proc, `unshare --pid` without --mount-proc, a --proc-root naming the host's /proc
// from inside a container. /proc/self tells: it names this process's pid in the /proc's namespace (none
// when this process has none there), and its NSpid line lists the pids from the /proc's namespace down
// to this process's own, one when they are the same. "" when the /proc is this namespace's, or when
// there is no /proc/self link to tell by (a fake tree).
func (p Proc) foreignProcfs() string {
	selfPath := p.root.Path("/proc/self")
	fi, err := os.Lstat(selfPath)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return ""
	}
	pid := os.Getpid()
	link, err := os.Readlink(selfPath)
	if err != nil {
		return fmt.Sprintf("%s shows the processes of another PID namespace, in which this process (pid %d) has no pid", p.root.Path("/proc"), pid)
	}
	if n, err := strconv.Atoi(link); err != nil || n != pid {
		return fmt.Sprintf("%s shows the processes of another PID namespace, in which this process (pid %d) is pid %q", p.root.Path("/proc"), pid, truncate(link, 24))
	}
	status, err := p.root.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok && len(strings.Fields(v)) > 1 {
			return fmt.Sprintf("%s shows the processes of another PID namespace, an ancestor of this process's (NSpid%s)", p.root.Path("/proc"), truncate(v, 60))
		}
	}
	return ""
}

// hidepid reports whether /proc is mounted with hidepid (other users' processes hidden).
func (p Proc) hidepid() bool {
	data, err := p.root.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return true // cannot tell: assume hidden, so nobody is robbed
	}
	for _, line := range strings.Split(string(data), "\n") {
		left, right, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 5 || len(rf) < 3 || lf[4] != "/proc" || rf[0] != "proc" {
			continue
		}
		for _, opt := range strings.Split(rf[2], ",") {
			if v, ok := strings.CutPrefix(opt, "hidepid="); ok && v != "0" && v != "off" {
				return true
			}
		}
	}
	return false
}
