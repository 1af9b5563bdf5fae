package yarn

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces secrets in logs and errors.
const redacted = "REDACTED"

// secretParam reports whether a query parameter may carry a credential: Hadoop's delegation=
// (WebHDFS/RM delegation tokens), anything named like a token, password, secret or signature.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	return n == "delegation" || strings.Contains(n, "token") || strings.Contains(n, "password") ||
		strings.Contains(n, "secret") || strings.Contains(n, "signature") || n == "sig"
}

// redactURL renders u without user info and with credential-like query values replaced.
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q, err := url.ParseQuery(c.RawQuery)
		if err != nil {
			c.RawQuery = redactText(c.RawQuery)
		} else {
			changed := false
			for k, vs := range q {
				if secretParam(k) {
					for i := range vs {
						vs[i] = redacted
					}
					changed = true
				}
			}
			if changed {
				c.RawQuery = q.Encode()
			}
		}
	}
	return c.String()
}

// secretInText finds credential-like key=value pairs and Authorization/cookie values in free text
// (messages from libraries, which may quote URLs or headers).
var secretInText = regexp.MustCompile(`(?i)((?:delegation|[a-z_.-]*token[a-z_.-]*|[a-z_.-]*password[a-z_.-]*|[a-z_.-]*secret[a-z_.-]*|hadoop\.auth)=)("[^"]*"|[^&\s;,"]+)|((?:authorization|proxy-authorization|cookie|set-cookie|www-authenticate)\s*:\s*)([^\r\n]+)|(\b(?:Negotiate|Bearer|Basic)\s+)([A-Za-z0-9+/=._-]{8,})`)

// redactText replaces credential-like values in s.
func redactText(s string) string {
	return secretInText.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretInText.FindStringSubmatch(m)
		switch {
		case sub[1] != "":
			return sub[1] + redacted
		case sub[3] != "":
			return sub[3] + redacted
		case sub[5] != "":
			return sub[5] + redacted
		}
		return redacted
	})
}

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

// redactingWriter turns the lines a library writes to a *log.Logger into scrubbed debug records.
type redactingWriter struct {
	logger    *slog.Logger
	component string
}

func (w redactingWriter) Write(p []byte) (int, error) {
	w.logger.Debug(redactText(strings.TrimRight(string(p), "\n")), "component", w.component)
	return len(p), nil
}
