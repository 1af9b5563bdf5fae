package webhdfs_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/yarn-er/yarn-er/internal/webhdfs"
)

// FuzzAnswers feeds any NameNode answer (status and body) to the calls that decode one: no
// panic, no hang, an error or a result, and a read never returns more than was asked.
func FuzzAnswers(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{200, `{"FileStatus":{"type":"DIRECTORY","length":0,"owner":"bob","permission":"700","modificationTime":1}}`},
		{200, `{"FileStatuses":{"FileStatus":[{"pathSuffix":"a","type":"FILE","length":3}]}}`},
		{200, `{"boolean":true}`},
		{403, `{"RemoteException":{"exception":"SecurityException","message":"User: a is not allowed to impersonate b"}}`},
		{404, `{"RemoteException":{"exception":"FileNotFoundException","message":"File does not exist: /x"}}`},
		{403, `{"RemoteException":{"exception":"StandbyException","message":"Operation category READ is not supported in state standby"}}`},
		{200, `{"FileStatus":null}`},
		{500, `not json`},
		{200, `{"FileStatuses":{"FileStatus":[` + strings.Repeat(`{},`, 100) + `{}]}}`},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			status = 200
		}
		rt := roundTripper(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
		})
		c, err := webhdfs.New(webhdfs.Options{Bases: []string{"http://nn:9870"}, User: "alice", DoAs: "bob", Base: rt})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, _ = c.Stat(ctx, "/a")
		_, _ = c.List(ctx, "/a")
		_, _ = c.Delete(ctx, "/a", true)
		_ = c.Mkdirs(ctx, "/a", 0o700)
		p := make([]byte, 4)
		if n, _ := c.ReadAt(ctx, "/a", p, 0); n > len(p) {
			t.Fatalf("read %d bytes into %d", n, len(p))
		}
	})
}
