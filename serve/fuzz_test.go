package serve

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCommandRequest: any body with any content type is parsed without a panic, within the
// limit, and a request that parses writes its files inside the request's directory only.
func FuzzCommandRequest(f *testing.F) {
	f.Add("application/json", `{"flinkConf":"a: 1\n","dynamic":["k=v"],"hadoopConf":{"yarn-site.xml":"<configuration/>"}}`)
	f.Add("application/yaml", "external-resources: gpu\n")
	f.Add("", `{"flinkConfFile":"config.yaml","containers":2,"queue":"gpu","strict":true}`)
	f.Add("application/json", `{"hadoopConf":{"../../etc/passwd":"x"}}`)
	f.Add("text/plain", "{")
	f.Fuzz(func(t *testing.T, ct, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/translate", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		cr, err := parseCommandRequest(req, 1<<16, rec)
		if err != nil {
			return
		}
		dir := t.TempDir()
		args, err := cr.args("preflight", dir, []string{"http://rm:8088"})
		if err != nil {
			return
		}
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "--hadoop-conf="); ok {
				if filepath.Dir(v) != dir {
					t.Fatalf("hadoop conf %s outside %s", v, dir)
				}
			}
		}
		for name := range cr.HadoopConf {
			if strings.ContainsAny(name, "/\\") {
				t.Fatalf("file name %q accepted", name)
			}
		}
	})
}
