// Package discoverytest builds fake host trees (sysfs, procfs, /dev) and fake tools (nvidia-smi,
// amd-smi, aocl) for the tests and benchmarks of package discovery and of yarn-er's discover and exec
// commands.
//
// Fixtures live in discovery/testdata as txtar-style archives: "-- path --" starts a file whose content
// follows, "-- path -> target --" makes a symbolic link and "-- path/ --" an empty directory. Archives
// keep paths with colons (PCI addresses) out of the repository's file names.
package discoverytest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestdataDir returns discovery/testdata.
func TestdataDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "testdata"
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Tree is a fake host root.
type Tree struct {
	t    testing.TB
	Root string
}

// New returns an empty tree in a temporary directory.
func New(t testing.TB) *Tree {
	t.Helper()
	return &Tree{t: t, Root: t.TempDir()}
}

// Load returns a tree filled from the archive testdata/trees/<name>.txtar.
func Load(t testing.TB, name string) *Tree {
	t.Helper()
	tr := New(t)
	tr.Apply(filepath.Join(TestdataDir(), "trees", name+".txtar"))
	return tr
}

// Path returns where the host path p lies in the tree.
func (tr *Tree) Path(p string) string { return filepath.Join(tr.Root, p) }

// Apply adds the entries of an archive file to the tree.
func (tr *Tree) Apply(archive string) {
	tr.t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		tr.t.Fatal(err)
	}
	if err := Extract(tr.Root, data); err != nil {
		tr.t.Fatalf("%s: %v", archive, err)
	}
}

// Extract writes the entries of an archive below root.
func Extract(root string, data []byte) error {
	type entry struct {
		name string
		body bytes.Buffer
	}
	var entries []*entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") && len(line) > 6 {
			entries = append(entries, &entry{name: strings.TrimSpace(line[3 : len(line)-3])})
			continue
		}
		if len(entries) == 0 {
			continue // the archive's comment
		}
		e := entries[len(entries)-1]
		e.body.WriteString(line)
		e.body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for _, e := range entries {
		name, target, isLink := strings.Cut(e.name, " -> ")
		p := filepath.Join(root, filepath.FromSlash(strings.TrimSpace(name)))
		var err error
		switch {
		case isLink:
			err = Symlink(p, strings.TrimSpace(target))
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			err = WriteFile(p, e.body.String())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	return nil
}

// WriteFile writes content to p, creating its directories.
func WriteFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// Symlink makes p a link to target, creating p's directory.
func Symlink(p, target string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	_ = os.Remove(p)
	return os.Symlink(target, p)
}

// File writes the host file p in the tree.
func (tr *Tree) File(p, content string) {
	tr.t.Helper()
	if err := WriteFile(tr.Path(p), content); err != nil {
		tr.t.Fatal(err)
	}
}

// Link makes the host path p a symbolic link to target.
func (tr *Tree) Link(p, target string) {
	tr.t.Helper()
	if err := Symlink(tr.Path(p), target); err != nil {
		tr.t.Fatal(err)
	}
}

// NVIDIAUUID is the UUID the generated GPU i gets. UUIDs of GPUs 1 and 11 differ in their last
// characters only, so that inexact matching would confuse them.
func NVIDIAUUID(i int) string { return fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", i) }

// NVIDIABusID is the PCI address of the generated GPU i.
func NVIDIABusID(i int) string { return fmt.Sprintf("0000:%02x:00.0", 0x10+i) }

// NVIDIAInformation renders a driver information file in the format of
// /proc/driver/nvidia/gpus/<bus>/information.
func NVIDIAInformation(model, uuid, bus string, minor int) string {
	return fmt.Sprintf("Model: \t\t %s\nIRQ:   \t\t %d\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.89.00.01\nBus Type: \t PCIe\n"+
		"DMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n",
		model, 100+minor, uuid, bus, minor)
}

// NVIDIAHost adds n NVIDIA GPUs (procfs information files and /dev nodes) to the tree.
func (tr *Tree) NVIDIAHost(n int) {
	tr.t.Helper()
	for i := 0; i < n; i++ {
		bus := NVIDIABusID(i)
		tr.File("/proc/driver/nvidia/gpus/"+bus+"/information", NVIDIAInformation("NVIDIA H200", NVIDIAUUID(i), bus, i))
		tr.File(fmt.Sprintf("/dev/nvidia%d", i), "")
	}
	tr.File("/dev/nvidiactl", "")
}

// ProcStat renders a /proc/<pid>/stat line with the start time in field 22.
func ProcStat(pid int, comm string, start uint64) string {
	return fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 %d 1000000 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		pid, comm, pid, pid, start)
}

// Process adds /proc/<pid>/stat with the given start time.
func (tr *Tree) Process(pid int, start uint64) {
	tr.t.Helper()
	tr.File(fmt.Sprintf("/proc/%d/stat", pid), ProcStat(pid, "java", start))
}

// Kill removes /proc/<pid>.
func (tr *Tree) Kill(pid int) {
	tr.t.Helper()
	if err := os.RemoveAll(tr.Path(fmt.Sprintf("/proc/%d", pid))); err != nil {
		tr.t.Fatal(err)
	}
}

// Boot sets the boot id and this process's PID namespace (/proc/self/ns/pid) of a fake procfs.
func (tr *Tree) Boot(bootID string, pidns uint64) {
	tr.t.Helper()
	tr.File("/proc/sys/kernel/random/boot_id", bootID+"\n")
	tr.Link("/proc/self/ns/pid", fmt.Sprintf("pid:[%d]", pidns))
	tr.File("/proc/self/mountinfo", "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n")
}

// Tool writes an executable shell script named name into dir (for PATH) and returns its path.
func Tool(t testing.TB, dir, name, script string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// ToolReplaying writes a fake tool that prints the testdata/tools file chosen by its arguments:
// answers maps an argument string ("--query-gpu=… --format=…", "-L") to a file name; any other
// arguments exit 9.
func ToolReplaying(t testing.TB, dir, name string, answers map[string]string) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("case \"$*\" in\n")
	for args, file := range answers {
		fmt.Fprintf(&sb, "  %q) cat %q ;;\n", args, filepath.Join(TestdataDir(), "tools", file))
	}
	sb.WriteString("  *) echo \"unexpected arguments: $*\" >&2; exit 9 ;;\nesac\n")
	return Tool(t, dir, name, sb.String())
}
