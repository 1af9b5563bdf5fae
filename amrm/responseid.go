package amrm

import (
	"math"
	"strings"

	"github.com/yarn-er/yarn-er/records"
)

// The words of the ResourceManager's InvalidApplicationMasterRequestException for an allocate
// call whose responseId is neither its last one nor the one before. Hadoop 3.2 and later write
//
//	Invalid responseId in AllocateRequest from application attempt: <attempt> expect responseId to be <N> but get <M>
//
// and 3.1 the same with a comma before "expect" and before "but". Over IPC the message is
// followed by the server's stack trace ("\n\tat org.apache.hadoop...").
const (
	invalidResponseIDHead   = "Invalid responseId in AllocateRequest from application attempt: "
	invalidResponseIDExpect = " expect responseId to be "
	invalidResponseIDGot    = " but get "
)

// responseIDMismatch is what an invalid-responseId message says.
type responseIDMismatch struct {
	// Expected is the responseId the ResourceManager expects: its last answer's id.
	Expected int32
	// Attempt is the application attempt the message names; zero when it names none that parses.
	Attempt records.ApplicationAttemptID
}

// parseResponseIDMismatch reads the responseId the ResourceManager expects out of the message of
// its InvalidApplicationMasterRequestException, in the 3.1 or the 3.2+ wording. It reports false
// for any other message, and for one whose expected id is not a decimal in 0..2147483647 (the ids
// the RM hands out, as Java writes them: no sign, no leading zeros) followed by the "but get"
// part: text from the network, so nothing else is guessed at.
func parseResponseIDMismatch(msg string) (responseIDMismatch, bool) {
	head := strings.Index(msg, invalidResponseIDHead)
	if head < 0 {
		return responseIDMismatch{}, false
	}
	rest := msg[head+len(invalidResponseIDHead):]
	at := strings.Index(rest, invalidResponseIDExpect)
	if at < 0 {
		return responseIDMismatch{}, false
	}
	var out responseIDMismatch
	if att, err := records.ParseApplicationAttemptID(strings.TrimSuffix(rest[:at], ",")); err == nil {
		out.Attempt = att
	}
	rest = rest[at+len(invalidResponseIDExpect):]
	n, digits := 0, 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		n = n*10 + int(rest[digits]-'0')
		digits++
		if n > math.MaxInt32 {
			return responseIDMismatch{}, false
		}
	}
	if digits == 0 || (digits > 1 && rest[0] == '0') { // Java writes no leading zeros
		return responseIDMismatch{}, false
	}
	rest = strings.TrimPrefix(rest[digits:], ",")
	if !strings.HasPrefix(rest, invalidResponseIDGot) {
		return responseIDMismatch{}, false
	}
	out.Expected = int32(n)
	return out, true
}
