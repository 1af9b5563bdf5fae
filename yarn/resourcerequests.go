package yarn

import (
	"fmt"
	"math"

	"github.com/yarn-er/yarn-er/records"
)

// ResourceRequest is one outstanding ask of an application as /ws/v1/cluster/apps reports it
// (resourceRequests): NumContainers containers of Capability at Priority, on ResourceName ("*"
// for anywhere, else a rack or a host), in the partition NodeLabelExpression names ("" for the
// default partition, or the queue's default label).
type ResourceRequest struct {
	Priority            int64
	ResourceName        string
	Capability          records.Resources
	NumContainers       int64
	RelaxLocality       bool
	NodeLabelExpression string
	// PlacementConstraint is a SchedulingRequest's constraint as the RM writes it (Hadoop 3.1+:
	// "notin,node,worker" is anti-affinity on node to the tag worker); such a request has no
	// ResourceName and counts its pending containers once.
	PlacementConstraint string
	// AllocationTags are a SchedulingRequest's allocation tags.
	AllocationTags []string
}

// appRequestsJSON is the resourceRequests field of an application's JSON (embedded in appJSON).
type appRequestsJSON struct {
	ResourceRequests list[resourceRequestJSON] `json:"resourceRequests"`
}

type resourceRequestJSON struct {
	Priority            jsonInt64         `json:"priority"`
	ResourceName        jsonString        `json:"resourceName"`
	Capability          *resourceInfoJSON `json:"capability"`
	NumContainers       jsonInt64         `json:"numContainers"`
	RelaxLocality       jsonBool          `json:"relaxLocality"`
	NodeLabelExpression jsonString        `json:"nodeLabelExpression"`
	PlacementConstraint jsonString        `json:"placementConstraint"`
	AllocationTags      list[jsonString]  `json:"allocationTags"`
}

func resourceRequests(appID string, in []resourceRequestJSON) ([]ResourceRequest, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]ResourceRequest, 0, len(in))
	for _, r := range in {
		c, err := r.Capability.resources()
		if err != nil {
			return nil, fmt.Errorf("app %s resourceRequests capability: %w", appID, err)
		}
		rr := ResourceRequest{
			Priority: int64(r.Priority), ResourceName: string(r.ResourceName), Capability: c,
			NumContainers: int64(r.NumContainers), RelaxLocality: bool(r.RelaxLocality),
			NodeLabelExpression: string(r.NodeLabelExpression), PlacementConstraint: string(r.PlacementConstraint),
		}
		for _, t := range r.AllocationTags {
			rr.AllocationTags = append(rr.AllocationTags, string(t))
		}
		out = append(out, rr)
	}
	return out, nil
}

// Anywhere reports a request that counts each of its pending containers once: an off-switch
// ResourceRequest ("*"), or a SchedulingRequest (which the RM lists without a resource name).
func (r ResourceRequest) Anywhere() bool {
	return r.ResourceName == "*" || (r.ResourceName == "" && (r.PlacementConstraint != "" || len(r.AllocationTags) > 0))
}

// PendingAny returns what the application still asks for anywhere: the sum over its requests
// on "*" (the off-switch requests, which count every pending container once) and its
// SchedulingRequests of NumContainers × Capability. Requests on racks and hosts repeat the same
// containers and are not added.
func (a *App) PendingAny() (records.Resources, error) {
	var sum records.Resources
	for _, r := range a.ResourceRequests {
		if !r.Anywhere() || r.NumContainers <= 0 {
			continue
		}
		for _, e := range r.Capability.All() {
			if e.Value != 0 && r.NumContainers > math.MaxInt64/e.Value {
				return records.Resources{}, fmt.Errorf("%w: app %s pending %s: %d × %d overflows", ErrUnexpectedResponse, a.ID, e.Name, r.NumContainers, e.Value)
			}
			one := records.ResourcesOf(records.Resource{Name: e.Name, Value: e.Value * r.NumContainers, Units: e.Units})
			var err error
			if sum, err = sum.Add(one); err != nil {
				return records.Resources{}, fmt.Errorf("%w: app %s pending %s: %w", ErrUnexpectedResponse, a.ID, e.Name, err)
			}
		}
	}
	return sum, nil
}

// resourcesBytes estimates the memory of a resource vector: its entries and their names.
func resourcesBytes(r records.Resources) int64 {
	n := int64(24)
	for _, e := range r.All() {
		n += 48 + int64(len(e.Name)+len(e.Units))
	}
	return n
}

// retainedBytes estimates the memory a decoded node keeps (MaxListRetained).
func (n *Node) retainedBytes() int64 {
	s := int64(256 + len(n.ID) + len(n.State) + len(n.Host) + len(n.Rack) + len(n.HTTPAddress) + len(n.Version) + len(n.HealthReport))
	for _, l := range n.NodeLabels {
		s += 16 + int64(len(l))
	}
	return s + resourcesBytes(n.Total) + resourcesBytes(n.Used) + resourcesBytes(n.Available)
}

// retainedBytes estimates the memory a decoded application keeps (MaxListRetained).
func (a *App) retainedBytes() int64 {
	s := int64(512 + len(a.ID) + len(a.User) + len(a.Name) + len(a.Queue) + len(a.TrackingUI) + len(a.TrackingURL) +
		len(a.Diagnostics) + len(a.ApplicationType) + len(a.AMContainerLogs) + len(a.AMHostHTTPAddr) + len(a.AMRPCAddress) +
		len(a.LogAggregationStatus))
	for _, t := range a.ApplicationTags {
		s += 16 + int64(len(t))
	}
	s += 48 * int64(len(a.ResourceSeconds))
	for _, r := range a.ResourceRequests {
		s += 64 + int64(len(r.ResourceName)+len(r.NodeLabelExpression)) + resourcesBytes(r.Capability)
	}
	return s + resourcesBytes(a.Allocated)
}
