package yarn

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/go-resty/resty/v2"
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
	return &rawResponse{StatusCode: raw.StatusCode, Header: raw.Header, Body: b}, nil
}

// newBaseTransport is the HTTP transport with the TLS options applied.
func newBaseTransport(o TLSOptions) (http.RoundTripper, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true // limitBody decompresses, within limits
	tr.MaxResponseHeaderBytes = 256 << 10
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	cfg, err := tlsConfig(o)
	if err != nil {
		return nil, err
	}
	tr.TLSClientConfig = cfg
	return tr, nil
}

// tlsConfig builds the client TLS configuration.
func tlsConfig(o TLSOptions) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // explicit, documented option
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
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
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %s / key %s: %w", o.CertFile, o.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case o.CertFile != "" || o.KeyFile != "":
		return nil, fmt.Errorf("TLS client certificate: give both the certificate and the key file")
	}
	return cfg, nil
}
