// Package webhdfstest is a fake WebHDFS for unit tests: a NameNode (httptest) answering
// GETFILESTATUS, LISTSTATUS, MKDIRS, SETPERMISSION, DELETE, CREATE and OPEN over a small namespace with owners and
// permissions, and a DataNode that takes CREATE's data and serves OPEN's ranges with the
// delegation token the NameNode's redirect carries, as Hadoop 3.x answers them. The login is Hadoop's pseudo authentication
// (user.name) unless Options.Authenticate says otherwise; doas= is allowed only for the
// ProxyUsers, refused as the NameNode refuses it. With Options.TLS both serve https only with a
// test CA's certificate, as under dfs.http.policy=HTTPS_ONLY. It is for tests only; the integration tests use
// the mini-YARN's real NameNode.
package webhdfstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Superuser is the user that may do anything (the NameNode's own).
const Superuser = "hdfs"

// Token is the delegation token the NameNode puts into CREATE's redirect unless Options.Token
// says another.
const Token = "FAKE-WEBHDFS-DELEGATION-TOKEN"

// Options configure the fake.
type Options struct {
	// Dirs exist from the start, each owned by the user of the map's value (mode 755), with their
	// parents (owned by Superuser, mode 755).
	Dirs map[string]string
	// ProxyUsers are the logins that may act as any other user (hadoop.proxyuser.<login>.*).
	ProxyUsers []string
	// Authenticate returns the login of a request to the NameNode (nil: user.name, as Hadoop's
	// pseudo authentication; a request without it is refused with 401).
	Authenticate func(*http.Request) (string, error)
	// Standby answers every NameNode request as a standby NameNode does.
	Standby bool
	// Token is the delegation token of CREATE's redirect (default Token).
	Token string
	// TLS serves the NameNode and the DataNode over https only (dfs.http.policy=HTTPS_ONLY), with
	// a certificate for 127.0.0.1 and localhost signed by a CA of the fake's (WebHDFS.CAPEM); the
	// redirects then name the DataNode's https address.
	TLS bool
	// DataNodeFault, when set, makes the DataNode refuse every write with HTTP 500 and a
	// RemoteException whose message is DataNodeFault followed by the request's query, the token
	// included (a server that echoes what it got, for the tests that no secret is printed).
	DataNodeFault string
}

// Request is one request the NameNode answered.
type Request struct {
	Method, Op, Path string
	// Login is the authenticated user, DoAs the doas parameter.
	Login, DoAs string
}

// Entry is a file or directory of the namespace.
type Entry struct {
	Dir   bool
	Owner string
	Perm  uint32
	Data  []byte
	Mtime time.Time
}

// WebHDFS is the fake.
type WebHDFS struct {
	// NameNode is the NameNode's base URL (http://127.0.0.1:port, https:// with Options.TLS);
	// DataNode the DataNode's.
	NameNode, DataNode string
	// CAPEM is the PEM certificate of the CA that signed both servers' certificate (Options.TLS;
	// nil without).
	CAPEM []byte

	opts   Options
	mu     sync.Mutex
	ns     map[string]*Entry
	reqs   []Request
	dnAuth []string // Authorization headers the DataNode saw
	dnReqs int
}

// New starts the fake; t.Cleanup stops it.
func New(t testing.TB, opts Options) *WebHDFS {
	t.Helper()
	if opts.Token == "" {
		opts.Token = Token
	}
	w := &WebHDFS{opts: opts, ns: map[string]*Entry{"/": {Dir: true, Owner: Superuser, Perm: 0o755}}}
	for d, owner := range opts.Dirs {
		w.mkdirs(path.Dir(d), Superuser, 0o755)
		w.mkdirs(d, owner, 0o755)
	}
	nn := httptest.NewUnstartedServer(http.HandlerFunc(w.nameNode))
	dn := httptest.NewUnstartedServer(http.HandlerFunc(w.dataNode))
	if opts.TLS {
		ca, cert := newCA(t)
		w.CAPEM = ca
		for _, s := range []*httptest.Server{nn, dn} {
			s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
			// A client that does not trust the CA is what the tests try: not worth a log line.
			s.Config.ErrorLog = log.New(io.Discard, "", 0)
			s.StartTLS()
		}
	} else {
		nn.Start()
		dn.Start()
	}
	t.Cleanup(nn.Close)
	t.Cleanup(dn.Close)
	w.NameNode, w.DataNode = nn.URL, dn.URL
	return w
}

// Requests returns the NameNode's requests, in order.
func (w *WebHDFS) Requests() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.reqs)
}

// DataNodeAuthorization returns the Authorization headers the DataNode received (a client that
// sends its login's to a DataNode would show here).
func (w *WebHDFS) DataNodeAuthorization() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.dnAuth)
}

// DataNodeRequests returns how many requests the DataNode received.
func (w *WebHDFS) DataNodeRequests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dnReqs
}

// Lookup returns a copy of the entry at p.
func (w *WebHDFS) Lookup(p string) (Entry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.ns[p]
	if !ok {
		return Entry{}, false
	}
	c := *e
	c.Data = slices.Clone(e.Data)
	return c, true
}

// Paths returns every path of the namespace below (and with) p, sorted.
func (w *WebHDFS) Paths(p string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for k := range w.ns {
		if k == p || strings.HasPrefix(k, strings.TrimSuffix(p, "/")+"/") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (w *WebHDFS) mkdirs(p, owner string, perm uint32) {
	if p == "/" || p == "." {
		return
	}
	if _, ok := w.ns[p]; ok {
		return
	}
	w.mkdirs(path.Dir(p), owner, perm)
	w.ns[p] = &Entry{Dir: true, Owner: owner, Perm: perm, Mtime: time.Now()}
}

func remote(rw http.ResponseWriter, status int, exception, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(map[string]any{"RemoteException": map[string]string{
		"exception": exception, "javaClassName": "org.apache.hadoop." + exception, "message": msg}})
}

func reply(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(v)
}

// writable reports whether user may change the directory dir's entries.
func writable(dir *Entry, user string) bool {
	return user == Superuser || dir.Owner == user && dir.Perm&0o200 != 0 || dir.Perm&0o002 != 0
}

// traversable reports whether user may reach below every directory above p.
func (w *WebHDFS) traversable(p, user string) bool {
	if user == Superuser {
		return true
	}
	for d := path.Dir(p); ; d = path.Dir(d) {
		e, ok := w.ns[d]
		if ok && e.Owner != user && e.Perm&0o001 == 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

func (w *WebHDFS) nameNode(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, ok := strings.CutPrefix(r.URL.Path, "/webhdfs/v1")
	if !ok || !strings.HasPrefix(p, "/") {
		remote(rw, http.StatusBadRequest, "IllegalArgumentException", "not a WebHDFS path: "+r.URL.Path)
		return
	}
	p = path.Clean(p)
	login := q.Get("user.name")
	if w.opts.Authenticate != nil {
		var err error
		if login, err = w.opts.Authenticate(r); err != nil {
			remote(rw, http.StatusUnauthorized, "AuthenticationException", err.Error())
			return
		}
	} else if login == "" {
		remote(rw, http.StatusUnauthorized, "AuthenticationException", "Anonymous requests are disallowed")
		return
	}
	op, doas := strings.ToUpper(q.Get("op")), q.Get("doas")
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reqs = append(w.reqs, Request{Method: r.Method, Op: op, Path: p, Login: login, DoAs: doas})
	if w.opts.Standby {
		remote(rw, http.StatusForbidden, "StandbyException", "Operation category READ is not supported in state standby")
		return
	}
	user := login
	if doas != "" && doas != login {
		if !slices.Contains(w.opts.ProxyUsers, login) {
			remote(rw, http.StatusForbidden, "SecurityException",
				"Failed to obtain user group information: org.apache.hadoop.security.authorize.AuthorizationException: User: "+login+" is not allowed to impersonate "+doas)
			return
		}
		user = doas
	}
	if !w.traversable(p, user) {
		remote(rw, http.StatusForbidden, "AccessControlException", "Permission denied: user="+user+", access=EXECUTE, inode=\""+p+"\"")
		return
	}
	e := w.ns[p]
	denied := func() {
		remote(rw, http.StatusForbidden, "AccessControlException", "Permission denied: user="+user+", access=WRITE, inode=\""+p+"\"")
	}
	switch {
	case r.Method == http.MethodGet && op == "GETFILESTATUS":
		if e == nil {
			remote(rw, http.StatusNotFound, "FileNotFoundException", "File does not exist: "+p)
			return
		}
		typ := "FILE"
		if e.Dir {
			typ = "DIRECTORY"
		}
		reply(rw, map[string]any{"FileStatus": map[string]any{"type": typ, "length": len(e.Data), "owner": e.Owner, "group": "supergroup",
			"permission": strconv.FormatUint(uint64(e.Perm), 8), "modificationTime": e.Mtime.UnixMilli()}})
	case r.Method == http.MethodGet && op == "LISTSTATUS":
		if e == nil {
			remote(rw, http.StatusNotFound, "FileNotFoundException", "File "+p+" does not exist.")
			return
		}
		if e.Owner != user && e.Perm&0o004 == 0 && user != Superuser {
			remote(rw, http.StatusForbidden, "AccessControlException", "Permission denied: user="+user+", access=READ_EXECUTE, inode=\""+p+"\"")
			return
		}
		var list []map[string]any
		for _, k := range w.below(p) {
			if path.Dir(k) != p {
				continue
			}
			c := w.ns[k]
			typ := "FILE"
			if c.Dir {
				typ = "DIRECTORY"
			}
			list = append(list, map[string]any{"pathSuffix": path.Base(k), "type": typ, "length": len(c.Data), "owner": c.Owner,
				"permission": strconv.FormatUint(uint64(c.Perm), 8), "modificationTime": c.Mtime.UnixMilli()})
		}
		slices.SortFunc(list, func(a, b map[string]any) int {
			return strings.Compare(a["pathSuffix"].(string), b["pathSuffix"].(string))
		})
		reply(rw, map[string]any{"FileStatuses": map[string]any{"FileStatus": list}})
	case r.Method == http.MethodGet && op == "OPEN":
		if e == nil || e.Dir {
			remote(rw, http.StatusNotFound, "FileNotFoundException", "File does not exist: "+p)
			return
		}
		if e.Owner != user && e.Perm&0o004 == 0 && user != Superuser {
			remote(rw, http.StatusForbidden, "AccessControlException", "Permission denied: user="+user+", access=READ, inode=\""+p+"\"")
			return
		}
		dq := url.Values{"op": {"OPEN"}, "delegation": {w.opts.Token}, "offset": {q.Get("offset")}, "length": {q.Get("length")}}
		rw.Header().Set("Location", w.DataNode+"/webhdfs/v1"+(&url.URL{Path: p}).EscapedPath()+"?"+dq.Encode())
		rw.WriteHeader(http.StatusTemporaryRedirect)
	case r.Method == http.MethodPut && op == "MKDIRS":
		perm, err := strconv.ParseUint(q.Get("permission"), 8, 32)
		if err != nil {
			perm = 0o755
		}
		// The nearest existing ancestor must be writable.
		a := p
		for w.ns[a] == nil {
			a = path.Dir(a)
		}
		if !w.ns[a].Dir {
			remote(rw, http.StatusForbidden, "ParentNotDirectoryException", a+" is not a directory")
			return
		}
		if a != p && !writable(w.ns[a], user) {
			denied()
			return
		}
		w.mkdirs(p, user, uint32(perm))
		reply(rw, map[string]bool{"boolean": true})
	case r.Method == http.MethodPut && op == "SETPERMISSION":
		if e == nil {
			remote(rw, http.StatusNotFound, "FileNotFoundException", "File does not exist: "+p)
			return
		}
		if e.Owner != user && user != Superuser {
			remote(rw, http.StatusForbidden, "AccessControlException", "Permission denied. user="+user+" is not the owner of inode="+p)
			return
		}
		perm, err := strconv.ParseUint(q.Get("permission"), 8, 32)
		if err != nil {
			remote(rw, http.StatusBadRequest, "IllegalArgumentException", "permission "+q.Get("permission"))
			return
		}
		e.Perm = uint32(perm)
	case r.Method == http.MethodDelete && op == "DELETE":
		if e == nil {
			reply(rw, map[string]bool{"boolean": false})
			return
		}
		if parent := w.ns[path.Dir(p)]; parent != nil && !writable(parent, user) {
			denied()
			return
		}
		below := w.below(p)
		if len(below) > 0 && q.Get("recursive") != "true" {
			remote(rw, http.StatusForbidden, "PathIsNotEmptyDirectoryException", "`"+p+" is non empty': Directory is not empty")
			return
		}
		for _, b := range below {
			delete(w.ns, b)
		}
		delete(w.ns, p)
		reply(rw, map[string]bool{"boolean": true})
	case r.Method == http.MethodPut && op == "CREATE":
		parent := w.ns[path.Dir(p)]
		switch {
		case e != nil:
			remote(rw, http.StatusForbidden, "FileAlreadyExistsException", p+" for client 127.0.0.1 already exists")
			return
		case parent == nil:
			remote(rw, http.StatusNotFound, "FileNotFoundException", "Parent directory doesn't exist: "+path.Dir(p))
			return
		case !writable(parent, user):
			denied()
			return
		}
		dq := url.Values{"op": {"CREATE"}, "delegation": {w.opts.Token}, "owner": {user}, "permission": {q.Get("permission")}, "namenoderpcaddress": {"127.0.0.1:8020"}}
		rw.Header().Set("Location", w.DataNode+"/webhdfs/v1"+(&url.URL{Path: p}).EscapedPath()+"?"+dq.Encode())
		rw.WriteHeader(http.StatusTemporaryRedirect)
	default:
		remote(rw, http.StatusBadRequest, "IllegalArgumentException", fmt.Sprintf("Invalid value for webhdfs parameter \"op\": %s %s", r.Method, op))
	}
}

func (w *WebHDFS) below(p string) []string {
	var out []string
	for k := range w.ns {
		if strings.HasPrefix(k, strings.TrimSuffix(p, "/")+"/") {
			out = append(out, k)
		}
	}
	return out
}

// open serves OPEN's range of a file.
func (w *WebHDFS) open(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := path.Clean(strings.TrimPrefix(r.URL.Path, "/webhdfs/v1"))
	w.mu.Lock()
	e := w.ns[p]
	var data []byte
	if e != nil {
		data = slices.Clone(e.Data)
	}
	w.mu.Unlock()
	if e == nil {
		remote(rw, http.StatusNotFound, "FileNotFoundException", "File does not exist: "+p)
		return
	}
	off, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	n, err := strconv.ParseInt(q.Get("length"), 10, 64)
	if err != nil {
		n = int64(len(data))
	}
	off = min(max(off, 0), int64(len(data)))
	end := min(off+max(n, 0), int64(len(data)))
	rw.Header().Set("Content-Type", "application/octet-stream")
	_, _ = rw.Write(data[off:end])
}

// dataNode takes CREATE's data: the delegation token of the redirect authenticates it.
func (w *WebHDFS) dataNode(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.mu.Lock()
	w.dnReqs++
	if a := r.Header.Get("Authorization"); a != "" {
		w.dnAuth = append(w.dnAuth, a)
	}
	w.mu.Unlock()
	if w.opts.DataNodeFault != "" {
		_, _ = io.Copy(io.Discard, r.Body)
		remote(rw, http.StatusInternalServerError, "IOException", w.opts.DataNodeFault+" "+r.URL.RawQuery)
		return
	}
	if q.Get("delegation") != w.opts.Token {
		remote(rw, http.StatusForbidden, "SecretManager$InvalidToken", "token is not valid")
		return
	}
	if r.Method == http.MethodGet && q.Get("op") == "OPEN" {
		w.open(rw, r)
		return
	}
	if r.Method != http.MethodPut || q.Get("op") != "CREATE" {
		remote(rw, http.StatusBadRequest, "IllegalArgumentException", "the fake DataNode only creates and opens")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		remote(rw, http.StatusBadRequest, "IOException", err.Error())
		return
	}
	p := path.Clean(strings.TrimPrefix(r.URL.Path, "/webhdfs/v1"))
	perm, err := strconv.ParseUint(q.Get("permission"), 8, 32)
	if err != nil {
		perm = 0o644
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ns[p] != nil {
		remote(rw, http.StatusForbidden, "FileAlreadyExistsException", p+" already exists")
		return
	}
	w.ns[p] = &Entry{Owner: q.Get("owner"), Perm: uint32(perm), Data: data, Mtime: time.Now()}
	rw.Header().Set("Location", "hdfs://127.0.0.1:8020"+p)
	rw.WriteHeader(http.StatusCreated)
}

// newCA makes a CA and a server certificate for 127.0.0.1 and localhost signed by it: the CA's
// PEM and the server's key pair.
func newCA(t testing.TB) ([]byte, tls.Certificate) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("webhdfstest: making the test CA: %v", err)
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhdfstest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(err)
	caCert, err := x509.ParseCertificate(caDER)
	must(err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	must(err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
