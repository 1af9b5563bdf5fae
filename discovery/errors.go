package discovery

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrBackendUnavailable says a backend cannot run here (no driver library, no sysfs tree, no tool on
	// PATH). It is not a failure: the next backend of the chain is tried.
	ErrBackendUnavailable = errors.New("backend unavailable")
	// ErrNoDevices says no backend of the vendor(s) asked for found a usable device.
	ErrNoDevices = errors.New("no devices found")
	// ErrInsufficientDevices says fewer devices are free than were asked for.
	ErrInsufficientDevices = errors.New("not enough devices")
	// ErrLockTimeout says the coordination lock was not obtained in time.
	ErrLockTimeout = errors.New("timed out waiting for the coordination lock")
	// ErrUnsafeLedger says a coordination file or its directory breaks the safety policy (a symbolic
	// link, a file of another user outside a shared sticky directory, a world-writable directory without
	// the sticky bit, a directory on a file system other hosts share, not a regular file).
	ErrUnsafeLedger = errors.New("unsafe coordination file")
	// ErrLedgerUnreadable says a ledger could not be read whole (too large, a line too long, a read
	// error), or that a rewrite would make it too large to read. Coordination then fails closed:
	// nothing is handed out and nothing is rewritten, since the part not read may record devices of
	// live owners.
	ErrLedgerUnreadable = errors.New("coordination ledger cannot be read whole")
)

// ProbeResult is what one backend's probe said.
type ProbeResult struct {
	Vendor  Vendor `json:"vendor"`
	Backend string `json:"backend"`
	OK      bool   `json:"ok"`
	Reason  string `json:"reason"`
	// Devices is how many devices the backend listed, nil when it was not asked.
	Devices *int `json:"devices"`
}

// NoDevicesError says why no device was found; it wraps ErrNoDevices.
type NoDevicesError struct {
	Vendor  Vendor
	Probes  []ProbeResult
	Skipped []SkippedDevice
}

// Error lists what every backend said.
func (e *NoDevicesError) Error() string {
	what := "any vendor"
	if e.Vendor != "" {
		what = string(e.Vendor)
	}
	var reasons []string
	for _, p := range e.Probes {
		reasons = append(reasons, fmt.Sprintf("%s/%s: %s", p.Vendor, p.Backend, p.Reason))
	}
	for _, sk := range e.Skipped {
		reasons = append(reasons, fmt.Sprintf("%s skipped: %s", sk.ID, sk.Reason))
	}
	msg := "no devices found for " + what
	if len(reasons) > 0 {
		msg += " (" + strings.Join(reasons, "; ") + ")"
	}
	return msg
}

// Unwrap returns ErrNoDevices.
func (e *NoDevicesError) Unwrap() error { return ErrNoDevices }

// InsufficientDevicesError says how many devices were asked for and why fewer are free; it wraps
// ErrInsufficientDevices.
type InsufficientDevicesError struct {
	Wanted int
	// Visible is how many devices this process can see and open.
	Visible int
	// Free is how many of them are not held by another process.
	Free int
	// Holders describes the devices held by others ("GPU-…: pid 4242 (alive)").
	Holders []string
}

// Error says how many were wanted, visible and free, and who holds the rest.
func (e *InsufficientDevicesError) Error() string {
	msg := fmt.Sprintf("not enough devices: %d wanted, %d visible", e.Wanted, e.Visible)
	if e.Free != e.Visible {
		msg += fmt.Sprintf(", %d free", e.Free)
	}
	if len(e.Holders) > 0 {
		msg += "; held: " + strings.Join(e.Holders, ", ")
	}
	return msg
}

// Unwrap returns ErrInsufficientDevices.
func (e *InsufficientDevicesError) Unwrap() error { return ErrInsufficientDevices }

// LockTimeoutError names the lock that could not be taken; it wraps ErrLockTimeout.
type LockTimeoutError struct {
	Path    string
	Timeout time.Duration
	// Holder describes the process /proc/locks names as the holder ("pid 4242 (yarn-er)", with ", which
	// is stopped ..." when it is), "" when it cannot be told.
	Holder string
}

// Error names the lock and its holder, or how to find it.
func (e *LockTimeoutError) Error() string {
	if e.Holder != "" {
		return fmt.Sprintf("timed out after %s waiting for the coordination lock %s (held by %s; raise --lock-timeout if it is merely slow)",
			e.Timeout, e.Path, e.Holder)
	}
	return fmt.Sprintf("timed out after %s waiting for the coordination lock %s (another yarn-er holds it; "+
		"find it with `fuser -v %s`, or raise --lock-timeout)", e.Timeout, e.Path, e.Path)
}

// Unwrap returns ErrLockTimeout.
func (e *LockTimeoutError) Unwrap() error { return ErrLockTimeout }

// UnsafeFileError says which coordination file or directory breaks the policy and how to fix it; it
// wraps ErrUnsafeLedger.
type UnsafeFileError struct {
	Path   string
	Reason string
	Fix    string
}

// Error names the file, the problem and the fix.
func (e *UnsafeFileError) Error() string {
	msg := e.Path + ": " + e.Reason
	if e.Fix != "" {
		msg += " (" + e.Fix + ")"
	}
	return msg
}

// Unwrap returns ErrUnsafeLedger.
func (e *UnsafeFileError) Unwrap() error { return ErrUnsafeLedger }

// LedgerUnreadableError names the ledger that could not be read whole and why; it wraps
// ErrLedgerUnreadable.
type LedgerUnreadableError struct {
	Path   string
	Reason string
	// Err is the underlying read error, if any.
	Err error
}

// Error names the ledger, the problem and what to do about it.
func (e *LedgerUnreadableError) Error() string {
	msg := fmt.Sprintf("%s: %s; every device it might record is treated as held, so nothing is handed out and the ledger is left as it is", e.Path, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + " (inspect the file; once no process holds devices through it, move it away)"
}

// Unwrap returns ErrLedgerUnreadable and the underlying error.
func (e *LedgerUnreadableError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrLedgerUnreadable, e.Err}
	}
	return []error{ErrLedgerUnreadable}
}

// unavailable returns an error wrapping ErrBackendUnavailable.
func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBackendUnavailable, fmt.Sprintf(format, args...))
}

// probeTool is the probe of a backend that runs a tool: ready when the tool is on the search path.
func probeTool(r Runner, name string) (bool, string) {
	p, err := r.LookPath(name)
	if err != nil {
		return false, err.Error()
	}
	return true, "found " + p
}

// probeDirFailure is a backend probe's answer when it cannot read its directory dir: a missing
// directory means the driver is not loaded.
func probeDirFailure(root Root, dir, driver string, err error) (bool, string) {
	if isNotExist(err) {
		return false, root.Path(dir) + " does not exist (" + driver + " not loaded)"
	}
	return false, err.Error()
}

// dirUnavailable is a backend's Devices error when it cannot read its directory dir: a missing
// directory makes the backend unavailable rather than failed.
func dirUnavailable(root Root, dir string, err error) error {
	if isNotExist(err) {
		return unavailable("%s does not exist", root.Path(dir))
	}
	return err
}
