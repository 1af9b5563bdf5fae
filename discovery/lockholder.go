//go:build unix

package discovery

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// flockHolder describes the process that /proc/locks names as holding a flock(2) lock on the file of
// device dev and inode ino ("pid 4242 (yarn-er), stopped"); "" when none is listed or this /proc cannot
// name it. The pid is the one that took the lock, in this /proc's PID namespace.
func (p Proc) flockHolder(dev, ino uint64) string {
	if p.foreignProcfs() != "" {
		return ""
	}
	data, err := p.root.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	// "1: FLOCK  ADVISORY  WRITE 4242 fe:00:9977878 0 EOF"; waiters have "->" after the number.
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 {
			return ""
		}
		return p.describe(pid)
	}
	return ""
}

// describe names the process pid with its command and, when it is stopped, says so.
func (p Proc) describe(pid int) string {
	d := fmt.Sprintf("pid %d", pid)
	if comm := truncate(p.Comm(pid), 32); comm != "" {
		// any process can name itself with newlines or terminal escapes: those are shown quoted
		if strings.IndexFunc(comm, func(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) }) >= 0 {
			comm = strconv.Quote(comm)
		}
		d += " (" + comm + ")"
	}
	stat, err := p.root.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return d
	}
	if end := bytes.LastIndexByte(stat, ')'); end >= 0 {
		if f := strings.Fields(string(stat[end+1:])); len(f) > 0 && (f[0] == "T" || f[0] == "t") {
			d += fmt.Sprintf(", which is stopped (resume it with kill -CONT %d, or end it)", pid)
		}
	}
	return d
}
