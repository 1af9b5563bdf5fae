package discovery

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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
// its parent or a process it was told about, both named in this namespace.
func (p Proc) Owner(pid int) (Owner, error) {
	if pid <= 0 {
		return Owner{}, fmt.Errorf("owner pid %d is not a process id", pid)
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
	boot, _ := p.BootID()
	return p.check(o, fileUID, boot, p.PIDNS("self"), p.hidepid)
}

// check is Check with the current boot id ("" = unknown), this process's PID namespace and whether
// /proc hides other users' processes (asked only when needed) found once per batch of owners.
func (p Proc) check(o Owner, fileUID int, boot string, self uint64, hidepid func() bool) (Liveness, string) {
	if boot != "" && o.BootID != "" && o.BootID != boot {
		return Dead, "recorded in an earlier boot"
	}
	if o.PIDNS != 0 && self != 0 && o.PIDNS != self {
		return Unknown, fmt.Sprintf("pid %d lives in another PID namespace (%d) and cannot be checked from here", o.PID, o.PIDNS)
	}
	st, err := p.StartTime(o.PID)
	switch {
	case err == nil && st == o.StartTime:
		return Alive, fmt.Sprintf("pid %d is running", o.PID)
	case err == nil:
		return Dead, fmt.Sprintf("pid %d was reused by another process (start time %d, recorded %d)", o.PID, st, o.StartTime)
	case isNotExist(err) || errors.Is(err, syscall.ESRCH):
		if fileUID != p.uid && p.uid != 0 && hidepid() {
			return Unknown, fmt.Sprintf("pid %d of uid %d is invisible (procfs hidepid)", o.PID, fileUID)
		}
		return Dead, fmt.Sprintf("pid %d has exited", o.PID)
	}
	return Unknown, fmt.Sprintf("pid %d cannot be checked: %v", o.PID, err)
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
