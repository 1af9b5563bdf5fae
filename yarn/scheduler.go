package yarn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/yarn-er/yarn-er/records"
)

// Scheduler types as /ws/v1/cluster/scheduler names them.
const (
	CapacityScheduler = "capacityScheduler"
	FairScheduler     = "fairScheduler"
	FifoScheduler     = "fifoScheduler"
)

// Scheduler is /ws/v1/cluster/scheduler, normalised across the Capacity, Fair and FIFO schedulers.
type Scheduler struct {
	// Type is CapacityScheduler, FairScheduler, FifoScheduler or what the RM said.
	Type string
	// MaximumAllocation is the scheduler's largest container (CapacityScheduler 3.3+), nil when not
	// reported.
	MaximumAllocation records.Resources
	// Root is the root queue; for the FIFO scheduler a single queue named "default".
	Root *Queue
}

// Queue is one scheduler queue. Capacities are percentages (0-100), the only floats in this
// package: they are ratios, not resource quantities.
type Queue struct {
	// Name is the queue's own name, the last element of Path ("default"), for every scheduler
	// (the FairScheduler reports the full path as the name; it is cut here).
	Name string
	// Path is the full queue path ("root.default"): the CapacityScheduler's queuePath, the
	// FairScheduler's queueName (already a full path), else built from the names.
	Path  string
	State string
	// Leaf is set for queues that take applications.
	Leaf bool

	Capacity, UsedCapacity, MaxCapacity                         float64
	AbsoluteCapacity, AbsoluteUsedCapacity, AbsoluteMaxCapacity float64

	// NumApplications is numApplications (CapacityScheduler), or numActiveApps + numPendingApps
	// of a FairScheduler leaf queue.
	NumApplications int64

	// SchedulingPolicy is the FairScheduler queue's policy as the RM names it: "DRF" (dominant
	// resource fairness, the only one that weighs GPUs and other resource types), "fair"
	// (memory only), "FIFO", or a custom policy's name. Empty for the other schedulers.
	SchedulingPolicy string

	// Used is resourcesUsed (CapacityScheduler) or usedResources (FairScheduler).
	Used records.Resources
	// MaximumAllocation is the largest container the queue allows: maximumAllocation
	// (CapacityScheduler 3.3+, the configured limit) or maxContainerAllocation (FairScheduler,
	// already capped by the scheduler's effective maximum).
	MaximumAllocation records.Resources
	// MinEffectiveCapacity and MaxEffectiveCapacity are the CapacityScheduler's effective
	// resources of the queue.
	MinEffectiveCapacity, MaxEffectiveCapacity records.Resources
	// MinResources and MaxResources are the FairScheduler's configured queue limits.
	MinResources, MaxResources records.Resources
	// AMResourceLimit is how much the queue's ApplicationMasters may use in all (the
	// CapacityScheduler's maximum-am-resource-percent of the queue), UserAMResourceLimit the same
	// for one user, UsedAMResource what they use now; nil when not reported.
	AMResourceLimit, UserAMResourceLimit, UsedAMResource records.Resources
	// NodeLabels are the node labels the queue may use (CapacityScheduler accessible-node-labels;
	// "*" means all); nil when not reported.
	NodeLabels []string
	// DefaultNodeLabelExpression is the label the queue gives requests that name none
	// (default-node-label-expression); "" when none is configured.
	DefaultNodeLabelExpression string

	// UserLimitsReported is set when the RM reports the CapacityScheduler's user limits
	// (userLimitFactor and userLimit); the two fields below are then meaningful.
	UserLimitsReported bool
	// UserLimitFactor is user-limit-factor: one user may use at most this multiple of the queue's
	// guaranteed capacity (-1: no user limit, Hadoop 3.3.1+).
	UserLimitFactor float64
	// UserLimitPercent is minimum-user-limit-percent (userLimit): the share, in percent, each
	// active user is guaranteed when several compete.
	UserLimitPercent float64
	// MaxApplicationsPerUser is maxApplicationsPerUser; 0 when not reported.
	MaxApplicationsPerUser int64
	// Users are the queue's users with applications (users.user), as the RM lists them.
	Users []QueueUser
	// Partitions are the queue's capacities per node partition (capacities.
	// queueCapacitiesByPartition; the default partition is named ""); nil when not reported.
	Partitions []QueuePartition

	Children []*Queue
}

// QueueUser is one user of a CapacityScheduler leaf queue.
type QueueUser struct {
	Name string
	// Used is what the user's containers use in the queue (resourcesUsed).
	Used records.Resources
	// ActiveApplications and PendingApplications count the user's applications.
	ActiveApplications, PendingApplications int64
	// Limit is the user's current resource limit (userResourceLimit); nil when not reported.
	Limit records.Resources
}

// QueuePartition is a CapacityScheduler queue's capacity in one node partition (node label).
type QueuePartition struct {
	// Name is the partition (the node label); "" is the default partition.
	Name string
	// Capacity, MaxCapacity are percentages of the parent's capacity in the partition;
	// AbsoluteCapacity, AbsoluteMaxCapacity percentages of the partition.
	Capacity, MaxCapacity, AbsoluteCapacity, AbsoluteMaxCapacity float64
	// EffectiveMin and EffectiveMax are the queue's effective resources in the partition
	// (effectiveMinResource, effectiveMaxResource); nil when not reported.
	EffectiveMin, EffectiveMax records.Resources
}

// Partition returns the queue's capacities in the named partition, nil when not reported.
func (q *Queue) Partition(name string) *QueuePartition {
	for i := range q.Partitions {
		if q.Partitions[i].Name == name {
			return &q.Partitions[i]
		}
	}
	return nil
}

// Queues returns every queue of the tree, depth first, the root first.
func (s *Scheduler) Queues() []*Queue {
	if s == nil || s.Root == nil {
		return nil
	}
	var out []*Queue
	var walk func(q *Queue)
	walk = func(q *Queue) {
		out = append(out, q)
		for _, c := range q.Children {
			walk(c)
		}
	}
	walk(s.Root)
	return out
}

// Queue returns the queue with the given name or path, nil when there is none.
func (s *Scheduler) Queue(nameOrPath string) *Queue {
	for _, q := range s.Queues() {
		if q.Path == nameOrPath {
			return q
		}
	}
	for _, q := range s.Queues() {
		if q.Name == nameOrPath {
			return q
		}
	}
	return nil
}

// queueJSON covers the fields of CapacitySchedulerQueueInfo, CapacitySchedulerInfo (the root),
// FairSchedulerQueueInfo and FifoSchedulerInfo that Queue keeps.
type queueJSON struct {
	Type                 jsonString        `json:"type"`
	QueueName            jsonString        `json:"queueName"`
	QueuePath            jsonString        `json:"queuePath"`
	State                jsonString        `json:"state"`
	QState               jsonString        `json:"qstate"`
	Capacity             jsonFloat         `json:"capacity"`
	UsedCapacity         jsonFloat         `json:"usedCapacity"`
	MaxCapacity          jsonFloat         `json:"maxCapacity"`
	AbsoluteCapacity     jsonFloat         `json:"absoluteCapacity"`
	AbsoluteUsedCapacity jsonFloat         `json:"absoluteUsedCapacity"`
	AbsoluteMaxCapacity  jsonFloat         `json:"absoluteMaxCapacity"`
	NumApplications      jsonInt64         `json:"numApplications"`
	NumActiveApps        jsonInt64         `json:"numActiveApps"`
	NumPendingApps       jsonInt64         `json:"numPendingApps"`
	SchedulingPolicy     jsonString        `json:"schedulingPolicy"`
	ResourcesUsed        *resourceInfoJSON `json:"resourcesUsed"`
	UsedResources        *resourceInfoJSON `json:"usedResources"`
	MaximumAllocation    *resourceInfoJSON `json:"maximumAllocation"`
	MaxContainerAlloc    *resourceInfoJSON `json:"maxContainerAllocation"`
	MinEffectiveCapacity *resourceInfoJSON `json:"minEffectiveCapacity"`
	MaxEffectiveCapacity *resourceInfoJSON `json:"maxEffectiveCapacity"`
	MinResources         *resourceInfoJSON `json:"minResources"`
	MaxResources         *resourceInfoJSON `json:"maxResources"`
	AMResourceLimit      *resourceInfoJSON `json:"AMResourceLimit"`
	UserAMResourceLimit  *resourceInfoJSON `json:"userAMResourceLimit"`
	UsedAMResource       *resourceInfoJSON `json:"usedAMResource"`
	NodeLabels           list[string]      `json:"nodeLabels"`
	DefaultLabelExpr     jsonString        `json:"defaultNodeLabelExpression"`
	UserLimitFactor      *jsonFloat        `json:"userLimitFactor"`
	UserLimit            *jsonFloat        `json:"userLimit"`
	MaxAppsPerUser       jsonInt64         `json:"maxApplicationsPerUser"`
	Users                userList          `json:"users"`
	Capacities           *struct {
		ByPartition list[partitionJSON] `json:"queueCapacitiesByPartition"`
	} `json:"capacities"`
	Queues      queueList  `json:"queues"`
	ChildQueues queueList  `json:"childQueues"`
	RootQueue   *queueJSON `json:"rootQueue"`
}

type queueList []queueJSON

// userJSON is one UserInfo of a CapacityScheduler leaf queue.
type userJSON struct {
	Username               jsonString        `json:"username"`
	ResourcesUsed          *resourceInfoJSON `json:"resourcesUsed"`
	NumActiveApplications  jsonInt64         `json:"numActiveApplications"`
	NumPendingApplications jsonInt64         `json:"numPendingApplications"`
	UserResourceLimit      *resourceInfoJSON `json:"userResourceLimit"`
}

type userList []userJSON

// UnmarshalJSON implements json.Unmarshaler for {"user": [...]}, {"user": {...}}, {} and null.
func (l *userList) UnmarshalJSON(b []byte) error {
	return unmarshalWrapped((*[]userJSON)(l), b, "user", "users")
}

// partitionJSON is one PartitionQueueCapacitiesInfo.
type partitionJSON struct {
	PartitionName        jsonString        `json:"partitionName"`
	Capacity             jsonFloat         `json:"capacity"`
	MaxCapacity          jsonFloat         `json:"maxCapacity"`
	AbsoluteCapacity     jsonFloat         `json:"absoluteCapacity"`
	AbsoluteMaxCapacity  jsonFloat         `json:"absoluteMaxCapacity"`
	EffectiveMinResource *resourceInfoJSON `json:"effectiveMinResource"`
	EffectiveMaxResource *resourceInfoJSON `json:"effectiveMaxResource"`
}

// UnmarshalJSON implements json.Unmarshaler for {"queue": [...]}, {"queue": {...}}, null and a
// bare array.
func (l *queueList) UnmarshalJSON(b []byte) error {
	return unmarshalWrapped((*[]queueJSON)(l), b, "queue", "queues")
}

const maxQueueDepth = 64

func (q *queueJSON) queue(parentPath string, depth int) (*Queue, error) {
	if depth > maxQueueDepth {
		return nil, fmt.Errorf("queue tree deeper than %d levels", maxQueueDepth)
	}
	out := &Queue{
		Name:                 string(q.QueueName),
		Path:                 string(q.QueuePath),
		State:                string(q.State),
		Capacity:             float64(q.Capacity),
		UsedCapacity:         float64(q.UsedCapacity),
		MaxCapacity:          float64(q.MaxCapacity),
		AbsoluteCapacity:     float64(q.AbsoluteCapacity),
		AbsoluteUsedCapacity: float64(q.AbsoluteUsedCapacity),
		AbsoluteMaxCapacity:  float64(q.AbsoluteMaxCapacity),
		NumApplications:      int64(q.NumApplications),
		SchedulingPolicy:     string(q.SchedulingPolicy),
	}
	if out.State == "" {
		out.State = string(q.QState)
	}
	out.Path, out.Name = queuePath(parentPath, out.Path, out.Name)
	if string(q.Type) == "fairSchedulerLeafQueueInfo" && out.NumApplications == 0 {
		out.NumApplications = int64(q.NumActiveApps) + int64(q.NumPendingApps)
	}
	maxAlloc, maxAllocName := q.MaximumAllocation, "maximumAllocation"
	if maxAlloc == nil {
		maxAlloc, maxAllocName = q.MaxContainerAlloc, "maxContainerAllocation"
	}
	fields := []struct {
		name string
		dst  *records.Resources
		src  *resourceInfoJSON
	}{
		{"resourcesUsed", &out.Used, q.ResourcesUsed},
		{maxAllocName, &out.MaximumAllocation, maxAlloc},
		{"minEffectiveCapacity", &out.MinEffectiveCapacity, q.MinEffectiveCapacity},
		{"maxEffectiveCapacity", &out.MaxEffectiveCapacity, q.MaxEffectiveCapacity},
		{"minResources", &out.MinResources, q.MinResources},
		{"maxResources", &out.MaxResources, q.MaxResources},
		{"AMResourceLimit", &out.AMResourceLimit, q.AMResourceLimit},
		{"userAMResourceLimit", &out.UserAMResourceLimit, q.UserAMResourceLimit},
		{"usedAMResource", &out.UsedAMResource, q.UsedAMResource},
	}
	for _, f := range fields {
		r, err := f.src.resources()
		if err != nil {
			return nil, fmt.Errorf("queue %s %s: %w", out.Path, f.name, err)
		}
		*f.dst = r
	}
	switch {
	case q.NodeLabels != nil:
		out.NodeLabels = []string(q.NodeLabels)
	case string(q.Type) == "capacitySchedulerLeafQueueInfo" && q.Capacities != nil:
		// The CapacityScheduler always lists a queue's accessible labels; an empty set is left
		// out of the answer (Hadoop 3.5's JSON provider drops empty lists): none.
		out.NodeLabels = []string{}
	}
	out.DefaultNodeLabelExpression = strings.TrimSpace(string(q.DefaultLabelExpr))
	if q.UserLimitFactor != nil && q.UserLimit != nil {
		out.UserLimitsReported = true
		out.UserLimitFactor, out.UserLimitPercent = float64(*q.UserLimitFactor), float64(*q.UserLimit)
	}
	out.MaxApplicationsPerUser = int64(q.MaxAppsPerUser)
	for i, u := range q.Users {
		used, err := u.ResourcesUsed.resources()
		if err != nil {
			return nil, fmt.Errorf("queue %s user #%d resourcesUsed: %w", out.Path, i+1, err)
		}
		limit, err := u.UserResourceLimit.resources()
		if err != nil {
			return nil, fmt.Errorf("queue %s user #%d userResourceLimit: %w", out.Path, i+1, err)
		}
		out.Users = append(out.Users, QueueUser{Name: string(u.Username), Used: used, Limit: limit,
			ActiveApplications: int64(u.NumActiveApplications), PendingApplications: int64(u.NumPendingApplications)})
	}
	if q.Capacities != nil {
		out.Partitions = []QueuePartition{}
		for _, p := range q.Capacities.ByPartition {
			qp := QueuePartition{Name: string(p.PartitionName), Capacity: float64(p.Capacity), MaxCapacity: float64(p.MaxCapacity),
				AbsoluteCapacity: float64(p.AbsoluteCapacity), AbsoluteMaxCapacity: float64(p.AbsoluteMaxCapacity)}
			var err error
			if qp.EffectiveMin, err = p.EffectiveMinResource.resources(); err != nil {
				return nil, fmt.Errorf("queue %s partition %q effectiveMinResource: %w", out.Path, qp.Name, err)
			}
			if qp.EffectiveMax, err = p.EffectiveMaxResource.resources(); err != nil {
				return nil, fmt.Errorf("queue %s partition %q effectiveMaxResource: %w", out.Path, qp.Name, err)
			}
			out.Partitions = append(out.Partitions, qp)
		}
	}
	if out.Used.Len() == 0 {
		r, err := q.UsedResources.resources()
		if err != nil {
			return nil, fmt.Errorf("queue %s usedResources: %w", out.Path, err)
		}
		out.Used = r
	}
	children := q.Queues
	if len(children) == 0 {
		children = q.ChildQueues
	}
	for i := range children {
		c, err := children[i].queue(out.Path, depth+1)
		if err != nil {
			return nil, err
		}
		out.Children = append(out.Children, c)
	}
	switch string(q.Type) {
	case "capacitySchedulerLeafQueueInfo", "fairSchedulerLeafQueueInfo":
		out.Leaf = true
	case "":
		out.Leaf = len(out.Children) == 0
	default:
		out.Leaf = len(out.Children) == 0 && q.Queues == nil && q.ChildQueues == nil
	}
	return out, nil
}

// queuePath returns a queue's full path and own name. path is what the RM reported as the path
// (CapacityScheduler queuePath, possibly empty) and name its queueName: the FairScheduler's is
// already the full path ("root.default" below "root"), the others' a single name.
func queuePath(parentPath, path, name string) (string, string) {
	prefix := parentPath + "."
	full := parentPath != "" && len(name) > len(prefix) && strings.HasPrefix(name, prefix)
	if path == "" {
		switch {
		case parentPath == "" || name == "" || full:
			path = name
		default:
			path = prefix + name
		}
	}
	if full {
		name = name[len(prefix):]
	}
	return path, name
}

func decodeScheduler(r io.Reader) (*Scheduler, error) {
	var v struct {
		Scheduler *struct {
			SchedulerInfo json.RawMessage `json:"schedulerInfo"`
		} `json:"scheduler"`
	}
	if err := decodeJSON(r, &v); err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	if v.Scheduler == nil || isNull(v.Scheduler.SchedulerInfo) {
		return nil, fmt.Errorf("scheduler: %w: no scheduler.schedulerInfo object", ErrUnexpectedResponse)
	}
	var root queueJSON
	if err := json.Unmarshal(v.Scheduler.SchedulerInfo, &root); err != nil {
		return nil, unexpected("scheduler", err)
	}
	s := &Scheduler{Type: string(root.Type)}
	var err error
	if s.MaximumAllocation, err = root.MaximumAllocation.resources(); err != nil {
		return nil, fmt.Errorf("scheduler: maximumAllocation: %w", err)
	}
	switch {
	case root.RootQueue != nil: // FairScheduler
		if s.Root, err = root.RootQueue.queue("", 0); err != nil {
			return nil, unexpected("scheduler", err)
		}
	case s.Type == FifoScheduler:
		s.Root = &Queue{
			Name: "default", Path: "default", Leaf: true, State: string(root.QState),
			Capacity: float64(root.Capacity) * 100, UsedCapacity: float64(root.UsedCapacity) * 100,
			MaxCapacity: 100, AbsoluteCapacity: 100, AbsoluteMaxCapacity: 100,
			AbsoluteUsedCapacity: float64(root.UsedCapacity) * 100,
		}
	default: // CapacityScheduler: the scheduler info is the root queue
		root.MaximumAllocation = nil
		if root.QueueName == "" {
			root.QueueName = "root"
		}
		if s.Root, err = root.queue("", 0); err != nil {
			return nil, unexpected("scheduler", err)
		}
		s.Root.Leaf = false
		s.Root.MaximumAllocation = s.MaximumAllocation
	}
	return s, nil
}

// Scheduler returns /ws/v1/cluster/scheduler: the scheduler type and its queue tree.
func (c *Client) Scheduler(ctx context.Context) (*Scheduler, error) {
	return getDecoded(ctx, c, pathScheduler, nil, decodeScheduler)
}
