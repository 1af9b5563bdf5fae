package conf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadHadoopIncludes loads a directory whose yarn-site.xml and a.xml are fuzzed (they may include
// each other, themselves, or files that do not exist) under small limits: loading never panics,
// fails only with a *conf.Error naming a file, and no value grows past the value limit.
func FuzzLoadHadoopIncludes(f *testing.F) {
	inc := `<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="a.xml"/>`
	f.Add([]byte(`<configuration>`+inc+inc+`<property><name>x</name><value>${y}${y}</value></property></configuration>`),
		[]byte(`<configuration><property><name>y</name><value>${x}</value></property>`+inc+`</configuration>`))
	f.Add([]byte(`<configuration>`+inc+`</configuration>`), []byte(`<configuration><xi:include href="yarn-site.xml"/></configuration>`))
	f.Fuzz(func(t *testing.T, site, a []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "yarn-site.xml"), site, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "a.xml"), a, 0o644); err != nil {
			t.Fatal(err)
		}
		lim := Limits{MaxFileBytes: 1 << 16, MaxTotalBytes: 1 << 18, MaxIncludes: 16, MaxProperties: 4096, MaxValueBytes: 4096, MaxWarnings: 20}
		cfg, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: func(string) string { return "" }, Limits: lim})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.Source.File == "" {
				t.Fatalf("error is not a *conf.Error naming a file: %#v", err)
			}
			return
		}
		for _, n := range cfg.Names() {
			if len(cfg.Get(n)) > lim.MaxValueBytes && cfg.Get(n) != cfg.props[n].Raw {
				t.Fatalf("%s expanded to %d bytes", n, len(cfg.Get(n)))
			}
		}
		if len(cfg.Warnings()) > lim.MaxWarnings*2+2 {
			t.Fatalf("%d warnings", len(cfg.Warnings()))
		}
	})
}
