package view

import (
	"slices"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// The functions below build the views from the ResourceManager client's records. The CLI's
// commands and `yarn-er serve` both call them, so that `cluster nodes -o json` and
// /api/v1/cluster/nodes print the same bytes for the same cluster state.

// NodesOf is `cluster nodes`: the nodes that have resource (above 0; every node when resource is
// ""), sorted by node id (nodes of the same id in the order given).
func NodesOf(nodes []yarn.Node, resource string) Nodes {
	out := Nodes{Nodes: []Node{}}
	for i := range nodes {
		n := &nodes[i]
		if resource != "" && n.Total.Value(resource) <= 0 {
			continue
		}
		out.Nodes = append(out.Nodes, NodeOf(n))
	}
	slices.SortStableFunc(out.Nodes, func(x, y Node) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// NodeOf is one node's view.
func NodeOf(n *yarn.Node) Node {
	return Node{
		ID: n.ID, State: n.State, Host: n.Host, Rack: n.Rack, HTTPAddress: n.HTTPAddress,
		Total: ResourceMap(n.Total), Used: ResourceMap(n.Used), Available: ResourceMap(n.Available),
	}
}

// QueuesOf is `cluster queues`: the scheduler and its queues, parents before children, with each
// queue's depth below root (for a table's indentation).
func QueuesOf(s *yarn.Scheduler) (Queues, []int) {
	out := Queues{Scheduler: s.Type, MaximumAllocation: ResourceMap(s.MaximumAllocation), Queues: []Queue{}}
	var depths []int
	var walk func(q *yarn.Queue, depth int)
	walk = func(q *yarn.Queue, depth int) {
		out.Queues = append(out.Queues, Queue{
			Path: q.Path, Name: q.Name, State: q.State, Leaf: q.Leaf,
			Capacity: q.Capacity, MaxCapacity: q.MaxCapacity, UsedCapacity: q.UsedCapacity,
			AbsoluteCapacity: q.AbsoluteCapacity, AbsoluteMaxCapacity: q.AbsoluteMaxCapacity,
			AbsoluteUsedCapacity: q.AbsoluteUsedCapacity, NumApplications: q.NumApplications,
			SchedulingPolicy:  q.SchedulingPolicy,
			MaximumAllocation: ResourceMap(q.MaximumAllocation), Used: ResourceMap(q.Used),
			MinEffectiveCapacity: ResourceMap(q.MinEffectiveCapacity), MaxEffectiveCapacity: ResourceMap(q.MaxEffectiveCapacity),
			MinResources: ResourceMap(q.MinResources), MaxResources: ResourceMap(q.MaxResources),
		})
		depths = append(depths, depth)
		for _, ch := range q.Children {
			walk(ch, depth+1)
		}
	}
	if s.Root != nil {
		walk(s.Root, 0)
	}
	return out, depths
}

// AppsOf is `cluster apps`, in the order of apps.
func AppsOf(apps []yarn.App) Apps {
	out := Apps{Apps: make([]App, 0, len(apps))}
	for i := range apps {
		ap := &apps[i]
		o := App{
			ID: ap.ID, Name: ap.Name, User: ap.User, Queue: ap.Queue, State: string(ap.State), FinalStatus: ap.FinalStatus.String(),
			Progress: ap.Progress, ApplicationType: ap.ApplicationType, Allocated: ResourceMap(ap.Allocated),
			Diagnostics: ap.Diagnostics,
		}
		o.StartedTime = optTime(ap.StartedTime)
		o.FinishedTime = optTime(ap.FinishedTime)
		out.Apps = append(out.Apps, o)
	}
	return out
}

// AppInfoOf is an application's view in `app list`, `app status`, `app kill` and `app wait`.
func AppInfoOf(x *yarn.App) AppInfo {
	tags := x.ApplicationTags
	if tags == nil {
		tags = []string{}
	}
	return AppInfo{
		ID: x.ID, Name: x.Name, Type: x.ApplicationType, User: x.User, Queue: x.Queue, State: string(x.State),
		FinalStatus: x.FinalStatus.String(), Progress: x.Progress, Tags: tags,
		StartedTime: optTime(x.StartedTime), LaunchTime: optTime(x.LaunchTime), FinishedTime: optTime(x.FinishedTime),
		ElapsedMillis: x.ElapsedTime.Milliseconds(), RunningContainers: x.RunningContainers,
		Allocated: ResourceMap(x.Allocated), GPUs: x.Allocated.Value(records.GPU),
		Diagnostics: x.Diagnostics, TrackingURL: x.TrackingURL, AMContainerLogs: x.AMContainerLogs,
	}
}

// AppStatusOf is `app status`: the application, its current attempt (nil: none) and that
// attempt's live containers.
func AppStatusOf(app *yarn.App, attempt *yarn.AppAttempt, containers []yarn.AppContainer) AppStatus {
	out := AppStatus{AppInfo: AppInfoOf(app), Containers: []AppContainer{}}
	if at := attempt; at != nil {
		out.Attempt = &AppAttempt{ID: at.AppAttemptID, State: at.State, ContainerID: at.ContainerID,
			Node: at.NodeID, LogsLink: at.LogsLink, Diagnostics: at.Diagnostics}
	}
	for _, c := range containers {
		out.Containers = append(out.Containers, AppContainer{ID: c.ID, State: c.State, Node: c.NodeID,
			NodeHTTP: c.NodeHTTPAddress, Resource: ResourceMap(c.Resource), GPUs: c.Resource.Value(records.GPU),
			ExitStatus: c.ExitStatus, LogURL: c.LogURL, AM: out.Attempt != nil && c.ID == out.Attempt.ContainerID})
	}
	return out
}

// ClusterInfoOf is `cluster info`: info from the RM that answered, rms the status of every RM
// when the client knows several (nil otherwise), m the cluster metrics (nil when the RM did not
// give them).
func ClusterInfoOf(info *yarn.ClusterInfo, rms []yarn.RMStatus, m *yarn.ClusterMetrics) ClusterInfo {
	out := ClusterInfo{
		ResourceManager: info.RMAddress, HAState: info.HAState, State: info.State, ClusterID: info.ID,
		HadoopVersion: info.HadoopVersion, ResourceManagerVersion: info.ResourceManagerVersion,
		HAZooKeeperConnectionState: info.HAZooKeeperConnectionState,
		ResourceManagers:           []RMStatus{},
	}
	out.StartedOn = optTime(info.StartedOn)
	for _, st := range rms {
		r := RMStatus{ID: st.ID, Address: st.Address, HAState: st.HAState}
		if st.Err != nil {
			r.Error = st.Err.Error()
		}
		out.ResourceManagers = append(out.ResourceManagers, r)
	}
	if m != nil {
		out.Metrics = ClusterMetricsOf(m)
	}
	return out
}

// ClusterMetricsOf is the metrics part of `cluster info`: every resource type where the RM
// reports them across partitions, else memory and vcores.
func ClusterMetricsOf(m *yarn.ClusterMetrics) *ClusterMetrics {
	total, used := m.TotalClusterResourcesAcrossPartition, m.TotalUsedResourcesAcrossPartition
	if total.Len() == 0 {
		total = records.NewResources(m.TotalMB, m.TotalVirtualCores)
	}
	if used.Len() == 0 {
		used = records.NewResources(m.AllocatedMB, m.AllocatedVirtualCores)
	}
	return &ClusterMetrics{
		ActiveNodes: m.ActiveNodes, UnhealthyNodes: m.UnhealthyNodes, LostNodes: m.LostNodes,
		AppsRunning: m.AppsRunning, AppsPending: m.AppsPending, AppsSubmitted: m.AppsSubmitted,
		Total: ResourceMap(total), Used: ResourceMap(used),
	}
}

// CompareAppIDs orders application ids application_<cluster timestamp>_<sequence> by cluster
// timestamp, then sequence, both as numbers (_9999 before _10000). Ids of another form sort
// before every well-formed one, among themselves as strings.
func CompareAppIDs(a, b string) int {
	ia, errA := records.ParseApplicationID(a)
	ib, errB := records.ParseApplicationID(b)
	switch {
	case errA == nil && errB == nil:
		return ia.Compare(ib)
	case errA == nil:
		return 1
	case errB == nil:
		return -1
	}
	return strings.Compare(a, b)
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
