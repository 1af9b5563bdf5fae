package amrm

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/amrm/internal/fakeyarn"
	"github.com/yarn-er/yarn-er/records"
)

// stackLine is what follows the message over IPC: the RM's stack trace (as a 3.4 mini-YARN sends it).
const stackLine = "\n\tat org.apache.hadoop.yarn.server.resourcemanager.ApplicationMasterService.allocate(ApplicationMasterService.java:428)"

func TestParseResponseIDMismatch(t *testing.T) {
	att := fakeyarn.Attempt
	tests := []struct {
		name    string
		msg     string
		want    int32
		attempt records.ApplicationAttemptID
		ok      bool
	}{
		{name: "3.2+", msg: fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, 7, 1, false), want: 7, attempt: att, ok: true},
		{name: "3.2+ over IPC", msg: fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, 0, 1000, false) + stackLine, want: 0, attempt: att, ok: true},
		{name: "3.1", msg: fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, 12, 3, true) + stackLine, want: 12, attempt: att, ok: true},
		{name: "largest id", msg: fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, 2147483647, 0, false), want: 2147483647, attempt: att, ok: true},
		{name: "a real one", msg: "Invalid responseId in AllocateRequest from application attempt: appattempt_1796158239657_0007_000001 expect responseId to be 0 but get 1000" + stackLine,
			want: 0, attempt: records.ApplicationAttemptID{Application: records.ApplicationID{ClusterTimestamp: 1796158239657, ID: 7}, Attempt: 1}, ok: true},
		{name: "attempt that does not parse", msg: "Invalid responseId in AllocateRequest from application attempt: null expect responseId to be 4 but get 2", want: 4, ok: true},

		{name: "empty"},
		{name: "other refusal", msg: "Application Master is already registered : " + fakeyarn.AppID},
		{name: "no head", msg: "expect responseId to be 4 but get 2"},
		{name: "before 3.1 (2.x wording)", msg: "Invalid responseId in AllocateRequest from application attempt: " + fakeyarn.AttemptID + ", expect responseId to be 4"},
		{name: "no but get", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be 4"},
		{name: "negative", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be -1 but get 2"},
		{name: "signed", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be +1 but get 2"},
		{name: "over int32", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be 2147483648 but get 2"},
		{name: "huge", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be " + strings.Repeat("9", 40) + " but get 2"},
		{name: "not a number", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be 0x10 but get 2"},
		{name: "space before number", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be  4 but get 2"},
		{name: "leading zero", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be 07 but get 2"},
		{name: "two commas", msg: "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be 4,, but get 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseResponseIDMismatch(tt.msg)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got.Expected)
			assert.Equal(t, tt.attempt, got.Attempt)
		})
	}
}

// FuzzParseResponseIDMismatch: the message comes from the network. Whatever it holds the parser
// does not panic, and an id it reads is in the RM's range and written in the message as read;
// the RM's own messages, in either wording, are read back.
func FuzzParseResponseIDMismatch(f *testing.F) {
	f.Add(fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, 7, 1, false), int32(7), int32(1))
	f.Add(fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, 2147483647, 0, true)+stackLine, int32(2147483647), int32(0))
	f.Add("Invalid responseId in AllocateRequest from application attempt: x expect responseId to be 99999999999 but get 2", int32(0), int32(-1))
	f.Fuzz(func(t *testing.T, msg string, expected, got int32) {
		m, ok := parseResponseIDMismatch(msg)
		if ok {
			if m.Expected < 0 {
				t.Fatalf("negative expected id %d from %q", m.Expected, msg)
			}
			id := invalidResponseIDExpect + strconv.Itoa(int(m.Expected))
			if !strings.Contains(msg, id+invalidResponseIDGot) && !strings.Contains(msg, id+","+invalidResponseIDGot) {
				t.Fatalf("expected id %d is not in %q as Java writes it", m.Expected, msg)
			}
		} else if m != (responseIDMismatch{}) {
			t.Fatalf("a refused message returned %+v", m)
		}
		if expected < 0 {
			return
		}
		for _, hadoop31 := range []bool{false, true} {
			text := fakeyarn.InvalidResponseIDMessage(fakeyarn.AttemptID, expected, got, hadoop31) + stackLine
			if m, ok := parseResponseIDMismatch(text); !ok || m.Expected != expected || m.Attempt != fakeyarn.Attempt {
				t.Fatalf("%q read as %+v, %v", text, m, ok)
			}
		}
	})
}
