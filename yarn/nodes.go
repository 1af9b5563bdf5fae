package yarn

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/records"
)

// Node is a NodeManager as the RM reports it (/ws/v1/cluster/nodes).
type Node struct {
	// ID is "host:port" of the NodeManager's RPC address.
	ID string
	// State is NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED or SHUTDOWN.
	State            string
	Host             string
	Rack             string
	HTTPAddress      string
	Version          string
	HealthReport     string
	LastHealthUpdate time.Time
	NumContainers    int64
	NodeLabels       []string
	// Total, Used and Available are every resource of the node (memory-mb, vcores and each
	// extended type the RM knows). Used and Available are nil when the scheduler has no report of
	// the node (a node that is not RUNNING).
	Total, Used, Available records.Resources
	// TotalDerived is set when the RM did not send totalResource (Hadoop 3.1) and Total is
	// Used + Available.
	TotalDerived bool
}

// NodesQuery filters /ws/v1/cluster/nodes.
type NodesQuery struct {
	// States keeps nodes in these states (RUNNING, UNHEALTHY, ...). Empty: the RM's default,
	// which is every state but DECOMMISSIONED in most versions.
	States []string
}

type nodeJSON struct {
	Rack                  jsonString        `json:"rack"`
	State                 jsonString        `json:"state"`
	ID                    jsonString        `json:"id"`
	NodeHostName          jsonString        `json:"nodeHostName"`
	NodeHTTPAddress       jsonString        `json:"nodeHTTPAddress"`
	LastHealthUpdate      jsonInt64         `json:"lastHealthUpdate"`
	Version               jsonString        `json:"version"`
	HealthReport          jsonString        `json:"healthReport"`
	NumContainers         jsonInt64         `json:"numContainers"`
	UsedMemoryMB          *jsonInt64        `json:"usedMemoryMB"`
	AvailMemoryMB         *jsonInt64        `json:"availMemoryMB"`
	UsedVirtualCores      *jsonInt64        `json:"usedVirtualCores"`
	AvailableVirtualCores *jsonInt64        `json:"availableVirtualCores"`
	NodeLabels            list[string]      `json:"nodeLabels"`
	UsedResource          *resourceInfoJSON `json:"usedResource"`
	AvailableResource     *resourceInfoJSON `json:"availableResource"`
	TotalResource         *resourceInfoJSON `json:"totalResource"`
}

func (n *nodeJSON) node() (Node, error) {
	out := Node{
		ID:               string(n.ID),
		State:            intern(string(n.State)),
		Host:             string(n.NodeHostName),
		Rack:             intern(string(n.Rack)),
		HTTPAddress:      string(n.NodeHTTPAddress),
		Version:          intern(string(n.Version)),
		HealthReport:     intern(string(n.HealthReport)),
		LastHealthUpdate: millis(n.LastHealthUpdate),
		NumContainers:    int64(n.NumContainers),
		NodeLabels:       []string(n.NodeLabels),
	}
	var err error
	if out.Used, err = n.UsedResource.resources(); err != nil {
		return Node{}, fmt.Errorf("node %s usedResource: %w", out.ID, err)
	}
	if out.Available, err = n.AvailableResource.resources(); err != nil {
		return Node{}, fmt.Errorf("node %s availableResource: %w", out.ID, err)
	}
	if out.Total, err = n.TotalResource.resources(); err != nil {
		return Node{}, fmt.Errorf("node %s totalResource: %w", out.ID, err)
	}
	// Before 3.0 there are no resource objects: memory and vcores come from the flat fields.
	if out.Used.Len() == 0 && n.UsedMemoryMB != nil && n.UsedVirtualCores != nil {
		out.Used = records.NewResources(int64(*n.UsedMemoryMB), int64(*n.UsedVirtualCores))
	}
	if out.Available.Len() == 0 && n.AvailMemoryMB != nil && n.AvailableVirtualCores != nil {
		out.Available = records.NewResources(int64(*n.AvailMemoryMB), int64(*n.AvailableVirtualCores))
	}
	if out.Total.Len() == 0 && (out.Used.Len() > 0 || out.Available.Len() > 0) {
		if out.Total, err = out.Used.Add(out.Available); err != nil {
			return Node{}, fmt.Errorf("%w: node %s: total = used + available: %w", ErrUnexpectedResponse, out.ID, err)
		}
		out.TotalDerived = true
	}
	return out, nil
}

// decodeNodes decodes a /ws/v1/cluster/nodes body, streaming the list.
func decodeNodes(r io.Reader) ([]Node, error) {
	return decodeList(r, "nodes", "node", (*nodeJSON).node)
}

// Nodes returns the cluster's NodeManagers.
func (c *Client) Nodes(ctx context.Context, q NodesQuery) ([]Node, error) {
	query := url.Values{}
	if len(q.States) > 0 {
		query.Set("states", strings.ToUpper(strings.Join(q.States, ",")))
	}
	return getDecoded(ctx, c, pathNodes, query, decodeNodes)
}

// Node returns one NodeManager by its ID ("host:port"); ErrNotFound when the RM does not know it.
func (c *Client) Node(ctx context.Context, id string) (*Node, error) {
	if strings.TrimSpace(id) == "" {
		return nil, fmt.Errorf("node id is empty")
	}
	return getDecoded(ctx, c, pathNodes+"/"+url.PathEscape(id), nil, func(r io.Reader) (*Node, error) {
		return decodeSingle(r, "node", id, (*nodeJSON).node)
	})
}
