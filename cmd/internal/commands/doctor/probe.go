package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// Executor keys the probe reads from its NodeManager's /conf.
const (
	keyExecutor     = "yarn.nodemanager.container-executor.class"
	keyPlugins      = "yarn.nodemanager.resource-plugins"
	keyCgroupsMount = "yarn.nodemanager.linux-container-executor.cgroups.mount"
	// defaultExecutor is yarn.nodemanager.container-executor.class when it is not set.
	defaultExecutor = "org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor"
)

// envVars are the container variables the report keeps: those that assign or locate devices.
var envVars = []string{"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "YARN_ER_HOST_ROOT", "YARN_ER_COORDINATION_FILE"}

// maxConfBody bounds one answer of the NodeManager's /conf?name=KEY.
const maxConfBody = 64 << 10

// prober looks at the container it runs in. Every outside source is a field, so that tests point
// it at fake trees and fake NodeManagers.
type prober struct {
	// root is where the host's /proc/driver and /dev are read (YARN_ER_HOST_ROOT in the mini-YARN).
	root discovery.Root
	// lookup reads the container's environment.
	lookup func(string) (string, bool)
	// selfCgroup is /proc/self/cgroup; cgroupFS is /sys/fs/cgroup.
	selfCgroup, cgroupFS string
	// nvmlLibrary is --nvml-library; toolTimeout bounds nvidia-smi.
	nvmlLibrary string
	toolTimeout time.Duration
	// coordinationDefault is the coordination file without YARN_ER_COORDINATION_FILE; uid the
	// user whose ledger is read.
	coordinationDefault string
	uid                 int
	// httpTimeout bounds each request to the NodeManager; transport, when set, replaces the
	// default one (tests).
	httpTimeout time.Duration
	transport   http.RoundTripper
	logger      *slog.Logger
}

func (pr *prober) getenv(k string) string {
	v, _ := pr.lookup(k)
	return v
}

// run probes the container; granted is the yarn.io/gpu it was allocated. Every step that fails
// is noted in the report's Errors; the report is always returned.
func (pr *prober) run(ctx context.Context, granted int64) *view.DoctorProbe {
	p := &view.DoctorProbe{Version: view.DoctorProbeVersion, Granted: granted, Listed: []view.DoctorDevice{}}
	host, port, web := pr.getenv("NM_HOST"), pr.getenv("NM_PORT"), pr.getenv("NM_HTTP_PORT")
	if host != "" && port != "" {
		p.Node = net.JoinHostPort(host, port)
	} else {
		p.Node = "unknown"
		p.Errors = append(p.Errors, "NM_HOST and NM_PORT are not set: not in a YARN container?")
	}
	if host != "" && web != "" {
		p.NodeHTTP = net.JoinHostPort(host, web)
	}
	p.Container = pr.getenv("CONTAINER_ID")
	for _, k := range envVars {
		if v, ok := pr.lookup(k); ok {
			if p.Env == nil {
				p.Env = map[string]string{}
			}
			p.Env[k] = v
		}
	}
	pr.devices(ctx, p)
	pr.driver(ctx, p)
	p.Cgroup = pr.cgroup()
	p.Coordination = pr.coordination()
	if p.NodeHTTP == "" {
		p.NodeManager = view.DoctorAssignment{State: AssignUnreachable, Detail: "NM_HTTP_PORT is not set"}
		p.Executor = view.DoctorExecutor{Source: "unknown: NM_HTTP_PORT is not set"}
		return p
	}
	p.NodeManager = pr.assignment(ctx, p.NodeHTTP, p.Container)
	p.Executor = pr.executor(ctx, p.NodeHTTP)
	return p
}

// options are the discovery options of a listing that ignores the visibility variables (they
// hide devices, they do not isolate them) and, with open false, never opens a device node.
func (pr *prober) options(backends []string) discovery.Options {
	return discovery.Options{
		Root: pr.root,
		Kind: discovery.KindGPU,
		Getenv: func(k string) string {
			if k == "PATH" {
				return pr.getenv(k)
			}
			return ""
		},
		CanOpen:         func(string) error { return nil },
		CommandTimeout:  pr.toolTimeout,
		NVMLLibraryPath: pr.nvmlLibrary,
		Backends:        backends,
		Logger:          pr.logger,
	}
}

// devices lists the GPUs the driver shows the container and tries to open each one's nodes.
func (pr *prober) devices(ctx context.Context, p *view.DoctorProbe) {
	res, err := discovery.Discover(ctx, "", pr.options(nil))
	if err != nil {
		if !errors.Is(err, discovery.ErrNoDevices) {
			p.Errors = append(p.Errors, fmt.Sprintf("listing the GPUs: %v", err))
		}
		return
	}
	p.Backend = res.Backend
	for _, d := range res.Devices {
		dd := view.DoctorDevice{ID: d.ID, Minor: -1, Opens: true}
		if d.Minor != nil {
			dd.Minor = *d.Minor
		}
		for _, node := range d.DevNodes {
			if err := openDevice(pr.root.Path(node)); err != nil {
				dd.Opens, dd.Error = false, fmt.Sprintf("%s: %v", node, unwrapPath(err))
				break
			}
		}
		p.Listed = append(p.Listed, dd)
	}
}

// openDevice opens a device node read-write, as CUDA does, and closes it: device cgroups deny
// the open, not a stat.
func openDevice(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// unwrapPath drops the *PathError's path (the caller names the node).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// driver compares what NVML and the driver's procfs list, and reads the driver's version.
func (pr *prober) driver(ctx context.Context, p *view.DoctorProbe) {
	ids := func(backend string) ([]string, string) {
		res, err := discovery.Discover(ctx, discovery.VendorNVIDIA, pr.options([]string{backend}))
		if err != nil && !errors.Is(err, discovery.ErrNoDevices) {
			return nil, err.Error()
		}
		for _, pb := range res.Probes {
			if pb.Backend == backend && !pb.OK {
				return nil, pb.Reason
			}
		}
		out := []string{}
		for _, d := range res.Devices {
			out = append(out, d.ID)
		}
		slices.Sort(out)
		return out, ""
	}
	p.Driver.NVML, p.Driver.NVMLDetail = ids("nvml")
	p.Driver.Procfs, p.Driver.ProcfsDetail = ids("procfs")
	switch {
	case p.Driver.NVML == nil || p.Driver.Procfs == nil:
		p.Driver.Agree = "n/a"
	case slices.Equal(p.Driver.NVML, p.Driver.Procfs):
		p.Driver.Agree = "yes"
	default:
		p.Driver.Agree = "no"
	}
	if v, err := pr.root.ReadString("/proc/driver/nvidia/version"); err == nil {
		p.Driver.Version, _, _ = strings.Cut(v, "\n")
	}
}

// cgroup reads the container's devices cgroup: under v1 its devices.list; under v2 the rules are
// an eBPF program no file shows, and only the opens tell.
func (pr *prober) cgroup() view.DoctorCgroup {
	data, err := readBounded(pr.selfCgroup, 64<<10)
	if err != nil {
		return view.DoctorCgroup{Version: "unknown", Detail: err.Error()}
	}
	var unified string
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
			continue
		}
		if !slices.Contains(strings.Split(parts[1], ","), "devices") {
			continue
		}
		cg := view.DoctorCgroup{Version: "v1", Path: parts[2]}
		// The container's own cgroup, else (a cgroup namespace shows it as the root) the
		// mount's top.
		var rules []byte
		for _, dir := range []string{path.Join(pr.cgroupFS, "devices", parts[2]), path.Join(pr.cgroupFS, "devices")} {
			if rules, err = readBounded(path.Join(dir, "devices.list"), 64<<10); err == nil {
				break
			}
		}
		if err != nil {
			cg.Detail = fmt.Sprintf("devices.list: %v", err)
			return cg
		}
		for l := range strings.Lines(string(rules)) {
			if l = strings.TrimSpace(l); l != "" && len(cg.Rules) < maxItems {
				cg.Rules = append(cg.Rules, l)
				cg.AllowsAll = cg.AllowsAll || l == "a *:* rwm"
			}
		}
		return cg
	}
	if unified != "" {
		return view.DoctorCgroup{Version: "v2", Path: unified,
			Detail: "cgroup v2 keeps device rules in an eBPF program: the opens of the device nodes show what it allows"}
	}
	return view.DoctorCgroup{Version: "unknown", Detail: pr.selfCgroup + " names no devices controller"}
}

// coordination reads the ledger of yarn-er's coordination for the probe's user, without its lock
// (a probe must not delay a hand-out): what discover and exec have handed out on the node.
func (pr *prober) coordination() view.DoctorCoordination {
	file := pr.getenv("YARN_ER_COORDINATION_FILE")
	if file == "" {
		file = pr.coordinationDefault
	}
	c := view.DoctorCoordination{File: file}
	ledger := file + ".ledger." + strconv.Itoa(pr.uid)
	f, err := os.OpenFile(ledger, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c // nothing handed out yet
	case err != nil:
		c.Detail = fmt.Sprintf("%s: %v", ledger, unwrapPath(err))
		return c
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		c.Detail = ledger + ": not a regular file"
		return c
	}
	data, err := io.ReadAll(io.LimitReader(f, discovery.MaxLedgerBytes+1))
	if err != nil || len(data) > discovery.MaxLedgerBytes {
		c.Detail = fmt.Sprintf("%s: unreadable or larger than %d bytes", ledger, discovery.MaxLedgerBytes)
		return c
	}
	entries, problems := discovery.ParseLedger(data)
	for _, e := range entries {
		if len(c.Held) == maxItems {
			c.Detail = fmt.Sprintf("more than %d entries: the first %d are listed", maxItems, maxItems)
			break
		}
		c.Held = append(c.Held, view.DoctorHeld{Key: e.Key, PID: e.Owner.PID})
	}
	if len(problems) > 0 && c.Detail == "" {
		c.Detail = fmt.Sprintf("%s: %d line(s) skipped", ledger, len(problems))
	}
	return c
}

// readBounded reads at most limit bytes of a file (procfs and cgroupfs files report size 0).
func readBounded(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// assignment asks the NodeManager which GPUs its plugin assigned to this container.
func (pr *prober) assignment(ctx context.Context, nodeHTTP, container string) view.DoctorAssignment {
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{nodeHTTP}, Auth: yarn.AuthSimple, Timeout: pr.httpTimeout,
		Transport: pr.transport, Getenv: pr.getenv, Logger: pr.logger, Retry: yarn.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		return view.DoctorAssignment{State: AssignUnreachable, Detail: err.Error()}
	}
	nd, err := yc.NodeResource(ctx, nodeHTTP, records.GPU)
	switch {
	case err != nil:
		return view.DoctorAssignment{State: AssignUnreachable, Detail: err.Error()}
	case !nd.Plugin:
		return view.DoctorAssignment{State: AssignNoPlugin, Detail: "the NodeManager runs no resource plugin for " + records.GPU}
	case !nd.Assignments:
		return view.DoctorAssignment{State: AssignNone, Detail: nd.NoAssignments}
	}
	a := view.DoctorAssignment{State: AssignAssigned, Minors: []int64{}}
	for _, d := range nd.Assigned {
		if d.ContainerID == container {
			a.Minors = append(a.Minors, d.MinorNumber)
		}
	}
	slices.Sort(a.Minors)
	return a
}

// executor reads the NodeManager's container executor and GPU settings from its /conf.
func (pr *prober) executor(ctx context.Context, nodeHTTP string) view.DoctorExecutor {
	ex := view.DoctorExecutor{Source: "nodemanager /conf"}
	class, set, err := pr.confValue(ctx, nodeHTTP, keyExecutor)
	if err != nil {
		return view.DoctorExecutor{Source: "unknown: " + err.Error()}
	}
	if !set {
		class = defaultExecutor
	}
	ex.Class = class
	// The two others only matter when the first answered; an error leaves them unknown.
	ex.Plugins, _, _ = pr.confValue(ctx, nodeHTTP, keyPlugins)
	ex.CgroupsMount, set, _ = pr.confValue(ctx, nodeHTTP, keyCgroupsMount)
	if !set {
		ex.CgroupsMount = "false"
	}
	return ex
}

// confValue is one key of the NodeManager's configuration, as its /conf?name=KEY answers in JSON
// (Hadoop's ConfServlet: {"property":{"key":...,"value":...}}; 404 for a key it does not have).
func (pr *prober) confValue(ctx context.Context, nodeHTTP, key string) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, pr.httpTimeout)
	defer cancel()
	q := url.Values{"name": {key}}
	if u := pr.user(); u != "" {
		q.Set("user.name", u) // simple authentication, as the NodeManager's web filter asks
	}
	u := (&url.URL{Scheme: "http", Host: nodeHTTP, Path: "/conf", RawQuery: q.Encode()}).String()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Accept", "application/json")
	client := &http.Client{Transport: pr.transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return "", false, fmt.Errorf("the NodeManager's /conf: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxConfBody))
	if err != nil {
		return "", false, fmt.Errorf("the NodeManager's /conf: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return "", false, nil
	default:
		return "", false, fmt.Errorf("the NodeManager's /conf answered %s", resp.Status)
	}
	var doc struct {
		Property *struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"property"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.Property == nil || doc.Property.Key != key {
		return "", false, fmt.Errorf("the NodeManager's /conf?name=%s: not the JSON of one property", key)
	}
	return doc.Property.Value, true, nil
}

// user is the user the probe runs as, for simple authentication: $HADOOP_USER_NAME, else $USER
// (the NodeManager sets it in every container), else the process's.
func (pr *prober) user() string {
	for _, k := range []string{"HADOOP_USER_NAME", "USER"} {
		if v := pr.getenv(k); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// summary is the probe's one line on stderr, for a person reading the container's log.
func summary(p *view.DoctorProbe) string {
	var b strings.Builder
	opens := 0
	for _, d := range p.Listed {
		if d.Opens {
			opens++
		}
	}
	fmt.Fprintf(&b, "doctor probe on %s: given %d GPU(s); the driver lists %d, %d open; NodeManager: %s; cgroup %s; executor %s",
		p.Node, p.Granted, len(p.Listed), opens, p.NodeManager.State, p.Cgroup.Version, orUnknown(p.Executor.Class))
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
