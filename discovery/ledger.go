package discovery

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// LedgerEntry is one held device in a coordination ledger.
type LedgerEntry struct {
	// Key is the device's coordination key (Device.Key), matched exactly.
	Key string `json:"key"`
	// Owner is the process that holds the device until it ends.
	Owner Owner `json:"owner"`
	// Acquired is when the device was handed out (second precision).
	Acquired time.Time `json:"acquired"`
}

// LedgerProblem is a ledger line that was skipped.
type LedgerProblem struct {
	// Line is the 1-based line number.
	Line int
	// Reason says what is wrong with it.
	Reason string
	// Key is the device key a damaged v1 line still names ("" when it names none): that device is kept
	// held, since the line may belong to a live owner.
	Key string
	// Text is the line as it was read.
	Text string
}

// ledgerHeader starts every ledger file yarn-er writes.
const ledgerHeader = "# yarn-er device ledger v1: <v1> <device key> <owner pid> <start time> <boot id> <pid namespace> <acquired unix time> <crc32>; written atomically by yarn-er, do not edit"

var (
	ledgerKeyRE  = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,256}$`)
	ledgerBootRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
)

// FormatLedgerEntry renders e as one ledger line (without the newline). The trailing CRC-32 covers the
// rest of the line, so a damaged line is never read as another device's.
func FormatLedgerEntry(e LedgerEntry) string {
	body := fmt.Sprintf("v1 %s %d %d %s %d %d", e.Key, e.Owner.PID, e.Owner.StartTime, e.Owner.BootID, e.Owner.PIDNS, e.Acquired.Unix())
	return fmt.Sprintf("%s %08x", body, crc32.ChecksumIEEE([]byte(body)))
}

const (
	// MaxLedgerBytes is the largest ledger read: about 50,000 entries. A larger file is refused, not read
	// in part.
	MaxLedgerBytes = 16 << 20
	// maxLedgerLine is the longest ledger line read; yarn-er's lines are a few hundred bytes.
	maxLedgerLine = 1 << 20
)

// ParseLedger reads a ledger. Every line stands alone: a line that is damaged, of another version or
// another tool's format (Flink's "<index> <pid>") is skipped and reported, and never changes how the
// other lines read. Blank lines and # comments are ignored.
// A line longer than 1 MiB ends the reading; it is reported as the last problem, and the caller must
// not take the result as the whole ledger (the Coordinator refuses such a ledger).
func ParseLedger(data []byte) ([]LedgerEntry, []LedgerProblem) {
	entries, problems, err := parseLedger(data)
	var tooLong *lineTooLongError
	if errors.As(err, &tooLong) {
		problems = append(problems, LedgerProblem{Line: tooLong.line, Reason: err.Error()})
	}
	return entries, problems
}

// lineTooLongError says at which line a ledger stopped being readable.
type lineTooLongError struct{ line int }

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than %d bytes, so the rest of the ledger cannot be read", e.line, maxLedgerLine)
}

// parseLedger is ParseLedger with the failure to read the whole ledger returned as an error.
func parseLedger(data []byte) ([]LedgerEntry, []LedgerProblem, error) {
	var entries []LedgerEntry
	var problems []LedgerProblem
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxLedgerLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		e, err := parseLedgerLine(text)
		if err != nil {
			p := LedgerProblem{Line: line, Reason: err.Error(), Text: text}
			if f := strings.Split(text, " "); len(f) >= 2 && f[0] == "v1" && ledgerKeyRE.MatchString(f[1]) {
				p.Key = f[1]
			}
			problems = append(problems, p)
			continue
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		// Reading from memory, the scanner fails only on a line over its limit.
		return entries, problems, &lineTooLongError{line: line + 1}
	}
	return entries, problems, nil
}

func parseLedgerLine(text string) (LedgerEntry, error) {
	f := strings.Split(text, " ")
	if len(f) != 8 {
		return LedgerEntry{}, fmt.Errorf("%d fields, want 8 (not a yarn-er v1 ledger line)", len(f))
	}
	if f[0] != "v1" {
		return LedgerEntry{}, fmt.Errorf("version %q, want v1", truncate(f[0], 10))
	}
	body := strings.Join(f[:7], " ")
	sum, err := strconv.ParseUint(f[7], 16, 32)
	if err != nil || len(f[7]) != 8 {
		return LedgerEntry{}, fmt.Errorf("checksum %q is not 8 hex digits", truncate(f[7], 10))
	}
	if uint32(sum) != crc32.ChecksumIEEE([]byte(body)) {
		return LedgerEntry{}, fmt.Errorf("checksum mismatch: the line is damaged")
	}
	var e LedgerEntry
	if !ledgerKeyRE.MatchString(f[1]) {
		return LedgerEntry{}, fmt.Errorf("device key %q has characters a key cannot have", truncate(f[1], 40))
	}
	e.Key = f[1]
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return LedgerEntry{}, fmt.Errorf("owner pid %q is not a process id", truncate(f[2], 20))
	}
	e.Owner.PID = pid
	if e.Owner.StartTime, err = strconv.ParseUint(f[3], 10, 64); err != nil {
		return LedgerEntry{}, fmt.Errorf("start time %q is not a number", truncate(f[3], 24))
	}
	if !ledgerBootRE.MatchString(f[4]) {
		return LedgerEntry{}, fmt.Errorf("boot id %q is malformed", truncate(f[4], 40))
	}
	e.Owner.BootID = f[4]
	if e.Owner.PIDNS, err = strconv.ParseUint(f[5], 10, 64); err != nil {
		return LedgerEntry{}, fmt.Errorf("pid namespace %q is not a number", truncate(f[5], 24))
	}
	at, err := strconv.ParseInt(f[6], 10, 64)
	if err != nil || at < 0 {
		return LedgerEntry{}, fmt.Errorf("acquired time %q is not a unix time", truncate(f[6], 24))
	}
	e.Acquired = time.Unix(at, 0).UTC()
	return e, nil
}

// formatLedger renders a whole ledger file; damaged lines that still name a device are kept as they
// were, so the device stays held until someone looks at them.
func formatLedger(entries []LedgerEntry, damaged []string) []byte {
	var b bytes.Buffer
	b.WriteString(ledgerHeader)
	b.WriteByte('\n')
	for _, e := range entries {
		b.WriteString(FormatLedgerEntry(e))
		b.WriteByte('\n')
	}
	for _, d := range damaged {
		b.WriteString(d)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
