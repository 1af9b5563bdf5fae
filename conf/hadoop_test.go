package conf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadHadoopTestdata(t *testing.T) {
	dir, err := filepath.Abs("testdata/hadoop")
	require.NoError(t, err)
	cfg, err := LoadHadoop(HadoopOptions{Dir: "testdata/hadoop", Getenv: envMap(nil)})
	require.NoError(t, err)

	assert.Equal(t, dir, cfg.Dir())
	var want []string
	for _, f := range HadoopFileNames() {
		want = append(want, filepath.Join(dir, f))
	}
	assert.Equal(t, want, cfg.Files())
	assert.True(t, cfg.HasFile("capacity-scheduler.xml"))
	assert.True(t, cfg.HasFile("hdfs-site.xml"))

	values := map[string]string{
		"fs.defaultFS":                                              "hdfs://nn.example.com:8020",
		"hadoop.tmp.dir":                                            "/tmp/hadoop-${user.name}", // Java system properties do not exist here
		"cluster.log.dir":                                           "/var/log/hadoop",          // ${env.HADOOP_LOG_DIR:-/var/log/hadoop}
		"yarn.nodemanager.log-dirs":                                 "/var/log/hadoop/userlogs",
		"yarn.resourcemanager.webapp.address":                       "rm.example.com:8088",
		"hadoop.security.authentication":                            "simple",
		"dfs.namenode.kerberos.principal":                           "nn/_HOST@EXAMPLE.COM",
		"yarn.resource-types":                                       "yarn.io/gpu,yarn.io/fpga",
		"yarn.nodemanager.resource-type.yarn.io/gpu":                "4",
		"yarn.nodemanager.resource-type.yarn.io/fpga":               "1",
		"yarn.scheduler.capacity.root.gpu.capacity":                 "40",
		"yarn.nodemanager.resource.memory-mb":                       " 65536 ",
		"yarn.resource-types.yarn.io/fpga.units":                    "",
		"yarn.scheduler.capacity.resource-calculator":               "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
		"yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices": "auto",
	}
	for name, v := range values {
		assert.Equal(t, v, cfg.Get(name), name)
	}
	_, ok := cfg.Lookup("yarn.resource-types.yarn.io/fpga.units")
	assert.False(t, ok, "an empty <value></value> is not a setting")

	mem, ok := cfg.Lookup("yarn.nodemanager.resource.memory-mb")
	require.True(t, ok)
	assert.Equal(t, "65536", mem.TrimmedValue())
	assert.Equal(t, " 65536 ", mem.Raw)
	assert.Equal(t, filepath.Join(dir, "yarn-site.xml")+":31", mem.Source.String())

	logs, ok := cfg.Lookup("yarn.nodemanager.log-dirs")
	require.True(t, ok)
	assert.Equal(t, "${cluster.log.dir}/userlogs", logs.Raw)

	auth, ok := cfg.Lookup("hadoop.security.authentication")
	require.True(t, ok)
	assert.True(t, auth.Final)
	assert.Equal(t, filepath.Join(dir, "core-site.xml")+":16", auth.Source.String())

	ws := cfg.Warnings()
	require.Len(t, ws, 2, warningsText(ws))
	assert.Equal(t, filepath.Join(dir, "yarn-site.xml")+":39", ws[0].Source.String())
	assert.Contains(t, ws[0].Message, "Attempt to override final parameter: hadoop.security.authentication; Ignoring.")
	assert.Contains(t, ws[0].Message, "core-site.xml:16")
	assert.Equal(t, filepath.Join(dir, "resource-types.xml")+":7", ws[1].Source.String())
	assert.Contains(t, ws[1].Message, "yarn.resource-types.yarn.io/fpga.units has no value")

	for _, w := range ws {
		assert.Contains(t, w.Message, "fix:")
	}

	caps := cfg.WithPrefix("yarn.scheduler.capacity.root.")
	var names []string
	for _, p := range caps {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{
		"yarn.scheduler.capacity.root.default.capacity",
		"yarn.scheduler.capacity.root.gpu.capacity",
		"yarn.scheduler.capacity.root.gpu.maximum-capacity",
		"yarn.scheduler.capacity.root.queues",
	}, names)
	assert.Len(t, cfg.Names(), 25)

	withEnv, err := LoadHadoop(HadoopOptions{Dir: "testdata/hadoop", Getenv: envMap(map[string]string{"HADOOP_LOG_DIR": "/data/logs"})})
	require.NoError(t, err)
	assert.Equal(t, "/data/logs/userlogs", withEnv.Get("yarn.nodemanager.log-dirs"))
}

func TestLoadHadoopDirResolution(t *testing.T) {
	root := t.TempDir()
	confDir := filepath.Join(root, "conf")
	writeFile(t, filepath.Join(confDir, "yarn-site.xml"), "<configuration><property><name>src</name><value>conf</value></property></configuration>")
	home := filepath.Join(root, "home")
	writeFile(t, filepath.Join(home, "etc", "hadoop", "yarn-site.xml"), "<configuration><property><name>src</name><value>home</value></property></configuration>")
	empty := filepath.Join(root, "empty")
	require.NoError(t, os.MkdirAll(empty, 0o755))

	tests := []struct {
		name    string
		dir     string
		env     map[string]string
		want    string
		warning string
	}{
		{name: "named dir", dir: confDir, env: map[string]string{"HADOOP_CONF_DIR": filepath.Join(home, "etc", "hadoop")}, want: "conf"},
		{name: "HADOOP_CONF_DIR", env: map[string]string{"HADOOP_CONF_DIR": confDir, "HADOOP_HOME": home}, want: "conf"},
		{name: "HADOOP_HOME/etc/hadoop", env: map[string]string{"HADOOP_HOME": home}, want: "home"},
		{name: "dir without any file", dir: empty, want: "", warning: "no Hadoop configuration files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadHadoop(HadoopOptions{Dir: tt.dir, Getenv: envMap(tt.env)})
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Get("src"))
			if tt.warning != "" {
				require.Len(t, cfg.Warnings(), 1)
				assert.Contains(t, cfg.Warnings()[0].Message, tt.warning)
				assert.Empty(t, cfg.Files())
			}
		})
	}

	_, err := LoadHadoop(HadoopOptions{Getenv: envMap(nil)})
	assert.ErrorIs(t, err, ErrNotConfigured)

	errTests := []struct {
		name string
		opts HadoopOptions
		src  string
		msg  string
	}{
		{name: "named dir missing", opts: HadoopOptions{Dir: filepath.Join(root, "nope")}, src: filepath.Join(root, "nope"), msg: "(from --hadoop-conf) does not exist"},
		{name: "HADOOP_CONF_DIR missing", opts: HadoopOptions{Getenv: envMap(map[string]string{"HADOOP_CONF_DIR": filepath.Join(root, "gone")})}, src: filepath.Join(root, "gone"), msg: "from HADOOP_CONF_DIR"},
		{name: "a file, not a dir", opts: HadoopOptions{Dir: filepath.Join(confDir, "yarn-site.xml")}, src: filepath.Join(confDir, "yarn-site.xml"), msg: "not a directory"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Getenv == nil {
				tt.opts.Getenv = envMap(nil)
			}
			cfg, err := LoadHadoop(tt.opts)
			assert.Nil(t, cfg)
			requireConfError(t, err, tt.src, tt.msg)
			assert.False(t, errors.Is(err, ErrNotConfigured))
		})
	}
}

// hadoopDir writes files (base name → content) into a fresh directory and returns it.
func hadoopDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	return dir
}

func props(ps ...string) string {
	var b strings.Builder
	b.WriteString("<configuration>\n")
	for _, p := range ps {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

func TestLoadHadoopOverridesAndFinal(t *testing.T) {
	dir := hadoopDir(t, map[string]string{
		"core-site.xml": props(
			`<property><name>a</name><value>core</value></property>`,
			`<property><name>f</name><value>core</value><final>true</final></property>`,
			`<property><name>novalue</name><final>true</final></property>`,
			`<property><name>dup</name><value>1</value></property>`,
			`<property><name>dup</name><value>2</value></property>`,
			`<property><name>ff</name><value>1</value><final>true</final></property>`,
			`<property><name>ff</name><value>2</value></property>`,
		),
		"yarn-site.xml": props(
			`<property><name>a</name><value>yarn</value></property>`,
			`<property><name>f</name><value>yarn</value></property>`,
			`<property><name>f</name><value>core</value></property>`,
			`<property><name>novalue</name><value>yarn</value></property>`,
		),
		"capacity-scheduler.xml": props(`<property><name>a</name><value>cs</value></property>`),
	})
	cfg, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: envMap(nil)})
	require.NoError(t, err)
	assert.Equal(t, "cs", cfg.Get("a"), "later files override")
	assert.Equal(t, filepath.Join(dir, "capacity-scheduler.xml")+":2", mustLookup(t, cfg.Lookup, "a").Source.String())
	assert.Equal(t, "core", cfg.Get("f"), "final blocks later files")
	assert.Equal(t, "2", cfg.Get("dup"), "same file: the later wins")
	assert.Equal(t, "1", cfg.Get("ff"), "final blocks a later line of the same file too")
	_, ok := cfg.Lookup("novalue")
	assert.False(t, ok, "a final property without value is not set, but stays final")

	text := warningsText(cfg.Warnings())
	assert.Contains(t, text, filepath.Join(dir, "core-site.xml")+":6: dup is set again in the same file (first at line 5)")
	assert.Contains(t, text, filepath.Join(dir, "core-site.xml")+":8: Attempt to override final parameter: ff; Ignoring.")
	assert.Contains(t, text, filepath.Join(dir, "yarn-site.xml")+":3: Attempt to override final parameter: f; Ignoring.")
	assert.NotContains(t, text, "yarn-site.xml:4:", "re-setting a final property to the same value is silent, as in Hadoop")
	assert.Contains(t, text, filepath.Join(dir, "core-site.xml")+":4: novalue has no value")
	assert.NotContains(t, text, "yarn-site.xml:5:", "a property made final without a value blocks silently (no old value to compare)")
	assert.NotContains(t, text, "capacity-scheduler.xml", "overrides across files are normal")
}

func TestLoadHadoopMalformed(t *testing.T) {
	dir := hadoopDir(t, map[string]string{
		"core-site.xml": props(`<property><name>a</name><value>1</value></property>`),
		"yarn-site.xml": "<configuration>\n<property>\n<name>a</name>\n<value>x</valu>\n</property>\n</configuration>\n",
	})
	cfg, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: envMap(nil)})
	assert.Nil(t, cfg)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, filepath.Join(dir, "yarn-site.xml")+":4", ce.Source.String())
	assert.Contains(t, err.Error(), "malformed XML")
	assert.Contains(t, ce.Fix, "xmllint")
}

func TestLoadHadoopIncludes(t *testing.T) {
	const xi = `xmlns:xi="http://www.w3.org/2001/XInclude"`
	dir := hadoopDir(t, map[string]string{
		"yarn-site.xml": "<configuration " + xi + ">\n" +
			"<property><name>before</name><value>1</value></property>\n" +
			"<xi:include href=\"sub/gpu.xml\"/>\n" +
			"<xi:include href=\"missing.xml\"><xi:fallback><property><name>fb</name><value>used</value></property></xi:fallback></xi:include>\n" +
			"<property><name>after</name><value>${inc}</value></property>\n" +
			"</configuration>\n",
		"sub/gpu.xml": "<configuration " + xi + ">\n<property><name>inc</name><value>from-sub</value></property>\n" +
			"<xi:include href=\"deeper.xml\"><xi:fallback><property><name>skipped</name><value>x</value></property></xi:fallback></xi:include>\n</configuration>\n",
		"sub/deeper.xml": props(`<property><name>deep</name><value>yes</value></property>`),
	})
	cfg, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: envMap(nil)})
	require.NoError(t, err)
	assert.Equal(t, "from-sub", cfg.Get("inc"))
	assert.Equal(t, filepath.Join(dir, "sub", "gpu.xml")+":2", mustLookup(t, cfg.Lookup, "inc").Source.String())
	assert.Equal(t, "yes", cfg.Get("deep"), "includes are resolved relative to the including file")
	assert.Equal(t, "used", cfg.Get("fb"))
	_, ok := cfg.Lookup("skipped")
	assert.False(t, ok, "the fallback of an include that worked is ignored")
	assert.Equal(t, "from-sub", cfg.Get("after"))
	assert.Equal(t, []string{filepath.Join(dir, "yarn-site.xml")}, cfg.Files())

	errTests := []struct {
		name  string
		files map[string]string
		src   string
		msg   string
	}{
		{
			name:  "missing without fallback",
			files: map[string]string{"yarn-site.xml": "<configuration " + xi + ">\n<xi:include href=\"nope.xml\"/>\n</configuration>"},
			src:   "yarn-site.xml:2", msg: "Fetch fail on include for 'nope.xml' with no fallback",
		},
		{
			name: "cycle",
			files: map[string]string{
				"yarn-site.xml": "<configuration " + xi + ">\n<xi:include href=\"a.xml\"/>\n</configuration>",
				"a.xml":         "<configuration " + xi + ">\n\n<xi:include href=\"yarn-site.xml\"/>\n</configuration>",
			},
			src: "a.xml:3", msg: "include cycle",
		},
		{
			name: "malformed included file",
			files: map[string]string{
				"yarn-site.xml": "<configuration " + xi + ">\n<xi:include href=\"a.xml\"/>\n</configuration>",
				"a.xml":         "<configuration>\n<property>\n</configuration>",
			},
			src: "a.xml:3", msg: "malformed XML",
		},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			d := hadoopDir(t, tt.files)
			_, err := LoadHadoop(HadoopOptions{Dir: d, Getenv: envMap(nil)})
			requireConfError(t, err, filepath.Join(d, tt.src), tt.msg)
		})
	}
}

func TestHadoopSubstitute(t *testing.T) {
	cfg := &HadoopConfig{}
	for name, raw := range map[string]string{
		"host":          "rm.example.com",
		"addr":          "${host}:8088",
		"url":           "http://${addr}/ws",
		"self":          "x${self}",
		"loop.a":        "${loop.b}",
		"loop.b":        "${loop.a}",
		"ab":            "joined",
		"b":             "b",
		"empty":         "",
		"env.FROM_CONF": "conf",
	} {
		cfg.set(xmlProp{Property: Property{Name: name, Raw: raw, Source: Source{File: "core-site.xml", Line: 1}}, hasValue: true})
	}
	env := map[string]string{"HOME_DIR": "/home/u", "EMPTY": ""}
	cfg.lookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	tests := []struct {
		expr    string
		want    string
		problem string
	}{
		{expr: "plain", want: "plain"},
		{expr: "${host}", want: "rm.example.com"},
		{expr: "${url}", want: "http://rm.example.com:8088/ws"},
		{expr: "${host}-${host}", want: "rm.example.com-rm.example.com"},
		{expr: "${unknown}/${host}", want: "${unknown}/${host}"}, // Hadoop stops at the first unresolved reference
		{expr: "${host}/${unknown}/${host}", want: "rm.example.com/${unknown}/${host}"},
		{expr: "${}", want: "${}"},
		{expr: "${ host}", want: "${ host}"},
		{expr: "$${host}", want: "$rm.example.com"},
		{expr: "${a${b}}", want: "joined"},
		{expr: "{host}", want: "{host}"},
		{expr: "${host", want: "${host"},
		{expr: "${empty}x", want: "x"},
		{expr: "${self}", want: "${self}", problem: "refers to itself through ${self}"},
		{expr: "${loop.a}", want: "${loop.a}", problem: "Variable substitution depth too large: 20 (chain: loop.a -> loop.b -> loop.a"},
		{expr: "${env.HOME_DIR}/x", want: "/home/u/x"},
		{expr: "${env.MISSING}", want: "${env.MISSING}"},
		{expr: "${env.FROM_CONF}", want: "conf"}, // unset variable: Hadoop falls back to a property of that name
		{expr: "${env.MISSING:-/def}", want: "/def"},
		{expr: "${env.EMPTY:-/def}", want: "/def"},
		{expr: "${env.HOME_DIR:-/def}", want: "/home/u"},
		{expr: "${env.MISSING-/def}", want: "/def"},
		{expr: "${env.EMPTY-/def}", want: ""},
		{expr: "${env.MISSING:-}", want: ""},
		{expr: "${env.}", want: "${env.}"},
		{expr: "${env.MISSING:-${host}}", want: "rm.example.com"}, // inner reference first, then the default
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, problem, _ := cfg.substitute(tt.expr, DefaultMaxValueBytes, DefaultMaxTotalBytes)
			assert.Equal(t, tt.want, got)
			if tt.problem == "" {
				assert.Empty(t, problem)
			} else {
				assert.Contains(t, problem, tt.problem)
				assert.Contains(t, problem, "fix:")
			}
		})
	}

	cfg.expandAll()
	text := warningsText(cfg.Warnings())
	assert.Contains(t, text, "core-site.xml:1: loop.a: Variable substitution depth too large")
	assert.Contains(t, text, "core-site.xml:1: self: value refers to itself")
	assert.Equal(t, "${loop.b}", cfg.Get("loop.a"), "a cyclic value stays as written")
}

func TestHadoopConfigSet(t *testing.T) {
	cfg, err := LoadHadoop(HadoopOptions{Dir: "testdata/hadoop", Getenv: envMap(nil)})
	require.NoError(t, err)
	before := len(cfg.Warnings())

	rm := Source{Flag: "RM /conf"}
	cfg.Set("yarn.resourcemanager.hostname", "rm2.example.com", rm)
	assert.Equal(t, "rm2.example.com:8088", cfg.Get("yarn.resourcemanager.webapp.address"), "dependents are re-expanded")
	assert.Equal(t, rm, mustLookup(t, cfg.Lookup, "yarn.resourcemanager.hostname").Source)

	cfg.Set("hadoop.security.authentication", "kerberos", rm)
	assert.Equal(t, "simple", cfg.Get("hadoop.security.authentication"), "Set honours final")
	ws := cfg.Warnings()
	require.Len(t, ws, before+1)
	assert.Contains(t, ws[before].String(), "RM /conf: Attempt to override final parameter: hadoop.security.authentication")

	cfg.Set("new.key", "${yarn.resourcemanager.hostname}", rm)
	assert.Equal(t, "rm2.example.com", cfg.Get("new.key"))

	var zero HadoopConfig
	zero.Set("a", "1", rm)
	assert.Equal(t, "1", zero.Get("a"))
	assert.Equal(t, []string{"a"}, zero.Names())
	assert.Empty(t, zero.Files())
	assert.Equal(t, "", zero.Dir())

	var nilCfg *HadoopConfig
	assert.Equal(t, "", nilCfg.Get("a"))
	assert.Nil(t, nilCfg.Names())
	assert.False(t, nilCfg.HasFile("yarn-site.xml"))
}

func TestHadoopGetBool(t *testing.T) {
	dir := hadoopDir(t, map[string]string{
		"yarn-site.xml": props(
			`<property><name>t</name><value>true</value></property>`,
			`<property><name>T</name><value> TRUE </value></property>`,
			`<property><name>f</name><value>False</value></property>`,
			`<property><name>blank</name><value>  </value></property>`,
			`<property><name>bad</name><value>yes</value></property>`,
		),
	})
	cfg, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: envMap(nil)})
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		def, want bool
	}{
		{"t", false, true},
		{"T", false, true},
		{"f", true, false},
		{"blank", true, true},  // Hadoop: a blank value is the default
		{"bad", true, true},    // Hadoop: neither true nor false is the default
		{"bad", false, false},  // ... whichever it is
		{"absent", true, true}, // absent: the default
		{"absent", false, false},
	} {
		assert.Equal(t, tc.want, cfg.GetBool(tc.name, tc.def), "GetBool(%q, %v)", tc.name, tc.def)
	}
}

func TestTrimmedStrings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" \n ", nil},
		{"yarn.io/gpu,yarn.io/fpga", []string{"yarn.io/gpu", "yarn.io/fpga"}},
		{" a ,\n b ,", []string{"a", "b"}}, // trailing empty items dropped
		{",a", []string{"", "a"}},          // a leading empty item is kept, as in Hadoop
		{"a, ,b", []string{"a", "", "b"}},  // so is one in the middle
		{"a\nb", []string{"a", "b"}},       // newlines separate too
	} {
		assert.Equal(t, tc.want, TrimmedStrings(tc.in), "TrimmedStrings(%q)", tc.in)
	}
	dir := hadoopDir(t, map[string]string{"yarn-site.xml": props(`<property><name>l</name><value> x , y </value></property>`)})
	cfg, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: envMap(nil)})
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "y"}, cfg.GetTrimmedStrings("l"))
	assert.Nil(t, cfg.GetTrimmedStrings("absent"))
}
