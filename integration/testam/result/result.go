// Package result holds the JSON file that yarn-er's test ApplicationMaster (integration/testam)
// writes for the integration tests, so that the AM and the tests read and write one type.
package result

// Result is the JSON the test ApplicationMaster writes.
type Result struct {
	Attempt         string            `json:"attempt"`
	TokenFileFormat string            `json:"tokenFileFormat"`
	TokenKinds      []string          `json:"tokenKinds"`
	ContainerID     string            `json:"containerId"`
	MaxCapability   map[string]int64  `json:"maxCapability"`
	ResourceTypes   []string          `json:"resourceTypes"`
	Queue           string            `json:"queue"`
	Probes          map[string]Remote `json:"probes,omitempty"`

	Asked      int               `json:"asked"`
	Allocated  []ContainerInfo   `json:"allocated"`
	Released   []string          `json:"released,omitempty"`
	Launched   []string          `json:"launched"`
	Statuses   map[string]string `json:"nmStatuses,omitempty"`
	Completed  []Completed       `json:"completed"`
	Heartbeats int               `json:"heartbeats"`
	NMTokens   int               `json:"nmTokens"`

	UnknownResourceError string `json:"unknownResourceError,omitempty"`
	UnknownIsSentinel    bool   `json:"unknownIsSentinel,omitempty"`
	AllocatesBeforeError int    `json:"allocatesBeforeError,omitempty"`

	TimingsMs    map[string]int64 `json:"timingsMs"`
	MaxRSSKB     int64            `json:"maxRssKb"`
	Unregistered bool             `json:"unregistered"`
	Error        string           `json:"error,omitempty"`
	// Done is set by the last write, as the AM exits (the RM may report the application finished
	// as soon as it unregistered, a moment before).
	Done bool `json:"done"`
}

// ContainerInfo is an allocated container.
type ContainerInfo struct {
	ID       string           `json:"id"`
	Node     string           `json:"node"`
	Priority int32            `json:"priority"`
	Resource map[string]int64 `json:"resource"`
}

// Completed is a completed container's status.
type Completed struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	ExitStatus  int32  `json:"exitStatus"`
	Diagnostics string `json:"diagnostics,omitempty"`
}

// Remote is a remote exception seen by a probe.
type Remote struct {
	Class   string `json:"class"`
	Message string `json:"message"`
	Error   string `json:"error"`
	IsSent  bool   `json:"matchesSentinel"`
}
