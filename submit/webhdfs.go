package submit

import (
	"context"
	"errors"
	"fmt"
	"io"
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
// are listed and read through WebHDFS instead (internal/webhdfs, made by
// stage.Client.LoginWebHDFS): the NameNode's web endpoint with SPNEGO, which redirects each read
// to a DataNode with a delegation token of its own, and the DataNode reads the block itself;
// https under dfs.http.policy=HTTPS_ONLY, trusting what the ResourceManager's client trusts.
// A proxy user's logs (--do-as) go the same way, as that user.

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

// webLogFS is LogFS through WebHDFS: listings (LISTSTATUS), statuses (GETFILESTATUS) and OPEN's
// ranges, as the login (a DataNode security layer) or as a proxy user (--do-as), whose client
// acts as that user.
type webLogFS struct {
	sc  *stage.Client
	web *webhdfs.Client
	ctx context.Context
	// login: the client acts as the login, whose refusal says what to check.
	login bool
}

func (w webLogFS) ReadDir(dir string) ([]os.FileInfo, error) {
	list, err := w.web.List(w.ctx, dir)
	if err != nil {
		return nil, w.explain(err)
	}
	out := make([]os.FileInfo, len(list))
	for i, st := range list {
		out[i] = webFileInfo{name: st.PathSuffix, st: st}
	}
	return out, nil
}

func (w webLogFS) Open(name string) (LogFile, error) {
	st, err := w.web.Stat(w.ctx, name)
	if err != nil {
		return nil, w.explain(err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("WebHDFS: %s is a directory", name)
	}
	return &webLogFile{fs: w, name: name, fi: webFileInfo{name: path.Base(name), st: st}}, nil
}

func (w webLogFS) Close() error { return w.sc.Close() }

// explain adds to the login's refusal what to check (a proxy user's refusal is about that
// user's rights, and says so itself).
func (w webLogFS) explain(err error) error {
	if w.login && errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w (fix: check the Kerberos login, and that the NameNode's web endpoint has SPNEGO with HTTP/<its host> in its keytab)", err)
	}
	return err
}

// webLogFile is a LogFile read through WebHDFS: OPEN's ranges, each at most webhdfs.MaxRead.
type webLogFile struct {
	fs   webLogFS
	name string
	fi   webFileInfo
}

func (f *webLogFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := readAtFully(p, off, f.fi.Size(), func(b []byte, at int64) (int, error) {
		return f.fs.web.ReadAt(f.fs.ctx, f.name, b, at)
	})
	if err != nil && !errors.Is(err, io.EOF) {
		err = f.fs.explain(err)
	}
	return n, err
}

func (f *webLogFile) Close() error      { return nil }
func (f *webLogFile) Stat() os.FileInfo { return f.fi }
func (f *webLogFile) String() string    { return f.name }

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
