package preflight

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/testsupport/flinktest"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// goodFlink is a legacy flink-conf.yaml asking for 2 GPUs and 1 FPGA per TaskManager, like
// examples/flink-conf.yaml.
const goodFlink = flinktest.TwoGPUsOneFPGA

// flinkConf parses a legacy flink-conf.yaml text, then applies key=value overrides (a value of
// "<unset>" is not possible: build the text instead).
func flinkConf(t testing.TB, text string, overrides ...string) *conf.FlinkConfig {
	t.Helper()
	return flinktest.ParseLegacy(t, text, overrides...)
}

// withoutLines removes the lines of text that start with one of the prefixes.
func withoutLines(text string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		drop := false
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				drop = true
			}
		}
		if !drop {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// hadoopFiles maps a file name (yarn-site.xml, ...) to its properties.
type hadoopFiles map[string]map[string]string

// goodHadoop is modelled on docker/conf as captured under yarn/yarnfake/captures: gpu and fpga declared, 4 and 2
// per NodeManager, DominantResourceCalculator, maximum allocation 16384 MB / 32 vcores.
func goodHadoop() hadoopFiles {
	return hadoopFiles{
		"yarn-site.xml": {
			"yarn.resourcemanager.scheduler.class":     "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
			"yarn.scheduler.minimum-allocation-mb":     "64",
			"yarn.scheduler.maximum-allocation-mb":     "16384",
			"yarn.scheduler.maximum-allocation-vcores": "32",
			"yarn.nodemanager.resource.memory-mb":      "16384",
			"yarn.nodemanager.resource.cpu-vcores":     "32",
		},
		"resource-types.xml": {"yarn.resource-types": "yarn.io/gpu,yarn.io/fpga"},
		"node-resources.xml": {
			"yarn.nodemanager.resource-type.yarn.io/gpu":  "4",
			"yarn.nodemanager.resource-type.yarn.io/fpga": "2",
		},
		"capacity-scheduler.xml": {
			"yarn.scheduler.capacity.resource-calculator": DominantCalculator,
			"yarn.scheduler.capacity.root.queues":         "default",
		},
	}
}

// with returns a copy of f with file's key set to value ("" deletes the key; a key of "" deletes
// the file).
func (f hadoopFiles) with(file, key, value string) hadoopFiles {
	out := hadoopFiles{}
	for n, props := range f {
		cp := map[string]string{}
		for k, v := range props {
			cp[k] = v
		}
		out[n] = cp
	}
	switch {
	case key == "":
		delete(out, file)
	case value == "":
		delete(out[file], key)
	default:
		if out[file] == nil {
			out[file] = map[string]string{}
		}
		out[file][key] = value
	}
	return out
}

// write writes the files into a new directory and returns it.
func (f hadoopFiles) write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for name, props := range f {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, props[k])
		}
		b.WriteString("</configuration>\n")
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644))
	}
	return dir
}

// load writes and loads the configuration.
func (f hadoopFiles) load(t testing.TB) *conf.HadoopConfig {
	t.Helper()
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: f.write(t), Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return hc
}

// capture reads a captured RM answer of the real mini-YARN (Hadoop 3.5.0).
func capture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", rel))
	require.NoError(t, err)
	return b
}

// goodCaptures returns the answers of the good mini-YARN (docker/conf).
func goodCaptures(t testing.TB) map[string][]byte {
	t.Helper()
	bodies := clusterCaptures(t, "yarn/yarnfake/captures/hadoop-3.5.0")
	bodies["/conf"] = capture(t, "yarn/yarnfake/captures/hadoop-3.5.0/conf.json")
	return bodies
}

// misconfiguredCaptures returns the answers of the misconfigured mini-YARN
// (docker/conf-misconfigured: DefaultResourceCalculator, no extended type).
func misconfiguredCaptures(t testing.TB) map[string][]byte {
	t.Helper()
	return clusterCaptures(t, "yarn/yarnfake/captures/hadoop-3.5.0/misconfigured")
}

// clusterCaptures returns the cluster info, nodes, scheduler and new-application answers captured
// in dir, by the path the RM serves each at.
func clusterCaptures(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	return map[string][]byte{
		"/ws/v1/cluster/info":                 capture(t, dir+"/info.json"),
		"/ws/v1/cluster/nodes":                capture(t, dir+"/nodes.json"),
		"/ws/v1/cluster/scheduler":            capture(t, dir+"/scheduler.json"),
		"/ws/v1/cluster/apps/new-application": capture(t, dir+"/new-application.json"),
	}
}

// newFakeRM is package yarnfake's fake RM answering GET and POST of each path of bodies with its
// body, every other request with the RM's 404.
func newFakeRM(t testing.TB, bodies map[string][]byte) *yarnfake.RM {
	t.Helper()
	rm := yarnfake.New(t, yarnfake.WithRoutesOnly())
	for path, body := range bodies {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			rm.Reply(method+" "+path, http.StatusOK, "application/json", body)
		}
	}
	return rm
}

// rmClient returns a yarn client for the RM at url, without retries.
func rmClient(t testing.TB, url string) *yarn.Client {
	t.Helper()
	c, err := yarn.NewClient(yarn.Options{Addresses: []string{url}, User: "tester",
		Retry: yarn.RetryPolicy{MaxAttempts: 1, FailoverTimeout: -1}, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return c
}

// run runs a preflight and fails the test on error.
func run(t testing.TB, in Input) *Report {
	t.Helper()
	rep, err := Run(context.Background(), in)
	require.NoError(t, err)
	return rep
}

// entries returns the report's entries of one id.
func (r *Report) entries(id string) []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.ID == id {
			out = append(out, c)
		}
	}
	return out
}

// statuses returns the distinct statuses of an id, in order.
func (r *Report) statuses(id string) []Status {
	var out []Status
	for _, c := range r.entries(id) {
		if len(out) == 0 || out[len(out)-1] != c.Status {
			out = append(out, c.Status)
		}
	}
	return out
}

// failing returns the ids with a fail entry, in report order, each once.
func (r *Report) failing() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == StatusFail && (len(out) == 0 || out[len(out)-1] != c.ID) {
			out = append(out, c.ID)
		}
	}
	return out
}

// requireOne asserts that id has exactly one entry with status st, whose message contains every
// part, and returns it.
func requireOne(t testing.TB, rep *Report, id string, st Status, parts ...string) Check {
	t.Helper()
	es := rep.entries(id)
	require.Len(t, es, 1, "entries of %s: %+v", id, es)
	require.Equal(t, st, es[0].Status, "%s: %+v", id, es[0])
	for _, p := range parts {
		require.Contains(t, es[0].Message, p, "%s", id)
	}
	return es[0]
}

// requireFirst asserts that id's entries have the statuses sts (in order, each run of one status
// once, as statuses gives them) and that the first entry's message contains every part, and returns
// that first entry.
func requireFirst(t testing.TB, rep *Report, id string, sts []Status, parts ...string) Check {
	t.Helper()
	es := rep.entries(id)
	require.NotEmpty(t, es)
	assert.Equal(t, sts, rep.statuses(id), "%+v", es)
	for _, p := range parts {
		assert.Contains(t, es[0].Message, p)
	}
	return es[0]
}

// requireOneFix is requireOne that also asserts, when fix is not empty, that the entry's fix
// contains it.
func requireOneFix(t testing.TB, rep *Report, id string, st Status, fix string, parts ...string) Check {
	t.Helper()
	e := requireOne(t, rep, id, st, parts...)
	if fix != "" {
		require.Contains(t, e.Fix, fix, "%s", id)
	}
	return e
}

// queueCase is a cluster.queue-max-allocation case: the queue (--queue) and Flink overrides of a
// run against a fake RM, and the one entry it must give.
type queueCase struct {
	name   string
	queue  string
	flink  []string
	status Status
	parts  []string
	fix    string
}

// runQueueCases runs each case against rm and checks its cluster.queue-max-allocation entry.
func runQueueCases(t *testing.T, rm *yarnfake.RM, cases []queueCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, goodFlink, tc.flink...), Client: rmClient(t, rm.URL()), Queue: tc.queue})
			requireOneFix(t, rep, IDQueueMaxAllocation, tc.status, tc.fix, tc.parts...)
		})
	}
}

// loadDir loads the Hadoop configuration of dir.
func loadDir(t testing.TB, dir string) *conf.HadoopConfig {
	t.Helper()
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: dir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return hc
}
