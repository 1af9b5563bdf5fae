package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns their paths and a pool
// trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "serve"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// With --listen-tls-cert/--listen-tls-key serve answers HTTPS only.
func TestServeTLS(t *testing.T) {
	rm := yarnfake.New(t, yarnfake.WithVersion("3.4.2"))
	certFile, keyFile, pool := selfSigned(t)
	f, _, errOut := cmdtest.Buffers(cmdutil.Env{})
	cmd := NewCmdServe(f, func(o *Options) error {
		addrs := make(chan string, 1)
		o.ready = func(a string) { addrs <- a }
		ctx, cancel := context.WithCancel(o.Ctx)
		o.Ctx = ctx
		done := make(chan error, 1)
		go func() { done <- serveRun(o) }()
		addr := <-addrs
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		require.Eventually(t, func() bool {
			resp, err := client.Get("https://" + addr + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 10*time.Second, 20*time.Millisecond)
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP is refused")
			resp.Body.Close()
		}
		cancel()
		return <-done
	}, nil)
	require.NoError(t, cmdtest.Execute(cmd, "--rm", rm.URL(), "--user", "yarner", "--listen", "127.0.0.1:0",
		"--listen-tls-cert", certFile, "--listen-tls-key", keyFile, "--interval", "50ms"))
	assert.Contains(t, errOut.String(), "listening on https://")
}
