package stage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/internal/webhdfs"
)

// Staging as a proxy user (Options.DoAs, submit --do-as).
//
// colinmarc/hdfs cannot act as another user under Kerberos (its connection context always names
// the login), so a proxy user's staging goes through WebHDFS with doas=<user>: the NameNode's web
// endpoint with the login's SPNEGO (or user.name on a cluster without security), whose CREATE
// redirects the data to a DataNode with a token of the proxy user's. The HDFS delegation token
// comes from the NameNode's RPC with the proxy user as the connection context's effective user
// (internal/namenode, Config.DoAs). Either way the NameNode checks the login's
// hadoop.proxyuser.<login>.users/groups/hosts, and what is created belongs to the proxy user.

// ErrProxyUser: a Hadoop service refused to let the login act as the proxy user (Options.DoAs):
// its hadoop.proxyuser.<login>.* do not allow that user, or this host. Staging's errors say "by
// HDFS"; package submit's "by the ResourceManager".
var ErrProxyUser = errors.New("proxy user refused")

// ProxyUserFix is the fix of a refused proxy user: the rights of login (the login's short name)
// to act as user, on the NameNode and the ResourceManager.
func ProxyUserFix(login, user string) string {
	return fmt.Sprintf("give %[1]s proxy-user rights for %[2]s in the core-site.xml of the NameNode and the ResourceManager: hadoop.proxyuser.%[1]s.hosts (this host, or *) and hadoop.proxyuser.%[1]s.users (%[2]s) or hadoop.proxyuser.%[1]s.groups (a group of %[2]s) (the ResourceManager also takes yarn.resourcemanager.proxyuser.%[1]s.*), then hdfs dfsadmin -refreshSuperUserGroupsConfiguration and yarn rmadmin -refreshSuperUserGroupsConfiguration; or submit without --do-as",
		login, user)
}

// WebHDFSBases returns the NameNodes' WebHDFS base URLs from the configuration: http(s)://host:port
// of dfs.namenode.http(s)-address, or of each NameNode of the nameservice of fs.defaultFS
// (dfs.namenode.http(s)-address.<nameservice>.<namenode>); https under dfs.http.policy=HTTPS_ONLY.
func WebHDFSBases(hc *conf.HadoopConfig) ([]string, error) {
	https := strings.EqualFold(strings.TrimSpace(hc.Get("dfs.http.policy")), "HTTPS_ONLY")
	key, scheme := "dfs.namenode.http-address", "http://"
	if https {
		key, scheme = "dfs.namenode.https-address", "https://"
	}
	var addrs []string
	if u, err := url.Parse(hc.Get("fs.defaultFS")); err == nil && u.Host != "" {
		for _, nn := range perNameNode(hc.Get, u.Hostname(), key) {
			if nn.value != "" {
				addrs = append(addrs, nn.value)
			}
		}
	}
	if len(addrs) == 0 {
		if a := strings.TrimSpace(hc.Get(key)); a != "" {
			addrs = append(addrs, a)
		}
	}
	var out []string
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("%s = %q: %w (fix: write host:port)", key, a, err)
		}
		if host == "0.0.0.0" || host == "" {
			continue
		}
		out = append(out, scheme+net.JoinHostPort(host, port))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no NameNode web address (%s) in the Hadoop configuration (fix: set %s in hdfs-site.xml)", key, key)
	}
	return out, nil
}

// webHDFS returns a WebHDFS client of c's HDFS (the NameNodes of WebHDFSBases) that acts as doAs
// ("": the login), and the NameNodes' base URLs: the login's SPNEGO under Kerberos, else
// user.name; https per dfs.http.policy, trusting Options.TLS on both hops.
func (c *Client) webHDFS(doAs string) (*webhdfs.Client, []string, error) {
	opts := c.web
	bases, err := WebHDFSBases(opts.HadoopConf)
	if err != nil {
		// WebHDFS is on by default (dfs.webhdfs.enabled).
		return nil, nil, err
	}
	dt := opts.DialTimeout
	if dt <= 0 {
		dt = defaultDialTimeout
	}
	wo := webhdfs.Options{Bases: bases, DoAs: doAs, TLS: opts.TLS, DialTimeout: dt, Logger: opts.Logger}
	if c.kerberos {
		if opts.SPNEGO == nil {
			return nil, nil, fmt.Errorf("%w: WebHDFS on a Kerberos cluster needs the login's SPNEGO", ErrUnsupportedAuth)
		}
		wo.Authenticate = opts.SPNEGO
	} else {
		wo.User = c.login
	}
	cl, err := webhdfs.New(wo)
	if err != nil {
		return nil, nil, err
	}
	return cl, bases, nil
}

// dialProxy sets c up to stage as c.doAs through WebHDFS, and checks at once that the NameNode
// lets the login act as that user (a refusal is ErrProxyUser, before anything is created).
func (c *Client) dialProxy(ctx context.Context) error {
	cl, bases, err := c.webHDFS(c.doAs)
	if err != nil {
		// --do-as stages through the NameNode's WebHDFS.
		return &Error{Op: "connect to WebHDFS as " + c.doAs, Err: err}
	}
	c.fs = webFS{c: cl}
	home := path.Join("/user", c.user)
	if _, err := cl.Stat(ctx, home); err != nil && !errors.Is(err, os.ErrNotExist) {
		return c.fsError("act as "+c.doAs+" on", home, err)
	}
	c.log.Debug("staging as a proxy user through WebHDFS", "user", c.doAs, "login", c.login, "namenodes", bases)
	return nil
}

// LoginWebHDFS returns a new WebHDFS client of c's HDFS that acts as the login, for the reads
// colinmarc/hdfs cannot make (a DataNode security layer: package submit's aggregated logs), and
// the NameNodes' base URLs it uses.
func (c *Client) LoginWebHDFS() (*webhdfs.Client, []string, error) {
	return c.webHDFS("")
}

// WebHDFS returns the WebHDFS client a proxy user's Client stages through, and false when c
// acts as the login (its HDFS client is HDFS's).
func (c *Client) WebHDFS() (*webhdfs.Client, bool) {
	w, ok := c.fs.(webFS)
	return w.c, ok
}

// isProxyRefusal reports whether err is a NameNode's refusal of the proxy user.
func isProxyRefusal(err error) bool {
	return errors.Is(err, webhdfs.ErrProxyUserRefused) || errors.Is(err, namenode.ErrProxyUserRefused)
}

// webFS is fileSystem through WebHDFS.
type webFS struct{ c *webhdfs.Client }

func (w webFS) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	st, err := w.c.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	return webInfo{name: path.Base(name), st: st}, nil
}

// Mkdir makes one directory, failing with os.ErrExist when it exists (MKDIRS succeeds then).
func (w webFS) Mkdir(ctx context.Context, name string, perm os.FileMode) error {
	_, err := w.c.Stat(ctx, name)
	switch {
	case err == nil:
		return &os.PathError{Op: "mkdir", Path: name, Err: os.ErrExist}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	return w.c.Mkdirs(ctx, name, perm)
}

func (w webFS) MkdirAll(ctx context.Context, name string, perm os.FileMode) error {
	return w.c.Mkdirs(ctx, name, perm)
}

func (w webFS) Chmod(ctx context.Context, name string, perm os.FileMode) error {
	return w.c.SetPermission(ctx, name, perm)
}

func (w webFS) Create(ctx context.Context, name string) (fileWriter, error) {
	return w.c.Create(ctx, name, FilePerm)
}

func (w webFS) RemoveAll(ctx context.Context, name string) error {
	_, err := w.c.Delete(ctx, name, true)
	return err
}

func (w webFS) Close() error { return nil }

// webInfo is os.FileInfo of a WebHDFS FileStatus.
type webInfo struct {
	name string
	st   webhdfs.FileStatus
}

func (i webInfo) Name() string { return i.name }
func (i webInfo) Size() int64  { return i.st.Length }
func (i webInfo) Mode() os.FileMode {
	var perm uint64
	_, _ = fmt.Sscanf(i.st.Permission, "%o", &perm)
	m := os.FileMode(perm) & os.ModePerm
	if i.st.IsDir() {
		m |= os.ModeDir
	}
	return m
}
func (i webInfo) ModTime() time.Time { return time.UnixMilli(i.st.ModificationTime) }
func (i webInfo) IsDir() bool        { return i.st.IsDir() }
func (i webInfo) Sys() any           { return nil }

// checkUserName checks a proxy user's name: it becomes an HDFS path component (/user/<name>) and
// a query parameter.
func checkUserName(name string) error {
	switch {
	case name == "." || name == "..":
		return errors.New("not a user name")
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%d bytes, more than %d", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return errors.New("not valid UTF-8")
	case strings.ContainsFunc(name, func(r rune) bool { return r == '/' || r == ':' || unicode.IsSpace(r) || unicode.IsControl(r) }):
		return errors.New("holds a '/', a ':', a space or a control character")
	}
	return nil
}
