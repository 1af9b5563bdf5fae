package yarn

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/yarn-er/yarn-er/internal/boundedfile"
)

// This file is the package's only contact with resty: a move to resty v3 touches it alone.

// rawResponse is an HTTP answer whose body the caller reads and closes.
type rawResponse struct {
	StatusCode int
	Header     http.Header
	Body       io.ReadCloser
}

// httpSender sends one HTTP request; it never follows redirects (a standby's 307 is handled by
// the client) and never retries (the client's loop does, knowing which requests are safe).
type httpSender struct {
	rc *resty.Client
}

func newHTTPSender(rt http.RoundTripper, jar http.CookieJar, logger *slog.Logger) *httpSender {
	hc := &http.Client{
		Transport: rt,
		Jar:       jar,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	rc := resty.NewWithClient(hc).
		SetLogger(restyLogger{l: logger}).
		SetRetryCount(0).
		SetDisableWarn(true)
	return &httpSender{rc: rc}
}

// send performs one request. body, when not nil, is sent as JSON.
func (s *httpSender) send(ctx context.Context, method string, u *url.URL, header http.Header, body []byte) (*rawResponse, error) {
	r := s.rc.R().SetContext(ctx).SetDoNotParseResponse(true)
	// Asked for explicitly, gzip is not decompressed by net/http but by limitBody, which caps the
	// compressed and the decompressed size separately.
	r.Header.Set("Accept-Encoding", "gzip")
	for k, vs := range header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	if body != nil {
		r.SetHeader("Content-Type", "application/json")
		r.SetBody(bytes.NewReader(body))
	}
	resp, err := r.Execute(method, u.String())
	if err != nil {
		if resp != nil && resp.RawResponse != nil && resp.RawResponse.Body != nil {
			_ = resp.RawResponse.Body.Close()
		}
		return nil, err
	}
	raw := resp.RawResponse
	b := limitBody(method, u.EscapedPath(), raw.Header, raw.Body)
	if raw.StatusCode < 200 || raw.StatusCode > 299 {
		// Error answers are quoted in errors and logs: they are redacted before anyone reads them.
		b = redactedErrorBody(raw.Header.Get("Content-Type"), b)
	}
	return &rawResponse{StatusCode: raw.StatusCode, Header: raw.Header, Body: b}, nil
}

// redactedErrorBody reads an error answer (at most maxErrorBody bytes, all its readers use) and
// returns it redacted: a JSON answer value by value (so that it stays JSON), anything else as text.
func redactedErrorBody(contentType string, body io.ReadCloser) io.ReadCloser {
	data, err := io.ReadAll(io.LimitReader(body, maxErrorBody))
	_ = body.Close()
	if err != nil && len(data) == 0 {
		return failingBody{err: err, Closer: io.NopCloser(nil)}
	}
	return io.NopCloser(bytes.NewReader(redactJSONOrText(contentType, data)))
}

// redactJSONOrText redacts a JSON document's strings (and the values of keys named like credentials),
// or, when data is not JSON, its text.
func redactJSONOrText(contentType string, data []byte) []byte {
	if strings.Contains(strings.ToLower(contentType), "json") || json.Valid(data) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if dec.Decode(&v) == nil {
			if out, err := json.Marshal(redactJSONValue("", v)); err == nil {
				return out
			}
		}
	}
	return []byte(redactText(string(data)))
}

func redactJSONValue(key string, v any) any {
	if key != "" && secretParam(key) {
		return redacted
	}
	switch x := v.(type) {
	case string:
		return redactText(x)
	case map[string]any:
		for k, e := range x {
			x[k] = redactJSONValue(k, e)
		}
	case []any:
		for i, e := range x {
			x[i] = redactJSONValue("", e)
		}
	}
	return v
}

// newBaseTransport is the HTTP transport with the TLS options applied.
func newBaseTransport(cfg *tls.Config) http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true // limitBody decompresses, within limits
	tr.MaxResponseHeaderBytes = 256 << 10
	// Hadoop 3.2's web server closes keep-alive connections idle for 1 s
	// (hadoop.http.idle_timeout.ms; 60 s from 3.3). net/http does not resend a PUT or POST that
	// meets such a close, so a kill or a submission after a pause could fail with EOF: drop idle
	// connections before that server does (docs/hadoop-versions.md).
	tr.IdleConnTimeout = 900 * time.Millisecond
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSClientConfig = cfg.Clone()
	return tr
}

// readUserFile reads a file the user named (TLS material, keytab, credential cache, krb5.conf):
// a regular file within max bytes, never blocking on a FIFO; the error names the path and never
// quotes the file's bytes.
func readUserFile(path string, max int64) ([]byte, error) {
	data, err := boundedfile.Read(path, max)
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return data, err
}

// maxTLSFile bounds a CA bundle, certificate or key file (a system CA bundle is about 200 KB).
const maxTLSFile = 8 << 20

// tlsConfig builds the client TLS configuration.
func tlsConfig(o TLSOptions) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // explicit, documented option
	if o.CAFile != "" {
		pem, err := readUserFile(o.CAFile, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s: no PEM certificate found (fix: give a PEM bundle, -----BEGIN CERTIFICATE-----)", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case o.CertFile != "" && o.KeyFile != "":
		certPEM, err := readUserFile(o.CertFile, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		keyPEM, err := readUserFile(o.KeyFile, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client key: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %s / key %s: %s", o.CertFile, o.KeyFile, redactText(err.Error()))
		}
		cfg.Certificates = []tls.Certificate{cert}
	case o.CertFile != "" || o.KeyFile != "":
		return nil, fmt.Errorf("TLS client certificate: give both the certificate and the key file")
	}
	return cfg, nil
}
