package view

// GPUMap is /api/v1/gpumap, what serve's web page draws: a row per node with a cell per device of
// the resource type, the queues' use of it, and the applications holding or waiting for it.
type GPUMap struct {
	// Resource is the resource type mapped (yarn.io/gpu).
	Resource string        `json:"resource"`
	Nodes    []GPUMapNode  `json:"nodes"`
	Queues   []GPUMapQueue `json:"queues"`
	Apps     []GPUMapApp   `json:"apps"`
}

// GPUMapNode is one node's devices.
type GPUMapNode struct {
	ID        string `json:"id"`
	Rack      string `json:"rack"`
	State     string `json:"state"`
	Partition string `json:"partition"`
	Total     int64  `json:"total"`
	Used      int64  `json:"used"`
	// Devices has one entry per device: the application holding it ("" free, "?" used by a
	// container the map could not attribute).
	Devices []string `json:"devices"`
}

// GPUMapQueue is one queue's use of the resource.
type GPUMapQueue struct {
	Path string `json:"path"`
	Used int64  `json:"used"`
	// Max is the queue's maximum (-1: no limit known).
	Max     int64 `json:"max"`
	Pending int64 `json:"pending"`
}

// GPUMapApp is an application holding or waiting for the resource.
type GPUMapApp struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	User    string `json:"user"`
	Queue   string `json:"queue"`
	State   string `json:"state"`
	Held    int64  `json:"held"`
	Pending int64  `json:"pending"`
	// Why is, for an application that waits, the summary of `app why`.
	Why string `json:"why,omitempty"`
}
