package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/yarn"
)

// CommandRunner runs a yarn-er command in this process with args (e.g. "translate",
// "--flink-conf", DIR, "-o", "json") and returns what it wrote and its exit code. The command
// package of serve supplies it (the CLI's own commands), so that the POST endpoints answer exactly
// as the CLI's -o json does.
type CommandRunner func(ctx context.Context, args []string) CommandResult

// CommandResult is what one command run wrote and how it ended.
type CommandResult struct {
	// Stdout is the command's output (the -o json document).
	Stdout []byte
	// Stderr is what it wrote on stderr: its error message, its logs.
	Stderr string
	// ExitCode is its exit code (yarn-er help exit-codes).
	ExitCode int
}

// CommandRequest is the body of POST /api/v1/translate and /api/v1/preflight.
type CommandRequest struct {
	// FlinkConf is the Flink configuration file's text (YAML).
	FlinkConf string `json:"flinkConf"`
	// FlinkConfFile names it: flink-conf.yaml (legacy, Flink 1.x; the default) or config.yaml.
	FlinkConfFile string `json:"flinkConfFile,omitempty"`
	// Dynamic are -D key=value overrides, in order.
	Dynamic []string `json:"dynamic,omitempty"`
	// FlinkVersion is --flink-version.
	FlinkVersion string `json:"flinkVersion,omitempty"`
	// HadoopConf are Hadoop configuration files by name (yarn-site.xml, resource-types.xml, ...);
	// without them the server's own Hadoop configuration is used.
	HadoopConf map[string]string `json:"hadoopConf,omitempty"`
	// Containers, Queue and Strict are preflight's --containers, --queue and --strict.
	Containers int    `json:"containers,omitempty"`
	Queue      string `json:"queue,omitempty"`
	Strict     bool   `json:"strict,omitempty"`
}

// hadoopFileName is a Hadoop configuration file a request may carry: a plain XML file name.
var hadoopFileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.xml$`)

// maxDynamic bounds the -D overrides of one request.
const maxDynamic = 256

// parseCommandRequest reads a bounded body: JSON (CommandRequest), or, with a YAML content type,
// the Flink configuration itself.
func parseCommandRequest(r *http.Request, limit int64, w http.ResponseWriter) (*CommandRequest, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	var buf bytes.Buffer
	_, err := buf.ReadFrom(body)
	raw := buf.Bytes()
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body: larger than %d bytes", limit)}
		}
		return nil, &httpError{http.StatusBadRequest, "request body: " + err.Error()}
	}
	ct := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
	req := &CommandRequest{}
	asJSON := true
	switch ct {
	case "application/json":
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		asJSON = false
	case "", "application/x-www-form-urlencoded", "text/plain", "application/octet-stream":
		// curl's default (form) and text/plain: JSON when it looks like an object, else YAML.
		asJSON = len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '{'
	default:
		return nil, &httpError{http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: send application/json (a CommandRequest) or application/yaml (the Flink configuration)", ct)}
	}
	if !asJSON {
		req.FlinkConf = string(raw)
	} else {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(req); err != nil {
			return nil, &httpError{http.StatusBadRequest, "request body: " + err.Error() +
				` (fix: send {"flinkConf": "<the YAML text>", "dynamic": ["key=value"], "hadoopConf": {"yarn-site.xml": "..."}}, or the YAML itself as application/yaml)`}
		}
		if dec.More() {
			return nil, &httpError{http.StatusBadRequest, "request body: more than one JSON document"}
		}
	}
	switch req.FlinkConfFile {
	case "":
		req.FlinkConfFile = "flink-conf.yaml"
	case "flink-conf.yaml", "config.yaml":
	default:
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("flinkConfFile %q: want flink-conf.yaml or config.yaml", req.FlinkConfFile)}
	}
	if len(req.Dynamic) > maxDynamic {
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("dynamic: %d overrides, at most %d", len(req.Dynamic), maxDynamic)}
	}
	for name := range req.HadoopConf {
		if !hadoopFileName.MatchString(name) {
			return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("hadoopConf %q: want a plain file name ending in .xml, e.g. yarn-site.xml", name)}
		}
	}
	if req.Containers < 0 {
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("containers %d: must be 0 or more", req.Containers)}
	}
	return req, nil
}

// args writes the request's files under dir and returns the command line of name.
func (req *CommandRequest) args(name, dir string, rms []string) ([]string, error) {
	flinkFile := filepath.Join(dir, req.FlinkConfFile)
	if err := os.WriteFile(flinkFile, []byte(req.FlinkConf), 0o600); err != nil {
		return nil, fmt.Errorf("write the Flink configuration: %w", err)
	}
	args := []string{name, "--flink-conf=" + flinkFile, "--output=json"}
	for _, d := range req.Dynamic {
		args = append(args, "--dynamic="+d)
	}
	if req.FlinkVersion != "" {
		args = append(args, "--flink-version="+req.FlinkVersion)
	}
	if len(req.HadoopConf) > 0 {
		hdir := filepath.Join(dir, "hadoop")
		if err := os.Mkdir(hdir, 0o700); err != nil {
			return nil, fmt.Errorf("hadoop configuration directory: %w", err)
		}
		names := make([]string, 0, len(req.HadoopConf))
		for n := range req.HadoopConf {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(hdir, n), []byte(req.HadoopConf[n]), 0o600); err != nil {
				return nil, fmt.Errorf("write %s: %w", n, err)
			}
		}
		args = append(args, "--hadoop-conf="+hdir)
	}
	if name == "preflight" {
		// The live checks ask serve's own ResourceManager, never one a posted yarn-site.xml names.
		if len(rms) > 0 {
			args = append(args, "--rm="+strings.Join(rms, ","))
		}
		if req.Containers > 0 {
			args = append(args, "--containers="+strconv.Itoa(req.Containers))
		}
		if req.Queue != "" {
			args = append(args, "--queue="+req.Queue)
		}
		if req.Strict {
			args = append(args, "--strict")
		}
	}
	return args, nil
}

// command serves POST /api/v1/<name>: the CLI's `yarn-er <name> -o json` on the posted
// configuration. 200 with the command's JSON when it ran (preflight findings included: the
// report's "ok" says so); 4xx with the CLI's message when the input is wrong.
func (h *Handler) command(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.opts.Commands == nil {
			h.writeError(w, http.StatusNotImplemented, name+": not available in this server")
			return
		}
		req, err := parseCommandRequest(r, h.opts.MaxBodyBytes, w)
		if err != nil {
			var he *httpError
			errors.As(err, &he)
			h.writeError(w, he.status, he.msg)
			return
		}
		select {
		case h.sem <- struct{}{}:
			defer func() { <-h.sem }()
		case <-r.Context().Done():
			return
		}
		dir, err := os.MkdirTemp("", "yarn-er-serve-")
		if err != nil {
			h.writeError(w, http.StatusInternalServerError, "temporary directory: "+err.Error())
			return
		}
		defer os.RemoveAll(dir)
		args, err := req.args(name, dir, h.opts.Watcher.rmAddresses())
		if err != nil {
			h.writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
		defer cancel()
		res := h.opts.Commands(ctx, args)
		// Messages name the posted files by their own names, not the server's temporary paths.
		clean := func(s string) string {
			s = strings.ReplaceAll(s, filepath.Join(dir, "hadoop")+string(filepath.Separator), "")
			return strings.ReplaceAll(s, dir+string(filepath.Separator), "")
		}
		switch {
		case res.ExitCode == 0 || (name == "preflight" && res.ExitCode == 3 && len(res.Stdout) > 0):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(clean(string(res.Stdout))))
			return
		}
		msg := clean(errorMessage(res.Stderr))
		status := http.StatusUnprocessableEntity
		switch res.ExitCode {
		case 2:
			status = http.StatusBadRequest
		case 4:
			status = http.StatusBadGateway
		case 130, 143:
			status = http.StatusServiceUnavailable
		}
		if ctx.Err() != nil {
			status, msg = http.StatusGatewayTimeout, name+": did not finish within 2m"
		}
		h.writeErrorBody(w, status, ErrorBody{Error: msg, ExitCode: res.ExitCode})
	}
}

// errorMessage is the CLI's error message in what a command wrote on stderr: its "yarn-er: "
// lines, without the prefix (the usage hint dropped); else the last line.
func errorMessage(stderr string) string {
	var msgs []string
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		if m, ok := strings.CutPrefix(l, "yarn-er: "); ok {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) > 0 {
		return strings.Join(msgs, "\n")
	}
	if len(lines) > 0 && lines[len(lines)-1] != "" {
		return lines[len(lines)-1]
	}
	return "the command failed without a message"
}

// rmAddresses are the RM addresses of the watch's client.
func (w *Watcher) rmAddresses() []string { return w.opts.Client.Addresses() }

// sortContainers sorts containers by id, as `app status` lists them.
func sortContainers(cs []yarn.AppContainer) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
}
