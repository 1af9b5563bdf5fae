//go:build unix

package discovery_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
)

func fileSum(t *testing.T, p string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	return sha256.Sum256(data)
}

// TestLedgerThatCannotBeReadWholeFailsClosed: a ledger that is too large or has a line too long for the
// reader may record live owners past the point where reading stopped, so nothing is handed out and the
// ledger is not rewritten from the part that was read.
func TestLedgerThatCannotBeReadWholeFailsClosed(t *testing.T) {
	devs := gpus(t, 4)
	cases := []struct {
		name  string
		write func(t *testing.T, f *coordFixture, path string, lines []string)
		want  string
	}{
		{"a line over 1 MiB", func(t *testing.T, f *coordFixture, path string, lines []string) {
			data := lines[0] + "\n" + strings.Repeat("x", 2<<20) + "\n" + lines[1] + "\n"
			require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		}, "line 2 is longer than"},
		{"a ledger over 16 MiB", func(t *testing.T, f *coordFixture, path string, lines []string) {
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
			require.NoError(t, os.Truncate(path, discovery.MaxLedgerBytes+1)) // sparse: cheap to make
		}, "more than the 16777216 a ledger may have"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newCoordFixture(t)
			c := f.coordinator()
			live := f.owner(100)
			var lines []string
			for _, d := range devs[:2] {
				lines = append(lines, discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: d.Key, Owner: live, Acquired: time.Unix(1764500000, 0)}))
			}
			path := c.LedgerPath(os.Getuid())
			tc.write(t, f, path, lines)
			before := fileSum(t, path)
			ctx := context.Background()

			got, err := c.Acquire(ctx, f.owner(200), devs, 1)
			require.ErrorIs(t, err, discovery.ErrLedgerUnreadable)
			assert.Nil(t, got)
			assert.Contains(t, err.Error(), path, "the error names the ledger")
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "treated as held")

			_, err = c.Release(ctx, live)
			require.ErrorIs(t, err, discovery.ErrLedgerUnreadable)
			h, err := c.Hold(ctx, devs, 1)
			require.ErrorIs(t, err, discovery.ErrLedgerUnreadable)
			assert.Nil(t, h)
			_, err = c.Entries(ctx)
			require.ErrorIs(t, err, discovery.ErrLedgerUnreadable)
			assert.Equal(t, before, fileSum(t, path), "the ledger is never rewritten from a partial read")
		})
	}
}

// TestParseLedgerReportsWhereReadingStopped: the public parser says where it stopped, so no caller can
// mistake the part for the whole.
func TestParseLedgerReportsWhereReadingStopped(t *testing.T) {
	e := discovery.FormatLedgerEntry(discovery.LedgerEntry{Key: "GPU-a", Owner: discovery.Owner{PID: 1, BootID: "b"}, Acquired: time.Unix(1, 0)})
	entries, problems := discovery.ParseLedger([]byte(e + "\n" + strings.Repeat("y", 1<<20+1) + "\n" + e + "\n"))
	assert.Len(t, entries, 1)
	require.Len(t, problems, 1)
	assert.Equal(t, 2, problems[0].Line)
	assert.Contains(t, problems[0].Reason, "the rest of the ledger cannot be read")
}

// TestLedgerThatIsNotAFileFailsClosed: a ledger replaced by a directory or a FIFO is refused, never
// taken as empty.
func TestLedgerThatIsNotAFileFailsClosed(t *testing.T) {
	devs := gpus(t, 2)
	for _, kind := range []string{"directory", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			f := newCoordFixture(t)
			c := f.coordinator()
			path := c.LedgerPath(os.Getuid())
			if kind == "directory" {
				require.NoError(t, os.Mkdir(path, 0o755))
			} else {
				require.NoError(t, syscall.Mkfifo(path, 0o644))
			}
			_, err := c.Acquire(context.Background(), f.owner(100), devs, 1)
			require.ErrorIs(t, err, discovery.ErrUnsafeLedger)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// TestExecHoldersSurviveRemovalOfEitherRecord: a workload's devices are held by its lock files and by
// ledger entries for its process; a tmp cleaner removing either kind of file does not free them.
func TestExecHoldersSurviveRemovalOfEitherRecord(t *testing.T) {
	devs := gpus(t, 4)
	for _, remove := range []string{"device lock files", "ledger", "lock file and ledger"} {
		t.Run(remove, func(t *testing.T) {
			f := newCoordFixture(t)
			f.owner(os.Getpid()) // this process, as the fake procfs shows it
			c := f.coordinator()
			ctx := context.Background()
			h, err := c.Hold(ctx, devs, 2)
			require.NoError(t, err)
			switch remove {
			case "device lock files":
				for _, d := range devs {
					_ = os.Remove(c.DeviceLockPath(d.Key))
				}
			case "ledger":
				require.NoError(t, os.Remove(c.LedgerPath(os.Getuid())))
			default:
				require.NoError(t, os.Remove(c.LedgerPath(os.Getuid())))
				require.NoError(t, os.Remove(c.LockPath()))
			}
			_, err = f.coordinator().Acquire(ctx, f.owner(100), devs, 3)
			require.ErrorIs(t, err, discovery.ErrInsufficientDevices, "the workload's devices are still held")
			got, err := f.coordinator().Acquire(ctx, f.owner(101), devs, 2)
			require.NoError(t, err)
			assert.Equal(t, keys(devs[2:]), keys(got))

			require.NoError(t, h.Close())
			entries, err := c.Entries(ctx)
			require.NoError(t, err)
			for _, e := range entries {
				assert.NotEqual(t, os.Getpid(), e.Owner.PID, "Close drops the workload's entries")
			}
			f.proc.Kill(101)
			got, err = f.coordinator().Acquire(ctx, f.owner(102), devs, 4)
			require.NoError(t, err, "everything is free once the holders are gone")
			assert.Len(t, got, 4)
		})
	}
}

// TestLedgerIsNeverWrittenPastTheReadLimit: damaged lines are kept at every rewrite, so a ledger just
// under MaxLedgerBytes would grow past it by one more entry, and every later call would refuse the
// ledger yarn-er wrote itself. Such a rewrite is refused instead: nothing is handed out and the ledger
// stays as it was, still readable.
func TestLedgerIsNeverWrittenPastTheReadLimit(t *testing.T) {
	devs := gpus(t, 2)
	f := newCoordFixture(t)
	c := f.coordinator()
	path := c.LedgerPath(os.Getuid())
	// Damaged v1 lines naming devices that are not here, each under the 1 MiB line limit, up to a few
	// bytes below the ledger limit.
	var b strings.Builder
	for i := 0; b.Len() < discovery.MaxLedgerBytes-64; i++ {
		head := fmt.Sprintf("v1 GPU-damaged-%02d ", i)
		n := min(1<<20-1, discovery.MaxLedgerBytes-64-b.Len()) - len(head) - 1
		b.WriteString(head + strings.Repeat("x", max(n, 1)) + "\n")
	}
	require.LessOrEqual(t, b.Len(), discovery.MaxLedgerBytes)
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	before := fileSum(t, path)
	ctx := context.Background()

	got, err := c.Acquire(ctx, f.owner(100), devs, 1)
	require.ErrorIs(t, err, discovery.ErrLedgerUnreadable)
	assert.Nil(t, got)
	assert.Contains(t, err.Error(), path, "the error names the ledger")
	assert.Contains(t, err.Error(), "past the 16777216 bytes a ledger may have")
	assert.Equal(t, before, fileSum(t, path), "the ledger is left as it was")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(discovery.MaxLedgerBytes))

	_, err = c.Acquire(ctx, f.owner(101), devs, 1)
	require.ErrorIs(t, err, discovery.ErrLedgerUnreadable)
	assert.Contains(t, err.Error(), "a rewrite would grow it", "the ledger is still read whole; only its growth is refused")
}
