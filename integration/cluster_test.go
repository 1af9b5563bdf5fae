//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The RM REST shapes these tests read. Hadoop 3.5 (Jersey 2) writes one-element collections
// as arrays, but Jersey 1 (3.1–3.4) may write a single object: wsList accepts both, and null.

type wsList[T any] []T

func (l *wsList[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		*l = nil
		return nil
	}
	if b[0] != '[' && !bytes.Equal(b, []byte("null")) {
		// One element in place of a one-element array.
		b = slices.Concat([]byte("["), b, []byte("]"))
	}
	var s []T
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = s
	return nil
}

type wsResourceInformation struct {
	Name         string      `json:"name"`
	Units        string      `json:"units"`
	ResourceType string      `json:"resourceType"`
	Value        json.Number `json:"value"`
}

type wsResource struct {
	Memory               json.Number `json:"memory"`
	VCores               json.Number `json:"vCores"`
	ResourceInformations struct {
		ResourceInformation wsList[wsResourceInformation] `json:"resourceInformation"`
	} `json:"resourceInformations"`
}

// values returns the resource by type name, as int64 (never through float64).
func (r wsResource) values(t testing.TB) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, ri := range r.ResourceInformations.ResourceInformation {
		v, err := ri.Value.Int64()
		require.NoError(t, err, "resource %s value %q", ri.Name, ri.Value)
		m[ri.Name] = v
	}
	return m
}

type wsNode struct {
	ID              string     `json:"id"`
	State           string     `json:"state"`
	NodeHostName    string     `json:"nodeHostName"`
	NodeHTTPAddress string     `json:"nodeHTTPAddress"`
	Version         string     `json:"version"`
	TotalResource   wsResource `json:"totalResource"`
	UsedResource    wsResource `json:"usedResource"`
	// AvailableResource is what the scheduler has left on the node.
	AvailableResource wsResource `json:"availableResource"`
}

// total is the node's total resource by type. Hadoop 3.2 sends no totalResource
// (docs/hadoop-versions.md): there it is usedResource + availableResource, as yarn-er derives it.
func (n wsNode) total(t testing.TB) map[string]int64 {
	t.Helper()
	if len(n.TotalResource.ResourceInformations.ResourceInformation) > 0 {
		return n.TotalResource.values(t)
	}
	m := n.UsedResource.values(t)
	for k, v := range n.AvailableResource.values(t) {
		m[k] += v
	}
	return m
}

type wsNodes struct {
	Nodes struct {
		Node wsList[wsNode] `json:"node"`
	} `json:"nodes"`
}

type wsNewApplication struct {
	ApplicationID             string     `json:"application-id"`
	MaximumResourceCapability wsResource `json:"maximum-resource-capability"`
}

// restClient closes its idle connections after 500 ms: Hadoop 3.2's web server closes them after
// 1 s (hadoop.http.idle_timeout.ms, 60 s from 3.3), and Go does not re-send a PUT or POST whose
// reused connection the server had just closed ("EOF"; docs/hadoop-versions.md).
var restClient = &http.Client{Timeout: 30 * time.Second, Transport: func() http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.IdleConnTimeout = 500 * time.Millisecond
	return tr
}()}

// restDo sends a request with an optional JSON body and returns the status and the body.
func restDo(t testing.TB, method, url string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := restClient.Do(req)
	require.NoError(t, err, "%s %s", method, url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// restGetJSON GETs url, requires 200 and decodes the body into out (numbers as json.Number).
func restGetJSON(t testing.TB, url string, out any) {
	t.Helper()
	status, b := restDo(t, http.MethodGet, url, nil)
	require.Equal(t, http.StatusOK, status, "GET %s: %s", url, b)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	require.NoError(t, dec.Decode(out), "GET %s: %s", url, b)
}

// restNewApplication asks the RM for a new application id (POST new-application), requiring 200.
func restNewApplication(t testing.TB, ep *Endpoints) wsNewApplication {
	t.Helper()
	status, b := restDo(t, http.MethodPost, ep.RMURL("/ws/v1/cluster/apps/new-application", nil), nil)
	require.Equal(t, http.StatusOK, status, "new-application: %s", b)
	var app wsNewApplication
	require.NoError(t, json.Unmarshal(b, &app))
	return app
}

func runningNodes(t testing.TB, ep *Endpoints) []wsNode {
	t.Helper()
	var nodes wsNodes
	restGetJSON(t, ep.RMURL("/ws/v1/cluster/nodes", nil), &nodes)
	var running []wsNode
	for _, n := range nodes.Nodes.Node {
		if n.State == "RUNNING" {
			running = append(running, n)
		}
	}
	return running
}

func TestClusterInfoReportsHadoop3(t *testing.T) {
	ep := cluster(t)
	var info struct {
		ClusterInfo struct {
			State                  string `json:"state"`
			HAState                string `json:"haState"`
			HadoopVersion          string `json:"hadoopVersion"`
			ResourceManagerVersion string `json:"resourceManagerVersion"`
		} `json:"clusterInfo"`
	}
	restGetJSON(t, ep.RMURL("/ws/v1/cluster/info", nil), &info)

	assert.Regexp(t, `^3\.\d+\.\d+`, info.ClusterInfo.HadoopVersion)
	assert.Equal(t, ep.HadoopVersion, info.ClusterInfo.HadoopVersion)
	assert.Equal(t, ep.HadoopVersion, info.ClusterInfo.ResourceManagerVersion)
	assert.Equal(t, "STARTED", info.ClusterInfo.State)
	assert.Equal(t, "ACTIVE", info.ClusterInfo.HAState)
}

func TestRESTRefusesAnonymousRequests(t *testing.T) {
	ep := cluster(t)
	// docker/conf/core-site.xml: hadoop.http.authentication.simple.anonymous.allowed=false.
	status, _ := restDo(t, http.MethodGet, ep.RMWebAddress+"/ws/v1/cluster/info", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "GET without user.name")
	status, _ = restDo(t, http.MethodPost, ep.RMWebAddress+"/ws/v1/cluster/apps/new-application", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "POST without user.name")
}

func TestNodesAdvertiseGPUsAndFPGAs(t *testing.T) {
	ep := cluster(t)
	running := runningNodes(t, ep)
	require.Len(t, running, 2, "RUNNING NodeManagers")

	var ids, want []string
	for _, n := range running {
		ids = append(ids, n.ID)
		total := n.total(t)
		assert.Equal(t, int64(4), total["yarn.io/gpu"], "node %s yarn.io/gpu", n.ID)
		assert.Equal(t, int64(2), total["yarn.io/fpga"], "node %s yarn.io/fpga", n.ID)
		assert.Equal(t, int64(16384), total["memory-mb"], "node %s memory-mb", n.ID)
		assert.Equal(t, int64(40), total["vcores"], "node %s vcores", n.ID)
		assert.Equal(t, ep.HadoopVersion, n.Version, "node %s version", n.ID)
	}
	for _, nm := range ep.NodeManagers {
		want = append(want, nm.ID)
	}
	assert.ElementsMatch(t, want, ids, "node ids in endpoints.json and /ws/v1/cluster/nodes")
	assert.Equal(t, map[string]int64{
		"memory-mb": 32768, "vcores": 80, "yarn.io/gpu": 8, "yarn.io/fpga": 4,
	}, ep.ClusterResource)
}

func TestClientConfMatchesEndpoints(t *testing.T) {
	ep := cluster(t)
	yarnSite := readHadoopXML(t, filepath.Join(ep.HadoopConfDir, "yarn-site.xml"))
	assert.Equal(t, strings.TrimPrefix(ep.RMWebAddress, "http://"), yarnSite["yarn.resourcemanager.webapp.address"])
	assert.Equal(t, ep.RMAddress, yarnSite["yarn.resourcemanager.address"])
	assert.Equal(t, ep.RMSchedulerAddress, yarnSite["yarn.resourcemanager.scheduler.address"])

	conf, err := hadoopconf.Load(ep.HadoopConfDir)
	require.NoError(t, err)
	assert.Equal(t, ep.HDFSURI, conf["fs.defaultFS"])

	cs := readHadoopXML(t, filepath.Join(ep.HadoopConfDir, "capacity-scheduler.xml"))
	assert.Equal(t, "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
		cs["yarn.scheduler.capacity.resource-calculator"])
	rt := readHadoopXML(t, filepath.Join(ep.HadoopConfDir, "resource-types.xml"))
	assert.Equal(t, "yarn.io/gpu,yarn.io/fpga", rt["yarn.resource-types"])
}

// TestClusterKeepsToItsStateDir: nothing of a cluster's daemons lands in a directory that another
// cluster on the same machine shares. The RM's node-attribute store defaulted to
// /tmp/hadoop-yarn-<user>/ on Hadoop 3.2-3.4, and two clusters starting at once broke each
// other's start there.
func TestClusterKeepsToItsStateDir(t *testing.T) {
	ep := cluster(t)
	log, err := os.ReadFile(ep.ClusterLog)
	require.NoError(t, err)
	stores := regexp.MustCompile(`Created store directory :(\S+)`).FindAllSubmatch(log, -1)
	require.NotEmpty(t, stores, "the RM logs where its node-attribute store is (%s)", ep.ClusterLog)
	for _, m := range stores {
		assert.Contains(t, string(m[1]), ep.StateDir, "a store below the state dir")
	}
	assert.NotContains(t, string(log), "/tmp/hadoop-yarn-", "a path shared by every cluster of the user")
}

// readHadoopXML reads the properties of a Hadoop configuration file.
func readHadoopXML(t testing.TB, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var doc struct {
		Property []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	require.NoError(t, xml.Unmarshal(b, &doc), file)
	m := map[string]string{}
	for _, p := range doc.Property {
		m[p.Name] = p.Value
	}
	return m
}

func hdfsClient(t testing.TB, ep *Endpoints) *hdfs.Client {
	t.Helper()
	conf, err := hadoopconf.Load(ep.HadoopConfDir)
	require.NoError(t, err)
	opts := hdfs.ClientOptionsFromConf(conf)
	require.Nil(t, opts.KerberosClient, "the mini-YARN uses simple authentication")
	opts.User = ep.User
	c, err := hdfs.NewClient(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// hdfsPut writes data to name and returns the file's status after Close, when the NameNode
// has set the modification time that YARN local resources must quote exactly.
func hdfsPut(t testing.TB, c *hdfs.Client, name string, data []byte) *hdfs.FileInfo {
	t.Helper()
	require.NoError(t, c.MkdirAll(path.Dir(name), 0o755))
	w, err := c.Create(name)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	// Close may report that the last block is still replicating: retry, as documented.
	require.Eventually(t, func() bool {
		err = w.Close()
		return err == nil || !hdfs.IsErrReplicating(err)
	}, time.Minute, 100*time.Millisecond)
	require.NoError(t, err)
	fi, err := c.Stat(name)
	require.NoError(t, err)
	return fi.(*hdfs.FileInfo)
}

func testPayload(size int) []byte {
	r := rand.New(rand.NewChaCha8([32]byte{'y', 'a', 'r', 'n', '-', 'e', 'r'}))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestHDFSWriteReadBack(t *testing.T) {
	ep := cluster(t)
	c := hdfsClient(t, ep)
	name := fmt.Sprintf("/tmp/yarn-er-it/%s/%d/payload.bin", t.Name(), time.Now().UnixNano())
	data := testPayload(3<<20 + 12345) // more than one packet, not a round number

	fi := hdfsPut(t, c, name, data)
	assert.Equal(t, int64(len(data)), fi.Size())

	got, err := c.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, len(data), len(got))
	assert.Equal(t, sha256.Sum256(data), sha256.Sum256(got))

	// YARN local resources quote size and modification time (ms); both must be exact.
	status, ok := fi.Sys().(*hdfs.FileStatus)
	require.True(t, ok, "FileInfo.Sys() is %T", fi.Sys())
	mtime := int64(status.GetModificationTime())
	assert.Positive(t, mtime)
	assert.Equal(t, fi.ModTime().UnixMilli(), mtime, "ModTime() keeps the milliseconds")
	again, err := c.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, mtime, again.ModTime().UnixMilli(), "modification time is stable")
	assert.Equal(t, int64(len(data)), again.Size())
}

func TestRESTNewApplicationListsResourceTypes(t *testing.T) {
	ep := cluster(t)
	app := restNewApplication(t, ep)
	assert.Regexp(t, `^application_\d+_\d+$`, app.ApplicationID)

	maxCap := app.MaximumResourceCapability.values(t)
	assert.Equal(t, int64(16384), maxCap["memory-mb"])
	assert.Equal(t, int64(40), maxCap["vcores"])
	// The largest NodeManager's amounts: the effective maximum. (In the first
	// yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms after its start, 10 s by
	// default and 0 in docker/conf, an RM reports the configured maximum, Long.MAX_VALUE.)
	assert.Equal(t, int64(4), maxCap["yarn.io/gpu"])
	assert.Equal(t, int64(2), maxCap["yarn.io/fpga"])
}

// TestRESTSubmittedAMLocalizesHDFSFile submits an AM over REST whose container gets an HDFS
// file as a local resource (size and modification time from the HDFS client), proves that a
// NodeManager really ran it, kills the application and checks that its process is gone.
func TestRESTSubmittedAMLocalizesHDFSFile(t *testing.T) {
	ep := cluster(t)
	c := hdfsClient(t, ep)
	data := testPayload(1<<20 + 7)
	name := fmt.Sprintf("/tmp/yarn-er-it/%s/%d/payload.bin", t.Name(), time.Now().UnixNano())
	fi := hdfsPut(t, c, name, data)

	app := restNewApplication(t, ep)

	marker := filepath.Join(t.TempDir(), "marker")
	cmd := fmt.Sprintf(`printf '%%s %%s %%s\n' "$CONTAINER_ID" "$$" "$(wc -c < payload.bin)" > %[1]s.tmp && mv %[1]s.tmp %[1]s && exec sleep 600`, marker)
	submission := map[string]any{
		"application-id":   app.ApplicationID,
		"application-name": "yarn-er-integration-probe",
		"application-type": "YARN",
		"queue":            "default",
		"max-app-attempts": 1,
		"resource":         map[string]any{"memory": 128, "vCores": 1},
		"am-container-spec": map[string]any{
			"local-resources": map[string]any{"entry": []any{map[string]any{
				"key": "payload.bin",
				"value": map[string]any{
					"resource":   ep.HDFSURI + name,
					"type":       "FILE",
					"visibility": "APPLICATION",
					"size":       fi.Size(),
					"timestamp":  fi.ModTime().UnixMilli(),
				},
			}}},
			"commands": map[string]any{"command": cmd},
		},
	}
	status, b := restDo(t, http.MethodPost, ep.RMURL("/ws/v1/cluster/apps", nil), submission)
	require.Equal(t, http.StatusAccepted, status, "submit: %s", b)
	appURL := ep.RMURL("/ws/v1/cluster/apps/"+app.ApplicationID, nil)
	t.Cleanup(func() {
		restDo(t, http.MethodPut, ep.RMURL("/ws/v1/cluster/apps/"+app.ApplicationID+"/state", nil),
			map[string]string{"state": "KILLED"})
	})

	var content []byte
	require.Eventually(t, func() bool {
		var err error
		content, err = os.ReadFile(marker)
		return err == nil
	}, 2*time.Minute, 200*time.Millisecond, "the AM container never ran; app: %s", appDiagnostics(t, appURL))

	fields := strings.Fields(string(content))
	require.Len(t, fields, 3, "marker %q", content)
	assert.Regexp(t, regexp.MustCompile(`^container_\d+_\d+_01_000001$`), fields[0])
	assert.Equal(t, strconv.Itoa(len(data)), fields[2], "size of the localized payload.bin")
	pid, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	assert.True(t, processAlive(pid), "container process %d", pid)

	status, b = restDo(t, http.MethodPut, ep.RMURL("/ws/v1/cluster/apps/"+app.ApplicationID+"/state", nil),
		map[string]string{"state": "KILLED"})
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, status, "kill: %s", b)
	require.Eventually(t, func() bool {
		return appState(t, appURL) == "KILLED"
	}, 2*time.Minute, 250*time.Millisecond, "application state")
	require.Eventually(t, func() bool { return !processAlive(pid) },
		2*time.Minute, 250*time.Millisecond, "container process %d after the kill", pid)
}

func appState(t testing.TB, appURL string) string {
	t.Helper()
	var a struct {
		App struct {
			State       string `json:"state"`
			Diagnostics string `json:"diagnostics"`
		} `json:"app"`
	}
	restGetJSON(t, appURL, &a)
	return a.App.State
}

func appDiagnostics(t testing.TB, appURL string) string {
	t.Helper()
	_, b := restDo(t, http.MethodGet, appURL, nil)
	return string(b)
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// /proc/PID/stat: "pid (comm) S ...": the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func TestMisconfiguredClusterLacksGPUAndFPGA(t *testing.T) {
	ep := misconfiguredCluster(t)
	assert.Equal(t, []string{"memory-mb", "vcores"}, ep.ResourceTypes)

	running := runningNodes(t, ep)
	require.Len(t, running, 2, "RUNNING NodeManagers")
	for _, n := range running {
		total := n.total(t)
		assert.NotContains(t, total, "yarn.io/gpu", "node %s", n.ID)
		assert.NotContains(t, total, "yarn.io/fpga", "node %s", n.ID)
		assert.Equal(t, int64(16384), total["memory-mb"], "node %s memory-mb", n.ID)
	}

	app := restNewApplication(t, ep)
	assert.NotContains(t, app.MaximumResourceCapability.values(t), "yarn.io/gpu")

	cs := readHadoopXML(t, filepath.Join(ep.HadoopConfDir, "capacity-scheduler.xml"))
	assert.Equal(t, "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator",
		cs["yarn.scheduler.capacity.resource-calculator"])
	assert.NotEqual(t, cluster(t).RMWebAddress, ep.RMWebAddress, "a second cluster")
}
