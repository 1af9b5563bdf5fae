package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// clusterConn is what every cluster subcommand needs to reach the RM.
type clusterConn struct {
	hadoop hadoopFlags
	rm     rmFlags
}

func (cc *clusterConn) register(cmd *cobra.Command) {
	addHadoopFlags(cmd, &cc.hadoop)
	addRMFlags(cmd, cmd.Flags(), &cc.rm)
}

func (cc *clusterConn) client(a *app) (*yarn.Client, error) {
	hc, err := cc.hadoop.load(a)
	if err != nil {
		return nil, err
	}
	return cc.rm.client(a, hc)
}

func newClusterCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Inspect a YARN cluster: ResourceManager, nodes and their GPUs/FPGAs, queues, applications",
		Long: `Reads the ResourceManager's REST API (/ws/v1/cluster). The RM comes from --rm or from the Hadoop
configuration (--hadoop-conf, HADOOP_CONF_DIR): yarn.resourcemanager.webapp.address, its https
variant under yarn.http.policy=HTTPS_ONLY, or every RM of yarn.resourcemanager.ha.rm-ids, of which
the active one is used. Authentication is Hadoop's simple scheme (--user, HADOOP_USER_NAME, the OS
user) or Kerberos SPNEGO (--keytab/--principal or a kinit credential cache).`,
		Args: cobra.ArbitraryArgs,
		RunE: helpOrUnknownCommand,
	}
	cmd.AddCommand(newClusterInfoCmd(a), newClusterNodesCmd(a), newClusterQueuesCmd(a), newClusterAppsCmd(a))
	return cmd
}

// ---- cluster info ----

type clusterInfoOut struct {
	ResourceManager            string         `json:"resourceManager"`
	HAState                    string         `json:"haState"`
	State                      string         `json:"state"`
	ClusterID                  int64          `json:"clusterId"`
	StartedOn                  *time.Time     `json:"startedOn"`
	HadoopVersion              string         `json:"hadoopVersion"`
	ResourceManagerVersion     string         `json:"resourceManagerVersion"`
	HAZooKeeperConnectionState string         `json:"haZooKeeperConnectionState,omitempty"`
	ResourceManagers           []rmStatusOut  `json:"resourceManagers"`
	Metrics                    *clusterMetOut `json:"metrics"`
}

type rmStatusOut struct {
	ID      string `json:"id,omitempty"`
	Address string `json:"address"`
	HAState string `json:"haState,omitempty"`
	Error   string `json:"error,omitempty"`
}

type clusterMetOut struct {
	ActiveNodes    int64 `json:"activeNodes"`
	UnhealthyNodes int64 `json:"unhealthyNodes"`
	LostNodes      int64 `json:"lostNodes"`
	AppsRunning    int64 `json:"appsRunning"`
	AppsPending    int64 `json:"appsPending"`
	AppsSubmitted  int64 `json:"appsSubmitted"`
	// Total and Used are every resource type (CapacityScheduler), else memory and vcores only.
	Total resourceMap `json:"total"`
	Used  resourceMap `json:"used"`
}

func newClusterInfoCmd(a *app) *cobra.Command {
	var cc clusterConn
	cmd := &cobra.Command{
		Use:   "info",
		Short: "The ResourceManager: address, HA state, versions, and the cluster's totals",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cc.client(a)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			info, err := c.ClusterInfo(ctx)
			if err != nil {
				return err
			}
			out := clusterInfoOut{
				ResourceManager: info.RMAddress, HAState: info.HAState, State: info.State, ClusterID: info.ID,
				HadoopVersion: info.HadoopVersion, ResourceManagerVersion: info.ResourceManagerVersion,
				HAZooKeeperConnectionState: info.HAZooKeeperConnectionState,
				ResourceManagers:           []rmStatusOut{},
			}
			if !info.StartedOn.IsZero() {
				out.StartedOn = &info.StartedOn
			}
			if len(c.Addresses()) > 1 {
				for _, st := range c.RMs(ctx) {
					r := rmStatusOut{ID: st.ID, Address: st.Address, HAState: st.HAState}
					if st.Err != nil {
						r.Error = st.Err.Error()
					}
					out.ResourceManagers = append(out.ResourceManagers, r)
				}
			}
			if m, err := c.Metrics(ctx); err != nil {
				a.logger.Warn("cluster metrics unavailable", "error", err)
			} else {
				out.Metrics = metricsOut(m)
			}
			return a.render(out, func(w io.Writer) error { return writeClusterInfo(w, out) })
		},
	}
	cc.register(cmd)
	return cmd
}

func metricsOut(m *yarn.ClusterMetrics) *clusterMetOut {
	total, used := m.TotalClusterResourcesAcrossPartition, m.TotalUsedResourcesAcrossPartition
	if total == nil {
		total = yarn.Resources{records.MemoryMB: {Value: m.TotalMB, Units: "Mi"}, records.VCores: {Value: m.TotalVirtualCores}}
	}
	if used == nil {
		used = yarn.Resources{records.MemoryMB: {Value: m.AllocatedMB, Units: "Mi"}, records.VCores: {Value: m.AllocatedVirtualCores}}
	}
	return &clusterMetOut{
		ActiveNodes: m.ActiveNodes, UnhealthyNodes: m.UnhealthyNodes, LostNodes: m.LostNodes,
		AppsRunning: m.AppsRunning, AppsPending: m.AppsPending, AppsSubmitted: m.AppsSubmitted,
		Total: resourceMap(total), Used: resourceMap(used),
	}
}

func writeClusterInfo(w io.Writer, out clusterInfoOut) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "ResourceManager:\t%s (%s)\n", out.ResourceManager, out.HAState)
	for _, r := range out.ResourceManagers {
		state := r.HAState
		if r.Error != "" {
			state = "error: " + r.Error
		}
		label := r.Address
		if r.ID != "" {
			label = r.ID + " " + r.Address
		}
		fmt.Fprintf(tw, "  %s\t%s\n", label, state)
	}
	fmt.Fprintf(tw, "State:\t%s\n", out.State)
	fmt.Fprintf(tw, "Hadoop version:\t%s\n", out.HadoopVersion)
	fmt.Fprintf(tw, "RM version:\t%s\n", out.ResourceManagerVersion)
	fmt.Fprintf(tw, "Cluster id:\t%d\n", out.ClusterID)
	if out.StartedOn != nil {
		fmt.Fprintf(tw, "Started:\t%s\n", out.StartedOn.UTC().Format(time.RFC3339))
	}
	if m := out.Metrics; m != nil {
		fmt.Fprintf(tw, "Nodes:\t%d active, %d unhealthy, %d lost\n", m.ActiveNodes, m.UnhealthyNodes, m.LostNodes)
		fmt.Fprintf(tw, "Applications:\t%d running, %d pending, %d submitted\n", m.AppsRunning, m.AppsPending, m.AppsSubmitted)
		names := yarn.Resources(m.Total).Names()
		parts := make([]string, 0, len(names))
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %s/%s", n, m.Used[n].String(), m.Total[n].String()))
		}
		fmt.Fprintf(tw, "Resources (used/total):\t%s\n", strings.Join(parts, ", "))
	}
	return tw.Flush()
}

// ---- cluster nodes ----

// nodeOut is one node in `cluster nodes -o json`: the public shape
// {"id","state","host","rack","httpAddress","total","used","available"}.
type nodeOut struct {
	ID          string      `json:"id"`
	State       string      `json:"state"`
	Host        string      `json:"host"`
	Rack        string      `json:"rack"`
	HTTPAddress string      `json:"httpAddress"`
	Total       resourceMap `json:"total"`
	Used        resourceMap `json:"used"`
	Available   resourceMap `json:"available"`
}

type nodesOut struct {
	Nodes []nodeOut `json:"nodes"`
}

// resourceMap renders Resources as {"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}: values in
// each resource's own unit, memory-mb and vcores first, the others sorted; null when unknown.
type resourceMap yarn.Resources

// MarshalJSON implements json.Marshaler with a stable key order.
func (r resourceMap) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range yarn.Resources(r).Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(r[n].Value, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote (units are not part of it), exactly.
func (r *resourceMap) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]json.Number
	if err := dec.Decode(&m); err != nil {
		return err
	}
	if m == nil {
		*r = nil
		return nil
	}
	out := make(resourceMap, len(m))
	for k, v := range m {
		n, err := v.Int64()
		if err != nil {
			return fmt.Errorf("resource %s: %w", k, err)
		}
		out[k] = records.Quantity{Value: n}
	}
	*r = out
	return nil
}

func newClusterNodesCmd(a *app) *cobra.Command {
	var (
		cc       clusterConn
		resource string
		states   []string
	)
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "NodeManagers with memory, vcores and every extended resource (GPU, FPGA, ...): used/available/total",
		Example: `  yarn-er cluster nodes --rm http://rm:8088
  yarn-er cluster nodes --resource yarn.io/gpu --state RUNNING -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cc.client(a)
			if err != nil {
				return err
			}
			nodes, err := c.Nodes(cmd.Context(), yarn.NodesQuery{States: states})
			if err != nil {
				return err
			}
			out := nodesOut{Nodes: []nodeOut{}}
			for _, n := range nodes {
				if resource != "" && !n.Total.Has(resource) {
					continue
				}
				out.Nodes = append(out.Nodes, nodeOut{
					ID: n.ID, State: n.State, Host: n.Host, Rack: n.Rack, HTTPAddress: n.HTTPAddress,
					Total: resourceMap(n.Total), Used: resourceMap(n.Used), Available: resourceMap(n.Available),
				})
			}
			slices.SortFunc(out.Nodes, func(x, y nodeOut) int { return strings.Compare(x.ID, y.ID) })
			return a.render(out, func(w io.Writer) error { return writeNodesTable(w, out, nodes) })
		},
	}
	cc.register(cmd)
	cmd.Flags().StringVar(&resource, "resource", "", "only nodes that have this resource (value above 0), e.g. yarn.io/gpu")
	cmd.Flags().StringSliceVar(&states, "state", nil,
		"only nodes in these states (comma-separated): NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN")
	_ = cmd.RegisterFlagCompletionFunc("resource", fixedCompletion(records.GPU, records.FPGA, "nvidia.com/gpu"))
	_ = cmd.RegisterFlagCompletionFunc("state", fixedCompletion("NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING",
		"DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"))
	return cmd
}

// writeNodesTable writes one row per node and one column per resource type; each cell is
// used/available/total in the resource's unit (shown after the total when there is one).
func writeNodesTable(w io.Writer, out nodesOut, nodes []yarn.Node) error {
	units := yarn.Resources{} // every resource type of the nodes, with its unit
	for _, n := range nodes {
		for name, q := range n.Total {
			units[name] = records.Quantity{Units: q.Units}
		}
	}
	names := units.Names()
	tw := newTable(w)
	header := []string{"NODE", "STATE", "RACK"}
	header = append(header, names...)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, n := range out.Nodes {
		row := []string{n.ID, n.State, n.Rack}
		for _, name := range names {
			row = append(row, fmt.Sprintf("%s/%s/%s", cell(n.Used, name), cell(n.Available, name), cell(n.Total, name)+units[name].Units))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(out.Nodes) == 0 {
		_, err := fmt.Fprintln(w, "(no nodes)")
		return err
	}
	_, err := fmt.Fprintln(w, "resources: used/available/total, in each resource's unit")
	return err
}

// cell is a resource's value in r, or "-" when r does not report it.
func cell(r resourceMap, name string) string {
	q, ok := r[name]
	if !ok {
		return "-"
	}
	return strconv.FormatInt(q.Value, 10)
}

// ---- cluster queues ----

type queueOut struct {
	Path                 string      `json:"path"`
	Name                 string      `json:"name"`
	State                string      `json:"state"`
	Leaf                 bool        `json:"leaf"`
	Capacity             float64     `json:"capacity"`
	MaxCapacity          float64     `json:"maxCapacity"`
	UsedCapacity         float64     `json:"usedCapacity"`
	AbsoluteCapacity     float64     `json:"absoluteCapacity"`
	AbsoluteMaxCapacity  float64     `json:"absoluteMaxCapacity"`
	AbsoluteUsedCapacity float64     `json:"absoluteUsedCapacity"`
	NumApplications      int64       `json:"numApplications"`
	SchedulingPolicy     string      `json:"schedulingPolicy,omitempty"` // FairScheduler: DRF, fair, FIFO
	MaximumAllocation    resourceMap `json:"maximumAllocation"`
	Used                 resourceMap `json:"used"`
	MinEffectiveCapacity resourceMap `json:"minEffectiveCapacity"`
	MaxEffectiveCapacity resourceMap `json:"maxEffectiveCapacity"`
	MinResources         resourceMap `json:"minResources,omitempty"`
	MaxResources         resourceMap `json:"maxResources,omitempty"`
	depth                int
}

type queuesOut struct {
	Scheduler         string      `json:"scheduler"`
	MaximumAllocation resourceMap `json:"maximumAllocation"`
	Queues            []queueOut  `json:"queues"`
}

func newClusterQueuesCmd(a *app) *cobra.Command {
	var cc clusterConn
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "Scheduler queues: capacities and the largest container each allows, extended resources included",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cc.client(a)
			if err != nil {
				return err
			}
			s, err := c.Scheduler(cmd.Context())
			if err != nil {
				return err
			}
			out := queuesOut{Scheduler: s.Type, MaximumAllocation: resourceMap(s.MaximumAllocation), Queues: []queueOut{}}
			var walk func(q *yarn.Queue, depth int)
			walk = func(q *yarn.Queue, depth int) {
				out.Queues = append(out.Queues, queueOut{
					Path: q.Path, Name: q.Name, State: q.State, Leaf: q.Leaf,
					Capacity: q.Capacity, MaxCapacity: q.MaxCapacity, UsedCapacity: q.UsedCapacity,
					AbsoluteCapacity: q.AbsoluteCapacity, AbsoluteMaxCapacity: q.AbsoluteMaxCapacity,
					AbsoluteUsedCapacity: q.AbsoluteUsedCapacity, NumApplications: q.NumApplications,
					SchedulingPolicy:  q.SchedulingPolicy,
					MaximumAllocation: resourceMap(q.MaximumAllocation), Used: resourceMap(q.Used),
					MinEffectiveCapacity: resourceMap(q.MinEffectiveCapacity), MaxEffectiveCapacity: resourceMap(q.MaxEffectiveCapacity),
					MinResources: resourceMap(q.MinResources), MaxResources: resourceMap(q.MaxResources),
					depth: depth,
				})
				for _, ch := range q.Children {
					walk(ch, depth+1)
				}
			}
			if s.Root != nil {
				walk(s.Root, 0)
			}
			return a.render(out, func(w io.Writer) error { return writeQueuesTable(w, out) })
		},
	}
	cc.register(cmd)
	return cmd
}

func writeQueuesTable(w io.Writer, out queuesOut) error {
	fmt.Fprintf(w, "Scheduler: %s\n", out.Scheduler)
	tw := newTable(w)
	fmt.Fprintln(tw, "QUEUE\tSTATE\tCAPACITY\tMAX\tUSED\tAPPS\tMAX ALLOCATION")
	for _, q := range out.Queues {
		maxAlloc := q.MaximumAllocation
		if maxAlloc == nil {
			maxAlloc = q.MaxResources
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%d\t%s\n", strings.Repeat("  ", q.depth), q.Name, q.State,
			percent(q.Capacity), percent(q.MaxCapacity), percent(q.UsedCapacity), q.NumApplications, resourcesText(maxAlloc))
	}
	return tw.Flush()
}

func percent(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }

// resourcesText renders "memory-mb=16384Mi vcores=32 yarn.io/gpu=unbounded".
func resourcesText(r resourceMap) string {
	if r == nil {
		return "-"
	}
	names := yarn.Resources(r).Names()
	parts := make([]string, 0, len(names))
	for _, n := range names {
		v := r[n].String()
		if r[n].Value == 1<<63-1 {
			v = "unbounded"
		}
		parts = append(parts, n+"="+v)
	}
	return strings.Join(parts, " ")
}

// ---- cluster apps ----

type appOut struct {
	ID              string      `json:"id"`
	Name            string      `json:"name"`
	User            string      `json:"user"`
	Queue           string      `json:"queue"`
	State           string      `json:"state"`
	FinalStatus     string      `json:"finalStatus"`
	Progress        float64     `json:"progress"`
	ApplicationType string      `json:"applicationType"`
	StartedTime     *time.Time  `json:"startedTime"`
	FinishedTime    *time.Time  `json:"finishedTime"`
	Allocated       resourceMap `json:"allocated"`
	Diagnostics     string      `json:"diagnostics"`
}

type appsOut struct {
	Apps []appOut `json:"apps"`
}

func newClusterAppsCmd(a *app) *cobra.Command {
	var (
		cc     clusterConn
		states []string
		queue  string
		owner  string
		types  []string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "apps",
		Short: "Applications, with their state and allocated resources",
		Example: `  yarn-er cluster apps --state RUNNING,ACCEPTED
  yarn-er cluster apps --queue default --limit 20 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageErrorf("--limit %d: want 0 (no limit) or more", limit)
			}
			c, err := cc.client(a)
			if err != nil {
				return err
			}
			apps, err := c.Apps(cmd.Context(), yarn.AppsQuery{States: states, Queue: queue, User: owner, ApplicationTypes: types, Limit: limit})
			if err != nil {
				return err
			}
			out := appsOut{Apps: []appOut{}}
			for _, ap := range apps {
				o := appOut{
					ID: ap.ID, Name: ap.Name, User: ap.User, Queue: ap.Queue, State: string(ap.State), FinalStatus: ap.FinalStatus.String(),
					Progress: ap.Progress, ApplicationType: ap.ApplicationType, Allocated: resourceMap(ap.Allocated),
					Diagnostics: ap.Diagnostics,
				}
				if !ap.StartedTime.IsZero() {
					o.StartedTime = &ap.StartedTime
				}
				if !ap.FinishedTime.IsZero() {
					o.FinishedTime = &ap.FinishedTime
				}
				out.Apps = append(out.Apps, o)
			}
			slices.SortFunc(out.Apps, func(x, y appOut) int { return strings.Compare(y.ID, x.ID) }) // newest first
			return a.render(out, func(w io.Writer) error { return writeAppsTable(w, out) })
		},
	}
	cc.register(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&states, "state", nil,
		"only applications in these states (comma-separated): NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED")
	fl.StringVar(&queue, "queue", "", "only applications in this queue")
	fl.StringVar(&owner, "owner", "", "only applications of this user")
	fl.StringSliceVar(&types, "type", nil, "only applications of these types, e.g. \"Apache Flink\"")
	fl.IntVar(&limit, "limit", 0, "at most this many applications (0: no limit)")
	_ = cmd.RegisterFlagCompletionFunc("state", fixedCompletion("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING",
		"FINISHED", "FAILED", "KILLED"))
	return cmd
}

func writeAppsTable(w io.Writer, out appsOut) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tUSER\tQUEUE\tSTATE\tFINAL\tPROGRESS\tSTARTED")
	for _, ap := range out.Apps {
		started := "-"
		if ap.StartedTime != nil {
			started = ap.StartedTime.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ap.ID, ap.Name, ap.User, ap.Queue, ap.State, ap.FinalStatus,
			strconv.FormatFloat(ap.Progress, 'f', 0, 64)+"%", started)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(out.Apps) == 0 {
		_, err := fmt.Fprintln(w, "(no applications)")
		return err
	}
	return nil
}
