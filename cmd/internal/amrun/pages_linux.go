package amrun

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseBinaryPages drops the executable's clean read-only pages (its code and read-only data)
// from the process's resident set with madvise(MADV_DONTNEED), and returns how many KiB were
// resident in them. Start-up maps most of a large binary (every package's initialisation touches
// its own pages, and the kernel maps 64 KiB around each fault): the AM then only keeps the pages
// it uses again, which the kernel maps back from the page cache. Only private mappings of the
// executable that are not writable and hold no anonymous (copied-on-write) pages qualify, so
// nothing written (relocated read-only data of a dynamically linked build) is ever discarded.
func releaseBinaryPages() int64 {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	type region struct {
		start, end uintptr
		rss        int64
		written    bool
	}
	var regions []region
	var cur *region
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			cur = nil
			if len(f) == 6 && f[5] == exe && f[1][1] != 'w' && f[1][3] == 'p' {
				lo, hi, _ := strings.Cut(f[0], "-")
				s, err1 := strconv.ParseUint(lo, 16, 64)
				e, err2 := strconv.ParseUint(hi, 16, 64)
				if err1 == nil && err2 == nil && e > s {
					regions = append(regions, region{start: uintptr(s), end: uintptr(e)})
					cur = &regions[len(regions)-1]
				}
			}
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		kib, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			cur.rss = kib
		case "Anonymous:", "Swap:":
			// A written (copied-on-write) page of a private mapping is anonymous. (File pages
			// that the page cache has not written back yet count as dirty in smaps, which is
			// why Private_Dirty does not tell.)
			cur.written = cur.written || kib > 0
		}
	}
	var released int64
	for _, r := range regions {
		if r.written || r.rss == 0 {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, syscall.MADV_DONTNEED); errno == 0 {
			released += r.rss
		}
	}
	return released
}
