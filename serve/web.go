package serve

import (
	"embed"
	"net/http"

	"github.com/prometheus/common/expfmt"
)

// web holds the GPU map page and its assets: embedded, so that the page works on an air-gapped
// cluster (no CDN).
//
//go:embed web/index.html web/app.js web/style.css
var web embed.FS

// openAPIDoc is the API's OpenAPI 3 description, written by hand.
//
//go:embed openapi.json
var openAPIDoc []byte

// textFormat is the content type of /metrics: Prometheus' text format 0.0.4.
var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

// contentSecurityPolicy lets the page load its own scripts, styles and the API only.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *Handler) page(w http.ResponseWriter, _ *http.Request) {
	b, err := web.ReadFile("web/index.html")
	if err != nil {
		h.writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	types := map[string]string{"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
	ct, ok := types[name]
	if !ok {
		h.writeError(w, http.StatusNotFound, "no asset "+name)
		return
	}
	b, err := web.ReadFile("web/" + name)
	if err != nil {
		h.writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}
