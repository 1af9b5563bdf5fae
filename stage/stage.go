// Package stage puts what a yarn-er application needs on HDFS before it is submitted: the
// yarn-er binary, the job spec and the user's files and archives, in a private staging directory
// /user/<user>/.yarn-er/<application id>/ (permissions 0700). Every staged file comes back as a
// jobspec.LocalFile whose size and millisecond modification time are read back from the NameNode
// after the file was closed, the exact values YARN's NodeManagers check before localizing it.
//
// The HDFS client is github.com/colinmarc/hdfs/v2; the NameNode comes from fs.defaultFS (and
// dfs.namenode.rpc-address.*) of the Hadoop configuration. With hadoop.security.authentication =
// kerberos the client authenticates with Options.Kerberos (NameNode principal
// dfs.namenode.kerberos.principal, DataNode SASL per dfs.data.transfer.protection), and
// Client.DelegationToken obtains the HDFS delegation token a submitted application needs. A failed staging removes what it
// created: a submission that fails leaves nothing on HDFS.
//
// The HDFS client has no context support: a Client checks its context between chunks of an
// upload and before every NameNode call, and bounds connections with Options.DialTimeout and
// each file's writes with Options.WriteTimeout.
package stage

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"
	krb5client "github.com/jcmturner/gokrb5/v8/client"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/ctxsleep"
	"github.com/yarn-er/yarn-er/internal/ipc"
	"github.com/yarn-er/yarn-er/internal/webhdfs"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// Defaults.
const (
	// DirName is the directory below the user's HDFS home that holds the staging directories.
	DirName = ".yarn-er"
	// DirPerm is the permission of a staging directory: only its owner can read it.
	DirPerm os.FileMode = 0o700
	// FilePerm is the permission of a staged file (the directory above is private already).
	FilePerm os.FileMode = 0o600

	defaultDialTimeout       = 20 * time.Second
	defaultWriteTimeout      = 10 * time.Minute
	defaultCloseRetryTimeout = 2 * time.Minute
	closeInitialBackoff      = 50 * time.Millisecond
	closeMaxBackoff          = 2 * time.Second
	chunkSize                = 1 << 20
)

// Sentinel errors; a *Error matches them with errors.Is.
var (
	// ErrUnreachable: no NameNode answered (fs.defaultFS or dfs.namenode.rpc-address.* wrong, HDFS
	// down, a firewall).
	ErrUnreachable = errors.New("HDFS unreachable")
	// ErrNoFileSystem: the Hadoop configuration names no HDFS (fs.defaultFS unset or not hdfs://).
	ErrNoFileSystem = errors.New("no HDFS configured")
	// ErrUnsupportedAuth: the Hadoop configuration asks for Kerberos and no Kerberos login was
	// given, or the Kerberos settings are incomplete.
	ErrUnsupportedAuth = errors.New("HDFS authentication not supported")
	// ErrLocalFile: a local file to stage is missing, unreadable or not a regular file.
	ErrLocalFile = errors.New("local file cannot be staged")
	// ErrExists: the application's staging directory exists already.
	ErrExists = errors.New("staging directory exists")
)

// Error is a staging failure: Op is what was being done, Path the HDFS or local path, Fix how
// to repair it (may be empty). It unwraps to the cause (os.ErrPermission, os.ErrNotExist, an
// Err* sentinel, ...).
type Error struct {
	Op   string
	Path string
	Err  error
	Fix  string
}

func (e *Error) Error() string {
	msg := "staging: " + e.Op
	if e.Path != "" {
		msg += " " + e.Path
	}
	msg += ": " + e.Err.Error()
	if e.Fix != "" {
		msg += " (fix: " + e.Fix + ")"
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Options configure a Client.
type Options struct {
	// HadoopConf supplies fs.defaultFS (the file system the staged URLs name), the NameNode RPC
	// addresses (fs.defaultFS or dfs.namenode.rpc-address.*), dfs.client.use.datanode.hostname and
	// the data transfer protection. Required unless Addresses and DefaultFS are both set.
	HadoopConf *conf.HadoopConfig
	// Addresses override the NameNode RPC addresses (host:port).
	Addresses []string
	// DefaultFS overrides fs.defaultFS, e.g. "hdfs://nn:8020" or "hdfs://mycluster".
	DefaultFS string
	// User is the HDFS user (simple authentication). Required without a Kerberos login.
	User string
	// Kerberos is the Kerberos login, required when hadoop.security.authentication is kerberos
	// (ignored otherwise). The HDFS user is then the login's short name (its first component,
	// as Hadoop's default auth_to_local rule maps a principal of the default realm); User, when
	// set, must equal it.
	Kerberos *krb5client.Client
	// DoAs, when set (and not the login's own user), is the user to stage as, a proxy user: the
	// staging directory is /user/<DoAs>/.yarn-er/<application id>, DoAs's, written through
	// WebHDFS with doas=DoAs, and DelegationToken's token is DoAs's. The NameNode must give the
	// login (under Kerberos) or User (simple) hadoop.proxyuser.<login>.* rights (ErrProxyUser
	// otherwise; Dial checks them).
	DoAs string
	// SPNEGO wraps a transport in the Kerberos login's SPNEGO (yarn.SPNEGOTransport), for
	// WebHDFS; required with DoAs under Kerberos.
	SPNEGO func(http.RoundTripper) http.RoundTripper
	// TLS configures WebHDFS's https connections (dfs.http.policy=HTTPS_ONLY), to the NameNodes
	// and to the DataNodes they redirect to: the CAs trusted (RootCAs; nil: the system's), a
	// client certificate. Package submit gives the ResourceManager client's
	// (yarn.Client.TLSConfig: --tls-ca, --tls-cert/--tls-key, --insecure-skip-tls-verify). nil:
	// Go's defaults.
	TLS *tls.Config
	// DialTimeout bounds each connection to a NameNode or DataNode. Default 20s.
	DialTimeout time.Duration
	// WriteTimeout bounds the writes of one file. Default 10m.
	WriteTimeout time.Duration
	// CloseRetryTimeout is how long a close answered "replication in progress" is retried, with
	// backoff from 50ms to 2s. Default 2m.
	CloseRetryTimeout time.Duration
	// Logger receives debug records. Default: discard.
	Logger *slog.Logger

	// fs replaces HDFS in tests.
	fs fileSystem
}

// fileSystem is what staging does on HDFS: *hdfs.Client's calls (hdfsFS, which has no context),
// or WebHDFS's as a proxy user (webFS).
type fileSystem interface {
	Stat(ctx context.Context, name string) (os.FileInfo, error)
	Mkdir(ctx context.Context, name string, perm os.FileMode) error
	MkdirAll(ctx context.Context, name string, perm os.FileMode) error
	Chmod(ctx context.Context, name string, perm os.FileMode) error
	Create(ctx context.Context, name string) (fileWriter, error)
	RemoveAll(ctx context.Context, name string) error
	Close() error
}

// fileWriter is the part of *hdfs.FileWriter staging uses.
type fileWriter interface {
	io.Writer
	Close() error
	SetDeadline(t time.Time) error
}

type hdfsFS struct{ *hdfs.Client }

func (h hdfsFS) Stat(_ context.Context, name string) (os.FileInfo, error) { return h.Client.Stat(name) }
func (h hdfsFS) Mkdir(_ context.Context, name string, perm os.FileMode) error {
	return h.Client.Mkdir(name, perm)
}
func (h hdfsFS) MkdirAll(_ context.Context, name string, perm os.FileMode) error {
	return h.Client.MkdirAll(name, perm)
}
func (h hdfsFS) Chmod(_ context.Context, name string, perm os.FileMode) error {
	return h.Client.Chmod(name, perm)
}
func (h hdfsFS) Create(_ context.Context, name string) (fileWriter, error) {
	return h.Client.Create(name)
}
func (h hdfsFS) RemoveAll(_ context.Context, name string) error { return h.Client.RemoveAll(name) }

// Client stages files on one HDFS.
type Client struct {
	fs                fileSystem
	user              string
	defaultFS         *url.URL
	writeTimeout      time.Duration
	closeRetryTimeout time.Duration
	log               *slog.Logger

	// Set with Kerberos: what DelegationToken needs.
	namenodes []string
	krb       ipc.Kerberos
	service   string // the delegation token's service; "" until known
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)

	// doAs is the proxy user (Options.DoAs), login the login's user; doAs is "" without one.
	doAs, login string
	// web is what a WebHDFS client of this HDFS is made from (webHDFS).
	web      Options
	kerberos bool

	// haNameNodes are the RPC addresses of the NameNodes of the HA nameservice fs.defaultFS
	// names (nil when it names a NameNode).
	haNameNodes []string
}

// Dial connects to the NameNode named by opts.
func Dial(ctx context.Context, opts Options) (*Client, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "stage")
	kerberos := opts.HadoopConf != nil && strings.EqualFold(strings.TrimSpace(opts.HadoopConf.Get(KeyAuthentication)), "kerberos")
	user := strings.TrimSpace(opts.User)
	if kerberos {
		if opts.Kerberos == nil || opts.Kerberos.Credentials == nil {
			return nil, &Error{Op: "connect", Err: fmt.Errorf("%w: %s is kerberos, and there is no Kerberos login", ErrUnsupportedAuth, KeyAuthentication),
				Fix: "log in with Kerberos: kinit, or --keytab with --principal (and --auth kerberos)"}
		}
		short, _, _ := strings.Cut(opts.Kerberos.Credentials.UserName(), "/")
		if user != "" && user != short {
			return nil, &Error{Op: "connect", Err: fmt.Errorf("%w: HDFS user %q is not the Kerberos login's %q", ErrUnsupportedAuth, user, short),
				Fix: "leave the user out under Kerberos: the login names the user (--do-as acts as another)"}
		}
		user = short
	} else if user == "" && opts.Kerberos != nil && opts.Kerberos.Credentials != nil {
		// A simple HDFS beside a Kerberos ResourceManager: stage as the login's user.
		user, _, _ = strings.Cut(opts.Kerberos.Credentials.UserName(), "/")
	}
	if user == "" {
		return nil, &Error{Op: "connect", Err: errors.New("no HDFS user"), Fix: "give the user to stage as (--user or HADOOP_USER_NAME)"}
	}
	login, doAs := user, strings.TrimSpace(opts.DoAs)
	if doAs == login {
		doAs = "" // acting as oneself needs no proxy-user rights
	}
	if doAs != "" {
		if err := checkUserName(doAs); err != nil {
			return nil, &Error{Op: "connect", Err: fmt.Errorf("--do-as %q: %w", doAs, err), Fix: "give a user name, e.g. --do-as bob"}
		}
		user = doAs
	}
	c := &Client{
		user: user, writeTimeout: opts.WriteTimeout, closeRetryTimeout: opts.CloseRetryTimeout, log: log,
		doAs: doAs, login: login, web: opts, kerberos: kerberos,
	}
	if c.writeTimeout <= 0 {
		c.writeTimeout = defaultWriteTimeout
	}
	if c.closeRetryTimeout <= 0 {
		c.closeRetryTimeout = defaultCloseRetryTimeout
	}
	hc := hadoopconf.HadoopConf{}
	if opts.HadoopConf != nil {
		for _, name := range opts.HadoopConf.Names() {
			hc[name] = opts.HadoopConf.Get(name)
		}
	}
	defaultFS := strings.TrimSpace(opts.DefaultFS)
	from := "DefaultFS"
	if defaultFS == "" {
		defaultFS, from = strings.TrimSpace(hc["fs.defaultFS"]), "fs.defaultFS"
		if opts.HadoopConf != nil {
			if p, ok := opts.HadoopConf.Lookup("fs.defaultFS"); ok && !p.Source.IsZero() {
				from += " (" + p.Source.String() + ")"
			}
		}
	}
	u, err := parseDefaultFS(defaultFS)
	if err != nil {
		return nil, &Error{Op: "connect", Err: fmt.Errorf("%w: %s = %q: %v", ErrNoFileSystem, from, defaultFS, err),
			Fix: "set fs.defaultFS in core-site.xml to the cluster's HDFS, e.g. hdfs://namenode:8020 (the Hadoop configuration of --hadoop-conf or HADOOP_CONF_DIR)"}
	}
	c.defaultFS = u
	if isLogical(hc, u.Host) {
		if c.haNameNodes, err = nameserviceNameNodes(hc, u.Host); err != nil {
			return nil, &Error{Op: "connect", Err: fmt.Errorf("%w: %s = %q: %w", ErrNoFileSystem, from, defaultFS, err),
				Fix: "give each NameNode of the nameservice its dfs.namenode.rpc-address.<nameservice>.<namenode> in hdfs-site.xml"}
		}
	}
	if opts.fs != nil {
		c.fs = opts.fs
		return c, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ho := hdfs.ClientOptionsFromConf(hc)
	ho.KerberosClient = nil
	if len(opts.Addresses) > 0 {
		ho.Addresses = opts.Addresses
	} else if len(ho.Addresses) == 0 || (len(ho.Addresses) == 1 && ho.Addresses[0] == "") {
		ho.Addresses = []string{u.Host}
	}
	if u.Port() == "" && len(opts.Addresses) == 0 && !isLogical(hc, u.Host) {
		// hdfs://nn without a port means the NameNode's default RPC port.
		for i, a := range ho.Addresses {
			if a == u.Host {
				ho.Addresses[i] = net.JoinHostPort(u.Hostname(), "8020")
			}
		}
	}
	ho.User = user
	dt := opts.DialTimeout
	if dt <= 0 {
		dt = defaultDialTimeout
	}
	dialer := &net.Dialer{Timeout: dt, KeepAlive: 30 * time.Second}
	ho.NamenodeDialFunc = dialer.DialContext
	ho.DatanodeDialFunc = dialer.DialContext
	if kerberos {
		if err := c.kerberize(ctx, &ho, opts, hc, u, dialer.DialContext); err != nil {
			return nil, err
		}
	}
	if doAs != "" {
		if err := c.dialProxy(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
	log.Debug("connecting to HDFS", "defaultFS", u.String(), "namenodes", ho.Addresses, "user", user, "kerberos", kerberos,
		"dataTransferProtection", ho.DataTransferProtection)
	cl, err := hdfs.NewClient(ho)
	if err != nil {
		return nil, &Error{Op: "connect to the NameNode", Path: strings.Join(ho.Addresses, ","),
			Err: fmt.Errorf("%w: %w", ErrUnreachable, err),
			Fix: fmt.Sprintf("check that HDFS runs and that %s names its NameNode", from)}
	}
	c.fs = hdfsFS{cl}
	return c, nil
}

// nameserviceNameNodes returns the RPC addresses of the NameNodes of HA nameservice ns
// (dfs.ha.namenodes.<ns>, dfs.namenode.rpc-address.<ns>.<namenode>), as Hadoop's client reads them.
func nameserviceNameNodes(hc hadoopconf.HadoopConf, ns string) ([]string, error) {
	var out []string
	for _, nn := range perNameNode(func(k string) string { return hc[k] }, ns, "dfs.namenode.rpc-address") {
		host, port, err := net.SplitHostPort(nn.value)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("nameservice %s: NameNode %s: %s = %q: want host:port", ns, nn.id, nn.key, nn.value)
		}
		out = append(out, nn.value)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nameservice %s: dfs.ha.namenodes.%s names no NameNode", ns, ns)
	}
	return out, nil
}

// nameNodeKey is one NameNode's value of a per-NameNode key of an HA nameservice.
type nameNodeKey struct {
	id, key, value string // value trimmed; "" when unset
}

// perNameNode returns key.<ns>.<namenode> of each NameNode that dfs.ha.namenodes.<ns> lists, in
// its order, as Hadoop's DFSUtil reads them; get reads the configuration.
func perNameNode(get func(string) string, ns, key string) []nameNodeKey {
	var out []nameNodeKey
	for _, id := range strings.Split(get("dfs.ha.namenodes."+ns), ",") {
		if id = strings.TrimSpace(id); id != "" {
			k := key + "." + ns + "." + id
			out = append(out, nameNodeKey{id: id, key: k, value: strings.TrimSpace(get(k))})
		}
	}
	return out
}

// isLogical reports whether host is an HA nameservice of the configuration.
func isLogical(hc hadoopconf.HadoopConf, host string) bool {
	_, ok := hc["dfs.ha.namenodes."+host]
	return ok
}

func parseDefaultFS(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("not set")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "hdfs" {
		return nil, fmt.Errorf("scheme %q: staging needs hdfs://", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("no host")
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// NameserviceNameNodes returns the RPC addresses (host:port) of the NameNodes of the HA
// nameservice that fs.defaultFS names (hdfs://<nameservice>), which a process without the Hadoop
// configuration (the ApplicationMaster, a rank) needs to reach the staging directory; nil when
// fs.defaultFS names a NameNode.
func (c *Client) NameserviceNameNodes() []string { return slices.Clone(c.haNameNodes) }

// Close closes the connection to HDFS.
func (c *Client) Close() error { return c.fs.Close() }

// User returns the HDFS user: the proxy user (Options.DoAs) when there is one.
func (c *Client) User() string { return c.user }

// DoAs returns the proxy user the client acts as, "" when it acts as the login.
func (c *Client) DoAs() string { return c.doAs }

// DefaultFS returns the file system URL staged files are named under (hdfs://host[:port]).
func (c *Client) DefaultFS() string { return c.defaultFS.String() }

// BaseDir returns /user/<user>/.yarn-er, where staging directories go.
func (c *Client) BaseDir() string { return path.Join("/user", c.user, DirName) }

// URL returns the full URL of an HDFS path.
func (c *Client) URL(p string) string {
	u := *c.defaultFS
	u.Path = p
	return u.String()
}

// Item is one local file to stage.
type Item struct {
	// Local is the local path.
	Local string
	// Name is the link name in the containers' working directory (and the file name in the
	// staging directory). Empty: the base name of Local.
	Name string
	// Type is records.LocalFile or records.LocalArchive (default file).
	Type records.LocalResourceType
}

// ParseItem reads a --file or --archive argument, LOCAL[#NAME], as an Item of type typ. The local
// file must exist and be a regular file (archives: .tar.gz, .tgz, .tar, .zip, .jar); NAME must be
// a plain file name that HDFS and the NodeManager take as given (see checkLinkName).
func ParseItem(arg string, typ records.LocalResourceType) (Item, error) {
	flag := "--file"
	if typ == records.LocalArchive {
		flag = "--archive"
	}
	local, name, hasName := strings.Cut(arg, "#")
	if strings.TrimSpace(local) == "" {
		return Item{}, fmt.Errorf("%s %q: %w: no local path (want LOCAL[#NAME])", flag, arg, ErrLocalFile)
	}
	if !hasName {
		name = path.Base(strings.ReplaceAll(local, string(os.PathSeparator), "/"))
	}
	if err := checkLinkName(name); err != nil {
		return Item{}, fmt.Errorf("%s %q: %w", flag, arg, err)
	}
	if hasName {
		if _, err := os.Lstat(arg); err == nil {
			// A file whose own name holds the '#': LOCAL#NAME cannot name it, and must not
			// silently stage another file that happens to be called LOCAL.
			return Item{}, fmt.Errorf("%s %q: %w: %s exists, but the first '#' ends LOCAL (here %s): link or copy it to a path without '#' and give that",
				flag, arg, ErrLocalFile, arg, local)
		}
	}
	fi, err := os.Stat(local)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Item{}, fmt.Errorf("%s %q: %w: %s does not exist", flag, arg, ErrLocalFile, local)
	case err != nil:
		return Item{}, fmt.Errorf("%s %q: %w: %w", flag, arg, ErrLocalFile, err)
	case fi.IsDir():
		return Item{}, fmt.Errorf("%s %q: %w: %s is a directory (pack it, e.g. tar czf %s.tgz -C %s . and pass --archive %s.tgz#%s)",
			flag, arg, ErrLocalFile, local, name, local, name, name)
	case !fi.Mode().IsRegular():
		return Item{}, fmt.Errorf("%s %q: %w: %s is not a regular file", flag, arg, ErrLocalFile, local)
	}
	// Open it too, so that a file this user cannot read is a usage error now, not a failed
	// staging once an application id is used up (O_NONBLOCK: a FIFO swapped in cannot block).
	f, err := os.OpenFile(local, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Item{}, fmt.Errorf("%s %q: %w: %w", flag, arg, ErrLocalFile, err)
	}
	defer f.Close()
	if typ == records.LocalArchive {
		if !archiveName(local) {
			return Item{}, fmt.Errorf("%s %q: %w: %s is not an archive YARN unpacks (.tar.gz, .tgz, .tar, .zip or .jar); pass plain files with --file",
				flag, arg, ErrLocalFile, local)
		}
		if err := checkArchive(f, local); err != nil {
			return Item{}, fmt.Errorf("%s %q: %w: %w", flag, arg, ErrLocalFile, err)
		}
	}
	if typ == "" {
		typ = records.LocalFile
	}
	return Item{Local: local, Name: name, Type: typ}, nil
}

// archiveExts are the archive extensions the NodeManager unpacks.
var archiveExts = []string{".tar.gz", ".tgz", ".tar", ".zip", ".jar"}

func archiveName(p string) bool {
	p = strings.ToLower(p)
	for _, ext := range archiveExts {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}

// checkArchive checks that an archive's first bytes are what the NodeManager unpacks it as, by its
// extension: gzip (1f 8b) for .tar.gz and .tgz, a zip (PK) for .zip and .jar. Otherwise every
// container would fail to localize it. (A .tar has no magic number that every tar writes.)
func checkArchive(r io.Reader, local string) error {
	head := make([]byte, 2)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	lower := strings.ToLower(local)
	switch {
	case strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz"):
		if string(head) != "\x1f\x8b" {
			return fmt.Errorf("%s is not gzip-compressed, and the NodeManager unpacks a .tar.gz or .tgz with gunzip and tar: compress it (tar czf), or name a plain tar .tar", local)
		}
	case strings.HasSuffix(lower, ".zip") || strings.HasSuffix(lower, ".jar"):
		if string(head) != "PK" {
			return fmt.Errorf("%s is not a zip file, and the NodeManager unzips a .zip or .jar: give a zip (zip -r, jar cf), or name a tar .tar or .tgz", local)
		}
	}
	return nil
}

// MaxNameBytes is the longest link name: HDFS refuses longer path components
// (dfs.namenode.fs-limits.max-component-length, default 255), and so does Linux for the link.
const MaxNameBytes = 255

// reservedNames are what the NodeManager puts into every container's working directory before
// it links the local resources there: a link of the same name would replace its launch script
// or the container's tokens, or land inside its tmp directory (ln -sf into a directory).
var reservedNames = []string{"launch_container.sh", "container_tokens", "default_container_executor.sh",
	"default_container_executor_session.sh", "tmp"}

// checkLinkName checks a link name the way jobspec does, and that HDFS can hold it and the
// NodeManager can link it as given: its launch script links each resource with
// ln -sf -- "FILE" "NAME", so $, `, " and \ in NAME would be interpreted, and "*" links every
// file of a directory instead.
func checkLinkName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: link name %q %s", ErrLocalFile, name, why)
	}
	switch {
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00"):
		return bad("is not a plain file name")
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8 (HDFS names are UTF-8): rename it with LOCAL#NAME")
	case len(name) > MaxNameBytes:
		return bad(fmt.Sprintf("has %d bytes, more than the %d HDFS and Linux allow in a file name: give a shorter one with LOCAL#NAME", len(name), MaxNameBytes))
	case strings.Contains(name, ":"):
		return bad("holds a ':', which HDFS refuses in a file name: rename it with LOCAL#NAME")
	case strings.ContainsAny(name, "$`\"\\"):
		return bad("holds one of $ ` \" \\, which the NodeManager's launch script would interpret: rename it with LOCAL#NAME")
	case name == "*":
		return bad("is the NodeManager's wildcard (it links every file of a directory): rename it with LOCAL#NAME")
	case name == ".snapshot":
		return bad("is reserved by HDFS: rename it with LOCAL#NAME")
	case slices.Contains(reservedNames, name):
		return bad("is a file the NodeManager puts into every container's working directory: rename it with LOCAL#NAME")
	}
	return nil
}

// Progress is the state of an upload, reported while it runs.
type Progress struct {
	// Name is the file being uploaded (its link name).
	Name string
	// FileBytes and FileSize are what of that file was written, and its size.
	FileBytes, FileSize int64
	// Bytes and Total are what of all files was written, and their size.
	Bytes, Total int64
	// Files and FileCount are the number of files done, and of all files.
	Files, FileCount int
	// Elapsed is the time since the staging started.
	Elapsed time.Duration
	// Done is true on the last report of a file.
	Done bool
}

// Rate returns the average upload rate in bytes per second (0 before anything was sent).
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Bytes) / p.Elapsed.Seconds()
}

// Dir is one application's staging directory.
type Dir struct {
	c *Client
	// Path is the directory's HDFS path, /user/<user>/.yarn-er/<appId>.
	Path string
	// URL is its full URL (fs.defaultFS + Path).
	URL string
}

// Create makes the application's staging directory (0700) below BaseDir, creating the user's
// home and BaseDir when missing. It fails with ErrExists when the directory exists.
func (c *Client) Create(ctx context.Context, appID string) (*Dir, error) {
	if err := checkLinkName(appID); err != nil {
		return nil, &Error{Op: "create the staging directory", Err: err}
	}
	home := path.Join("/user", c.user)
	base := c.BaseDir()
	dir := path.Join(base, appID)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := c.fs.Stat(ctx, home); errors.Is(err, os.ErrNotExist) {
		if err := c.fs.MkdirAll(ctx, home, 0o755); err != nil {
			return nil, c.fsError("create the HDFS home directory", home, err)
		}
	} else if err != nil {
		return nil, c.fsError("read the HDFS home directory", home, err)
	}
	if err := c.fs.MkdirAll(ctx, base, DirPerm); err != nil {
		return nil, c.fsError("create the staging base directory", base, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.fs.Mkdir(ctx, dir, DirPerm); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, &Error{Op: "create the staging directory", Path: c.URL(dir), Err: ErrExists,
				Fix: "another submission used this application id; remove the directory (hdfs dfs -rm -r " + dir + ") or submit again"}
		}
		return nil, c.fsError("create the staging directory", dir, err)
	}
	d := &Dir{c: c, Path: dir, URL: c.URL(dir)}
	// Mkdir's permission is masked by nothing on the NameNode side, but make sure.
	if err := c.fs.Chmod(ctx, dir, DirPerm); err != nil {
		_ = d.Remove(context.WithoutCancel(ctx))
		return nil, c.fsError("set the permissions of", dir, err)
	}
	c.log.Debug("staging directory created", "dir", d.URL)
	return d, nil
}

// fsError wraps an HDFS error with a fix for the common causes.
func (c *Client) fsError(op, p string, err error) error {
	e := &Error{Op: op, Path: c.URL(p), Err: err}
	switch {
	case isProxyRefusal(err):
		e.Err = fmt.Errorf("%w by HDFS: %w", ErrProxyUser, err)
		e.Fix = ProxyUserFix(c.login, c.doAs)
	case errors.Is(err, webhdfs.ErrCertificate):
		// An https NameNode or DataNode not trusted: its message names the fix (--tls-ca).
	case errors.Is(err, os.ErrPermission):
		e.Fix = fmt.Sprintf("HDFS refused user %s: ask the HDFS administrator for a home directory /user/%s owned by %s (hdfs dfs -mkdir -p /user/%s && hdfs dfs -chown %s /user/%s), or stage as another user",
			c.user, c.user, c.user, c.user, c.user, c.user)
	case isConnErr(err):
		e.Err = fmt.Errorf("%w: %w", ErrUnreachable, err)
		e.Fix = "check that HDFS (NameNode and DataNodes) runs and is reachable from here"
	}
	return e
}

func isConnErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Open returns the staging directory of an application without touching HDFS (to remove one
// that an application left behind).
func (c *Client) Open(appID string) (*Dir, error) {
	if err := checkLinkName(appID); err != nil {
		return nil, &Error{Op: "open the staging directory", Err: err}
	}
	dir := path.Join(c.BaseDir(), appID)
	return &Dir{c: c, Path: dir, URL: c.URL(dir)}, nil
}

// Exists reports whether the staging directory is on HDFS.
func (d *Dir) Exists(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	_, err := d.c.fs.Stat(ctx, d.Path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, d.c.fsError("stat", d.Path, err)
}

// Remove deletes the staging directory and everything in it.
func (d *Dir) Remove(ctx context.Context) error {
	if err := d.c.fs.RemoveAll(ctx, d.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return d.c.fsError("remove the staging directory", d.Path, err)
	}
	d.c.log.Debug("staging directory removed", "dir", d.URL)
	return nil
}

// Stage creates the application's staging directory and uploads items into it, in order,
// reporting progress to progress (may be nil). It returns the directory and one LocalFile per
// item. On any failure, ctx ending included, it removes the directory.
func (c *Client) Stage(ctx context.Context, appID string, items []Item, progress func(Progress)) (*Dir, []jobspec.LocalFile, error) {
	type opened struct {
		f    *os.File
		size int64
	}
	files := make([]opened, 0, len(items))
	defer func() {
		for _, o := range files {
			_ = o.f.Close()
		}
	}()
	p := Progress{FileCount: len(items)}
	if err := CheckItems(items); err != nil {
		return nil, nil, err
	}
	for _, it := range items {
		// O_NONBLOCK: a FIFO (or one swapped in after ParseItem) opens at once and is refused
		// below, instead of blocking the submission until something writes to it.
		f, err := os.OpenFile(it.Local, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, nil, &Error{Op: "open", Path: it.Local, Err: fmt.Errorf("%w: %w", ErrLocalFile, err)}
		}
		fi, err := f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err != nil {
			_ = f.Close()
			return nil, nil, &Error{Op: "open", Path: it.Local, Err: fmt.Errorf("%w: %w", ErrLocalFile, err)}
		}
		files = append(files, opened{f: f, size: fi.Size()})
		p.Total += fi.Size()
	}
	d, err := c.Create(ctx, appID)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	out := make([]jobspec.LocalFile, 0, len(items))
	for i, it := range items {
		name := it.Name
		if name == "" {
			name = path.Base(it.Local)
		}
		typ := it.Type
		if typ == "" {
			typ = records.LocalFile
		}
		p.Name, p.FileBytes, p.FileSize, p.Done = name, 0, files[i].size, false
		lf, err := d.upload(ctx, name, stagedName(name, typ, it.Local), typ, files[i].f, func(n int64) {
			p.FileBytes += n
			p.Bytes += n
			p.Elapsed = time.Since(start)
			if progress != nil {
				progress(p)
			}
		})
		if err != nil {
			_ = d.Remove(context.WithoutCancel(ctx))
			return nil, nil, err
		}
		if lf.Size != files[i].size {
			_ = d.Remove(context.WithoutCancel(ctx))
			return nil, nil, &Error{Op: "upload", Path: lf.URL,
				Err: fmt.Errorf("%w: HDFS has %d bytes, the file had %d when staging began: %s changed while it was staged", ErrLocalFile, lf.Size, files[i].size, it.Local),
				Fix: "stage a copy that does not change"}
		}
		p.Files++
		p.Done = true
		p.Elapsed = time.Since(start)
		if progress != nil {
			progress(p)
		}
		out = append(out, lf)
	}
	return d, out, nil
}

// CheckItems checks the names of items to stage together, as Stage does before it touches HDFS:
// each link name (default: the base name of Local) must be one checkLinkName accepts, and no two
// items may share a link name or a file name in the staging directory (an archive is stored with
// its extension added: see stagedName).
func CheckItems(items []Item) error {
	seen := map[string]string{}
	for _, it := range items {
		name := it.Name
		if name == "" {
			name = path.Base(it.Local)
		}
		if err := checkLinkName(name); err != nil {
			return &Error{Op: "stage", Path: it.Local, Err: err}
		}
		if prev, dup := seen[name]; dup {
			return &Error{Op: "stage", Path: it.Local, Err: fmt.Errorf("%w: link name %q is used by %s too", ErrLocalFile, name, prev),
				Fix: "give one of them another name with LOCAL#NAME"}
		}
		seen[name] = it.Local
		if sn := stagedName(name, it.Type, it.Local); sn != name {
			if len(sn) > MaxNameBytes {
				return &Error{Op: "stage", Path: it.Local, Err: fmt.Errorf("%w: archive %q would be stored as %q, more than the %d bytes HDFS allows in a file name", ErrLocalFile, name, sn, MaxNameBytes),
					Fix: "give it a shorter name with LOCAL#NAME"}
			}
			if prev, dup := seen[sn]; dup {
				return &Error{Op: "stage", Path: it.Local, Err: fmt.Errorf("%w: archive %q would be stored as %q, the link name of %s", ErrLocalFile, name, sn, prev),
					Fix: "give one of them another name with LOCAL#NAME"}
			}
			seen[sn] = it.Local
		}
	}
	return nil
}

// Put writes a small file (such as the job spec) into the directory.
func (d *Dir) Put(ctx context.Context, name string, data []byte) (jobspec.LocalFile, error) {
	if err := checkLinkName(name); err != nil {
		return jobspec.LocalFile{}, &Error{Op: "write", Path: d.URL, Err: err}
	}
	return d.upload(ctx, name, name, records.LocalFile, strings.NewReader(string(data)), nil)
}

// stagedName is the file name on HDFS of an item linked as name: the link name, and for an
// archive also its extension, since the NodeManager picks how to unpack an archive by the
// extension of the file it downloads (FSDownload: .jar, .zip, .tar.gz, .tgz, .tar), not by the
// link name.
func stagedName(name string, typ records.LocalResourceType, local string) string {
	if typ != records.LocalArchive {
		return name
	}
	lower := strings.ToLower(local)
	for _, ext := range archiveExts {
		if strings.HasSuffix(lower, ext) {
			if strings.HasSuffix(strings.ToLower(name), ext) {
				return name
			}
			return name + ext
		}
	}
	return name
}

// upload copies r to <dir>/<file>, closes it (retrying "replication in progress") and reads size
// and modification time back from the NameNode; name is the link name.
func (d *Dir) upload(ctx context.Context, name, file string, typ records.LocalResourceType, r io.Reader, sent func(int64)) (jobspec.LocalFile, error) {
	c := d.c
	p := path.Join(d.Path, file)
	if err := ctx.Err(); err != nil {
		return jobspec.LocalFile{}, err
	}
	w, err := c.fs.Create(ctx, p)
	if err != nil {
		return jobspec.LocalFile{}, c.fsError("create", p, err)
	}
	_ = w.SetDeadline(time.Now().Add(c.writeTimeout))
	buf := make([]byte, chunkSize)
	for {
		if err := ctx.Err(); err != nil {
			_ = w.Close()
			return jobspec.LocalFile{}, err
		}
		n, rerr := r.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				_ = w.Close()
				return jobspec.LocalFile{}, c.fsError("write", p, err)
			}
			if sent != nil {
				sent(int64(n))
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			_ = w.Close()
			return jobspec.LocalFile{}, &Error{Op: "read", Path: name, Err: fmt.Errorf("%w: %w", ErrLocalFile, rerr)}
		}
	}
	if err := c.closeRetrying(ctx, w); err != nil {
		return jobspec.LocalFile{}, c.fsError("close", p, err)
	}
	if err := c.fs.Chmod(ctx, p, FilePerm); err != nil {
		return jobspec.LocalFile{}, c.fsError("set the permissions of", p, err)
	}
	fi, err := c.fs.Stat(ctx, p)
	if err != nil {
		return jobspec.LocalFile{}, c.fsError("stat", p, err)
	}
	lf := jobspec.LocalFile{
		Name: name, URL: c.URL(p), Size: fi.Size(), MtimeMillis: fi.ModTime().UnixMilli(),
		Type: typ, Visibility: records.VisibilityApplication,
	}
	c.log.Debug("staged", "file", lf.URL, "size", lf.Size, "mtime", lf.MtimeMillis)
	return lf, nil
}

// closeRetrying closes w, retrying with backoff while HDFS answers "replication in progress"
// (the DataNodes have the data but the NameNode has not completed the last block yet; Hadoop's
// own client retries too).
func (c *Client) closeRetrying(ctx context.Context, w fileWriter) error {
	deadline := time.Now().Add(c.closeRetryTimeout)
	backoff := closeInitialBackoff
	for attempt := 1; ; attempt++ {
		err := w.Close()
		if err == nil || !isReplicating(err) {
			return err
		}
		if time.Now().Add(backoff).After(deadline) {
			return fmt.Errorf("still replicating after %d attempts in %v: %w", attempt, c.closeRetryTimeout, err)
		}
		c.log.Debug("close: replication in progress, retrying", "attempt", attempt, "backoff", backoff)
		if err := ctxsleep.Sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, closeMaxBackoff)
	}
}

func isReplicating(err error) bool {
	return hdfs.IsErrReplicating(err) || errors.Is(err, hdfs.ErrReplicating)
}
