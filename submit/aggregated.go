package submit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/logagg"
	"github.com/yarn-er/yarn-er/stage"
)

// LogFS is read access to the file system of YARN's remote log directory (HDFS).
type LogFS interface {
	// ReadDir lists a directory; a missing one is an error matching os.ErrNotExist.
	ReadDir(dir string) ([]os.FileInfo, error)
	// Open opens a file for reading.
	Open(name string) (LogFile, error)
	// Close releases the connection.
	Close() error
}

// LogFile is an open file of a LogFS.
type LogFile interface {
	io.ReaderAt
	io.Closer
	Stat() os.FileInfo
}

// ErrIndexedLogs: the application's logs were aggregated by the IndexedFile controller
// (yarn.log-aggregation.file-formats=IFile), whose format yarn-er does not read.
var ErrIndexedLogs = errors.New("aggregated logs in the IndexedFile format are not read")

// hdfsLogFS is LogFS on HDFS.
type hdfsLogFS struct {
	sc *stage.Client
}

func (h hdfsLogFS) ReadDir(dir string) ([]os.FileInfo, error) {
	c, _ := h.sc.HDFS()
	return c.ReadDir(dir)
}

func (h hdfsLogFS) Open(name string) (LogFile, error) {
	c, _ := h.sc.HDFS()
	return c.Open(name)
}

func (h hdfsLogFS) Close() error { return h.sc.Close() }

// openLogFS dials the cluster's HDFS (fs.defaultFS) for reading.
func (c *Client) openLogFS(ctx context.Context) (LogFS, error) {
	if c.opts.LogFS != nil {
		return c.opts.LogFS(ctx)
	}
	so := c.stageOptions()
	sc, err := stage.Dial(ctx, so)
	if err != nil {
		return nil, err
	}
	if web, ok := sc.WebHDFS(); ok {
		// --do-as: the proxy user's logs, listed and read through WebHDFS as that user.
		return webLogFS{sc: sc, web: web, ctx: ctx}, nil
	}
	if _, ok := sc.HDFS(); !ok {
		_ = sc.Close()
		return nil, errors.New("no HDFS client to read aggregated logs with")
	}
	if needsWebHDFS(c.opts.Stage.HadoopConf) {
		web, bases, err := sc.LoginWebHDFS()
		if err != nil {
			_ = sc.Close()
			return nil, fmt.Errorf("aggregated logs are read through WebHDFS on a Kerberized HDFS with dfs.data.transfer.protection integrity or privacy: %w", err)
		}
		c.log.Debug("reading aggregated logs through WebHDFS", "namenodes", bases)
		return webLogFS{sc: sc, web: web, ctx: ctx, login: true}, nil
	}
	return hdfsLogFS{sc: sc}, nil
}

// remoteLogDirs are the directories where the NodeManagers may have aggregated an application's
// logs, in the order Hadoop's readers look: the TFile controller's (Hadoop 3.3+:
// <root>/<user>/bucket-<suffix>-tfile/<bucket>/<appId>, <bucket> the application's sequence
// number modulo 10000 as four digits; 3.2: <root>/<user>/<suffix>-tfile/<appId>; earlier lines:
// <root>/<user>/<suffix>/<appId>), then the
// IndexedFile controller's, which is only detected. root is yarn.nodemanager.remote-app-log-dir
// (default /tmp/logs, or yarn.log-aggregation.TFile.remote-app-log-dir), suffix
// yarn.nodemanager.remote-app-log-dir-suffix (default logs, or
// yarn.log-aggregation.TFile.remote-app-log-dir-suffix).
func remoteLogDirs(hc *conf.HadoopConfig, user, appID string) (tfile, ifile []string) {
	get := func(keys []string, def string) string {
		if hc != nil {
			for _, k := range keys {
				if v := strings.TrimSpace(hc.Get(k)); v != "" {
					return v
				}
			}
		}
		return def
	}
	bucket := ""
	if i := strings.LastIndexByte(appID, '_'); i >= 0 {
		if n, err := strconv.ParseInt(appID[i+1:], 10, 64); err == nil && n >= 0 {
			bucket = fmt.Sprintf("%04d", n%10000)
		}
	}
	dirs := func(format string) []string {
		root := get([]string{"yarn.log-aggregation." + format + ".remote-app-log-dir", "yarn.nodemanager.remote-app-log-dir"}, "/tmp/logs")
		specific := get([]string{"yarn.log-aggregation." + format + ".remote-app-log-dir-suffix"}, "")
		base := get([]string{"yarn.nodemanager.remote-app-log-dir-suffix"}, "logs")
		var suffixes []string
		if specific != "" {
			suffixes = append(suffixes, specific)
		}
		suffixes = append(suffixes, base+"-"+strings.ToLower(format))
		if format == "TFile" {
			suffixes = append(suffixes, base)
		}
		userDir := path.Join(root, user)
		var out []string
		for _, s := range suffixes {
			if bucket != "" {
				out = append(out, path.Join(userDir, "bucket-"+s, bucket, appID))
			}
			out = append(out, path.Join(userDir, s, appID))
		}
		return out
	}
	return dirs("TFile"), dirs("IFile")
}

// nodeLogFile is one NodeManager's aggregated file of an application.
type nodeLogFile struct {
	path, node string
}

// findAggregated lists the application's aggregated node files: nil, nil when there are none
// (not aggregated, not yet, or removed by the retention); ErrIndexedLogs when only the
// IndexedFile controller's directory exists.
func findAggregated(fs LogFS, hc *conf.HadoopConfig, user, appID string) ([]nodeLogFile, string, error) {
	tdirs, idirs := remoteLogDirs(hc, user, appID)
	for _, d := range tdirs {
		fis, err := fs.ReadDir(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, d, fmt.Errorf("aggregated logs: list %s: %w", d, err)
		}
		var out []nodeLogFile
		for _, fi := range fis {
			name := fi.Name()
			if fi.IsDir() || strings.HasSuffix(name, ".tmp") {
				continue
			}
			node := name
			if i := strings.LastIndexByte(node, '_'); i > 0 {
				node = node[:i] + ":" + node[i+1:]
			}
			out = append(out, nodeLogFile{path: path.Join(d, name), node: node})
		}
		slices.SortFunc(out, func(a, b nodeLogFile) int { return strings.Compare(a.path, b.path) })
		return out, d, nil
	}
	for _, d := range idirs {
		if _, err := fs.ReadDir(d); err == nil {
			return nil, d, fmt.Errorf("%w: %s was written by the IndexedFile controller (yarn.log-aggregation.file-formats=IFile); read it with `yarn logs -applicationId %s`",
				ErrIndexedLogs, d, appID)
		}
	}
	return nil, "", nil
}

// maxAMLogScan bounds how much of an AM's stderr is scanned for its rank table.
const maxAMLogScan = 64 << 20

// isAMContainer: the ApplicationMaster is the first container of its attempt.
func isAMContainer(id string) bool { return strings.HasSuffix(id, "_000001") }

// rankTable maps container ids to their rank starts, read from the AMs' logs.
type rankTable map[string]jobspec.RankStart

// addAMLog reads the rank-start records of an AM's log.
func (t rankTable) addAMLog(r io.Reader) error {
	sc := bufio.NewScanner(io.LimitReader(r, maxAMLogScan))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if rs, ok := jobspec.ParseRankStart(sc.Text()); ok {
			t[rs.Container] = rs
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil // a line over 1 MiB is not the AM's; what came before is kept
	}
	return sc.Err()
}

// withFile opens an aggregated node file and runs fn on its reader.
func withFile(fs LogFS, nf nodeLogFile, fn func(*logagg.Reader) error) error {
	f, err := fs.Open(nf.path)
	if err != nil {
		return fmt.Errorf("aggregated logs: open %s: %w", nf.path, err)
	}
	defer f.Close()
	rd, err := logagg.NewReader(f, f.Stat().Size(), logagg.Limits{})
	if err != nil {
		return fmt.Errorf("aggregated logs: %s: %w", nf.path, err)
	}
	if err := fn(rd); err != nil {
		if errors.Is(err, logagg.ErrFormat) {
			return fmt.Errorf("aggregated logs: %s: %w", nf.path, err)
		}
		return err
	}
	return nil
}

// aggregatedRanks reads the rank table from the AMs' stderr in the aggregated files.
func aggregatedRanks(fs LogFS, files []nodeLogFile) (rankTable, error) {
	t := rankTable{}
	for _, nf := range files {
		err := withFile(fs, nf, func(rd *logagg.Reader) error {
			return rd.Logs(func(l logagg.Log) error {
				if isAMContainer(l.Container) && l.Name == "stderr" {
					return t.addAMLog(l.Body)
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}
