package view

// Doctor is `yarn-er doctor`: what one probe container per GPU NodeManager found, and the verdict
// on each node.
type Doctor struct {
	// ApplicationID is the probes' YARN application ("" when none was submitted).
	ApplicationID string `json:"applicationId"`
	// GPUs is the yarn.io/gpu each probe container asked for.
	GPUs int64 `json:"gpus"`
	// Nodes are the NodeManagers probed, in the order of their ids.
	Nodes []DoctorNode `json:"nodes"`
	// Leaks is the number of nodes whose verdict is leak (the command exits 3 when it is not 0).
	Leaks int `json:"leaks"`
}

// Doctor verdicts, one per node.
const (
	// VerdictOK: the probe could open exactly the GPUs its container was given.
	VerdictOK = "ok"
	// VerdictLeak: the probe could open GPUs its container was not given.
	VerdictLeak = "leak"
	// VerdictNoGPUs: the probe could open fewer GPUs than its container was given (none, mostly).
	VerdictNoGPUs = "no-gpus"
	// VerdictProbeFailed: the probe's container ran but left no report.
	VerdictProbeFailed = "probe-failed"
	// VerdictTimeout: no report came from the node within the timeout (no container, or a slow one).
	VerdictTimeout = "timeout"
)

// DoctorNode is the verdict on one NodeManager.
type DoctorNode struct {
	// Node is the NodeManager's id (host:port) as the ResourceManager lists it.
	Node string `json:"node"`
	// Verdict is ok, leak, no-gpus, probe-failed or timeout.
	Verdict string `json:"verdict"`
	// Reason says why, in one sentence.
	Reason string `json:"reason"`
	// Fix lists what to change on the node, most likely first (empty for ok).
	Fix []string `json:"fix,omitempty"`
	// Notes are findings that do not change the verdict (CUDA_VISIBLE_DEVICES that isolates
	// nothing, NVML and procfs that disagree, a step the probe could not take).
	Notes []string `json:"notes,omitempty"`
	// Probe is what the probe found in its container (nil for timeout and probe-failed).
	Probe *DoctorProbe `json:"probe,omitempty"`
}

// DoctorProbeVersion is the version of the probe report this build writes and reads.
const DoctorProbeVersion = 1

// DoctorProbe is the report of `yarn-er doctor probe`, written by the probe in its container and
// read back by `yarn-er doctor`.
type DoctorProbe struct {
	// Version is DoctorProbeVersion.
	Version int `json:"version"`
	// Node is the NodeManager the container runs on (NM_HOST:NM_PORT).
	Node string `json:"node"`
	// NodeHTTP is the NodeManager's web address (NM_HOST:NM_HTTP_PORT).
	NodeHTTP string `json:"nodeHttp,omitempty"`
	// Container is the container's id (CONTAINER_ID).
	Container string `json:"container,omitempty"`
	// Granted is the yarn.io/gpu the container was allocated.
	Granted int64 `json:"granted"`
	// Env holds the variables that assign or locate devices as the container got them
	// (CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, YARN_ER_HOST_ROOT, YARN_ER_COORDINATION_FILE);
	// unset ones are left out.
	Env map[string]string `json:"env,omitempty"`
	// Backend is the discovery backend that listed the GPUs (nvml, procfs, nvidia-smi; "" when
	// none could).
	Backend string `json:"backend,omitempty"`
	// Listed are the GPUs the driver lists to the container, whether it may use them or not.
	Listed []DoctorDevice `json:"listed"`
	// NodeManager is the NodeManager's own assignment, from its GPU plugin's endpoint.
	NodeManager DoctorAssignment `json:"nodeManager"`
	// Cgroup is the container's devices cgroup.
	Cgroup DoctorCgroup `json:"cgroup"`
	// Driver is what the driver, NVML and procfs each say.
	Driver DoctorDriver `json:"driver"`
	// Executor is the NodeManager's container executor.
	Executor DoctorExecutor `json:"executor"`
	// Coordination is what yarn-er's coordination ledger of the container's user records on the
	// node (discover's and exec's hand-outs), read without taking its lock.
	Coordination DoctorCoordination `json:"coordination"`
	// Errors are the probe's own failures (a step it could not take), one sentence each.
	Errors []string `json:"errors,omitempty"`
}

// DoctorDevice is one GPU the driver lists in the probe's container.
type DoctorDevice struct {
	// ID is the GPU's UUID (else its PCI address).
	ID string `json:"id"`
	// Minor is the device node's minor number (/dev/nvidiaN), -1 when unknown.
	Minor int `json:"minor"`
	// Opens says whether the probe could open every device node of the GPU read-write.
	Opens bool `json:"opens"`
	// Error is why a node would not open ("" when it did).
	Error string `json:"error,omitempty"`
}

// DoctorAssignment is what the NodeManager's GPU plugin says the container holds.
type DoctorAssignment struct {
	// State is "assigned" (the NodeManager names the container's GPUs), "no-assignments" (the
	// plugin runs but assigns nothing: no LinuxContainerExecutor), "no-plugin" or "unreachable".
	State string `json:"state"`
	// Minors are the minor numbers of the GPUs the NodeManager assigned to this container.
	Minors []int64 `json:"minors,omitempty"`
	// Detail is the NodeManager's message or the error.
	Detail string `json:"detail,omitempty"`
}

// DoctorCgroup is the container's devices cgroup as the probe could read it.
type DoctorCgroup struct {
	// Version is "v1", "v2" or "unknown".
	Version string `json:"version"`
	// Path is the container's cgroup (the devices controller's under v1).
	Path string `json:"path,omitempty"`
	// Rules are v1's devices.list lines (v2 keeps its rules in an eBPF program the probe cannot
	// read: there only the opens tell).
	Rules []string `json:"rules,omitempty"`
	// AllowsAll says the rules allow every device (v1 "a *:* rwm").
	AllowsAll bool `json:"allowsAll,omitempty"`
	// Detail says what could not be read.
	Detail string `json:"detail,omitempty"`
}

// DoctorDriver is what the probe learnt of the driver.
type DoctorDriver struct {
	// Version is the driver's version line (/proc/driver/nvidia/version), "" when unreadable.
	Version string `json:"version,omitempty"`
	// NVML is the GPUs NVML lists (their ids), nil when NVML is unavailable.
	NVML []string `json:"nvml"`
	// NVMLDetail is why NVML is unavailable.
	NVMLDetail string `json:"nvmlDetail,omitempty"`
	// Procfs is the GPUs the driver's procfs lists (their ids), nil when it is unavailable.
	Procfs []string `json:"procfs"`
	// ProcfsDetail is why procfs is unavailable.
	ProcfsDetail string `json:"procfsDetail,omitempty"`
	// Agree is "yes" (both list the same GPUs), "no", or "n/a" (one of them is unavailable).
	Agree string `json:"agree"`
}

// DoctorCoordination is yarn-er's coordination ledger as the probe read it.
type DoctorCoordination struct {
	// File is the coordination file (YARN_ER_COORDINATION_FILE, else yarn-er's default).
	File string `json:"file"`
	// Held are the devices the ledger of the container's user records as handed out.
	Held []DoctorHeld `json:"held,omitempty"`
	// Detail says why the ledger could not be read ("" when it was, or when there is none yet).
	Detail string `json:"detail,omitempty"`
}

// DoctorHeld is one ledger entry: a device and the process it was handed to.
type DoctorHeld struct {
	// Key is the device's coordination key (its PCI address or id).
	Key string `json:"key"`
	// PID is the owner's process id (in its own PID namespace).
	PID int `json:"pid"`
}

// DoctorExecutor is the NodeManager's container executor.
type DoctorExecutor struct {
	// Class is yarn.nodemanager.container-executor.class ("" when unknown).
	Class string `json:"class,omitempty"`
	// Plugins is yarn.nodemanager.resource-plugins as the NodeManager has it.
	Plugins string `json:"plugins,omitempty"`
	// CgroupsMount is yarn.nodemanager.linux-container-executor.cgroups.mount.
	CgroupsMount string `json:"cgroupsMount,omitempty"`
	// Source says where they were read: "nodemanager /conf" or "unknown: <why>".
	Source string `json:"source"`
}
