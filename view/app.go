package view

import "time"

// AppInfo is one application in `app list` (a JSON array of them) and `app kill`, `app wait`.
type AppInfo struct {
	ID                string      `json:"id"`
	Name              string      `json:"name"`
	Type              string      `json:"type"`
	User              string      `json:"user"`
	Queue             string      `json:"queue"`
	State             string      `json:"state"`
	FinalStatus       string      `json:"finalStatus"`
	Progress          float64     `json:"progress"`
	Tags              []string    `json:"tags"`
	StartedTime       *time.Time  `json:"startedTime"`
	LaunchTime        *time.Time  `json:"launchTime"`
	FinishedTime      *time.Time  `json:"finishedTime"`
	ElapsedMillis     int64       `json:"elapsedMillis"`
	RunningContainers int64       `json:"runningContainers"`
	Allocated         ResourceMap `json:"allocated"`
	GPUs              int64       `json:"gpus"`
	Diagnostics       string      `json:"diagnostics"`
	TrackingURL       string      `json:"trackingUrl"`
	AMContainerLogs   string      `json:"amContainerLogs"`
}

// AppStatus is `app status`: the application, its current attempt and that attempt's live
// containers.
type AppStatus struct {
	AppInfo
	// Attempt is the current attempt; null when the RM reports none.
	Attempt *AppAttempt `json:"attempt"`
	// Containers are the live containers of the current attempt (none once it ended).
	Containers []AppContainer `json:"containers"`
	// Ranks are a running yarn-er application's ranks by role (omitted when its
	// ApplicationMaster's log cannot be read, or it has ended).
	Ranks []AppRank `json:"ranks,omitempty"`
}

// AppAttempt is one ApplicationMaster attempt.
type AppAttempt struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	ContainerID string `json:"amContainerId"`
	Node        string `json:"node"`
	LogsLink    string `json:"logsLink"`
	Diagnostics string `json:"diagnostics"`
}

// AppContainer is one live container of an attempt.
type AppContainer struct {
	ID         string      `json:"id"`
	State      string      `json:"state"`
	Node       string      `json:"node"`
	NodeHTTP   string      `json:"nodeHttpAddress"`
	Resource   ResourceMap `json:"resource"`
	GPUs       int64       `json:"gpus"`
	ExitStatus int64       `json:"exitStatus"`
	LogURL     string      `json:"logUrl"`
	// AM marks the ApplicationMaster's own container.
	AM bool `json:"am"`
	// GPUDevices are the GPUs its NodeManager reports the container holds (YARN's GPU plugin
	// under LinuxContainerExecutor); omitted where the NodeManager reports no assignments.
	GPUDevices []AssignedGPU `json:"gpuDevices,omitempty"`
}

// AssignedGPU is a GPU a container holds, as its NodeManager's GPU plugin reports it.
type AssignedGPU struct {
	Index       int64  `json:"index"`
	MinorNumber int64  `json:"minorNumber"`
	UUID        string `json:"uuid,omitempty"`
}

// Submit is `submit -o json|yaml`: the final report of a submitted application.
type Submit struct {
	ApplicationID string   `json:"applicationId"`
	State         string   `json:"state"`
	FinalStatus   string   `json:"finalStatus"`
	Diagnostics   string   `json:"diagnostics"`
	TrackingURL   string   `json:"trackingUrl"`
	StagingDir    string   `json:"stagingDir"`
	Detached      bool     `json:"detached"`
	Containers    int      `json:"containers"`
	Resource      []string `json:"resource"`
}

// Job is `yarn-er submit --dry-run`: the job as it would be submitted.
type Job struct {
	Name        string            `json:"name"`
	Queue       string            `json:"queue,omitempty"`
	NodeLabel   string            `json:"nodeLabel,omitempty"`
	Priority    *int32            `json:"priority,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Files       []string          `json:"files,omitempty"`
	Archives    []string          `json:"archives,omitempty"`
	Ranks       int               `json:"ranks"`
	GangTimeout string            `json:"gangTimeout"`
	Roles       []JobRole         `json:"roles"`
}

// JobDocker is a role's Docker container in a Job: what the ApplicationMaster puts into each
// rank's YARN_CONTAINER_RUNTIME_* variables.
type JobDocker struct {
	Image            string   `json:"image"`
	Mounts           []string `json:"mounts,omitempty"`
	Network          string   `json:"network,omitempty"`
	Privileged       bool     `json:"privileged,omitempty"`
	CoordinationFile string   `json:"coordinationFile,omitempty"`
}

// JobRole is one role of a Job.
type JobRole struct {
	Name      string            `json:"name"`
	Count     int               `json:"count"`
	Resource  string            `json:"resource"`
	Devices   string            `json:"devices,omitempty"`
	Profile   string            `json:"profile,omitempty"`
	Command   []string          `json:"command"`
	Restarts  int               `json:"restarts"`
	Env       map[string]string `json:"env,omitempty"`
	Placement *JobPlacement     `json:"placement,omitempty"`
	DependsOn []string          `json:"dependsOn,omitempty"`
	Gang      string            `json:"gang,omitempty"`
	Framework string            `json:"framework,omitempty"`
	// Docker is the role's Docker container (absent: a plain container).
	Docker *JobDocker `json:"docker,omitempty"`
}

// JobPlacement is a role's placement.
type JobPlacement struct {
	Spread string   `json:"spread,omitempty"`
	Pack   string   `json:"pack,omitempty"`
	Nodes  []string `json:"nodes,omitempty"`
	Racks  []string `json:"racks,omitempty"`
	// Fallback is what the AM does when the ResourceManager cannot place by constraints: am, relax or fail.
	Fallback string `json:"fallback,omitempty"`
}

// AppRank is one rank of a running yarn-er application (app status), from its
// ApplicationMaster's log: the rank's latest container.
type AppRank struct {
	Role      string `json:"role"`
	Rank      int    `json:"rank"`
	Container string `json:"container"`
	Node      string `json:"node"`
	Restarts  int    `json:"restarts"`
	Live      bool   `json:"live"`
}
