package yarn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/yarn-er/yarn-er/records"
)

// REST paths.
const (
	pathCluster   = "/ws/v1/cluster"
	pathInfo      = pathCluster + "/info"
	pathMetrics   = pathCluster + "/metrics"
	pathNodes     = pathCluster + "/nodes"
	pathScheduler = pathCluster + "/scheduler"
	pathApps      = pathCluster + "/apps"
	pathNewApp    = pathApps + "/new-application"
	pathConf      = "/conf"
)

// ClusterInfo is /ws/v1/cluster/info.
type ClusterInfo struct {
	ID                            int64
	StartedOn                     time.Time
	State                         string // NOTINITED, INITED, STARTED, STOPPED
	HAState                       string // INITIALIZING, ACTIVE, STANDBY, STOPPED
	RMStateStoreName              string
	ResourceManagerVersion        string
	ResourceManagerBuildVersion   string
	ResourceManagerVersionBuiltOn string
	HadoopVersion                 string
	HadoopBuildVersion            string
	HadoopVersionBuiltOn          string
	HAZooKeeperConnectionState    string
	// RMAddress is the base URL of the RM that answered.
	RMAddress string
}

// clusterInfoJSON is the clusterInfo object of /ws/v1/cluster/info.
type clusterInfoJSON struct {
	ID                            jsonInt64  `json:"id"`
	StartedOn                     jsonInt64  `json:"startedOn"`
	State                         jsonString `json:"state"`
	HAState                       jsonString `json:"haState"`
	RMStateStoreName              jsonString `json:"rmStateStoreName"`
	ResourceManagerVersion        jsonString `json:"resourceManagerVersion"`
	ResourceManagerBuildVersion   jsonString `json:"resourceManagerBuildVersion"`
	ResourceManagerVersionBuiltOn jsonString `json:"resourceManagerVersionBuiltOn"`
	HadoopVersion                 jsonString `json:"hadoopVersion"`
	HadoopBuildVersion            jsonString `json:"hadoopBuildVersion"`
	HadoopVersionBuiltOn          jsonString `json:"hadoopVersionBuiltOn"`
	HAZooKeeperConnectionState    jsonString `json:"haZooKeeperConnectionState"`
}

func decodeClusterInfo(r io.Reader) (*ClusterInfo, error) {
	ci, err := decodeObject[clusterInfoJSON](r, "clusterInfo", "cluster info")
	if err != nil {
		return nil, err
	}
	return &ClusterInfo{
		ID:                            int64(ci.ID),
		StartedOn:                     millis(ci.StartedOn),
		State:                         string(ci.State),
		HAState:                       string(ci.HAState),
		RMStateStoreName:              string(ci.RMStateStoreName),
		ResourceManagerVersion:        string(ci.ResourceManagerVersion),
		ResourceManagerBuildVersion:   string(ci.ResourceManagerBuildVersion),
		ResourceManagerVersionBuiltOn: string(ci.ResourceManagerVersionBuiltOn),
		HadoopVersion:                 string(ci.HadoopVersion),
		HadoopBuildVersion:            string(ci.HadoopBuildVersion),
		HadoopVersionBuiltOn:          string(ci.HadoopVersionBuiltOn),
		HAZooKeeperConnectionState:    string(ci.HAZooKeeperConnectionState),
	}, nil
}

// ClusterInfo returns /ws/v1/cluster/info of the active ResourceManager.
func (c *Client) ClusterInfo(ctx context.Context) (*ClusterInfo, error) {
	var info *ClusterInfo
	err := c.do(ctx, call{method: http.MethodGet, path: pathInfo}, func(a rmAddress, r *rawResponse) error {
		var err error
		if info, err = decodeClusterInfo(r.Body); err == nil {
			info.RMAddress = a.base.String()
		}
		return err
	})
	return info, err
}

// ClusterMetrics is /ws/v1/cluster/metrics. Memory is in MB. The *AcrossPartition resources, the
// only cluster-wide totals of extended resources, are reported by the CapacityScheduler only;
// they are nil otherwise.
type ClusterMetrics struct {
	AppsSubmitted, AppsCompleted, AppsPending, AppsRunning, AppsFailed, AppsKilled int64

	ReservedMB, AvailableMB, AllocatedMB, TotalMB                                         int64
	ReservedVirtualCores, AvailableVirtualCores, AllocatedVirtualCores, TotalVirtualCores int64

	ContainersAllocated, ContainersReserved, ContainersPending int64

	TotalNodes, ActiveNodes, LostNodes, UnhealthyNodes, DecommissioningNodes, DecommissionedNodes,
	RebootedNodes, ShutdownNodes int64

	TotalUsedResourcesAcrossPartition     records.Resources
	TotalClusterResourcesAcrossPartition  records.Resources
	TotalReservedResourcesAcrossPartition records.Resources
}

// clusterMetricsJSON is the clusterMetrics object of /ws/v1/cluster/metrics.
type clusterMetricsJSON struct {
	AppsSubmitted         jsonInt64 `json:"appsSubmitted"`
	AppsCompleted         jsonInt64 `json:"appsCompleted"`
	AppsPending           jsonInt64 `json:"appsPending"`
	AppsRunning           jsonInt64 `json:"appsRunning"`
	AppsFailed            jsonInt64 `json:"appsFailed"`
	AppsKilled            jsonInt64 `json:"appsKilled"`
	ReservedMB            jsonInt64 `json:"reservedMB"`
	AvailableMB           jsonInt64 `json:"availableMB"`
	AllocatedMB           jsonInt64 `json:"allocatedMB"`
	TotalMB               jsonInt64 `json:"totalMB"`
	ReservedVirtualCores  jsonInt64 `json:"reservedVirtualCores"`
	AvailableVirtualCores jsonInt64 `json:"availableVirtualCores"`
	AllocatedVirtualCores jsonInt64 `json:"allocatedVirtualCores"`
	TotalVirtualCores     jsonInt64 `json:"totalVirtualCores"`
	ContainersAllocated   jsonInt64 `json:"containersAllocated"`
	ContainersReserved    jsonInt64 `json:"containersReserved"`
	ContainersPending     jsonInt64 `json:"containersPending"`
	TotalNodes            jsonInt64 `json:"totalNodes"`
	ActiveNodes           jsonInt64 `json:"activeNodes"`
	LostNodes             jsonInt64 `json:"lostNodes"`
	UnhealthyNodes        jsonInt64 `json:"unhealthyNodes"`
	DecommissioningNodes  jsonInt64 `json:"decommissioningNodes"`
	DecommissionedNodes   jsonInt64 `json:"decommissionedNodes"`
	RebootedNodes         jsonInt64 `json:"rebootedNodes"`
	ShutdownNodes         jsonInt64 `json:"shutdownNodes"`

	TotalUsed     *resourceInfoJSON `json:"totalUsedResourcesAcrossPartition"`
	TotalCluster  *resourceInfoJSON `json:"totalClusterResourcesAcrossPartition"`
	TotalReserved *resourceInfoJSON `json:"totalReservedResourcesAcrossPartition"`
}

func decodeClusterMetrics(r io.Reader) (*ClusterMetrics, error) {
	m, err := decodeObject[clusterMetricsJSON](r, "clusterMetrics", "cluster metrics")
	if err != nil {
		return nil, err
	}
	out := &ClusterMetrics{
		AppsSubmitted: int64(m.AppsSubmitted), AppsCompleted: int64(m.AppsCompleted), AppsPending: int64(m.AppsPending),
		AppsRunning: int64(m.AppsRunning), AppsFailed: int64(m.AppsFailed), AppsKilled: int64(m.AppsKilled),
		ReservedMB: int64(m.ReservedMB), AvailableMB: int64(m.AvailableMB), AllocatedMB: int64(m.AllocatedMB), TotalMB: int64(m.TotalMB),
		ReservedVirtualCores: int64(m.ReservedVirtualCores), AvailableVirtualCores: int64(m.AvailableVirtualCores),
		AllocatedVirtualCores: int64(m.AllocatedVirtualCores), TotalVirtualCores: int64(m.TotalVirtualCores),
		ContainersAllocated: int64(m.ContainersAllocated), ContainersReserved: int64(m.ContainersReserved),
		ContainersPending: int64(m.ContainersPending),
		TotalNodes:        int64(m.TotalNodes), ActiveNodes: int64(m.ActiveNodes), LostNodes: int64(m.LostNodes),
		UnhealthyNodes: int64(m.UnhealthyNodes), DecommissioningNodes: int64(m.DecommissioningNodes),
		DecommissionedNodes: int64(m.DecommissionedNodes), RebootedNodes: int64(m.RebootedNodes), ShutdownNodes: int64(m.ShutdownNodes),
	}
	if out.TotalUsedResourcesAcrossPartition, err = m.TotalUsed.resources(); err != nil {
		return nil, fmt.Errorf("cluster metrics: totalUsedResourcesAcrossPartition: %w", err)
	}
	if out.TotalClusterResourcesAcrossPartition, err = m.TotalCluster.resources(); err != nil {
		return nil, fmt.Errorf("cluster metrics: totalClusterResourcesAcrossPartition: %w", err)
	}
	if out.TotalReservedResourcesAcrossPartition, err = m.TotalReserved.resources(); err != nil {
		return nil, fmt.Errorf("cluster metrics: totalReservedResourcesAcrossPartition: %w", err)
	}
	return out, nil
}

// Metrics returns /ws/v1/cluster/metrics.
func (c *Client) Metrics(ctx context.Context) (*ClusterMetrics, error) {
	return getDecoded(ctx, c, pathMetrics, nil, decodeClusterMetrics)
}

// decodeJSON decodes one JSON document from r into v. Numbers decode exactly (the package's
// number types never use float64).
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrUnexpectedResponse, err)
	}
	return nil
}

// millis converts Hadoop's epoch milliseconds; 0 is the zero time.
func millis(ms jsonInt64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}
