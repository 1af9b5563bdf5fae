package yarn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPKI is a CA that issues server and client certificates.
type testPKI struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	serial int64
}

func newTestPKI(t *testing.T) *testPKI {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "yarn-er test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testPKI{caCert: cert, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), serial: 1}
}

// issue returns a PEM certificate and key.
func (p *testPKI) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

func TestTLSCustomCAAndClientCertificate(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	srvCert, srvKey := pki.issue(t, "rm", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := pki.issue(t, "flink", x509.ExtKeyUsageClientAuth)
	pair, err := tls.X509KeyPair(srvCert, srvKey)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(pki.caCert)

	info := loadCapture(t, "info.json").body
	// A TLS RM with the test PKI: yarnfake serves plain HTTP only.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(info)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below are expected
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	caFile := writeFile(t, dir, "ca.pem", pki.caPEM)
	certFile := writeFile(t, dir, "client.pem", cliCert)
	keyFile := writeFile(t, dir, "client-key.pem", cliKey)
	retry := RetryPolicy{MaxAttempts: 1}

	c := testClient(t, Options{TLS: TLSOptions{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}, Retry: retry}, srv.URL)
	got, err := c.ClusterInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "ACTIVE", got.HAState)

	// Without the CA the server is not trusted.
	c = testClient(t, Options{TLS: TLSOptions{CertFile: certFile, KeyFile: keyFile}, Retry: retry}, srv.URL)
	_, err = c.ClusterInfo(context.Background())
	var uaErr x509.UnknownAuthorityError
	require.ErrorAs(t, err, &uaErr)

	// Without a client certificate the server refuses the handshake.
	c = testClient(t, Options{TLS: TLSOptions{CAFile: caFile}, Retry: retry}, srv.URL)
	_, err = c.ClusterInfo(context.Background())
	require.Error(t, err)

	// InsecureSkipVerify skips the server check (the client certificate is still needed).
	c = testClient(t, Options{TLS: TLSOptions{InsecureSkipVerify: true, CertFile: certFile, KeyFile: keyFile}, Retry: retry}, srv.URL)
	_, err = c.ClusterInfo(context.Background())
	require.NoError(t, err)
}

func TestTLSOptionErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := writeFile(t, dir, "ca.txt", []byte("not a certificate"))
	for _, tc := range []struct {
		opts TLSOptions
		want string
	}{
		{TLSOptions{CAFile: filepath.Join(dir, "missing.pem")}, "missing.pem"},
		{TLSOptions{CAFile: notPEM}, "no PEM certificate"},
		{TLSOptions{CertFile: notPEM}, "both the certificate and the key"},
		{TLSOptions{CertFile: notPEM, KeyFile: notPEM}, "client certificate"},
	} {
		_, err := NewClient(Options{Addresses: []string{"https://rm:8090"}, User: "u", TLS: tc.opts})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestTLSConfig: the client hands out its TLS configuration (for WebHDFS under
// dfs.http.policy=HTTPS_ONLY): the CA of TLSOptions.CAFile trusted, the client certificate, the
// skip; a copy each time, which the caller may change without touching the client's.
func TestTLSConfig(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	cliCert, cliKey := pki.issue(t, "flink", x509.ExtKeyUsageClientAuth)
	srvCert, _ := pki.issue(t, "localhost", x509.ExtKeyUsageServerAuth)
	block, _ := pem.Decode(srvCert)
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	opts := TLSOptions{CAFile: writeFile(t, dir, "ca.pem", pki.caPEM),
		CertFile: writeFile(t, dir, "c.pem", cliCert), KeyFile: writeFile(t, dir, "k.pem", cliKey)}
	c, err := NewClient(Options{Addresses: []string{"https://rm:8090"}, User: "u", TLS: opts})
	require.NoError(t, err)
	cfg := c.TLSConfig()
	require.NotNil(t, cfg.RootCAs)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: cfg.RootCAs, DNSName: "localhost"})
	assert.NoError(t, err, "a certificate of the --tls-ca CA verifies")
	assert.Len(t, cfg.Certificates, 1)
	assert.False(t, cfg.InsecureSkipVerify)
	cfg.InsecureSkipVerify = true
	assert.False(t, c.TLSConfig().InsecureSkipVerify, "a copy")

	c, err = NewClient(Options{Addresses: []string{"http://rm:8088"}, User: "u", TLS: TLSOptions{InsecureSkipVerify: true}})
	require.NoError(t, err)
	cfg = c.TLSConfig()
	assert.True(t, cfg.InsecureSkipVerify)
	assert.Nil(t, cfg.RootCAs, "the system's CAs")
}
