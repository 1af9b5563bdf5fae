package yarn

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
)

// FuzzLimitBody feeds any answer (plain or gzip-encoded, JSON or not, to any endpoint class) through
// limitBody: it never panics, never yields more than the endpoint's limit, and fails only with a
// *ResponseLimitError or an ErrUnexpectedResponse.
func FuzzLimitBody(f *testing.F) {
	f.Add([]byte(`{"clusterInfo":{"id":1,"haState":"ACTIVE"}}`), false, "/ws/v1/cluster/info")
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`), true, "/ws/v1/cluster/nodes")
	f.Add([]byte(`{"a":"\"\\\"","n":-1.5e+300}`), true, "/conf")
	f.Fuzz(func(t *testing.T, data []byte, gz bool, path string) {
		h := http.Header{"Content-Type": {"application/json"}}
		body := data
		if gz {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(data)
			_ = zw.Close()
			body = b.Bytes()
			h.Set("Content-Encoding", "gzip")
		}
		r := limitBody(http.MethodGet, path, h, io.NopCloser(bytes.NewReader(body)))
		out, err := io.ReadAll(r)
		limit, _ := bodyLimit(path)
		if int64(len(out)) > limit {
			t.Fatalf("read %d bytes past the limit %d", len(out), limit)
		}
		if err != nil {
			var le *ResponseLimitError
			if !errors.As(err, &le) && !errors.Is(err, ErrUnexpectedResponse) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if errors.As(err, &le) && le.What != "JSON nesting" && le.What != "JSON number" && le.What != "JSON string" {
				t.Fatalf("a small answer hit the %s limit", le.What)
			}
			return
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("the body changed on the way: %q -> %q", data, out)
		}
	})
}

// FuzzRedactErrorBody: redacting an error answer never panics and keeps a JSON answer JSON.
func FuzzRedactErrorBody(f *testing.F) {
	f.Add("application/json", []byte(`{"RemoteException":{"message":"token=abc","password":"x"}}`))
	f.Add("text/html", []byte(`<pre>Authorization: Negotiate abcdefgh12345678</pre>`))
	f.Add("", []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, contentType string, data []byte) {
		out := redactJSONOrText(contentType, data)
		if json.Valid(data) && !json.Valid(out) {
			t.Fatalf("a JSON answer became %q", out)
		}
	})
}
