// Package webhdfs is the small WebHDFS client yarn-er stages through when it acts as a proxy user
// (submit --do-as), and reads aggregated logs with where colinmarc/hdfs cannot (a DataNode
// security layer) or as a proxy user: the NameNode's REST API (/webhdfs/v1) with the login's
// authentication (SPNEGO through Options.Authenticate, or Hadoop's pseudo authentication
// user.name on a cluster without security) and doas=<user>, which the NameNode allows only with
// hadoop.proxyuser.<login>.* rights. What it creates belongs to the proxy user. A CREATE is the NameNode's redirect to a DataNode,
// which writes the blocks with a delegation token of the proxy user's that the NameNode puts into
// the redirect's URL: that URL is never logged nor put into an error.
//
// Under dfs.http.policy=HTTPS_ONLY the NameNodes and the DataNodes they redirect to serve https
// only; both hops verify the server's certificate with Options.TLS (the CAs yarn-er trusts for the
// ResourceManager too: --tls-ca), and a certificate that does not verify is ErrCertificate, whose
// message names the fix.
//
// github.com/colinmarc/hdfs, staging's HDFS client otherwise, cannot act as another user under
// Kerberos: its connection context always names the login's principal.
package webhdfs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrProxyUserRefused: the NameNode refused to let the login act as Options.DoAs (no
// hadoop.proxyuser.<login>.users/groups/hosts rights for that user from this host).
var ErrProxyUserRefused = errors.New("the NameNode refused the proxy user")

// maxErrorBody bounds the error answer read for its RemoteException; maxJSONBody a success's JSON.
const (
	maxErrorBody = 64 << 10
	maxJSONBody  = 1 << 20
)

// ErrCertificate: the certificate of an https NameNode or DataNode (dfs.http.policy=HTTPS_ONLY)
// did not verify: signed by a CA that is not trusted, not for the name the server was reached by,
// expired. Retrying cannot help; the error's message says what to give.
var ErrCertificate = errors.New("the server's certificate is not trusted")

// Options configure a Client.
type Options struct {
	// Bases are the NameNodes' web endpoints, http(s)://host:port, tried in order (a standby or
	// an unreachable one is skipped). Required.
	Bases []string
	// Authenticate wraps the transport to the NameNodes in the login's authentication (SPNEGO:
	// yarn.SPNEGOTransport); nil: Hadoop's pseudo authentication (User as user.name). The
	// requests to the DataNodes go without it: their redirect carries a token.
	Authenticate func(http.RoundTripper) http.RoundTripper
	// TLS configures the https connections to the NameNodes and to the DataNodes they redirect
	// to (dfs.http.policy=HTTPS_ONLY): the CAs trusted (RootCAs; nil: the system's), a client
	// certificate, InsecureSkipVerify. It is cloned. nil: Go's defaults (the system's CAs).
	TLS *tls.Config
	// DialTimeout bounds each connection to a NameNode or a DataNode (default 20s).
	DialTimeout time.Duration
	// Base, when set, replaces the transport made from TLS and DialTimeout, for both hops
	// (tests: fault injection).
	Base http.RoundTripper
	// User is the login's user name sent as user.name when Authenticate is nil (a cluster
	// without security).
	User string
	// DoAs is the user to act as (doas=); "" acts as the login.
	DoAs string
	// Timeout bounds each request to a NameNode, and each read from a DataNode (default 1
	// minute). Writes to a DataNode are bounded by the writer's deadline and the context.
	Timeout time.Duration
	// Logger receives debug records (never a redirect's URL). Default: discard.
	Logger *slog.Logger
}

// defaultDialTimeout is Options.DialTimeout's default.
const defaultDialTimeout = 20 * time.Second

// Client is a WebHDFS client of one HDFS.
type Client struct {
	opts Options
	nn   *http.Client
	dn   *http.Client
	log  *slog.Logger
}

// New returns a Client; it connects on the first request.
func New(opts Options) (*Client, error) {
	if len(opts.Bases) == 0 {
		return nil, errors.New("webhdfs: no NameNode web address")
	}
	for _, b := range opts.Bases {
		if u, err := url.Parse(b); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("webhdfs: NameNode web address %q: want http(s)://host:port", b)
		}
	}
	if opts.Authenticate == nil && opts.User == "" {
		return nil, errors.New("webhdfs: no authentication: neither the login's (SPNEGO) nor a user name")
	}
	if opts.Base == nil {
		opts.Base = newTransport(opts.TLS, opts.DialTimeout)
	}
	nnTransport := opts.Base
	if opts.Authenticate != nil {
		nnTransport = opts.Authenticate(opts.Base)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The NameNode's hadoop.auth cookie spares a SPNEGO negotiation per request; the DataNodes
	// get none (their redirect carries a token).
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("webhdfs: %w", err)
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{
		opts: opts,
		nn:   &http.Client{Transport: nnTransport, Jar: jar, Timeout: opts.Timeout, CheckRedirect: noRedirect},
		dn:   &http.Client{Transport: opts.Base, CheckRedirect: noRedirect},
		log:  log.With("component", "webhdfs"),
	}, nil
}

// newTransport is the transport of both hops: http.DefaultTransport's settings with the TLS
// configuration and the dial timeout.
func newTransport(cfg *tls.Config, dial time.Duration) *http.Transport {
	if dial <= 0 {
		dial = defaultDialTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext
	// Hadoop 3.2's web server closes keep-alive connections idle for 1 s, and net/http does not
	// send a PUT again that meets such a close: drop idle connections first (as package yarn
	// does; docs/hadoop-versions.md).
	tr.IdleConnTimeout = 900 * time.Millisecond
	if cfg != nil {
		tr.TLSClientConfig = cfg.Clone()
	}
	return tr
}

// certificateError returns err as an ErrCertificate with its fix when it is a failed
// verification of the certificate of server ("the NameNode", "the DataNode"); else err.
func certificateError(server string, err error) error {
	var (
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
		fix     string
	)
	switch {
	case errors.As(err, &unknown):
		fix = "trust the CA that signed the certificates of HDFS's web endpoints (dfs.http.policy=HTTPS_ONLY): --tls-ca FILE (PEM) or YARN_ER_TLS_CA, the CAs yarn-er trusts for the ResourceManager too; the cluster's administrators have it (Hadoop's ssl-client.xml trust store holds it)"
	case errors.As(err, &host):
		fix = "reach " + server + " by a name its certificate holds (the NameNode: dfs.namenode.https-address; a DataNode: the name the NameNode redirects to, its registered host name or address), or have the certificate reissued with this name"
	case errors.As(err, &invalid):
		fix = "the certificate is expired, not yet valid or not for a server: have it reissued, and check this host's clock"
	case errors.As(err, &verify):
		fix = "check the certificate of " + server + " and the CA given with --tls-ca or YARN_ER_TLS_CA"
	default:
		return err
	}
	return fmt.Errorf("%w: %w (fix: %s)", ErrCertificate, err, fix)
}

// User returns the user the client acts as: DoAs, else the login's User.
func (c *Client) User() string {
	if c.opts.DoAs != "" {
		return c.opts.DoAs
	}
	return c.opts.User
}

// RemoteError is an error answer of WebHDFS: the HTTP status and Hadoop's RemoteException.
// It matches os.ErrNotExist (FileNotFoundException, 404), os.ErrExist
// (FileAlreadyExistsException), os.ErrPermission (401, 403) and ErrProxyUserRefused (a refused
// doas) with errors.Is.
type RemoteError struct {
	// Op is the WebHDFS operation, Path the HDFS path.
	Op, Path string
	// Status is the HTTP status code.
	Status int
	// Exception and Message are the RemoteException's (empty when the answer had none).
	Exception, Message string
}

func (e *RemoteError) Error() string {
	msg := fmt.Sprintf("WebHDFS %s %s: HTTP %d", e.Op, e.Path, e.Status)
	if e.Exception != "" || e.Message != "" {
		msg += ": " + e.Exception + ": " + e.Message
	}
	return msg
}

// Is matches the os errors and ErrProxyUserRefused.
func (e *RemoteError) Is(target error) bool {
	switch target {
	case os.ErrNotExist:
		return e.Status == http.StatusNotFound || e.Exception == "FileNotFoundException"
	case os.ErrExist:
		return e.Exception == "FileAlreadyExistsException"
	case os.ErrPermission:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrProxyUserRefused:
		return strings.Contains(e.Message, "impersonate")
	}
	return false
}

func (e *RemoteError) standby() bool {
	return strings.HasSuffix(e.Exception, "StandbyException") || strings.Contains(e.Message, "Operation category") && strings.Contains(e.Message, "standby")
}

// FileStatus is what GETFILESTATUS (and each entry of LISTSTATUS) says of a path.
type FileStatus struct {
	// PathSuffix is the entry's name in a listing ("" from GETFILESTATUS).
	PathSuffix string `json:"pathSuffix"`
	// Type is FILE, DIRECTORY or SYMLINK.
	Type string `json:"type"`
	// Length is a file's size in bytes.
	Length int64 `json:"length"`
	// ModificationTime is in milliseconds since the epoch.
	ModificationTime int64 `json:"modificationTime"`
	// Owner and Group own the path.
	Owner string `json:"owner"`
	Group string `json:"group"`
	// Permission is the octal permission, e.g. "700".
	Permission string `json:"permission"`
}

// IsDir reports whether the path is a directory.
func (s FileStatus) IsDir() bool { return s.Type == "DIRECTORY" }

// Stat returns the status of path (GETFILESTATUS).
func (c *Client) Stat(ctx context.Context, path string) (FileStatus, error) {
	var out struct {
		FileStatus *FileStatus `json:"FileStatus"`
	}
	if err := c.call(ctx, http.MethodGet, "GETFILESTATUS", path, nil, &out); err != nil {
		return FileStatus{}, err
	}
	if out.FileStatus == nil {
		return FileStatus{}, fmt.Errorf("WebHDFS GETFILESTATUS %s: no FileStatus in the answer", path)
	}
	return *out.FileStatus, nil
}

// maxListBody bounds a LISTSTATUS answer (about 30,000 entries); a larger directory is an error.
const maxListBody = 8 << 20

// List returns the entries of the directory path (LISTSTATUS), in the NameNode's order; a
// missing directory matches os.ErrNotExist.
func (c *Client) List(ctx context.Context, path string) ([]FileStatus, error) {
	resp, err := c.nameNode(ctx, http.MethodGet, "LISTSTATUS", path, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, remoteError("LISTSTATUS", path, resp)
	}
	var out struct {
		FileStatuses struct {
			FileStatus []FileStatus `json:"FileStatus"`
		} `json:"FileStatuses"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxListBody)).Decode(&out); err != nil {
		return nil, fmt.Errorf("WebHDFS LISTSTATUS %s: the answer (at most %d bytes): %w", path, maxListBody, err)
	}
	return out.FileStatuses.FileStatus, nil
}

// MaxRead bounds one ReadAt.
const MaxRead = 64 << 20

// ReadAt reads up to len(p) bytes (at most MaxRead) of the file path at off (OPEN with offset
// and length): the NameNode's redirect, then the DataNode's answer, the DataNode's part bounded
// by Options.Timeout. It returns fewer bytes, and io.EOF, at the end of the file.
func (c *Client) ReadAt(ctx context.Context, path string, p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if off < 0 {
		return 0, fmt.Errorf("WebHDFS OPEN %s: negative offset %d", path, off)
	}
	if len(p) > MaxRead {
		p = p[:MaxRead]
	}
	params := url.Values{"offset": {strconv.FormatInt(off, 10)}, "length": {strconv.Itoa(len(p))}}
	resp, err := c.nameNode(ctx, http.MethodGet, "OPEN", path, params)
	if err != nil {
		return 0, err
	}
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusFound {
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return readBody(resp.Body, p)
		}
		return 0, remoteError("OPEN", path, resp)
	}
	nn := serverOf(resp.Request)
	resp.Body.Close()
	dnURL, err := url.Parse(loc)
	if err != nil || (dnURL.Scheme != "http" && dnURL.Scheme != "https") || dnURL.Host == "" {
		return 0, fmt.Errorf("WebHDFS OPEN %s: the NameNode's redirect is not a DataNode URL", path)
	}
	dctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(dctx, http.MethodGet, loc, nil)
	if err != nil {
		return 0, fmt.Errorf("WebHDFS OPEN %s: the NameNode's redirect: %w", path, errors.New("not a request URL"))
	}
	c.log.Debug("reading through a DataNode", "path", path, "namenode", nn, "datanode", dnURL.Scheme+"://"+dnURL.Host)
	dresp, err := c.dn.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its URL carries the delegation token
		}
		return 0, fmt.Errorf("WebHDFS OPEN %s: read from the DataNode %s: %w", path, dnURL.Host, certificateError("the DataNode", err))
	}
	defer dresp.Body.Close()
	if dresp.StatusCode != http.StatusOK {
		rerr := remoteError("OPEN", path, dresp)
		if tok := dnURL.Query().Get("delegation"); tok != "" {
			rerr.Message = strings.ReplaceAll(rerr.Message, tok, "[token]")
		}
		return 0, rerr
	}
	return readBody(dresp.Body, p)
}

// serverOf is the scheme and host of a request (no path, no query), for the log.
func serverOf(r *http.Request) string {
	if r == nil || r.URL == nil {
		return ""
	}
	return r.URL.Scheme + "://" + r.URL.Host
}

// readBody reads a read's answer into p: io.EOF when it holds fewer bytes.
func readBody(r io.Reader, p []byte) (int, error) {
	n, err := io.ReadFull(r, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}

// Mkdirs makes path and its missing parents with permission perm (MKDIRS); an existing
// directory is no error.
func (c *Client) Mkdirs(ctx context.Context, path string, perm os.FileMode) error {
	var out struct {
		Boolean bool `json:"boolean"`
	}
	if err := c.call(ctx, http.MethodPut, "MKDIRS", path, url.Values{"permission": {octal(perm)}}, &out); err != nil {
		return err
	}
	if !out.Boolean {
		return fmt.Errorf("WebHDFS MKDIRS %s: refused", path)
	}
	return nil
}

// SetPermission sets the permission of path (SETPERMISSION).
func (c *Client) SetPermission(ctx context.Context, path string, perm os.FileMode) error {
	return c.call(ctx, http.MethodPut, "SETPERMISSION", path, url.Values{"permission": {octal(perm)}}, nil)
}

// Delete removes path, with everything below it when recursive (DELETE); false when there was
// nothing to remove.
func (c *Client) Delete(ctx context.Context, path string, recursive bool) (bool, error) {
	var out struct {
		Boolean bool `json:"boolean"`
	}
	err := c.call(ctx, http.MethodDelete, "DELETE", path, url.Values{"recursive": {strconv.FormatBool(recursive)}}, &out)
	return out.Boolean, err
}

func octal(perm os.FileMode) string { return strconv.FormatUint(uint64(perm.Perm()), 8) }

// query is the query of an operation: op, the authentication's user.name, doas, and params.
func (c *Client) query(op string, params url.Values) url.Values {
	q := url.Values{"op": {op}}
	for k, v := range params {
		q[k] = v
	}
	if c.opts.Authenticate == nil {
		q.Set("user.name", c.opts.User)
	}
	if c.opts.DoAs != "" {
		q.Set("doas", c.opts.DoAs)
	}
	return q
}

// call sends one request to the NameNodes in turn (a standby or an unreachable one is skipped)
// and decodes its JSON answer into out (nil: none expected).
func (c *Client) call(ctx context.Context, method, op, path string, params url.Values, out any) error {
	resp, err := c.nameNode(ctx, method, op, path, params)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return remoteError(op, path, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJSONBody))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSONBody)).Decode(out); err != nil {
		return fmt.Errorf("WebHDFS %s %s: the answer: %w", op, path, err)
	}
	return nil
}

// nameNode sends a request without a body to the first NameNode that answers as the active one:
// a response the caller reads and closes (any status but a standby's).
func (c *Client) nameNode(ctx context.Context, method, op, path string, params url.Values) (*http.Response, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("WebHDFS %s %q: not an absolute path", op, path)
	}
	q := c.query(op, params).Encode()
	var errs []error
	for _, base := range c.opts.Bases {
		u := base + "/webhdfs/v1" + (&url.URL{Path: path}).EscapedPath() + "?" + q
		req, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err != nil {
			return nil, fmt.Errorf("WebHDFS %s %s: %w", op, path, err)
		}
		resp, err := c.nn.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("WebHDFS %s %s: %w", op, path, ctx.Err())
			}
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err
			}
			err = certificateError("the NameNode", err)
			c.log.Debug("NameNode unreachable, trying the next", "base", base, "op", op, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", base, err))
			continue
		}
		if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusServiceUnavailable {
			rerr := remoteError(op, path, resp)
			resp.Body.Close()
			if rerr.standby() {
				c.log.Debug("standby NameNode, trying the next", "base", base, "op", op)
				errs = append(errs, fmt.Errorf("%s: %w", base, rerr))
				continue
			}
			return nil, rerr
		}
		return resp, nil
	}
	return nil, fmt.Errorf("WebHDFS %s %s: no active NameNode answered: %w", op, path, errors.Join(errs...))
}

// remoteError reads an error answer's RemoteException.
func remoteError(op, path string, resp *http.Response) *RemoteError {
	e := &RemoteError{Op: op, Path: path, Status: resp.StatusCode}
	var body struct {
		RemoteException struct {
			Exception string `json:"exception"`
			Message   string `json:"message"`
		} `json:"RemoteException"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&body); err == nil {
		e.Exception, e.Message = body.RemoteException.Exception, body.RemoteException.Message
	}
	if e.Exception == "" && e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// Create starts writing a new file path with permission perm (CREATE, failing with
// os.ErrExist when it exists): the NameNode's redirect, then the data streamed to the DataNode it
// names as the writer's Writes come. The file is complete when Close returns nil.
func (c *Client) Create(ctx context.Context, path string, perm os.FileMode) (*FileWriter, error) {
	params := url.Values{"overwrite": {"false"}, "permission": {octal(perm)}}
	resp, err := c.nameNode(ctx, http.MethodPut, "CREATE", path, params)
	if err != nil {
		return nil, err
	}
	loc := resp.Header.Get("Location")
	status := resp.StatusCode
	if status != http.StatusTemporaryRedirect {
		rerr := remoteError("CREATE", path, resp)
		resp.Body.Close()
		if status == http.StatusOK || status == http.StatusCreated {
			return nil, fmt.Errorf("WebHDFS CREATE %s: HTTP %d without a redirect to a DataNode", path, status)
		}
		return nil, rerr
	}
	resp.Body.Close()
	if loc == "" {
		return nil, fmt.Errorf("WebHDFS CREATE %s: a redirect without a Location", path)
	}
	dnURL, err := url.Parse(loc)
	if err != nil || (dnURL.Scheme != "http" && dnURL.Scheme != "https") || dnURL.Host == "" {
		return nil, fmt.Errorf("WebHDFS CREATE %s: the NameNode's redirect is not a DataNode URL", path)
	}
	wctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(wctx, http.MethodPut, loc, pr)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("WebHDFS CREATE %s: the NameNode's redirect: %w", path, errors.New("not a request URL"))
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	w := &FileWriter{path: path, host: dnURL.Host, pw: pw, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		resp, err := c.dn.Do(req)
		if err != nil {
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err // its URL carries the delegation token
			}
			w.err = fmt.Errorf("WebHDFS CREATE %s: write to the DataNode %s: %w", path, dnURL.Host, certificateError("the DataNode", err))
			_ = pr.CloseWithError(w.err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			rerr := remoteError("CREATE", path, resp)
			// A DataNode's message could quote the request it got.
			if tok := dnURL.Query().Get("delegation"); tok != "" {
				rerr.Message = strings.ReplaceAll(rerr.Message, tok, "[token]")
			}
			w.err = rerr
		}
		_ = pr.CloseWithError(errDataNodeAnswered)
	}()
	c.log.Debug("writing through a DataNode", "path", path, "datanode", dnURL.Scheme+"://"+dnURL.Host)
	return w, nil
}

var errDataNodeAnswered = errors.New("the DataNode answered before the end of the data")

// FileWriter streams a file to a DataNode (see Client.Create).
type FileWriter struct {
	path, host string
	pw         *io.PipeWriter
	cancel     context.CancelFunc
	done       chan struct{}
	err        error // the DataNode's answer, set before done closes

	mu    sync.Mutex
	timer *time.Timer
}

// Write sends p to the DataNode.
func (w *FileWriter) Write(p []byte) (int, error) {
	n, err := w.pw.Write(p)
	if err != nil {
		<-w.done
		if w.err != nil {
			return n, w.err
		}
		return n, fmt.Errorf("WebHDFS CREATE %s: write to the DataNode %s: %w", w.path, w.host, err)
	}
	return n, nil
}

// SetDeadline ends the write with an error if it has not closed by t.
func (w *FileWriter) SetDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.AfterFunc(time.Until(t), func() {
		_ = w.pw.CloseWithError(os.ErrDeadlineExceeded)
		w.cancel()
	})
	return nil
}

// Close ends the data and waits for the DataNode's answer: nil once the file is complete.
func (w *FileWriter) Close() error {
	_ = w.pw.Close()
	<-w.done
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.cancel()
	return w.err
}
