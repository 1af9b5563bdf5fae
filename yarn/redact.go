package yarn

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/yarn-er/yarn-er/internal/redact"
)

// redacted replaces secrets in logs and errors.
const redacted = redact.Redacted

// secretParam reports whether a query parameter may carry a credential (redact.Param).
func secretParam(name string) bool { return redact.Param(name) }

// redactURL renders u without user info and with credential-like query values replaced (redact.URL).
func redactURL(u *url.URL) string { return redact.URL(u) }

// redactText replaces credential-like values in s (redact.Text): this package quotes libraries and
// RM answers only through it.
func redactText(s string) string { return redact.Text(s) }

// restyLogger adapts resty's logger to slog, scrubbing every message.
type restyLogger struct{ l *slog.Logger }

func (r restyLogger) Errorf(format string, v ...any) {
	r.l.Error(redactText(fmt.Sprintf(format, v...)), "component", "resty")
}
func (r restyLogger) Warnf(format string, v ...any) {
	r.l.Warn(redactText(fmt.Sprintf(format, v...)), "component", "resty")
}
func (r restyLogger) Debugf(format string, v ...any) {
	r.l.Debug(redactText(fmt.Sprintf(format, v...)), "component", "resty")
}
