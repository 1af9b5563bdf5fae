// Package redact is yarn-er's one redaction layer: every error and log line that may quote a URL, an
// HTTP header, a library's message or a server's answer passes through it before anyone sees it.
//
// It replaces with REDACTED: the user info of URLs (scheme://user:password@host), the values of query
// parameters and key=value pairs named like credentials (delegation, token, password, secret,
// signature, sig, hadoop.auth, ...), the values of Authorization, Proxy-Authorization, Cookie,
// Set-Cookie and WWW-Authenticate headers, Negotiate/Bearer/Basic credentials, PEM private keys, and
// runs of binary bytes (what a parser of a keytab, a credential cache, a token file or a SASL
// exchange quotes when it fails).
package redact

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces a secret.
const Redacted = "REDACTED"

// Param reports whether a query parameter or key=value key may carry a credential: Hadoop's
// delegation= (RM and WebHDFS delegation tokens), hadoop.auth, and anything named like a token,
// password, secret, signature, credential or key.
func Param(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "delegation", "sig", "hadoop.auth", "auth", "authorization", "cookie", "set-cookie", "passwd", "pwd", "apikey", "api_key", "access_key", "secret_key":
		return true
	}
	for _, w := range []string{"token", "password", "secret", "signature", "credential", "passphrase"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// URL renders u without user info (a user name alone may be a token, so all of it goes) and with the
// values of credential-like query parameters replaced.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q, err := url.ParseQuery(c.RawQuery)
		if err != nil {
			c.RawQuery = Text(c.RawQuery)
		} else {
			changed := false
			for k, vs := range q {
				if Param(k) {
					for i := range vs {
						vs[i] = Redacted
					}
					changed = true
				}
			}
			if changed {
				c.RawQuery = q.Encode()
			}
		}
	}
	if c.Fragment != "" {
		c.Fragment = Text(c.Fragment)
	}
	return c.String()
}

// URLString is URL for a URL in text form; text that does not parse as a URL goes through Text.
func URLString(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" && u.Host == "" && u.User == nil {
		return Text(s)
	}
	return URL(u)
}

var (
	// userInfo finds scheme://user[:password]@ in free text.
	userInfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@"'<>]+@`)
	// keyValue finds credential-like key=value (and key: value in JSON-ish text) pairs.
	keyValue = regexp.MustCompile(`(?i)((?:[a-z0-9_.-]*(?:token|password|passwd|secret|signature|credential|passphrase)[a-z0-9_.-]*|delegation|sig)"?\s*[=:]\s*)("[^"]*"[^&\s;,"'<>(){}\[\]]*|[^&\s;,"'<>(){}\[\]]+)`)
	// hadoopAuth finds the hadoop.auth cookie, whose value holds '&' (u=...&t=...&s=<signature>).
	hadoopAuth = regexp.MustCompile(`(?i)(hadoop\.auth"?\s*[=:]\s*)("[^"]*"[^\s;,"'<>(){}\[\]]*|[^\s;,"'<>(){}\[\]]+)`)
	// header finds credential headers in free text (a dumped request, a library message).
	header = regexp.MustCompile(`(?i)((?:authorization|proxy-authorization|cookie|set-cookie|www-authenticate)\s*:\s*)([^\r\n]+)`)
	// scheme finds HTTP authentication credentials.
	scheme = regexp.MustCompile(`(?i)(\b(?:Negotiate|Bearer|Basic|Digest)\s+)([A-Za-z0-9+/=._~-]{8,})`)
	// pemKey finds PEM private keys.
	pemKey = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`)
)

// Text replaces credential-like content in s (see the package comment).
func Text(s string) string {
	if s == "" {
		return s
	}
	s = binary(s)
	s = pemKey.ReplaceAllString(s, Redacted)
	s = userInfo.ReplaceAllString(s, "${1}"+Redacted+"@")
	s = header.ReplaceAllString(s, "${1}"+Redacted)
	s = scheme.ReplaceAllString(s, "${1}"+Redacted)
	s = hadoopAuth.ReplaceAllString(s, "${1}"+Redacted)
	s = keyValue.ReplaceAllString(s, "${1}"+Redacted)
	return s
}

// binary replaces every run of bytes that are not printable text (invalid UTF-8, control characters
// other than tab and newline), together with printable stretches shorter than 24 bytes between such
// bytes (a principal, a realm, a key inside a keytab's bytes), by one "[REDACTED binary]": the shape of
// a keytab's or a ticket's bytes quoted by a parser ("\x05\x02\x00\x00\x00G...alice...").
func binary(s string) string {
	const gap = 24
	type span struct{ start, end int }
	var spans []span
	cur := span{-1, -1}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || r != '\t' && r != '\n' && r != '\r' && unicode.IsControl(r) {
			switch {
			case cur.start >= 0 && i-cur.end < gap:
				cur.end = i + size
			default:
				if cur.start >= 0 {
					spans = append(spans, cur)
				}
				cur = span{i, i + size}
			}
		}
		i += size
	}
	if cur.start < 0 {
		return s
	}
	if len(s)-cur.end < gap {
		cur.end = len(s)
	}
	spans = append(spans, cur)
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp.start])
		b.WriteString("[" + Redacted + " binary]")
		prev = sp.end
	}
	b.WriteString(s[prev:])
	return b.String()
}

// Error returns err with its message redacted; errors.Is and errors.As still see err's chain. It
// returns nil for nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := Text(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Is lets errors.Is(Error(err), target) see through without exposing err's message.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }
