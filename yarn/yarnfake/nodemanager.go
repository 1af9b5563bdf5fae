package yarnfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// NodeManager is a fake NodeManager web server: the container log endpoint
// /ws/v1/node/containers/<container>/logs/<file> that yarn-er reads live logs from, answering the
// logs a test sets and Hadoop's 404 NotFoundException for any other, and the resource plugins'
// /ws/v1/node/resources/<name>, and /conf?name=<key> (Hadoop's ConfServlet, in JSON). Its methods are safe for
// concurrent use, also while requests are served.
type NodeManager struct {
	srv *httptest.Server

	mu        sync.Mutex
	logs      map[string]nmLog // by "<container>/<file>"
	resources map[string]nmResource
	conf      map[string]string
	reqs      []Request
}

type nmLog struct {
	content string
	// node, when not "", wraps the content as a Hadoop 3 NodeManager does, naming this node.
	node string
}

// NewNodeManager starts a fake NodeManager for a test and closes it when the test ends.
func NewNodeManager(tb TB) *NodeManager {
	tb.Helper()
	nm := &NodeManager{logs: map[string]nmLog{}, resources: map[string]nmResource{}, conf: map[string]string{}}
	nm.srv = httptest.NewServer(http.HandlerFunc(nm.serve))
	tb.Cleanup(nm.srv.Close)
	return nm
}

// URL is the NodeManager's base URL, http://127.0.0.1:port.
func (nm *NodeManager) URL() string { return nm.srv.URL }

// Addr is the NodeManager's host:port, the nodeHttpAddress the RM reports for it.
func (nm *NodeManager) Addr() string { return strings.TrimPrefix(nm.srv.URL, "http://") }

// SetLog makes the container's log file read content, as the NodeManagers of Hadoop 2 and of
// some 3.x builds send it: the file's bytes alone.
func (nm *NodeManager) SetLog(container, file, content string) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.logs[container+"/"+file] = nmLog{content: content}
}

// SetWrappedLog makes the container's log file read content inside the header and trailer a
// Hadoop 3.5 NodeManager wraps a running container's log in, naming node (host:port).
func (nm *NodeManager) SetWrappedLog(container, file, content, node string) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.logs[container+"/"+file] = nmLog{content: content, node: node}
}

// SetResource makes /ws/v1/node/resources/<name> (e.g. yarn.io/gpu) answer body (JSON), as the
// NodeManager's resource plugin would; see the nm-resource-*.json captures.
func (nm *NodeManager) SetResource(name, body string) {
	nm.SetResourceStatus(name, http.StatusOK, body)
}

// SetResourceStatus is SetResource with another status than 200 (e.g. the GPU plugin's 503
// without LinuxContainerExecutor).
func (nm *NodeManager) SetResourceStatus(name string, status int, body string) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.resources[name] = nmResource{status: status, body: body}
}

// SetConf makes /conf?name=key answer value, as a NodeManager's ConfServlet answers a key of its
// configuration in JSON; a key never set answers 404, as one the configuration lacks.
func (nm *NodeManager) SetConf(key, value string) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.conf[key] = value
}

type nmResource struct {
	status int
	body   string
}

// Requests returns every request received, in order.
func (nm *NodeManager) Requests() []Request {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return append([]Request(nil), nm.reqs...)
}

func (nm *NodeManager) serve(w http.ResponseWriter, r *http.Request) {
	nm.mu.Lock()
	nm.reqs = append(nm.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), At: time.Now()})
	if r.URL.Path == "/conf" {
		key := r.URL.Query().Get("name")
		v, found := nm.conf[key]
		nm.mu.Unlock()
		if !found {
			w.WriteHeader(http.StatusNotFound)
			_, _ = fmt.Fprintf(w, "Property %s not found\n", key)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"property": map[string]any{"key": key, "value": v, "isFinal": false, "resource": "yarn-site.xml"}})
		_, _ = w.Write(b)
		return
	}
	if name, isRes := strings.CutPrefix(r.URL.Path, "/ws/v1/node/resources/"); isRes {
		res, found := nm.resources[name]
		nm.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !found {
			// What a NodeManager answers for a resource no plugin serves.
			res = nmResource{status: http.StatusOK, body: `{"nmResourceInfo":{"resourceValue":0}}`}
		}
		w.WriteHeader(res.status)
		_, _ = w.Write([]byte(res.body))
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, "/ws/v1/node/containers/")
	container, file, _ := strings.Cut(key, "/logs/")
	l, found := nm.logs[container+"/"+file]
	nm.mu.Unlock()
	if !ok || !found || r.Method != http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"RemoteException":{"exception":"NotFoundException","message":"Cannot find this log on the local disk.","javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}`))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	if l.node == "" {
		_, _ = w.Write([]byte(l.content))
		return
	}
	_, _ = fmt.Fprintf(w, "Container: %s on %s\nLogAggregationType: LOCAL\n%s\nLogType:%s\n"+
		"LogLastModifiedTime:Tue Dec 01 12:15:10 +0000 2026\nLogLength:%d\nLogContents:\n%s"+
		"End of LogType:%s.This log file belongs to a running container (%s) and so may not be complete.\n%s\n\n",
		container, l.node, strings.Repeat("=", 68), file, len(l.content), l.content, file, container, strings.Repeat("*", 71))
}
