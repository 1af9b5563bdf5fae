package discovery

import (
	"log/slog"
	"os"
	"time"
)

// DefaultLockTimeout bounds the wait for the coordination lock: below Flink's 10 s script timeout.
const DefaultLockTimeout = 8 * time.Second

// CoordinatorOptions configure a Coordinator.
type CoordinatorOptions struct {
	// Path names the coordination files: Path.lock (the lock, never replaced), Path.ledger.<uid> (one
	// ledger per user) and Path.dev.<device key>.lock (per-device locks of exec mode). Its directory
	// must exist.
	Path string
	// Shared accepts files of other users, provided the directory is world-writable with the sticky
	// bit (like /var/tmp). Without it, any coordination file of another user is refused.
	Shared bool
	// LockTimeout bounds the wait for the lock; 0 means DefaultLockTimeout.
	LockTimeout time.Duration
	// Proc is where owners are checked; the zero Proc reads /proc.
	Proc *Proc
	// ForeignTTL, when positive, lets entries of owners in another PID namespace (which cannot be
	// checked) be reclaimed that long after they were made. 0 never reclaims them.
	ForeignTTL time.Duration
	// Logger receives warnings (skipped ledger lines, reclaimed devices); nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Holding is a set of devices locked for a workload: the locks last as long as the files stay open in
// this process or any process it starts or becomes (exec) with the descriptors inherited.
type Holding struct {
	Devices []Device
	Files   []*os.File
	// forget drops the ledger entries made for the devices; nil when none were made.
	forget func() error
}

// Close drops the locks and the ledger entries made for the devices. A process that became the
// workload by exec never calls it: its locks and entries last until it ends.
func (h *Holding) Close() error {
	var first error
	if h.forget != nil {
		first = h.forget()
		h.forget = nil
	}
	for _, f := range h.Files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	h.Files = nil
	return first
}
