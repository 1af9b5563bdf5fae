package conf

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// requireConfError checks that err is an *Error from src (Source.String()) whose text contains msg
// and which says how to fix it, and returns it.
func requireConfError(t *testing.T, err error, src, msg string) *Error {
	t.Helper()
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, src, ce.Source.String())
	assert.Contains(t, err.Error(), msg)
	assert.NotEmpty(t, ce.Fix)
	return ce
}

func TestLoadFlinkLegacyAndStandardAreEquivalent(t *testing.T) {
	legacy, err := LoadFlink(FlinkOptions{Path: "testdata/flink/legacy", Getenv: envMap(nil)})
	require.NoError(t, err)
	standard, err := LoadFlink(FlinkOptions{Path: "testdata/flink/standard", Getenv: envMap(nil)})
	require.NoError(t, err)

	require.Len(t, legacy.Warnings(), 1)
	assert.Equal(t, filepath.Join("testdata/flink/legacy", "flink-conf.yaml"), legacy.Warnings()[0].Source.String())
	assert.Contains(t, legacy.Warnings()[0].Message, "Flink 2.x reads only config.yaml")
	assert.Empty(t, standard.Warnings())
	assert.Equal(t, []string{filepath.Join("testdata/flink/legacy", "flink-conf.yaml")}, legacy.Files())
	assert.Equal(t, []string{filepath.Join("testdata/flink/standard", "config.yaml")}, standard.Files())

	require.Equal(t, legacy.Keys(), standard.Keys())
	for _, k := range legacy.Keys() {
		assert.Equal(t, legacy.Get(k), standard.Get(k), k)
		li, lerr := mustLookup(t, legacy.Lookup, k).Items()
		si, serr := mustLookup(t, standard.Lookup, k).Items()
		assert.Equal(t, lerr == nil, serr == nil, k)
		assert.Equal(t, li, si, k)
	}
	assert.Equal(t, "0700", legacy.Get("blob.server.port"))
	assert.Equal(t, "1.10", standard.Get("flink.version.note"))
	assert.Equal(t, "gpu: training", legacy.Get("yarn.application.name"))
	assert.Equal(t, []string{"gpu", "fpga"}, mustLookup(t, standard.Lookup, "external-resources").List)
	assert.Nil(t, mustLookup(t, legacy.Lookup, "external-resources").List)

	gpu := standard.WithPrefix("external-resource.gpu.")
	require.Len(t, gpu, 5)
	assert.Equal(t, "external-resource.gpu.amount", gpu[0].Key)
	assert.Equal(t, "2", gpu[0].Value)
	assert.Equal(t, filepath.Join("testdata/flink/standard", "config.yaml")+":25", gpu[0].Source.String())
	assert.Equal(t, filepath.Join("testdata/flink/legacy", "flink-conf.yaml")+":24", mustLookup(t, legacy.Lookup, "external-resource.gpu.amount").Source.String())
}

// mustLookup returns what lookup finds for key (a FlinkConfig's or a HadoopConfig's Lookup) and
// fails the test when it finds nothing.
func mustLookup[V any](t *testing.T, lookup func(string) (V, bool), key string) V {
	t.Helper()
	v, ok := lookup(key)
	require.True(t, ok, key)
	return v
}

func TestLoadFlinkPathResolution(t *testing.T) {
	dir := t.TempDir()
	legacyDir := filepath.Join(dir, "legacy")
	writeFile(t, filepath.Join(legacyDir, "flink-conf.yaml"), "src: legacy\n")
	yamlDir := filepath.Join(dir, "yaml")
	writeFile(t, filepath.Join(yamlDir, "config.yaml"), "src: {x: yaml}\n")
	home := filepath.Join(dir, "home")
	writeFile(t, filepath.Join(home, "conf", "config.yaml"), "src: home\n")
	writeFile(t, filepath.Join(dir, "custom.yaml"), "src: custom\n")
	writeFile(t, filepath.Join(dir, "other", "flink-conf.yaml"), "src: named legacy\nbad: [1, 2\n")
	emptyDir := filepath.Join(dir, "empty")
	require.NoError(t, os.MkdirAll(emptyDir, 0o755))

	tests := []struct {
		name    string
		path    string
		env     map[string]string
		key     string
		want    string
		files   int
		warning string
	}{
		{name: "legacy dir", path: legacyDir, key: "src", want: "legacy", files: 1, warning: "Flink 2.x reads only config.yaml"},
		{name: "standard dir", path: yamlDir, key: "src.x", want: "yaml", files: 1},
		{name: "FLINK_CONF_DIR", env: map[string]string{"FLINK_CONF_DIR": legacyDir, "FLINK_HOME": home}, key: "src", want: "legacy", files: 1, warning: "legacy format"},
		{name: "FLINK_HOME/conf", env: map[string]string{"FLINK_HOME": home}, key: "src", want: "home", files: 1},
		{name: "path beats env", path: yamlDir, env: map[string]string{"FLINK_CONF_DIR": legacyDir}, key: "src.x", want: "yaml", files: 1},
		{name: "file of any other name is standard YAML", path: filepath.Join(dir, "custom.yaml"), key: "src", want: "custom", files: 1},
		{name: "file named flink-conf.yaml is legacy", path: filepath.Join(dir, "other", "flink-conf.yaml"), key: "bad", want: "[1, 2", files: 1},
		{name: "nothing configured", key: "src", want: "", files: 0},
		{name: "dir with neither file", path: emptyDir, key: "src", want: "", files: 0, warning: "no config.yaml or flink-conf.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadFlink(FlinkOptions{Path: tt.path, Getenv: envMap(tt.env)})
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Get(tt.key))
			assert.Len(t, cfg.Files(), tt.files)
			if tt.warning == "" {
				assert.Empty(t, cfg.Warnings())
			} else {
				require.Len(t, cfg.Warnings(), 1)
				assert.Contains(t, cfg.Warnings()[0].String(), tt.warning)
				assert.Contains(t, cfg.Warnings()[0].Message, "fix:")
			}
		})
	}
}

func TestLoadFlinkBothFilesPrefersLegacyWithWarning(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg, err := LoadFlink(FlinkOptions{Path: "testdata/flink/both", Getenv: envMap(nil), Logger: logger})
	require.NoError(t, err)
	assert.Equal(t, "gpu", cfg.Get("external-resources"))
	assert.Equal(t, "", cfg.Get("external-resource.fpga.amount"), "config.yaml is not read")
	assert.Equal(t, []string{filepath.Join("testdata/flink/both", "flink-conf.yaml")}, cfg.Files())
	require.Len(t, cfg.Warnings(), 1)
	w := cfg.Warnings()[0]
	assert.Equal(t, filepath.Join("testdata/flink/both", "config.yaml"), w.Source.File)
	assert.Contains(t, w.Message, "Flink 2.x reads only config.yaml")
	assert.Contains(t, logs.String(), "Flink 2.x reads only config.yaml", "warnings go to the logger")
}

func TestLoadFlinkErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.yaml"), "a: 1\na: 2\n")
	legacy := filepath.Join(t.TempDir(), FlinkLegacyFile)
	writeFile(t, legacy, "a: 1\nb: 2\na: 3\nc: 4\n")
	dirAsYAML := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dirAsYAML, FlinkYAMLFile), 0o755))
	dirAsLegacy := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dirAsLegacy, FlinkLegacyFile), 0o755))
	writeFile(t, filepath.Join(dirAsLegacy, FlinkYAMLFile), "a: 1\n")
	tests := []struct {
		name string
		opts FlinkOptions
		src  string
		msg  string
	}{
		{name: "named path missing", opts: FlinkOptions{Path: filepath.Join(dir, "nope")}, src: filepath.Join(dir, "nope"), msg: "from --flink-conf) does not exist"},
		{name: "FLINK_CONF_DIR missing", opts: FlinkOptions{Getenv: envMap(map[string]string{"FLINK_CONF_DIR": filepath.Join(dir, "gone")})}, src: filepath.Join(dir, "gone"), msg: "from FLINK_CONF_DIR"},
		{name: "FLINK_HOME without conf", opts: FlinkOptions{Getenv: envMap(map[string]string{"FLINK_HOME": filepath.Join(dir, "home")})}, src: filepath.Join(dir, "home", "conf"), msg: "from FLINK_HOME"},
		{name: "bad config.yaml", opts: FlinkOptions{Path: dir}, src: filepath.Join(dir, "config.yaml") + ":2", msg: "key is set twice"},
		{name: "flink-conf.yaml with more distinct keys than the limit (a repeated key counts once)", opts: FlinkOptions{Path: legacy, Limits: Limits{MaxProperties: 2}},
			src: legacy + ":4", msg: "properties: limit of 2 exceeded (3 distinct keys so far)"},
		{name: "config.yaml that is a directory", opts: FlinkOptions{Path: dirAsYAML}, src: filepath.Join(dirAsYAML, FlinkYAMLFile), msg: "not a regular file: it is a directory"},
		{name: "flink-conf.yaml that is a directory, beside a config.yaml", opts: FlinkOptions{Path: dirAsLegacy}, src: filepath.Join(dirAsLegacy, FlinkLegacyFile), msg: "not a regular file: it is a directory"},
		{name: "missing path is reported before -D is applied", opts: FlinkOptions{Path: dir + "/none", Dynamic: []string{"a=1"}}, src: filepath.Join(dir, "none"), msg: "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Getenv == nil {
				tt.opts.Getenv = envMap(nil)
			}
			cfg, err := LoadFlink(tt.opts)
			require.Error(t, err)
			assert.Nil(t, cfg)
			requireConfError(t, err, tt.src, tt.msg)
		})
	}
}

func TestLoadFlinkDynamicProperties(t *testing.T) {
	cfg, err := LoadFlink(FlinkOptions{
		Path:   "testdata/flink/legacy",
		Getenv: envMap(nil),
		Dynamic: []string{
			"external-resource.gpu.amount=4",
			"new.key=a=b",
			"empty.value=",
			"external-resources=gpu",
			"external-resources=fpga;gpu",
			"Case.Kept=1",
		},
	})
	require.NoError(t, err)
	v := mustLookup(t, cfg.Lookup, "external-resource.gpu.amount")
	assert.Equal(t, "4", v.Value)
	assert.Equal(t, Source{Flag: "-D external-resource.gpu.amount"}, v.Source)
	assert.Equal(t, "a=b", cfg.Get("new.key"), "split at the first '='")
	empty := mustLookup(t, cfg.Lookup, "empty.value")
	assert.Equal(t, "", empty.Value)
	assert.Equal(t, "fpga;gpu", cfg.Get("external-resources"), "the last -D wins")
	assert.Equal(t, "1", cfg.Get("Case.Kept"))
	assert.Equal(t, "", cfg.Get("case.kept"))

	tests := []struct {
		item string
		msg  string
	}{
		{item: "external-resources", msg: "no '='"},
		{item: "=gpu", msg: "empty key"},
		{item: "  =gpu", msg: "empty key"},
		{item: "", msg: "no '='"},
	}
	for _, tt := range tests {
		t.Run(tt.item, func(t *testing.T) {
			_, err := LoadFlink(FlinkOptions{Getenv: envMap(nil), Dynamic: []string{"ok=1", tt.item}})
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, Source{Flag: "-D " + tt.item}, ce.Source)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Contains(t, ce.Fix, "-D key=value")
		})
	}
}

func TestFlinkConfigAccessors(t *testing.T) {
	var zero FlinkConfig
	assert.Empty(t, zero.Keys())
	assert.Equal(t, "", zero.Get("a"))
	zero.Set("b", "2", Source{Flag: "-D b"})
	zero.Set("a", "1", Source{Flag: "-D a"})
	zero.Set("a.x", "3", Source{Flag: "-D a.x"})
	assert.Equal(t, []string{"a", "a.x", "b"}, zero.Keys())
	assert.Equal(t, []FlinkValue{{Key: "a.x", Value: "3", Source: Source{Flag: "-D a.x"}}}, zero.WithPrefix("a."))
	assert.Nil(t, zero.WithPrefix("zzz"))
	assert.Empty(t, zero.Files())
	assert.Empty(t, zero.Warnings())

	var nilCfg *FlinkConfig
	_, ok := nilCfg.Lookup("a")
	assert.False(t, ok)
	assert.Nil(t, nilCfg.Keys())

	cfg, err := ParseFlinkYAML("c.yaml", []byte("l: [a, b]\n"))
	require.NoError(t, err)
	v := mustLookup(t, cfg.Lookup, "l")
	v.List[0] = "changed"
	assert.Equal(t, []string{"a", "b"}, mustLookup(t, cfg.Lookup, "l").List, "Lookup returns a copy of List")
}
