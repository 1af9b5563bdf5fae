package yarn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/yarn-er/yarn-er/records"
)

// pathSchedulerOverview is RMWebServices#getSchedulerOverview (YARN-11321, Hadoop 3.4+).
const pathSchedulerOverview = pathCluster + "/scheduler-overview"

// SchedulerOverview is /ws/v1/cluster/scheduler-overview (Hadoop's SchedulerOverviewInfo), served
// by ResourceManagers of Hadoop 3.4 and later. Its allocations are the scheduler's effective
// ones: MaximumAllocation is the configured maximum capped, per resource type, by the largest
// NodeManager (a GPU type configured unbounded shows the largest node's count), which is what the
// RM checks container requests against. During the first
// yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms (10 s) after the RM starts,
// while NodeManagers register, it is the configured maximum.
type SchedulerOverview struct {
	// SchedulerType is the RM's name for its scheduler: "Capacity Scheduler", "Fair Scheduler",
	// "Fifo Scheduler", or the simple class name of another scheduler. (Scheduler.Type names the
	// same scheduler as CapacityScheduler, FairScheduler or FifoScheduler.)
	SchedulerType string
	// SchedulingResourceType is the RM's list of resource types as it writes it:
	// "memory-mb (unit=Mi),vcores,yarn.io/fpga,yarn.io/gpu".
	SchedulingResourceType string
	// ResourceTypes are the names in SchedulingResourceType, in the RM's order.
	ResourceTypes []string
	// MinimumAllocation and MaximumAllocation are the smallest and the largest container the
	// scheduler grants, every resource type included.
	MinimumAllocation, MaximumAllocation records.Resources
	// ApplicationPriority is the cluster's maximum application priority.
	ApplicationPriority int64
	// SchedulerBusy is the scheduler's busy percentage (-1 when the RM does not measure it).
	SchedulerBusy int64
	// RMDispatcherEventQueueSize and SchedulerDispatcherEventQueueSize are the event queues'
	// lengths.
	RMDispatcherEventQueueSize, SchedulerDispatcherEventQueueSize int64
}

// schedulerOverviewJSON is SchedulerOverviewInfo's fields.
type schedulerOverviewJSON struct {
	SchedulerType                     jsonString        `json:"schedulerType"`
	SchedulingResourceType            jsonString        `json:"schedulingResourceType"`
	MinimumAllocation                 *resourceInfoJSON `json:"minimumAllocation"`
	MaximumAllocation                 *resourceInfoJSON `json:"maximumAllocation"`
	ApplicationPriority               jsonInt64         `json:"applicationPriority"`
	SchedulerBusy                     jsonInt64         `json:"schedulerBusy"`
	RMDispatcherEventQueueSize        jsonInt64         `json:"rmDispatcherEventQueueSize"`
	SchedulerDispatcherEventQueueSize jsonInt64         `json:"schedulerDispatcherEventQueueSize"`
}

// decodeSchedulerOverview reads the overview in either shape: wrapped in its root element
// {"scheduler": {...}} (Hadoop 3.5, Jersey 2) or unwrapped {...} (Hadoop 3.4's Jersey 1 JSON
// provider drops the root element).
func decodeSchedulerOverview(r io.Reader) (*SchedulerOverview, error) {
	var raw json.RawMessage
	if err := decodeJSON(r, &raw); err != nil {
		return nil, fmt.Errorf("scheduler-overview: %w", err)
	}
	var v struct {
		Scheduler json.RawMessage `json:"scheduler"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, unexpected("scheduler-overview", err)
	}
	body := raw
	if !isNull(v.Scheduler) {
		body = v.Scheduler
	}
	var o schedulerOverviewJSON
	if err := json.Unmarshal(body, &o); err != nil {
		return nil, unexpected("scheduler-overview", err)
	}
	if o.MaximumAllocation == nil && o.SchedulerType == "" {
		return nil, fmt.Errorf("scheduler-overview: %w: neither schedulerType nor maximumAllocation", ErrUnexpectedResponse)
	}
	out := &SchedulerOverview{
		SchedulerType:                     string(o.SchedulerType),
		SchedulingResourceType:            string(o.SchedulingResourceType),
		ResourceTypes:                     parseSchedulingResourceType(string(o.SchedulingResourceType)),
		ApplicationPriority:               int64(o.ApplicationPriority),
		SchedulerBusy:                     int64(o.SchedulerBusy),
		RMDispatcherEventQueueSize:        int64(o.RMDispatcherEventQueueSize),
		SchedulerDispatcherEventQueueSize: int64(o.SchedulerDispatcherEventQueueSize),
	}
	var err error
	if out.MinimumAllocation, err = o.MinimumAllocation.resources(); err != nil {
		return nil, fmt.Errorf("scheduler-overview: minimumAllocation: %w", err)
	}
	if out.MaximumAllocation, err = o.MaximumAllocation.resources(); err != nil {
		return nil, fmt.Errorf("scheduler-overview: maximumAllocation: %w", err)
	}
	return out, nil
}

// parseSchedulingResourceType splits the RM's list of ResourceTypeInfo renderings
// ("memory-mb (unit=Mi),vcores,yarn.io/gpu") into type names. Resource names hold neither ','
// nor ' ', so each item's name ends at the first blank.
func parseSchedulingResourceType(s string) []string {
	var out []string
	for _, item := range commaItems(s) {
		name, _, _ := strings.Cut(item, " ")
		out = append(out, name)
	}
	return out
}

// SchedulerOverview returns /ws/v1/cluster/scheduler-overview: the scheduler's effective minimum
// and maximum allocation and the resource types it knows. ResourceManagers before Hadoop 3.4 do
// not have the endpoint: the error then matches ErrNotFound.
func (c *Client) SchedulerOverview(ctx context.Context) (*SchedulerOverview, error) {
	return getDecoded(ctx, c, pathSchedulerOverview, nil, decodeSchedulerOverview)
}
