package cmdutil_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/records"
)

func TestErrorText(t *testing.T) {
	remote := &records.RemoteError{StatusCode: 404, Exception: "NotFoundException", Message: "app " + cmdtest.Hostile + " not found"}
	multi := errors.New("line one\nline two\r")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"plain", errors.New("no such application"), "no such application"},
		{"the RM's message on one line, bidi and newline visible, controls redacted as binary",
			fmt.Errorf("app status: %w", remote),
			`app status: 404 Not Found: NotFoundException: app evil[REDACTED binary][2J\u202e\nyarn-er: application succeeded not found`},
		{"a bidi override alone", errors.New("queue a\u202eb"), `queue a\u202eb`},
		{"a C1 control is redacted as binary", errors.New("a\u009b2J, and the rest of the message"), `a[REDACTED binary]2J, and the rest of the message`},
		{"joined errors keep their lines", errors.Join(errors.New("first"), multi, errors.New("third")),
			"first\n" + `line one\nline two\r` + "\nthird"},
		{"a wrapped join keeps its lines", fmt.Errorf("translate: %w", errors.Join(errors.New("a.conf:1: bad"), errors.New("a.conf:2: bad"))),
			"translate: a.conf:1: bad\na.conf:2: bad"},
		{"a join beside a sentinel, as the unreachable RM's", fmt.Errorf("%w: %w", errors.New("unreachable"), errors.Join(errors.New("rm1: refused"), multi)),
			"unreachable: rm1: refused\n" + `line one\nline two\r`},
		{"a join inside a join", errors.Join(errors.New("x"), fmt.Errorf("y: %w", errors.Join(errors.New("y1"), errors.New("y2\x1b[2J")))),
			"x\ny: y1\ny2[REDACTED binary]"},
		{"text after a wrapped join", fmt.Errorf("a: %w (fix b)", errors.Join(errors.New("1"), errors.New("2\n3"))),
			"a: 1\n" + `2\n3 (fix b)`},
		{"redaction on every line", errors.Join(errors.New("GET http://u:secret@rm:8088/ws"), errors.New("token=abc")),
			"GET http://REDACTED@rm:8088/ws\ntoken=REDACTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cmdutil.ErrorText(tc.err)
			assert.Equal(t, tc.want, got)
			cmdtest.AssertTerminalSafe(t, got)
		})
	}
}

// TestReportErrorEscapesTheMessage: the one line yarn-er prints for an error quoting the cluster
// holds no terminal control and starts no line of its own; yarn-er's own lines (the usage hint,
// the timeout hint) stay as they are.
func TestReportErrorEscapesTheMessage(t *testing.T) {
	f, _, errOut := cmdtest.Buffers(cmdutil.Env{})
	root := &cobra.Command{Use: "yarn-er"}
	code := f.ReportError(root, nil, fmt.Errorf("app status: %w", &records.RemoteError{StatusCode: 400, Exception: "BadRequestException", Message: cmdtest.Hostile}))
	assert.Equal(t, cmdutil.ExitError, code)
	assert.Equal(t, "yarn-er: app status: 400 Bad Request: BadRequestException: "+
		`evil[REDACTED binary][2J\u202e\nyarn-er: application succeeded`+"\n", errOut.String())
	cmdtest.AssertTerminalSafe(t, errOut.String())

	errOut.Reset()
	code = f.ReportError(root, nil, cmdutil.Usagef("--queue %q: no such queue", "a\u202eb\nc"))
	assert.Equal(t, cmdutil.ExitUsage, code)
	assert.Equal(t, `yarn-er: --queue "a\u202eb\nc": no such queue`+"\nRun 'yarn-er --help' for usage.\n", errOut.String())
}
