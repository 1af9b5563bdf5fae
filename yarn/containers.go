package yarn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/yarn-er/yarn-er/records"
)

// AppContainer is one container of an application attempt as the RM reports it
// (GET /ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers, dao.ContainerInfo): the RM lists
// the attempt's live containers (the AM's included), not those that have completed.
type AppContainer struct {
	ID              string
	State           string // NEW, RUNNING, COMPLETE
	ExitStatus      int64
	NodeID          string
	NodeHTTPAddress string
	Priority        int64
	StartedTime     time.Time
	FinishedTime    time.Time
	LogURL          string
	Diagnostics     string
	// Resource is allocatedResources (every type), else allocatedMB and allocatedVCores.
	Resource records.Resources
}

type appContainerJSON struct {
	ContainerID         jsonString `json:"containerId"`
	AllocatedMB         jsonInt64  `json:"allocatedMB"`
	AllocatedVCores     jsonInt64  `json:"allocatedVCores"`
	AssignedNodeID      jsonString `json:"assignedNodeId"`
	NodeID              jsonString `json:"nodeId"`
	NodeHTTPAddress     jsonString `json:"nodeHttpAddress"`
	Priority            jsonInt64  `json:"priority"`
	StartedTime         jsonInt64  `json:"startedTime"`
	FinishedTime        jsonInt64  `json:"finishedTime"`
	LogURL              jsonString `json:"logUrl"`
	ContainerExitStatus jsonInt64  `json:"containerExitStatus"`
	ContainerState      jsonString `json:"containerState"`
	DiagnosticsInfo     jsonString `json:"diagnosticsInfo"`
	AllocatedResources  entryList  `json:"allocatedResources"`
}

func (c *appContainerJSON) container() (AppContainer, error) {
	out := AppContainer{
		ID: string(c.ContainerID), State: string(c.ContainerState), ExitStatus: int64(c.ContainerExitStatus),
		NodeID: string(c.NodeID), NodeHTTPAddress: string(c.NodeHTTPAddress), Priority: int64(c.Priority),
		StartedTime: millis(c.StartedTime), FinishedTime: millis(c.FinishedTime), LogURL: string(c.LogURL),
		Diagnostics: string(c.DiagnosticsInfo),
	}
	if out.NodeID == "" {
		out.NodeID = string(c.AssignedNodeID)
	}
	out.Resource.Set(records.MemoryMB, records.Quantity{Value: int64(c.AllocatedMB), Units: records.MemoryUnits})
	out.Resource.Set(records.VCores, records.Quantity{Value: int64(c.AllocatedVCores)})
	for _, kv := range c.AllocatedResources {
		v, err := parseJSONInt64(kv.Value)
		if err != nil {
			return AppContainer{}, fmt.Errorf("%w: container %s allocatedResources %s: %w", ErrUnexpectedResponse, out.ID, kv.Key, err)
		}
		q := records.Quantity{Value: v}
		if kv.Key == records.MemoryMB {
			q.Units = records.MemoryUnits
		}
		out.Resource.Set(kv.Key, q)
	}
	return out, nil
}

// decodeAppContainers decodes {"container": [...]} (Jersey 2) or {"containers": {"container":
// [...]}} (Jersey 1).
func decodeAppContainers(r io.Reader) ([]AppContainer, error) {
	var v map[string]json.RawMessage
	if err := decodeJSON(r, &v); err != nil {
		return nil, fmt.Errorf("containers: %w", err)
	}
	raw, ok := v["containers"]
	key := "container"
	if !ok {
		raw = v["container"]
		key = ""
	}
	var items []appContainerJSON
	var err error
	if key == "" {
		var l list[appContainerJSON]
		if len(raw) > 0 {
			err = json.Unmarshal(raw, &l)
		}
		items = l
	} else {
		items, err = unwrapList[appContainerJSON](raw, key)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: containers: %w", ErrUnexpectedResponse, err)
	}
	out := make([]AppContainer, 0, len(items))
	for i := range items {
		c, err := items[i].container()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// AttemptContainers returns the live containers of one attempt of an application (attemptID is
// "appattempt_..." from AppAttempts).
func (c *Client) AttemptContainers(ctx context.Context, appID, attemptID string) ([]AppContainer, error) {
	if err := checkAppID(appID); err != nil {
		return nil, err
	}
	if _, err := records.ParseApplicationAttemptID(attemptID); err != nil {
		return nil, fmt.Errorf("attempt id %q: want appattempt_<cluster timestamp>_<sequence>_<attempt>", attemptID)
	}
	return getDecoded(ctx, c, pathApps+"/"+appID+"/appattempts/"+attemptID+"/containers", nil, decodeAppContainers)
}
