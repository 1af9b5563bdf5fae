package redact_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/redact"
)

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"GET http://alice:s3cret@rm:8088/ws/v1/cluster", "GET http://REDACTED@rm:8088/ws/v1/cluster"},
		{"http://rm:8088/x?delegation=HAAEZmxpbms&user.name=bob", "http://rm:8088/x?delegation=REDACTED&user.name=bob"},
		{"token=abc password: hunter2 secret_key=k1 signature=\"s g\"", "token=REDACTED password: REDACTED secret_key=REDACTED signature=REDACTED"},
		{`{"password":"pw1","user":"u"}`, `{"password":REDACTED,"user":"u"}`},
		{`{"hadoop.auth": "u=alice&t=kerberos&s=xyz"}`, `{"hadoop.auth": REDACTED}`},
		{`cookie hadoop.auth=u=alice&t=kerberos&s=xyz; Path=/`, `cookie hadoop.auth=REDACTED; Path=/`},
		{"Authorization: Negotiate YIIHfwYJKoZIhvcSAQICAQBuggdu\nnext", "Authorization: REDACTED\nnext"},
		{"Set-Cookie: hadoop.auth=\"u=a&s=x\"; Path=/", "Set-Cookie: REDACTED"},
		{"sent Bearer eyJhbGciOiJIUzI1NiJ9.e30.x to rm", "sent Bearer REDACTED to rm"},
		{"key -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- end", "key REDACTED end"},
		{"keytab: \x05\x02\x00\x00\x00G\x00\x01\x00\vEXAMPLE.COM\x00\x05alice\x00\x00\x00\x01eS\xf1 's length is less than 77",
			"keytab: [REDACTED binary] 's length is less than 77"},
		{"plain text, nothing to hide: user.name=bob", "plain text, nothing to hide: user.name=bob"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, redact.Text(tc.in), "%q", tc.in)
	}
}

func TestURL(t *testing.T) {
	u, err := url.Parse("https://alice:pw@rm.example.com:8090/ws?token=t1&a=b#frag")
	require.NoError(t, err)
	assert.Equal(t, "https://rm.example.com:8090/ws?a=b&token=REDACTED#frag", redact.URL(u))
	assert.Equal(t, "http://h:1", redact.URLString("http://bob:x@h:1"))
	assert.Equal(t, "", redact.URL(nil))
}

func TestErrorKeepsTheChain(t *testing.T) {
	base := fmt.Errorf("open http://a:pw@h/: %w", fs.ErrNotExist)
	err := redact.Error(base)
	assert.Equal(t, "open http://REDACTED@h/: file does not exist", err.Error())
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var pe interface{ Unwrap() error }
	assert.True(t, errors.As(err, &pe))
	assert.Nil(t, redact.Error(nil))
	clean := errors.New("clean")
	assert.Same(t, clean, redact.Error(clean), "a clean error is returned as it is")
}

type stringer struct{}

func (stringer) String() string { return "cookie: a=b" }

func TestHandler(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var h slog.Handler = slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			if format == "json" {
				h = slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			}
			l := slog.New(redact.Handler(h)).With("url", "http://u:CANARY1@h/")
			l.Debug("GET http://h/?delegation=CANARY2", "password", "CANARY3", "err", errors.New("token=CANARY4"),
				"s", stringer{}, slog.Group("g", "authorization", "CANARY5", "x", "sig=CANARY6"), "raw", []byte("secret=CANARY7"))
			out := buf.String()
			for i := 1; i <= 7; i++ {
				assert.NotContains(t, out, fmt.Sprintf("CANARY%d", i))
			}
			assert.Contains(t, out, "REDACTED")
		})
	}
}

func FuzzText(f *testing.F) {
	f.Add("http://a:b@h/?token=x Authorization: Negotiate abcdefgh12345678")
	f.Add("\x05\x02\x00\x00alice\x00\xff")
	f.Add("password=\"x y\" -----BEGIN PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, s string) {
		out := redact.Text(s)
		assert.Equal(t, out, redact.Text(out), "redacting twice changes nothing more")
	})
}
