//go:build unix

package conf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileBudget is what one hostile load may allocate in all (runtime.MemStats.TotalAlloc), well
// inside the 256 MB a command may use.
const hostileBudget = 256 << 20

// hangDeadline is how long bounded waits before it calls a load a hang.
const hangDeadline = 3 * time.Minute

// bounded runs fn in a goroutine, fails the test if it has not returned after a generous deadline (a
// hang, not a timing assertion: every case returns in well under a second on an idle machine, a
// few seconds under the race detector, and took over 20 s on a heavily loaded one), and logs the
// bytes it allocated and the peak of the heap in use above the heap before, sampled every
// millisecond (docs/benchmarks.md records them).
func bounded(t *testing.T, fn func()) {
	t.Helper()
	alloc, peak, ok := measureHeap(fn, time.After(hangDeadline))
	if !ok {
		t.Fatal("did not return: the input is not bounded")
	}
	assert.Less(t, alloc, uint64(hostileBudget), "allocated %d MiB", alloc>>20)
	t.Logf("allocated %d KiB, peak heap in use %d KiB above the heap before", alloc>>10, peak>>10)
}

// measureHeap runs fn in a goroutine and returns the bytes it allocated
// (runtime.MemStats.TotalAlloc) and the most heap in use (HeapInuse) above the heap before,
// sampled every millisecond. ok is false when deadline (nil: none) came first; fn then still runs.
func measureHeap(fn func(), deadline <-chan time.Time) (alloc, peak uint64, ok bool) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	most := before.HeapInuse
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			runtime.ReadMemStats(&after)
			most = max(most, after.HeapInuse)
			return after.TotalAlloc - before.TotalAlloc, most - before.HeapInuse, true
		case <-tick.C:
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			most = max(most, m.HeapInuse)
		case <-deadline:
			return 0, 0, false
		}
	}
}

// hostileXMLBytes is the size of the hostile XML files: what fits in the 16 MiB file limit.
const hostileXMLBytes = DefaultMaxFileBytes - 1024

// fillAttrs returns attributes written with format (one %d, numbered from 0) up to n bytes.
func fillAttrs(n int, format string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		a := fmt.Sprintf(format, i)
		if b.Len()+len(a) > n {
			return b.String()
		}
		b.WriteString(a)
	}
}

func xmlConf(body string) string { return xmlHead + "<configuration>\n" + body + "</configuration>\n" }

func xiInclude(href string) string {
	return `<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="` + href + `"/>` + "\n"
}

func TestHostileHadoopTrees(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		lim   Limits
		is    error  // the error wraps this
		want  string // and says this
		ok    func(t *testing.T, cfg *HadoopConfig)
	}{
		{name: "include fan-out: every file includes the next four times, 16 deep", setup: func(t *testing.T, dir string) {
			for i := 0; i < 16; i++ {
				body := ""
				if i == 15 {
					body = "<property><name>leaf</name><value>1</value></property>\n"
				} else {
					body = strings.Repeat(xiInclude(fmt.Sprintf("f%d.xml", i+1)), 4)
				}
				name := fmt.Sprintf("f%d.xml", i)
				if i == 0 {
					name = "yarn-site.xml"
				}
				writeFile(t, filepath.Join(dir, name), xmlConf(body))
			}
		}, is: ErrLimit, want: "properties: limit of 200000 exceeded"},
		{name: "a legal fan-out (two wide, eight deep) loads", setup: func(t *testing.T, dir string) {
			for i := 0; i < 8; i++ {
				body := strings.Repeat(xiInclude(fmt.Sprintf("g%d.xml", i+1)), 2)
				if i == 7 {
					body = "<property><name>leaf</name><value>1</value></property>\n"
				}
				name := fmt.Sprintf("g%d.xml", i)
				if i == 0 {
					name = "yarn-site.xml"
				}
				writeFile(t, filepath.Join(dir, name), xmlConf(body))
			}
		}, ok: func(t *testing.T, cfg *HadoopConfig) {
			assert.Equal(t, "1", cfg.Get("leaf"))
			for _, w := range cfg.Warnings() {
				assert.NotContains(t, w.Message, "set again", "a file included twice is the same file, read once")
			}
		}},
		{name: "includes over the count", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "a.xml"), xmlConf("<property><name>a</name><value>1</value></property>\n"))
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(strings.Repeat(xiInclude("a.xml"), 300)))
		}, is: ErrLimit, want: "includes: limit of 256 exceeded"},
		{name: "include of /dev/zero", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(xiInclude("/dev/zero")))
		}, is: ErrNotRegular, want: "/dev/zero: included at"},
		{name: "include of a FIFO", setup: func(t *testing.T, dir string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.xml"), 0o644))
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(xiInclude("pipe.xml")))
		}, is: ErrNotRegular, want: "a FIFO"},
		{name: "yarn-site.xml is a FIFO", setup: func(t *testing.T, dir string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "yarn-site.xml"), 0o644))
		}, is: ErrNotRegular, want: "yarn-site.xml: not a regular file: it is a FIFO"},
		{name: "yarn-site.xml is a link to /dev/zero", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "yarn-site.xml")))
		}, is: ErrNotRegular, want: "a character device"},
		{name: "yarn-site.xml is a loop of symbolic links", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink("yarn-site.xml", filepath.Join(dir, "yarn-site.xml")))
		}, is: syscall.ELOOP, want: "yarn-site.xml: stat " + "%DIR%/yarn-site.xml: too many levels of symbolic links (fix: fix the symbolic link: it leads back to itself"},
		{name: "an include that is a loop of symbolic links", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink("b.xml", filepath.Join(dir, "a.xml")))
			require.NoError(t, os.Symlink("a.xml", filepath.Join(dir, "b.xml")))
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(xiInclude("a.xml")))
		}, is: syscall.ELOOP, want: "included at %DIR%/yarn-site.xml:3: stat %DIR%/a.xml: too many levels of symbolic links (fix: fix the symbolic link"},
		{name: "a 100 MB yarn-site.xml", setup: func(t *testing.T, dir string) {
			p := filepath.Join(dir, "yarn-site.xml")
			writeFile(t, p, xmlConf(""))
			require.NoError(t, os.Truncate(p, 100<<20)) // sparse
		}, lim: Limits{RaiseHint: "pass --max-config-bytes"}, is: ErrLimit, want: "file size: limit of 16777216 exceeded (the file has 104857600 bytes or more) (fix: a configuration file is far smaller; check that this is the right file; to allow more, pass --max-config-bytes)"},
		{name: "files over the total", setup: func(t *testing.T, dir string) {
			body := strings.Repeat("<property><name>p</name><value>0123456789</value></property>\n", 14)
			writeFile(t, filepath.Join(dir, "core-site.xml"), xmlConf(body))
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(body))
		}, lim: Limits{MaxFileBytes: 1000, MaxTotalBytes: 1500}, is: ErrLimit, want: "yarn-site.xml: total size: limit of 1500 exceeded"},
		{name: "${var} amplification", setup: func(t *testing.T, dir string) {
			var b strings.Builder
			fmt.Fprintf(&b, "<property><name>a0</name><value>%s</value></property>\n", strings.Repeat("x", 100))
			for i := 1; i <= 8; i++ {
				fmt.Fprintf(&b, "<property><name>a%d</name><value>%s</value></property>\n", i, strings.Repeat(fmt.Sprintf("${a%d}", i-1), 10))
			}
			for i := 0; i < 200; i++ {
				fmt.Fprintf(&b, "<property><name>use%d</name><value>%s</value></property>\n", i, strings.Repeat("${a8}", 20))
			}
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(b.String()))
		}, ok: func(t *testing.T, cfg *HadoopConfig) {
			for _, n := range cfg.Names() {
				assert.LessOrEqual(t, len(cfg.Get(n)), DefaultMaxValueBytes, n)
			}
			assert.LessOrEqual(t, len(cfg.Warnings()), DefaultMaxWarnings+1)
		}},
		{name: "a value expanding past the value limit", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(
				"<property><name>big</name><value>"+strings.Repeat("y", 600)+"</value></property>\n"+
					"<property><name>twice</name><value>${big}${big}</value></property>\n"))
		}, lim: Limits{MaxValueBytes: 1000}, ok: func(t *testing.T, cfg *HadoopConfig) {
			assert.Equal(t, "${big}${big}", cfg.Get("twice"), "left as written")
			assert.Contains(t, warningsText(cfg.Warnings()), "twice: expanding ${big} would make the value longer than 1000 bytes")
		}},
		{name: "a capacity-scheduler.xml of 1,000 queues (2.3 MB, the realistic baseline) loads", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "capacity-scheduler.xml"), capacitySchedulerXML(1000))
		}, ok: func(t *testing.T, cfg *HadoopConfig) {
			assert.Equal(t, "RUNNING", cfg.Get("yarn.scheduler.capacity.root.team0999.state"))
		}},
		{name: "an element with 1.3 million attributes (16 MB)", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf("<property "+fillAttrs(hostileXMLBytes, "a%d=\"\" ")+"/>\n"))
		}, is: ErrLimit, want: "yarn-site.xml:3: attributes of one element: limit of 1000 exceeded (<property> has 1001 attributes or more) (fix: an element of a Hadoop configuration has a few attributes at most"},
		{name: "a root element with a million namespace declarations (16 MB)", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlHead+"<configuration "+fillAttrs(hostileXMLBytes, "xmlns:p%d=\"u\" ")+"/>\n")
		}, is: ErrLimit, want: "yarn-site.xml:2: attributes of one element: limit of 1000 exceeded (<configuration> has 1001 attributes or more)"},
		{name: "a 16 MB attribute value", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf("<property name=\"a\" value=\""+strings.Repeat("v", hostileXMLBytes)+"\"/>\n"))
		}, is: ErrLimit, want: "yarn-site.xml:3: start tag size: limit of 1048576 exceeded (the start tag of <property> has 1048577 bytes or more)"},
		{name: "a 16 MB element name", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf("<"+strings.Repeat("n", hostileXMLBytes)+"/>\n"))
		}, is: ErrLimit, want: "yarn-site.xml:3: start tag size: limit of 1048576 exceeded (the start tag of <nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn…> has 1048577 bytes or more)"},
		{name: "elements nested 5 million deep", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(strings.Repeat("<a>", hostileXMLBytes/3)))
		}, is: ErrLimit, want: "yarn-site.xml:3: element nesting: limit of 64 exceeded (<a> is nested 65 deep)"},
		{name: "100,000 properties without a name warn a handful of times", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(strings.Repeat("<property><value>1</value></property>\n", 100_000)))
		}, ok: func(t *testing.T, cfg *HadoopConfig) {
			ws := cfg.Warnings()
			assert.Len(t, ws, perKind)
			assert.Contains(t, ws[perKind-1].Message, "[and 99995 more like it in this file, the last at line 100002]")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			var cfg *HadoopConfig
			var err error
			bounded(t, func() { cfg, err = LoadHadoop(HadoopOptions{Dir: dir, Getenv: envMap(nil), Limits: tc.lim}) })
			if tc.ok != nil {
				require.NoError(t, err)
				tc.ok(t, cfg)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			var ce *Error
			require.ErrorAs(t, err, &ce, "a *conf.Error naming the file")
			assert.NotEmpty(t, ce.Source.File)
			assert.Contains(t, err.Error(), strings.ReplaceAll(tc.want, "%DIR%", dir))
		})
	}
}

func TestHostileFlinkConfigs(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the --flink-conf path
		is    error
		want  string
		ok    func(t *testing.T, cfg *FlinkConfig)
	}{
		{name: "/dev/zero", setup: func(t *testing.T, dir string) string { return "/dev/zero" },
			is: ErrNotRegular, want: "/dev/zero: not a regular file: it is a character device"},
		{name: "a FIFO config.yaml in the directory", setup: func(t *testing.T, dir string) string {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, FlinkYAMLFile), 0o644))
			return dir
		}, is: ErrNotRegular, want: "config.yaml: not a regular file: it is a FIFO"},
		{name: "a FIFO flink-conf.yaml named directly", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkLegacyFile)
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			return p
		}, is: ErrNotRegular, want: "a FIFO"},
		{name: "config.yaml is a loop of symbolic links", setup: func(t *testing.T, dir string) string {
			require.NoError(t, os.Symlink(FlinkYAMLFile, filepath.Join(dir, FlinkYAMLFile)))
			return dir
		}, is: syscall.ELOOP, want: "config.yaml: too many levels of symbolic links (fix: fix the symbolic link: it leads back to itself"},
		{name: "--flink-conf is a loop of symbolic links", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "conf")
			require.NoError(t, os.Symlink("conf", p))
			return p
		}, is: syscall.ELOOP, want: "conf: too many levels of symbolic links (fix: fix the symbolic link"},
		{name: "a 20 MB flink-conf.yaml", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkLegacyFile)
			writeFile(t, p, strings.Repeat("a: 1\n", 4<<20))
			return p
		}, is: ErrLimit, want: "file size: limit of 16777216 exceeded"},
		{name: "a 4 MB config.yaml of keys without values", setup: func(t *testing.T, dir string) string {
			// each "a," is two YAML nodes: the parser's tree alone would take about 1 GB
			p := filepath.Join(dir, FlinkYAMLFile)
			writeFile(t, p, "a: {"+strings.Repeat("a,", 2<<20)+"}\n")
			return p
		}, is: ErrLimit, want: "config.yaml: YAML size: limit of 524288 exceeded (the file has 4194310 bytes)"},
		{name: "a config.yaml just under the YAML size limit, every item with a comment", setup: func(t *testing.T, dir string) string {
			// the costliest shape per byte found: about 250 bytes of memory per byte of input
			p := filepath.Join(dir, FlinkYAMLFile)
			writeFile(t, p, "a: ["+strings.Repeat("x #\n,", (yamlMaxBytes-8)/5)+"x]\n")
			return p
		}, is: ErrLimit, want: "YAML nodes: limit of 100000 exceeded"},
		{name: "a 100 KB scalar repeated 5,000 times through aliases", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkYAMLFile)
			writeFile(t, p, "a: &a "+strings.Repeat("x", 100<<10)+"\nb: ["+strings.Repeat("*a,", 5000)+"*a]\n")
			return p
		}, is: ErrLimit, want: "config.yaml:2: b: flattened size: limit of 16777216 exceeded"},
		{name: "a 100 KB key over 3,000 nested entries", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkYAMLFile)
			writeFile(t, p, "? "+strings.Repeat("k", 100<<10)+"\n:\n"+aliasLines("  ", "1", 3000))
			return p
		}, is: ErrLimit, want: "flattened size: limit of 16777216 exceeded"},
		{name: "a 15 MB flink-conf.yaml of distinct keys", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkLegacyFile)
			var b strings.Builder
			for i := range 1_300_000 {
				fmt.Fprintf(&b, "k%07d: v\n", i)
			}
			writeFile(t, p, b.String())
			return p
		}, is: ErrLimit, want: "flink-conf.yaml:200001: properties: limit of 200000 exceeded (200001 distinct keys so far)"},
		{name: "2 MB of lines that are not key: value", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkLegacyFile)
			writeFile(t, p, "good: 1\n"+strings.Repeat("x\n", 1<<20))
			return p
		}, ok: func(t *testing.T, cfg *FlinkConfig) {
			assert.Equal(t, "1", cfg.Get("good"))
			ws := cfg.Warnings()
			assert.Len(t, ws, perKind, warningsText(ws))
			assert.Contains(t, ws[len(ws)-1].Message, "more like it in this file, the last at line 1048577")
		}},
		{name: "10 MB of duplicate keys", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkLegacyFile)
			writeFile(t, p, strings.Repeat("a: 1\n", 2<<20))
			return p
		}, ok: func(t *testing.T, cfg *FlinkConfig) {
			ws := cfg.Warnings()
			assert.Len(t, ws, perKind)
			assert.Contains(t, ws[perKind-1].Message, "a is set again (first at line 5)")
			assert.Contains(t, ws[perKind-1].Message, "[and 2097146 more like it in this file, the last at line 2097152]")
		}},
		{name: "many distinct duplicated keys: capped, with a count", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, FlinkLegacyFile)
			var b strings.Builder
			for i := 0; i < 5000; i++ {
				fmt.Fprintf(&b, "k%d: 1\nk%d: 2\n", i, i)
			}
			writeFile(t, p, b.String())
			return p
		}, ok: func(t *testing.T, cfg *FlinkConfig) {
			ws := cfg.Warnings()
			assert.Len(t, ws, DefaultMaxWarnings+1)
			assert.Equal(t, "4900 more warnings not shown (only the first 100 are kept)", ws[len(ws)-1].Message)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t, t.TempDir())
			var cfg *FlinkConfig
			var err error
			bounded(t, func() { cfg, err = LoadFlink(FlinkOptions{Path: path, Getenv: envMap(nil)}) })
			if tc.ok != nil {
				require.NoError(t, err)
				tc.ok(t, cfg)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.is), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadConfigFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	writeFile(t, p, "12345")
	data, err := ReadConfigFile(p, 5)
	require.NoError(t, err)
	assert.Equal(t, "12345", string(data))
	_, err = ReadConfigFile(p, 4)
	require.ErrorIs(t, err, ErrLimit)
	_, err = ReadConfigFile(filepath.Join(dir, "missing"), 0)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = ReadConfigFile(dir, 0)
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "a directory")
	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink("loop", loop))
	_, err = ReadConfigFile(loop, 0)
	require.ErrorIs(t, err, syscall.ELOOP)
	assert.Contains(t, err.Error(), "(fix: fix the symbolic link: it leads back to itself (a loop of links), or through more than the system allows)")
}
