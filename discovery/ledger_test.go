package discovery_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery"
)

func entry(key string, pid int) discovery.LedgerEntry {
	return discovery.LedgerEntry{
		Key:      key,
		Owner:    discovery.Owner{PID: pid, StartTime: uint64(pid) * 10, BootID: "8b1f6c1e-2f6a-4d55-9a3e-1b2c3d4e5f60", PIDNS: 4026531836},
		Acquired: time.Unix(1764500000, 0).UTC(),
	}
}

func TestLedgerRoundTrip(t *testing.T) {
	in := []discovery.LedgerEntry{entry("GPU-00000000-0000-0000-0000-000000000001", 11), entry("GPU-00000000-0000-0000-0000-000000000011", 1)}
	var sb strings.Builder
	sb.WriteString("# header\n\n")
	for _, e := range in {
		sb.WriteString(discovery.FormatLedgerEntry(e) + "\n")
	}
	got, problems := discovery.ParseLedger([]byte(sb.String()))
	assert.Empty(t, problems)
	assert.Equal(t, in, got)
	assert.Equal(t, "v1 GPU-00000000-0000-0000-0000-000000000001 11 110 8b1f6c1e-2f6a-4d55-9a3e-1b2c3d4e5f60 4026531836 1764500000 0b30eea5",
		discovery.FormatLedgerEntry(in[0]))
}

func TestLedgerDamagedLinesAreSkippedAlone(t *testing.T) {
	good1 := discovery.FormatLedgerEntry(entry("GPU-a", 1))
	good2 := discovery.FormatLedgerEntry(entry("GPU-b", 2))
	flip := func(s string, i int) string { b := []byte(s); b[i] ^= 0x01; return string(b) }
	lines := []string{
		good1,
		"1 4242",                                // Flink's own ledger format
		good1[:len(good1)/2],                    // a torn line
		flip(good2, 4),                          // GPU-b damaged into GPU-c: the checksum catches it
		strings.Replace(good2, "v1 ", "v2 ", 1), // a future version
		good2 + " extra",                        // too many fields
		strings.Replace(good2, " 2 20 ", " x 20 ", 1), // a bad pid (and so a bad checksum)
		"\x00\x01garbage",
		good2,
	}
	got, problems := discovery.ParseLedger([]byte(strings.Join(lines, "\n")))
	require.Len(t, got, 2)
	assert.Equal(t, "GPU-a", got[0].Key)
	assert.Equal(t, "GPU-b", got[1].Key)
	require.Len(t, problems, 7)
	assert.Equal(t, 2, problems[0].Line)
	assert.Contains(t, problems[0].Reason, "not a yarn-er v1 ledger line")
	assert.Contains(t, problems[2].Reason, "checksum mismatch")
	assert.Contains(t, problems[3].Reason, "version \"v2\"")
}

func TestLedgerKeysMatchExactly(t *testing.T) {
	// The 1-vs-11 confusion of Flink's `sed "/1 /d"` cannot happen: keys are whole fields, compared whole.
	got, problems := discovery.ParseLedger([]byte(discovery.FormatLedgerEntry(entry("GPU-11", 5)) + "\n"))
	require.Empty(t, problems)
	require.Len(t, got, 1)
	assert.NotEqual(t, "GPU-1", got[0].Key)
	assert.Equal(t, "GPU-11", got[0].Key)
}
