package yarn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// pathNodeLabels is the cluster's node labels (partitions).
const pathNodeLabels = pathCluster + "/get-node-labels"

// NodeLabel is one cluster node label (a partition) as /ws/v1/cluster/get-node-labels lists it.
type NodeLabel struct {
	Name string
	// Exclusive labels give their nodes' resources only to requests for the label; the nodes
	// of a non-exclusive label also serve requests without a label when they have room.
	Exclusive bool
}

// NodeLabels returns the cluster's node labels (GET /ws/v1/cluster/get-node-labels). A cluster
// without labels answers an empty list.
func (c *Client) NodeLabels(ctx context.Context) ([]NodeLabel, error) {
	return getDecoded(ctx, c, pathNodeLabels, nil, decodeNodeLabels)
}

// nodeLabelJSON is one NodeLabelInfo (Hadoop 2.8+); older RMs list bare names.
type nodeLabelJSON struct {
	Name        jsonString `json:"name"`
	Exclusivity *jsonBool  `json:"exclusivity"`
}

// UnmarshalJSON accepts a NodeLabelInfo object or a bare label name.
func (n *nodeLabelJSON) UnmarshalJSON(b []byte) error {
	if firstByte(b) == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		n.Name = jsonString(s)
		return nil
	}
	type plain nodeLabelJSON
	return json.Unmarshal(b, (*plain)(n))
}

func decodeNodeLabels(r io.Reader) ([]NodeLabel, error) {
	var v struct {
		Info  list[nodeLabelJSON] `json:"nodeLabelInfo"`
		Names list[nodeLabelJSON] `json:"nodeLabels"`
	}
	if err := decodeJSON(r, &v); err != nil {
		return nil, fmt.Errorf("node labels: %w", err)
	}
	items := v.Info
	if len(items) == 0 {
		items = v.Names
	}
	out := []NodeLabel{}
	for i, it := range items {
		if it.Name == "" {
			return nil, fmt.Errorf("node labels: %w: label #%d has no name", ErrUnexpectedResponse, i+1)
		}
		// Hadoop's default for a label added without exclusivity is exclusive.
		excl := it.Exclusivity == nil || bool(*it.Exclusivity)
		out = append(out, NodeLabel{Name: string(it.Name), Exclusive: excl})
	}
	return out, nil
}
