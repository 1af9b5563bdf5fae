package yarn

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"
)

// benchNodes is about 26 MB of /nodes-like JSON.
func benchNodes() []byte {
	node := []byte(`{"id":"host-x:45454","rack":"/default-rack","state":"RUNNING","nodeHostName":"host-x","availMemoryMB":65536,"usedVirtualCores":0,"healthReport":"","resources":[1,2,3.5e3]},`)
	return bytes.Repeat(node, 26_000_000/len(node))
}

// BenchmarkLimitBody reads a 26 MB answer through limitBody: plain (the body cap and the JSON guard)
// and gzip-encoded (plus decompression).
func BenchmarkLimitBody(b *testing.B) {
	data := benchNodes()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(data)
	_ = zw.Close()
	for _, tc := range []struct {
		name, enc string
		body      []byte
	}{{"plain", "", data}, {"gzip", "gzip", gz.Bytes()}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				h := http.Header{"Content-Type": {"application/json"}}
				if tc.enc != "" {
					h.Set("Content-Encoding", tc.enc)
				}
				r := limitBody(http.MethodGet, pathNodes, h, io.NopCloser(bytes.NewReader(tc.body)))
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
