package yarn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// NodeDevices is what a NodeManager's resource plugin says of its devices:
// GET /ws/v1/node/resources/{resource} (NMWebServices, Hadoop 3.1+). For yarn.io/gpu the GPU
// plugin answers NMGpuResourceInfo: the devices its nvidia-smi reported, and, only when the
// NodeManager runs LinuxContainerExecutor (which builds the GPU resource handler), the devices
// usable by YARN and which container holds each.
type NodeDevices struct {
	// Resource is the resource asked for, e.g. "yarn.io/gpu".
	Resource string `json:"resource"`
	// Plugin is false when no resource plugin answers for it (an empty NMResourceInfo).
	Plugin bool `json:"plugin"`
	// Driver is the driver version nvidia-smi reported.
	Driver string `json:"driver,omitempty"`
	// Devices are the devices the plugin's discovery found, in its order (the index).
	Devices []NodeDevice `json:"devices"`
	// Assignments says whether the NodeManager reported Usable and Assigned (LinuxContainerExecutor).
	Assignments bool `json:"assignments"`
	// NoAssignments, when not "", is why the NodeManager reports no assignments (e.g. "Linux
	// Container Executor is not configured for the NodeManager", which some NodeManagers answer
	// with 503 instead of the device list).
	NoAssignments string `json:"noAssignments,omitempty"`
	// Usable are the devices YARN may hand out (yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices).
	Usable []DeviceRef `json:"usable,omitempty"`
	// Assigned are the devices containers hold now.
	Assigned []AssignedDevice `json:"assigned,omitempty"`
}

// NodeDevice is one device the plugin's discovery reported.
type NodeDevice struct {
	Index       int    `json:"index"`
	MinorNumber int64  `json:"minorNumber"`
	UUID        string `json:"uuid,omitempty"`
	Product     string `json:"product,omitempty"`
}

// DeviceRef names a device by its index and minor number (GpuDevice).
type DeviceRef struct {
	Index       int64 `json:"index"`
	MinorNumber int64 `json:"minorNumber"`
}

// AssignedDevice is a device a container holds (AssignedGpuDevice).
type AssignedDevice struct {
	DeviceRef
	ContainerID string `json:"containerId"`
}

// nmResourceJSON is NMResourceInfo / NMGpuResourceInfo as Jersey renders them (3.5: fields at the
// top with "type"; older lines wrap them in {"nmResourceInfo": ...}).
type nmResourceJSON struct {
	Type          jsonString `json:"type"`
	GPUDeviceInfo *struct {
		Driver jsonString `json:"driver_version"`
		GPU    list[struct {
			Minor   jsonInt64  `json:"minor_number"`
			UUID    jsonString `json:"uuid"`
			Product jsonString `json:"product_name"`
		}] `json:"gpu"`
	} `json:"gpuDeviceInformation"`
	Total    *list[devRefJSON] `json:"totalGpuDevices"`
	Assigned *list[struct {
		devRefJSON
		ContainerID jsonString `json:"containerId"`
	}] `json:"assignedGpuDevices"`
}

type devRefJSON struct {
	Index jsonInt64 `json:"index"`
	Minor jsonInt64 `json:"minorNumber"`
}

// maxNodeResourceBody bounds a NodeManager's resource answer (a few KiB per device).
const maxNodeResourceBody = 4 << 20

// NodeResource reads what the NodeManager at nodeHTTPAddress ("host:port" or a URL, as the RM
// reports it) says of resource (e.g. "yarn.io/gpu"), with the client's authentication.
func (c *Client) NodeResource(ctx context.Context, nodeHTTPAddress, resource string) (*NodeDevices, error) {
	if nodeHTTPAddress == "" || resource == "" {
		return nil, fmt.Errorf("node resource: want a NodeManager address and a resource name (got %q, %q)", nodeHTTPAddress, resource)
	}
	base, err := parseBase(nodeHTTPAddress, false)
	if err != nil {
		return nil, fmt.Errorf("node resource: NodeManager address %q: %w", nodeHTTPAddress, err)
	}
	u := c.requestURL(base, "/ws/v1/node/resources/"+url.PathEscape(resource), nil)
	ctx, cancel := context.WithTimeout(ctx, max(c.timeout, 30*time.Second))
	defer cancel()
	resp, err := c.sender.send(ctx, http.MethodGet, u, http.Header{"Accept": {"application/json"}}, nil)
	if err != nil {
		return nil, &RequestError{Method: http.MethodGet, URL: redactURL(u), Err: fmt.Errorf("%w: %w", ErrUnreachable, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxNodeResourceBody+1))
	if err != nil {
		return nil, &RequestError{Method: http.MethodGet, URL: redactURL(u), Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		re := DecodeRemoteError(resp.StatusCode, resp.Header.Get("Content-Type"), body)
		re.Method, re.URL = http.MethodGet, redactURL(u)
		// The GPU plugin without LinuxContainerExecutor's resource handler (GpuResourcePlugin):
		// a plugin that reports no assignments, not a failure.
		if strings.Contains(re.Message, "Linux Container Executor is not configured") {
			return &NodeDevices{Resource: resource, Plugin: true, Devices: []NodeDevice{}, NoAssignments: re.Message}, nil
		}
		return nil, re
	}
	if len(body) > maxNodeResourceBody {
		return nil, &RequestError{Method: http.MethodGet, URL: redactURL(u),
			Err: fmt.Errorf("%w: the answer is over %d bytes", ErrUnexpectedResponse, maxNodeResourceBody)}
	}
	nd, err := decodeNodeResource(body, resource)
	if err != nil {
		return nil, &RequestError{Method: http.MethodGet, URL: redactURL(u), Err: err}
	}
	return nd, nil
}

// decodeNodeResource decodes a NodeManager's resource answer.
func decodeNodeResource(body []byte, resource string) (*NodeDevices, error) {
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil {
		return nil, fmt.Errorf("%w: node resource: %v", ErrUnexpectedResponse, err)
	}
	inner := body
	if len(outer) == 1 {
		for k, v := range outer {
			if strings.EqualFold(k, "nmResourceInfo") || strings.EqualFold(k, "nmGpuResourceInfo") {
				inner = v
			}
		}
	}
	var j nmResourceJSON
	if err := json.Unmarshal(inner, &j); err != nil {
		return nil, fmt.Errorf("%w: node resource: %v", ErrUnexpectedResponse, err)
	}
	nd := &NodeDevices{Resource: resource, Devices: []NodeDevice{}}
	if j.GPUDeviceInfo != nil {
		nd.Plugin = true
		nd.Driver = string(j.GPUDeviceInfo.Driver)
		for i, g := range j.GPUDeviceInfo.GPU {
			nd.Devices = append(nd.Devices, NodeDevice{Index: i, MinorNumber: int64(g.Minor), UUID: string(g.UUID), Product: string(g.Product)})
		}
	}
	if strings.Contains(string(j.Type), "Gpu") {
		nd.Plugin = true
	}
	if j.Total != nil || j.Assigned != nil {
		nd.Assignments = true
	} else if nd.Plugin {
		nd.NoAssignments = "the NodeManager reports no assignment of devices to containers (its GPU plugin assigns them only under LinuxContainerExecutor)"
	}
	if j.Total != nil {
		for _, d := range *j.Total {
			nd.Usable = append(nd.Usable, DeviceRef{Index: int64(d.Index), MinorNumber: int64(d.Minor)})
		}
	}
	if j.Assigned != nil {
		for _, d := range *j.Assigned {
			nd.Assigned = append(nd.Assigned, AssignedDevice{DeviceRef: DeviceRef{Index: int64(d.Index), MinorNumber: int64(d.Minor)},
				ContainerID: string(d.ContainerID)})
		}
	}
	return nd, nil
}

// HeldBy returns the devices the container holds, as the NodeManager reported them (nil when it
// reported no assignments).
func (nd *NodeDevices) HeldBy(containerID string) []AssignedDevice {
	var out []AssignedDevice
	for _, a := range nd.Assigned {
		if a.ContainerID == containerID {
			out = append(out, a)
		}
	}
	return out
}
