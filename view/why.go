package view

// AppWhy is `yarn-er app why ID` and /api/v1/apps/{id}/why: why an application's containers are
// not allocated, and what would let them in.
type AppWhy struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	User  string `json:"user"`
	Queue string `json:"queue"`
	State string `json:"state"`
	// Waiting is whether the application waits for containers (outstanding asks, or not yet
	// running).
	Waiting bool `json:"waiting"`
	// Summary is one sentence: the first reason, or why there is nothing to explain.
	Summary string `json:"summary"`
	// Asks are its outstanding requests (the off-switch ones: each pending container once).
	Asks []WhyAsk `json:"asks"`
	// Reasons are what stops the asks, the strongest first.
	Reasons []WhyReason `json:"reasons"`
	// Holders are the running applications that hold the resources it waits for, most first.
	Holders []WhyHolder `json:"holders"`
	// NodesThatFit are the RUNNING nodes of the ask's partition on which one container would fit
	// once their containers end (their total is enough).
	NodesThatFit []string `json:"nodesThatFit"`
}

// WhyAsk is one outstanding request: Containers containers of Resource.
type WhyAsk struct {
	Priority   int64       `json:"priority"`
	Containers int64       `json:"containers"`
	Resource   ResourceMap `json:"resource"`
	// Partition is the node label the request asks for ("" the default partition).
	Partition string `json:"partition"`
	// PlacementConstraint is a SchedulingRequest's constraint as the ResourceManager writes it
	// ("notin,node,worker": anti-affinity on node to the tag worker); "" for a plain request.
	PlacementConstraint string `json:"placementConstraint,omitempty"`
	// Locations are the racks ("/default-rack") and hosts the request is bound to: its off-switch
	// request ("*") does not relax locality (relaxLocality false, as yarn-er's placement racks
	// asks), so only a node of one of these locations with containers still asked for takes it.
	// Absent for a request that may go anywhere.
	Locations []string `json:"locations,omitempty"`
}

// WhyReason is one thing that keeps an ask out: a stable code, the message, and what would let
// the ask in.
type WhyReason struct {
	// Code is one of queue-unknown, queue-stopped, queue-partition, queue-max-allocation,
	// queue-max, user-limit, am-limit, no-node-in-partition, no-node-offers, no-free-node,
	// placement-constraint, no-node-on-rack.
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// WhyHolder is a running application holding resources the waiting one needs.
type WhyHolder struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	User      string      `json:"user"`
	Queue     string      `json:"queue"`
	Allocated ResourceMap `json:"allocated"`
	// SameQueue is whether it runs in the waiting application's queue (then it counts against
	// the same queue limit).
	SameQueue bool `json:"sameQueue"`
}
