package view

import "time"

// ClusterInfo is `yarn-er cluster info`: the ResourceManager, its HA peers and the cluster's totals.
type ClusterInfo struct {
	ResourceManager            string          `json:"resourceManager"`
	HAState                    string          `json:"haState"`
	State                      string          `json:"state"`
	ClusterID                  int64           `json:"clusterId"`
	StartedOn                  *time.Time      `json:"startedOn"`
	HadoopVersion              string          `json:"hadoopVersion"`
	ResourceManagerVersion     string          `json:"resourceManagerVersion"`
	HAZooKeeperConnectionState string          `json:"haZooKeeperConnectionState,omitempty"`
	ResourceManagers           []RMStatus      `json:"resourceManagers"`
	Metrics                    *ClusterMetrics `json:"metrics"`
}

// RMStatus is one ResourceManager of an HA setup: its rm-id, address and HA state, or why it could
// not be asked.
type RMStatus struct {
	ID      string `json:"id,omitempty"`
	Address string `json:"address"`
	HAState string `json:"haState,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ClusterMetrics are the cluster's node and application counts and its resource totals.
type ClusterMetrics struct {
	ActiveNodes    int64 `json:"activeNodes"`
	UnhealthyNodes int64 `json:"unhealthyNodes"`
	LostNodes      int64 `json:"lostNodes"`
	AppsRunning    int64 `json:"appsRunning"`
	AppsPending    int64 `json:"appsPending"`
	AppsSubmitted  int64 `json:"appsSubmitted"`
	// Total and Used are every resource type (CapacityScheduler), else memory and vcores only.
	Total ResourceMap `json:"total"`
	Used  ResourceMap `json:"used"`
}

// Node is one NodeManager in `cluster nodes -o json`: the public shape
// {"id","state","host","rack","httpAddress","total","used","available"}.
type Node struct {
	ID          string      `json:"id"`
	State       string      `json:"state"`
	Host        string      `json:"host"`
	Rack        string      `json:"rack"`
	HTTPAddress string      `json:"httpAddress"`
	Total       ResourceMap `json:"total"`
	Used        ResourceMap `json:"used"`
	Available   ResourceMap `json:"available"`
}

// Nodes is `yarn-er cluster nodes`, sorted by node id.
type Nodes struct {
	Nodes []Node `json:"nodes"`
}

// Queue is one scheduler queue in `cluster queues`.
type Queue struct {
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
	MaximumAllocation    ResourceMap `json:"maximumAllocation"`
	Used                 ResourceMap `json:"used"`
	MinEffectiveCapacity ResourceMap `json:"minEffectiveCapacity"`
	MaxEffectiveCapacity ResourceMap `json:"maxEffectiveCapacity"`
	MinResources         ResourceMap `json:"minResources,omitzero"`
	MaxResources         ResourceMap `json:"maxResources,omitzero"`
}

// Queues is `yarn-er cluster queues`: the scheduler and its queues, parents before children.
type Queues struct {
	Scheduler         string      `json:"scheduler"`
	MaximumAllocation ResourceMap `json:"maximumAllocation"`
	Queues            []Queue     `json:"queues"`
}

// App is one application in `cluster apps`.
type App struct {
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
	Allocated       ResourceMap `json:"allocated"`
	Diagnostics     string      `json:"diagnostics"`
}

// Apps is `yarn-er cluster apps`, newest first.
type Apps struct {
	Apps []App `json:"apps"`
}
