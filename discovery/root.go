package discovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Root is the directory below which the host's /sys, /proc and /dev are read. The zero Root and
// NewRoot("/") read the real host; tests point a Root at a fake tree. Symbolic links inside the tree are
// followed as they are, so fake trees use relative links (as sysfs does).
type Root struct{ dir string }

// NewRoot returns a Root for dir; "" means "/".
func NewRoot(dir string) Root {
	if dir == "" || dir == "/" {
		return Root{}
	}
	return Root{dir: filepath.Clean(dir)}
}

// Dir returns the root directory ("/" for the real host).
func (r Root) Dir() string {
	if r.dir == "" {
		return "/"
	}
	return r.dir
}

// IsHost reports whether r reads the real host ("/").
func (r Root) IsHost() bool { return r.dir == "" }

// Path returns where the host path p lies below the root.
func (r Root) Path(p string) string {
	if r.dir == "" {
		return p
	}
	return filepath.Join(r.dir, p)
}

// maxSysfsFile bounds what is read from one sysfs/procfs file; none of the files read is near this.
const maxSysfsFile = 1 << 20

// ReadFile reads the host file p below the root, at most 1 MiB: a larger file is an error, never
// read in part. Only regular files are read (sysfs and procfs attributes are), and the open never
// blocks (a FIFO planted in a --host-root tree is refused, not waited on).
func (r Root) ReadFile(p string) ([]byte, error) {
	path := r.Path(p)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s), so not a sysfs or procfs attribute", fi.Mode().Type())}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSysfsFile+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if len(b) > maxSysfsFile {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes, which no sysfs or procfs attribute is", maxSysfsFile)}
	}
	return b, nil
}

// ReadString reads the host file p and trims white space around its content.
func (r Root) ReadString(p string) (string, error) {
	b, err := r.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

// ReadDir lists the host directory p below the root.
func (r Root) ReadDir(p string) ([]os.DirEntry, error) { return os.ReadDir(r.Path(p)) }

// Readlink reads the host symbolic link p below the root.
func (r Root) Readlink(p string) (string, error) { return os.Readlink(r.Path(p)) }

// Stat stats the host path p below the root, following links.
func (r Root) Stat(p string) (os.FileInfo, error) { return os.Stat(r.Path(p)) }

// Glob returns the host paths (without the root prefix) matching pattern, sorted.
func (r Root) Glob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(r.Path(pattern))
	if err != nil {
		return nil, err
	}
	if r.dir == "" {
		return matches, nil
	}
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		rel, err := filepath.Rel(r.dir, m)
		if err != nil {
			continue
		}
		out = append(out, "/"+rel)
	}
	return out, nil
}

// Runner runs a tool and returns its standard output. Exec backends use it, so tests and benchmarks can
// replace nvidia-smi, amd-smi and aocl.
type Runner interface {
	// LookPath reports where the tool is, or an error wrapping ErrBackendUnavailable when it is absent.
	LookPath(name string) (string, error)
	// Run runs the tool with args and returns its standard output.
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs tools found on a PATH, each under a timeout.
type ExecRunner struct {
	// Path is the PATH to search ("" = no tool is found).
	Path string
	// Timeout bounds each run; 0 means 5 s.
	Timeout time.Duration
}

// LookPath finds name on r.Path (see the function LookPath); a missing tool is an error wrapping
// ErrBackendUnavailable.
func (r ExecRunner) LookPath(name string) (string, error) {
	p, err := LookPath(name, r.Path)
	if err != nil {
		return "", unavailable("%v", err)
	}
	return p, nil
}

// LookPath finds the executable regular file name in the directories of pathList (a PATH value), or
// checks name itself when it contains a slash.
func LookPath(name, pathList string) (string, error) {
	if strings.Contains(name, "/") {
		if isExecutable(name) {
			return name, nil
		}
		return "", fmt.Errorf("%s is not an executable file", name)
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue // an empty PATH element would mean the working directory; never search it
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH", name)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// Run runs name with args under the timeout and returns stdout; stderr goes into the error.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	p, err := r.LookPath(name)
	if err != nil {
		return nil, err
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, args...)
	var stdout, stderr bytes.Buffer
	out := &limitedWriter{w: &stdout, n: maxToolOutput}
	cmd.Stdout = out
	cmd.Stderr = &limitedWriter{w: &stderr, n: 64 << 10}
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s %s: no answer within %s", name, strings.Join(args, " "), timeout)
	}
	if out.over {
		// A partial listing could end in a cut line that reads as a device with a cut id.
		return nil, fmt.Errorf("%s %s: printed more than %d bytes, far more than any device listing; the output is not used", name, strings.Join(args, " "), maxToolOutput)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// maxToolOutput bounds what a tool (nvidia-smi, amd-smi, aocl) may print; a listing of 64 devices is
// a few tens of kilobytes.
const maxToolOutput = 4 << 20

// limitedWriter keeps at most n bytes and drops the rest (over says so), so a runaway tool cannot
// exhaust memory.
type limitedWriter struct {
	w    io.Writer
	n    int
	over bool
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		l.over = l.over || len(p) > 0
		return len(p), nil
	}
	q := p
	if len(q) > l.n {
		q = q[:l.n]
		l.over = true
	}
	l.n -= len(q)
	if _, err := l.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// openCheck tries to open a device node read-write, as a workload would, and closes it again. Device
// cgroups and container runtimes deny the open (not access(2)), so only an open tells.
func openCheck(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// isNotExist reports whether err says a file is missing (ENOENT or ENOTDIR).
func isNotExist(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
