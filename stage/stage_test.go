package stage

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// memFS is an in-memory HDFS for fault injection: it records files and directories and fails
// where a test says.
type memFS struct {
	mu    sync.Mutex
	dirs  map[string]os.FileMode
	files map[string]*memFile
	// replicating is how many times each Close answers "replication in progress" first.
	replicating int
	// failCreate / failMkdir / failWrite: errors returned by those operations (for names
	// containing the key, "" matching all).
	failCreate, failMkdir, failWrite map[string]error
	closes                           int
	now                              int64
}

type memFile struct {
	data   bytes.Buffer
	perm   os.FileMode
	mtime  time.Time
	closed bool
}

func newMemFS() *memFS {
	return &memFS{dirs: map[string]os.FileMode{"/": 0o755}, files: map[string]*memFile{}, now: 1700000000123}
}

type memInfo struct {
	name  string
	size  int64
	mode  os.FileMode
	mtime time.Time
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() os.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return i.mtime }
func (i memInfo) IsDir() bool        { return i.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

func match(m map[string]error, name string) error {
	for k, err := range m {
		if strings.Contains(name, k) {
			return err
		}
	}
	return nil
}

func (m *memFS) Stat(_ context.Context, name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.dirs[name]; ok {
		return memInfo{name: path.Base(name), mode: p | os.ModeDir}, nil
	}
	if f, ok := m.files[name]; ok {
		return memInfo{name: path.Base(name), size: int64(f.data.Len()), mode: f.perm, mtime: f.mtime}, nil
	}
	return nil, &os.PathError{Op: "stat", Path: name, Err: os.ErrNotExist}
}

func (m *memFS) Mkdir(_ context.Context, name string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := match(m.failMkdir, name); err != nil {
		return &os.PathError{Op: "mkdir", Path: name, Err: err}
	}
	if _, ok := m.dirs[name]; ok {
		return &os.PathError{Op: "mkdir", Path: name, Err: os.ErrExist}
	}
	if _, ok := m.dirs[path.Dir(name)]; !ok {
		return &os.PathError{Op: "mkdir", Path: name, Err: os.ErrNotExist}
	}
	m.dirs[name] = perm
	return nil
}

func (m *memFS) MkdirAll(ctx context.Context, name string, perm os.FileMode) error {
	if name == "/" {
		return nil
	}
	if err := m.MkdirAll(ctx, path.Dir(name), perm); err != nil {
		return err
	}
	err := m.Mkdir(ctx, name, perm)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	return err
}

func (m *memFS) Chmod(_ context.Context, name string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.dirs[name]; ok {
		m.dirs[name] = perm
		return nil
	}
	if f, ok := m.files[name]; ok {
		f.perm = perm
		return nil
	}
	return &os.PathError{Op: "chmod", Path: name, Err: os.ErrNotExist}
}

func (m *memFS) Create(_ context.Context, name string) (fileWriter, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := match(m.failCreate, name); err != nil {
		return nil, &os.PathError{Op: "create", Path: name, Err: err}
	}
	if _, ok := m.dirs[path.Dir(name)]; !ok {
		return nil, &os.PathError{Op: "create", Path: name, Err: os.ErrNotExist}
	}
	f := &memFile{perm: 0o644}
	m.files[name] = f
	return &memWriter{m: m, name: name, f: f, replicating: m.replicating}, nil
}

func (m *memFS) RemoveAll(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := range m.dirs {
		if d == name || strings.HasPrefix(d, name+"/") {
			delete(m.dirs, d)
		}
	}
	for f := range m.files {
		if strings.HasPrefix(f, name+"/") {
			delete(m.files, f)
		}
	}
	return nil
}

func (m *memFS) Close() error { return nil }

// paths lists every directory and file under root.
func (m *memFS) paths(root string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for d := range m.dirs {
		if strings.HasPrefix(d, root) {
			out = append(out, d+"/")
		}
	}
	for f := range m.files {
		if strings.HasPrefix(f, root) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

type memWriter struct {
	m           *memFS
	name        string
	f           *memFile
	replicating int
}

func (w *memWriter) Write(b []byte) (int, error) {
	if err := match(w.m.failWrite, w.name); err != nil {
		return 0, &os.PathError{Op: "write", Path: w.name, Err: err}
	}
	return w.f.data.Write(b)
}

func (w *memWriter) SetDeadline(time.Time) error { return nil }

func (w *memWriter) Close() error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.closes++
	if w.replicating > 0 {
		w.replicating--
		return &os.PathError{Op: "create", Path: w.name, Err: hdfs.ErrReplicating}
	}
	w.f.closed = true
	w.m.now += 7
	w.f.mtime = time.UnixMilli(w.m.now)
	return nil
}

func testClient(t *testing.T, m *memFS, opts Options) *Client {
	t.Helper()
	opts.fs = m
	if opts.User == "" {
		opts.User = "alice"
	}
	if opts.DefaultFS == "" && opts.HadoopConf == nil {
		opts.DefaultFS = "hdfs://nn.example.com:8020"
	}
	c, err := Dial(context.Background(), opts)
	require.NoError(t, err)
	return c
}

func writeLocal(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

func TestStageRoundTrip(t *testing.T) {
	m := newMemFS()
	m.replicating = 2
	c := testClient(t, m, Options{})
	tmp := t.TempDir()
	bin := writeLocal(t, tmp, "yarn-er", bytes.Repeat([]byte{1}, 3*chunkSize+17))
	data := writeLocal(t, tmp, "data.csv", []byte("a,b\n1,2\n"))
	arch := writeLocal(t, tmp, "env.tgz", []byte("not really gzip"))

	var reports []Progress
	d, files, err := c.Stage(context.Background(), "application_1_0001", []Item{
		{Local: bin, Name: jobspec.BinaryName},
		{Local: data, Name: "input.csv"},
		{Local: arch, Name: "env", Type: records.LocalArchive},
	}, func(p Progress) { reports = append(reports, p) })
	require.NoError(t, err)

	assert.Equal(t, "/user/alice/.yarn-er/application_1_0001", d.Path)
	assert.Equal(t, "hdfs://nn.example.com:8020/user/alice/.yarn-er/application_1_0001", d.URL)
	assert.Equal(t, DirPerm, m.dirs[d.Path], "the staging directory is private")
	require.Len(t, files, 3)
	for i, want := range []struct {
		name string
		typ  records.LocalResourceType
		size int64
	}{{"yarn-er", records.LocalFile, 3*chunkSize + 17}, {"input.csv", records.LocalFile, 8}, {"env", records.LocalArchive, 15}} {
		f := files[i]
		assert.Equal(t, want.name, f.Name)
		assert.Equal(t, want.typ, f.Type)
		assert.Equal(t, want.size, f.Size)
		file := want.name
		if want.typ == records.LocalArchive {
			file += ".tgz" // the NodeManager unpacks by the staged file's extension
		}
		assert.Equal(t, d.URL+"/"+file, f.URL)
		assert.Equal(t, records.VisibilityApplication, f.Visibility)
		mf := m.files[d.Path+"/"+file]
		require.NotNil(t, mf)
		assert.True(t, mf.closed, "closed after the replicating answers")
		assert.Equal(t, mf.mtime.UnixMilli(), f.MtimeMillis, "mtime read back from HDFS after close")
		assert.Equal(t, FilePerm, mf.perm)
	}
	assert.Equal(t, 9, m.closes, "each close retried twice on replication in progress")

	require.NotEmpty(t, reports)
	last := reports[len(reports)-1]
	assert.Equal(t, Progress{Name: "env", FileBytes: 15, FileSize: 15, Bytes: 3*chunkSize + 17 + 8 + 15,
		Total: 3*chunkSize + 17 + 8 + 15, Files: 3, FileCount: 3, Elapsed: last.Elapsed, Done: true}, last)
	var prev int64
	for _, p := range reports {
		assert.GreaterOrEqual(t, p.Bytes, prev, "bytes only grow")
		prev = p.Bytes
	}

	spec, err := d.Put(context.Background(), jobspec.FileName, []byte(`{"version":1}`))
	require.NoError(t, err)
	assert.Equal(t, int64(13), spec.Size)
	require.NoError(t, d.Remove(context.Background()))
	assert.Empty(t, m.paths(d.Path))
}

func TestStageFailureRemovesEverything(t *testing.T) {
	tmp := t.TempDir()
	a := writeLocal(t, tmp, "a", []byte("aaaa"))
	b := writeLocal(t, tmp, "b", []byte("bbbb"))
	denied := &os.PathError{Op: "create", Path: "x", Err: os.ErrPermission}
	cases := []struct {
		name  string
		setup func(m *memFS)
		items []Item
		ctx   func() context.Context
		want  error
		fix   string
	}{
		{name: "create denied", setup: func(m *memFS) { m.failCreate = map[string]error{"/b": os.ErrPermission} },
			items: []Item{{Local: a}, {Local: b}}, want: os.ErrPermission, fix: "hdfs dfs -mkdir -p /user/alice"},
		{name: "write fails", setup: func(m *memFS) { m.failWrite = map[string]error{"/b": errors.New("pipeline broke")} },
			items: []Item{{Local: a}, {Local: b}}},
		{name: "still replicating", setup: func(m *memFS) { m.replicating = 1000 },
			items: []Item{{Local: a}}, want: hdfs.ErrReplicating},
		{name: "cancelled", setup: func(*memFS) {},
			items: []Item{{Local: a}}, ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			}, want: context.Canceled},
		{name: "mkdir denied", setup: func(m *memFS) { m.failMkdir = map[string]error{"application_": denied.Err} },
			items: []Item{{Local: a}}, want: os.ErrPermission},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemFS()
			tc.setup(m)
			c := testClient(t, m, Options{CloseRetryTimeout: 300 * time.Millisecond})
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			_, _, err := c.Stage(ctx, "application_1_0002", tc.items, nil)
			require.Error(t, err)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
			if tc.fix != "" {
				assert.Contains(t, err.Error(), tc.fix)
			}
			assert.Empty(t, m.paths("/user/alice/.yarn-er/application_1_0002"), "nothing left on HDFS")
		})
	}
}

func TestStageLocalProblemsBeforeHDFS(t *testing.T) {
	tmp := t.TempDir()
	a := writeLocal(t, tmp, "a", []byte("x"))
	sub := filepath.Join(tmp, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	a2 := writeLocal(t, sub, "a", []byte("y"))
	tgz := writeLocal(t, tmp, "env.tgz", []byte("z"))
	fifo := filepath.Join(tmp, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, tc := range []struct {
		name  string
		items []Item
		want  string
	}{
		{"missing", []Item{{Local: filepath.Join(tmp, "nope")}}, "no such file"},
		{"duplicate name", []Item{{Local: a}, {Local: a2}}, `link name "a" is used by`},
		{"directory", []Item{{Local: sub}}, "not a regular file"},
		{"fifo", []Item{{Local: fifo}}, "not a regular file"}, // and no wait for a writer
		{"archive stored as a file's name", []Item{{Local: a, Name: "v.tgz"}, {Local: tgz, Name: "v", Type: records.LocalArchive}},
			`archive "v" would be stored as "v.tgz", the link name of`},
		{"archive's stored name too long", []Item{{Local: tgz, Name: strings.Repeat("v", 252), Type: records.LocalArchive}},
			"more than the 255 bytes HDFS allows"},
		{"bad name", []Item{{Local: a, Name: "x/y"}}, "not a plain file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemFS()
			c := testClient(t, m, Options{})
			_, _, err := c.Stage(context.Background(), "application_1_0003", tc.items, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrLocalFile)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, m.paths("/user"), "HDFS not touched")
		})
	}
}

func TestCreateExisting(t *testing.T) {
	m := newMemFS()
	c := testClient(t, m, Options{})
	_, err := c.Create(context.Background(), "application_1_0004")
	require.NoError(t, err)
	_, err = c.Create(context.Background(), "application_1_0004")
	require.ErrorIs(t, err, ErrExists)
	assert.Equal(t, os.FileMode(0o755), m.dirs["/user/alice"], "a missing home is created world-readable")
}

func TestParseItem(t *testing.T) {
	tmp := t.TempDir()
	f := writeLocal(t, tmp, "model.bin", []byte("m"))
	tgz := writeLocal(t, tmp, "venv.tar.gz", []byte("\x1f\x8b\x08"))
	zip := writeLocal(t, tmp, "lib.zip", []byte("PK\x03\x04"))
	tar := writeLocal(t, tmp, "plain.tar", []byte("t"))
	fakeTgz := writeLocal(t, tmp, "fake.tgz", []byte("plain tar, not gzip"))
	fakeJar := writeLocal(t, tmp, "fake.jar", []byte("\x1f\x8b"))
	emptyZip := writeLocal(t, tmp, "empty.zip", nil)
	hashed := writeLocal(t, tmp, "run#1.log", []byte("h"))
	writeLocal(t, tmp, "run", []byte("another file"))
	cases := []struct {
		arg  string
		typ  records.LocalResourceType
		want Item
		err  string
	}{
		{arg: f, typ: records.LocalFile, want: Item{Local: f, Name: "model.bin", Type: records.LocalFile}},
		{arg: f + "#weights", typ: records.LocalFile, want: Item{Local: f, Name: "weights", Type: records.LocalFile}},
		{arg: tgz + "#venv", typ: records.LocalArchive, want: Item{Local: tgz, Name: "venv", Type: records.LocalArchive}},
		{arg: f, typ: records.LocalArchive, err: "not an archive"},
		{arg: zip + "#lib", typ: records.LocalArchive, want: Item{Local: zip, Name: "lib", Type: records.LocalArchive}},
		{arg: tar + "#t", typ: records.LocalArchive, want: Item{Local: tar, Name: "t", Type: records.LocalArchive}},
		{arg: fakeTgz + "#v", typ: records.LocalArchive, err: "is not gzip-compressed, and the NodeManager unpacks a .tar.gz or .tgz with gunzip"},
		{arg: fakeJar + "#v", typ: records.LocalArchive, err: "is not a zip file"},
		{arg: emptyZip + "#v", typ: records.LocalArchive, err: "is not a zip file"},
		{arg: fakeTgz + "#v", typ: records.LocalFile, want: Item{Local: fakeTgz, Name: "v", Type: records.LocalFile}},
		{arg: filepath.Join(tmp, "missing.txt"), typ: records.LocalFile, err: "does not exist"},
		{arg: tmp + "#d", typ: records.LocalFile, err: "is a directory (pack it"},
		{arg: "#x", typ: records.LocalFile, err: "no local path"},
		{arg: hashed, typ: records.LocalFile, err: "exists, but the first '#' ends LOCAL (here " + filepath.Join(tmp, "run") + ")"},
		{arg: filepath.Join(tmp, "missing#1.log"), typ: records.LocalFile, err: "missing does not exist"},
		{arg: f + "#a/b", typ: records.LocalFile, err: "not a plain file name"},
		{arg: f + "#..", typ: records.LocalFile, err: "not a plain file name"},
		{arg: f + "#a b ü%?#x", typ: records.LocalFile, want: Item{Local: f, Name: "a b ü%?#x", Type: records.LocalFile}},
		{arg: f + "#a:b", typ: records.LocalFile, err: "holds a ':', which HDFS refuses"},
		{arg: f + "#$HOME", typ: records.LocalFile, err: "launch script would interpret"},
		{arg: f + "#a`id`", typ: records.LocalFile, err: "launch script would interpret"},
		{arg: f + `#a"b`, typ: records.LocalFile, err: "launch script would interpret"},
		{arg: f + `#a\b`, typ: records.LocalFile, err: "launch script would interpret"},
		{arg: f + "#*", typ: records.LocalFile, err: "wildcard"},
		{arg: f + "#\xff", typ: records.LocalFile, err: "not valid UTF-8"},
		{arg: f + "#" + strings.Repeat("n", 256), typ: records.LocalFile, err: "more than the 255"},
		{arg: f + "#" + strings.Repeat("n", 255), typ: records.LocalFile, want: Item{Local: f, Name: strings.Repeat("n", 255), Type: records.LocalFile}},
		{arg: f + "#.snapshot", typ: records.LocalFile, err: "reserved by HDFS"},
		{arg: f + "#launch_container.sh", typ: records.LocalFile, err: "NodeManager puts into every container's working directory"},
		{arg: f + "#container_tokens", typ: records.LocalFile, err: "NodeManager puts into every container's working directory"},
		{arg: tgz + "#tmp", typ: records.LocalArchive, err: "NodeManager puts into every container's working directory"},
	}
	for _, tc := range cases {
		t.Run(tc.arg, func(t *testing.T) {
			it, err := ParseItem(tc.arg, tc.typ)
			if tabletest.WantErr(t, err, tc.err, ErrLocalFile) {
				return
			}
			assert.Equal(t, tc.want, it)
		})
	}
}

// A file this user cannot read is refused by ParseItem, before a submission reaches the cluster.
func TestParseItemUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	f := writeLocal(t, t.TempDir(), "secret.bin", []byte("s"))
	require.NoError(t, os.Chmod(f, 0))
	_, err := ParseItem(f, records.LocalFile)
	require.ErrorIs(t, err, ErrLocalFile)
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.Contains(t, err.Error(), `--file "`+f+`"`)
}

func TestDialConfiguration(t *testing.T) {
	hc := func(kv ...string) *conf.HadoopConfig {
		c := &conf.HadoopConfig{}
		for i := 0; i < len(kv); i += 2 {
			c.Set(kv[i], kv[i+1], conf.Source{File: "core-site.xml", Line: 3})
		}
		return c
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
		nns  []string // NameserviceNameNodes
		err  error
		msg  string
	}{
		{name: "defaultFS", opts: Options{HadoopConf: hc("fs.defaultFS", "hdfs://nn:9000")}, want: "hdfs://nn:9000"},
		{name: "HA nameservice", opts: Options{HadoopConf: hc("fs.defaultFS", "hdfs://ns1", "dfs.ha.namenodes.ns1", "nn1, nn2",
			"dfs.namenode.rpc-address.ns1.nn1", "h1:8020", "dfs.namenode.rpc-address.ns1.nn2", "h2:8020",
			"dfs.namenode.rpc-address.other.nn1", "h3:8020")}, want: "hdfs://ns1", nns: []string{"h1:8020", "h2:8020"}},
		{name: "HA NameNode without its address", opts: Options{HadoopConf: hc("fs.defaultFS", "hdfs://ns1", "dfs.ha.namenodes.ns1", "nn1,nn2",
			"dfs.namenode.rpc-address.ns1.nn1", "h1:8020")}, err: ErrNoFileSystem, msg: `NameNode nn2: dfs.namenode.rpc-address.ns1.nn2 = "": want host:port`},
		{name: "nameservice", opts: Options{HadoopConf: hc("fs.defaultFS", "hdfs://mycluster/")}, want: "hdfs://mycluster"},
		{name: "not set", opts: Options{HadoopConf: hc()}, err: ErrNoFileSystem, msg: "set fs.defaultFS"},
		{name: "local fs", opts: Options{HadoopConf: hc("fs.defaultFS", "file:///")}, err: ErrNoFileSystem, msg: "core-site.xml:3"},
		{name: "no user", opts: Options{User: " ", DefaultFS: "hdfs://nn:1"}, msg: "no HDFS user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.fs = newMemFS()
			if tc.opts.User == "" {
				tc.opts.User = "bob"
			}
			c, err := Dial(context.Background(), tc.opts)
			if tc.err != nil || tc.msg != "" {
				require.Error(t, err)
				if tc.err != nil {
					assert.ErrorIs(t, err, tc.err)
				}
				assert.Contains(t, err.Error(), tc.msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.DefaultFS())
			assert.Equal(t, tc.want+"/user/bob/.yarn-er/x", c.URL(c.BaseDir()+"/x"))
			assert.Equal(t, tc.nns, c.NameserviceNameNodes())
		})
	}
}

func TestDialUnreachable(t *testing.T) {
	// A port nothing listens on: the NameNode connection is refused.
	_, err := Dial(context.Background(), Options{DefaultFS: "hdfs://127.0.0.1:1", User: "alice", DialTimeout: time.Second})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	var se *Error
	require.True(t, errors.As(err, &se))
	assert.NotEmpty(t, se.Fix)
	assert.False(t, errors.Is(err, fs.ErrPermission))
}

func FuzzParseItem(f *testing.F) {
	for _, s := range []string{"/etc/hostname", "/etc/hostname#h", "#x", "a#b#c", "/tmp#..", "venv.tgz#venv"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, arg string, archive bool) {
		typ := records.LocalFile
		if archive {
			typ = records.LocalArchive
		}
		it, err := ParseItem(arg, typ)
		if err != nil {
			if !errors.Is(err, ErrLocalFile) {
				t.Fatalf("%q: error %v is not ErrLocalFile", arg, err)
			}
			return
		}
		if checkLinkName(it.Name) != nil || it.Local == "" || it.Type != typ {
			t.Fatalf("%q: bad item %+v", arg, it)
		}
	})
}

// A local file that changes size while it is uploaded fails the staging, which removes what it
// created: the size the NodeManager checks would not be the file's.
func TestStageFileChangesSize(t *testing.T) {
	tmp := t.TempDir()
	big := writeLocal(t, tmp, "grows.bin", bytes.Repeat([]byte{7}, 2*chunkSize))
	m := newMemFS()
	c := testClient(t, m, Options{})
	grown := false
	_, _, err := c.Stage(context.Background(), "application_1_0009", []Item{{Local: big}}, func(p Progress) {
		if !grown && p.FileBytes > 0 {
			grown = true
			f, err := os.OpenFile(big, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte("more"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}
	})
	require.ErrorIs(t, err, ErrLocalFile)
	assert.Contains(t, err.Error(), "HDFS has 2097156 bytes, the file had 2097152 when staging began")
	assert.Contains(t, err.Error(), big+" changed while it was staged")
	assert.Empty(t, m.paths("/user/alice/.yarn-er/application_1_0009"), "nothing left on HDFS")
}
