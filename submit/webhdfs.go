package submit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/stage"
)

// WebHDFS reads of aggregated logs.
//
// yarn-er's HDFS client (colinmarc/hdfs v2.4.0) mis-counts the bytes of a DataNode connection
// with a SASL security layer (dfs.data.transfer.protection integrity, or privacy without AES
// cipher suites): reads return corrupt data (colinmarc/hdfs issue 353). Writes, and everything
// that goes to the NameNode, are not affected. On such a cluster the files of the aggregated logs
// are read through WebHDFS instead: the NameNode's web endpoint with SPNEGO, which redirects each
// read to a DataNode with a delegation token of its own, and the DataNode reads the block itself.

// needsWebHDFS reports whether files must be read through WebHDFS: Kerberos with a DataNode
// security layer.
func needsWebHDFS(hc *conf.HadoopConfig) bool {
	if hc == nil || !strings.EqualFold(strings.TrimSpace(hc.Get("hadoop.security.authentication")), "kerberos") {
		return false
	}
	for _, p := range strings.Split(hc.Get("dfs.data.transfer.protection"), ",") {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "integrity", "privacy":
			return true
		}
	}
	return false
}

// webHDFSBases returns the NameNodes' WebHDFS base URLs (stage.WebHDFSBases), where the
// aggregated logs are read.
func webHDFSBases(hc *conf.HadoopConfig) ([]string, error) {
	bases, err := stage.WebHDFSBases(hc)
	if err != nil {
		return nil, fmt.Errorf("with dfs.data.transfer.protection integrity or privacy, aggregated logs are read through WebHDFS: %w", err)
	}
	return bases, nil
}

// webHDFS is a small WebHDFS reader: OPEN with an offset and a length, through SPNEGO to the
// NameNode and the DataNode's redirect.
type webHDFS struct {
	bases []string
	nn    *http.Client // SPNEGO, no redirects followed
	dn    *http.Client // the DataNode: the redirect carries its own token
}

// maxWebHDFSRead bounds one read (the logs reader asks for blocks of a few MiB at most).
const maxWebHDFSRead = 256 << 20

// newWebHDFS reads through the NameNodes of hc; spnego wraps a transport in the Kerberos
// login's SPNEGO (yarn.SPNEGOTransport).
func newWebHDFS(hc *conf.HadoopConfig, spnego func(http.RoundTripper) http.RoundTripper, timeout time.Duration) (*webHDFS, error) {
	bases, err := webHDFSBases(hc)
	if err != nil {
		return nil, err
	}
	if spnego == nil {
		return nil, errors.New("WebHDFS needs the Kerberos login")
	}
	if timeout <= 0 {
		timeout = time.Minute
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &webHDFS{
		bases: bases,
		nn: &http.Client{Transport: spnego(tr), Jar: jar, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		dn: &http.Client{Transport: tr, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}, nil
}

// readAt reads len(p) bytes of name at off (fewer at the end of the file, with io.EOF).
func (w *webHDFS) readAt(ctx context.Context, name string, p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) > maxWebHDFSRead {
		p = p[:maxWebHDFSRead]
	}
	q := url.Values{"op": {"OPEN"}, "offset": {strconv.FormatInt(off, 10)}, "length": {strconv.Itoa(len(p))}}
	var lastErr error
	for _, base := range w.bases {
		u := base + "/webhdfs/v1" + (&url.URL{Path: name}).EscapedPath() + "?" + q.Encode()
		loc, err := w.redirect(ctx, u)
		if err != nil {
			lastErr = err
			continue
		}
		return w.readFrom(ctx, loc, p)
	}
	return 0, lastErr
}

// redirect asks the NameNode for the DataNode URL of a read.
func (w *webHDFS) redirect(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := w.nn.Do(req)
	if err != nil {
		return "", fmt.Errorf("WebHDFS %s: %w", redactedURL(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusFound {
		loc := resp.Header.Get("Location")
		if loc == "" {
			return "", fmt.Errorf("WebHDFS %s: a redirect without a Location", redactedURL(u))
		}
		return loc, nil
	}
	return "", webHDFSError(u, resp)
}

// readFrom reads the DataNode's answer into p.
func (w *webHDFS) readFrom(ctx context.Context, loc string, p []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return 0, fmt.Errorf("WebHDFS: the NameNode's redirect: %w", errors.New(redactedURL(loc)))
	}
	resp, err := w.dn.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL carries a delegation token
		}
		return 0, fmt.Errorf("WebHDFS read from %s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, webHDFSError(loc, resp)
	}
	n, err := io.ReadFull(io.LimitReader(resp.Body, int64(len(p))), p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}

// webHDFSError turns an error answer into an error: Hadoop's RemoteException message when there
// is one; a missing file matches os.ErrNotExist.
func webHDFSError(u string, resp *http.Response) error {
	var body struct {
		RemoteException struct {
			Exception string `json:"exception"`
			Message   string `json:"message"`
		} `json:"RemoteException"`
	}
	msg := resp.Status
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err == nil && body.RemoteException.Message != "" {
		msg = body.RemoteException.Exception + ": " + body.RemoteException.Message
	}
	err := fmt.Errorf("WebHDFS %s: %s", redactedURL(u), msg)
	switch resp.StatusCode {
	case http.StatusNotFound:
		return fmt.Errorf("%w: %w", os.ErrNotExist, err)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w: %w (fix: check the Kerberos login, and that the NameNode's web endpoint has SPNEGO with HTTP/<its host> in its keytab)", os.ErrPermission, err)
	}
	return err
}

// redactedURL is u without its query (a redirect's carries a delegation token).
func redactedURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(a URL)"
	}
	p.RawQuery, p.User = "", nil
	return p.String()
}

// webHDFSLogFS lists directories over the NameNode's RPC and reads files through WebHDFS.
type webHDFSLogFS struct {
	hdfsLogFS
	web *webHDFS
	ctx context.Context
}

func (w webHDFSLogFS) Open(name string) (LogFile, error) {
	c, _ := w.sc.HDFS()
	fi, err := c.Stat(name)
	if err != nil {
		return nil, err
	}
	return &webHDFSFile{fs: w, name: name, fi: fi}, nil
}

// webHDFSFile is a LogFile read through WebHDFS.
type webHDFSFile struct {
	fs   webHDFSLogFS
	name string
	fi   os.FileInfo
}

func (f *webHDFSFile) ReadAt(p []byte, off int64) (int, error) {
	return readAtFully(p, off, f.fi.Size(), func(b []byte, at int64) (int, error) {
		return f.fs.web.readAt(f.fs.ctx, f.name, b, at)
	})
}

// readAtFully fills p from offset off of a file of the given size with read, which may return
// less than asked: io.EOF at or past the end, io.ErrNoProgress when read returns nothing.
func readAtFully(p []byte, off, size int64, read func(b []byte, at int64) (int, error)) (int, error) {
	if off >= size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		m, err := read(p[n:], off+int64(n))
		n += m
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

func (f *webHDFSFile) Close() error      { return nil }
func (f *webHDFSFile) Stat() os.FileInfo { return f.fi }
func (f *webHDFSFile) String() string    { return f.name }

// proxyLogFS is LogFS through WebHDFS as a proxy user (--do-as): listings and reads both.
type proxyLogFS struct {
	sc  *stage.Client
	web *webhdfs.Client
	ctx context.Context
}

func (p proxyLogFS) ReadDir(dir string) ([]os.FileInfo, error) {
	list, err := p.web.List(p.ctx, dir)
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, len(list))
	for i, st := range list {
		out[i] = webFileInfo{name: st.PathSuffix, st: st}
	}
	return out, nil
}

func (p proxyLogFS) Open(name string) (LogFile, error) {
	st, err := p.web.Stat(p.ctx, name)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("WebHDFS: %s is a directory", name)
	}
	return &proxyLogFile{fs: p, name: name, fi: webFileInfo{name: path.Base(name), st: st}}, nil
}

func (p proxyLogFS) Close() error { return p.sc.Close() }

// proxyLogFile is a LogFile read through WebHDFS as a proxy user.
type proxyLogFile struct {
	fs   proxyLogFS
	name string
	fi   webFileInfo
}

func (f *proxyLogFile) ReadAt(p []byte, off int64) (int, error) {
	return readAtFully(p, off, f.fi.Size(), func(b []byte, at int64) (int, error) {
		return f.fs.web.ReadAt(f.fs.ctx, f.name, b, at)
	})
}

func (f *proxyLogFile) Close() error      { return nil }
func (f *proxyLogFile) Stat() os.FileInfo { return f.fi }

// webFileInfo is os.FileInfo of a WebHDFS status.
type webFileInfo struct {
	name string
	st   webhdfs.FileStatus
}

func (i webFileInfo) Name() string { return i.name }
func (i webFileInfo) Size() int64  { return i.st.Length }
func (i webFileInfo) Mode() os.FileMode {
	perm, _ := strconv.ParseUint(i.st.Permission, 8, 32)
	m := os.FileMode(perm) & os.ModePerm
	if i.st.IsDir() {
		m |= os.ModeDir
	}
	return m
}
func (i webFileInfo) ModTime() time.Time { return time.UnixMilli(i.st.ModificationTime) }
func (i webFileInfo) IsDir() bool        { return i.st.IsDir() }
func (i webFileInfo) Sys() any           { return nil }
