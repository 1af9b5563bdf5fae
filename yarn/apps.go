package yarn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/internal/ctxsleep"
	"github.com/yarn-er/yarn-er/records"
)

const defaultPollPeriod = time.Second

// App is an application as /ws/v1/cluster/apps reports it.
type App struct {
	ID              string
	User            string
	Name            string
	Queue           string
	State           records.ApplicationState
	FinalStatus     records.FinalStatus
	Progress        float64
	TrackingUI      string
	TrackingURL     string
	Diagnostics     string
	ClusterID       int64
	ApplicationType string
	ApplicationTags []string
	Priority        int64
	StartedTime     time.Time
	LaunchTime      time.Time
	FinishedTime    time.Time
	ElapsedTime     time.Duration
	AMContainerLogs string
	AMHostHTTPAddr  string
	AMRPCAddress    string

	AllocatedMB, AllocatedVCores, ReservedMB, ReservedVCores int64
	RunningContainers                                        int64
	MemorySeconds, VcoreSeconds                              int64
	// ResourceSeconds is resourceSecondsMap (3.1+): resource name → resource·seconds.
	ResourceSeconds map[string]int64
	// Allocated is the application's allocated resources summed over partitions (3.1+
	// resourceInfo.resourceUsagesByPartition), nil when not reported.
	Allocated records.Resources
	// UnmanagedApplication is set for unmanaged AMs.
	UnmanagedApplication bool
	// LogAggregationStatus is the application's log aggregation: DISABLED, NOT_START, RUNNING,
	// RUNNING_WITH_FAILURE, SUCCEEDED, FAILED or TIME_OUT ("" when not reported).
	LogAggregationStatus string
	// ResourceRequests are the application's outstanding asks (resourceRequests); nil when it
	// has none or the RM does not report them.
	ResourceRequests []ResourceRequest
}

type appJSON struct {
	ID                   jsonString           `json:"id"`
	User                 jsonString           `json:"user"`
	Name                 jsonString           `json:"name"`
	Queue                jsonString           `json:"queue"`
	State                jsonString           `json:"state"`
	FinalStatus          jsonString           `json:"finalStatus"`
	Progress             jsonFloat            `json:"progress"`
	TrackingUI           jsonString           `json:"trackingUI"`
	TrackingURL          jsonString           `json:"trackingUrl"`
	Diagnostics          jsonString           `json:"diagnostics"`
	ClusterID            jsonInt64            `json:"clusterId"`
	ApplicationType      jsonString           `json:"applicationType"`
	ApplicationTags      jsonString           `json:"applicationTags"`
	Priority             jsonInt64            `json:"priority"`
	StartedTime          jsonInt64            `json:"startedTime"`
	LaunchTime           jsonInt64            `json:"launchTime"`
	FinishedTime         jsonInt64            `json:"finishedTime"`
	ElapsedTime          jsonInt64            `json:"elapsedTime"`
	AMContainerLogs      jsonString           `json:"amContainerLogs"`
	AMHostHTTPAddress    jsonString           `json:"amHostHttpAddress"`
	AMRPCAddress         jsonString           `json:"amRPCAddress"`
	AllocatedMB          jsonInt64            `json:"allocatedMB"`
	AllocatedVCores      jsonInt64            `json:"allocatedVCores"`
	ReservedMB           jsonInt64            `json:"reservedMB"`
	ReservedVCores       jsonInt64            `json:"reservedVCores"`
	RunningContainers    jsonInt64            `json:"runningContainers"`
	MemorySeconds        jsonInt64            `json:"memorySeconds"`
	VcoreSeconds         jsonInt64            `json:"vcoreSeconds"`
	ResourceSecondsMap   entryList            `json:"resourceSecondsMap"`
	ResourceInfo         *appResourceInfoJSON `json:"resourceInfo"`
	UnmanagedApplication jsonBool             `json:"unmanagedApplication"`
	LogAggregationStatus jsonString           `json:"logAggregationStatus"`
	appRequestsJSON
}

// appResourceInfoJSON is ResourcesInfo: {"resourceUsagesByPartition": [{"partitionName": "",
// "used": ResourceInfo, ...}]}.
type appResourceInfoJSON struct {
	ResourceUsagesByPartition list[struct {
		PartitionName jsonString        `json:"partitionName"`
		Used          *resourceInfoJSON `json:"used"`
	}] `json:"resourceUsagesByPartition"`
}

func (a *appJSON) app() (App, error) {
	final := records.FinalUndefined
	if a.FinalStatus != "" {
		var err error
		if final, err = records.ParseFinalStatus(string(a.FinalStatus)); err != nil {
			return App{}, fmt.Errorf("%w: app %s: %w", ErrUnexpectedResponse, a.ID, err)
		}
	}
	out := App{
		FinalStatus: final,
		ID:          string(a.ID), User: string(a.User), Name: string(a.Name), Queue: string(a.Queue),
		State: records.ApplicationState(a.State), Progress: float64(a.Progress),
		TrackingUI: string(a.TrackingUI), TrackingURL: string(a.TrackingURL), Diagnostics: string(a.Diagnostics),
		ClusterID: int64(a.ClusterID), ApplicationType: string(a.ApplicationType), Priority: int64(a.Priority),
		StartedTime: millis(a.StartedTime), LaunchTime: millis(a.LaunchTime), FinishedTime: millis(a.FinishedTime),
		ElapsedTime:     time.Duration(int64(a.ElapsedTime)) * time.Millisecond,
		AMContainerLogs: string(a.AMContainerLogs), AMHostHTTPAddr: string(a.AMHostHTTPAddress), AMRPCAddress: string(a.AMRPCAddress),
		AllocatedMB: int64(a.AllocatedMB), AllocatedVCores: int64(a.AllocatedVCores),
		ReservedMB: int64(a.ReservedMB), ReservedVCores: int64(a.ReservedVCores),
		RunningContainers: int64(a.RunningContainers),
		MemorySeconds:     int64(a.MemorySeconds), VcoreSeconds: int64(a.VcoreSeconds),
		UnmanagedApplication: bool(a.UnmanagedApplication),
		LogAggregationStatus: string(a.LogAggregationStatus),
		ApplicationTags:      commaItems(string(a.ApplicationTags)),
	}
	if len(a.ResourceSecondsMap) > 0 {
		out.ResourceSeconds = make(map[string]int64, len(a.ResourceSecondsMap))
		for _, kv := range a.ResourceSecondsMap {
			v, err := parseJSONInt64(kv.Value)
			if err != nil {
				return App{}, fmt.Errorf("%w: app %s resourceSecondsMap %s: %w", ErrUnexpectedResponse, out.ID, kv.Key, err)
			}
			out.ResourceSeconds[kv.Key] = v
		}
	}
	rr, err := resourceRequests(out.ID, a.ResourceRequests)
	if err != nil {
		return App{}, err
	}
	out.ResourceRequests = rr
	if a.ResourceInfo != nil {
		for _, p := range a.ResourceInfo.ResourceUsagesByPartition {
			r, err := p.Used.resources()
			if err != nil {
				return App{}, fmt.Errorf("app %s resourceInfo: %w", out.ID, err)
			}
			if out.Allocated, err = out.Allocated.Add(r); err != nil {
				return App{}, fmt.Errorf("%w: app %s resourceInfo: %w", ErrUnexpectedResponse, out.ID, err)
			}
		}
	}
	return out, nil
}

// decodeApps decodes a /ws/v1/cluster/apps body, streaming the list.
func decodeApps(r io.Reader) ([]App, error) {
	return decodeList(r, "apps", "app", (*appJSON).app)
}

// AppsQuery filters /ws/v1/cluster/apps.
type AppsQuery struct {
	// States keeps applications in these states (RUNNING, FINISHED, ...).
	States []string
	// Queue, User: exact matches.
	Queue string
	User  string
	// ApplicationTypes and ApplicationTags: any of them.
	ApplicationTypes []string
	ApplicationTags  []string
	// Limit caps the number of applications; 0 is no limit.
	Limit int
	// StartedTimeBegin keeps applications started at or after it; zero: no bound.
	StartedTimeBegin time.Time
}

func (q AppsQuery) values() url.Values {
	v := url.Values{}
	if len(q.States) > 0 {
		v.Set("states", strings.ToUpper(strings.Join(q.States, ",")))
	}
	if q.Queue != "" {
		v.Set("queue", q.Queue)
	}
	if q.User != "" {
		v.Set("user", q.User)
	}
	if len(q.ApplicationTypes) > 0 {
		v.Set("applicationTypes", strings.Join(q.ApplicationTypes, ","))
	}
	if len(q.ApplicationTags) > 0 {
		v.Set("applicationTags", strings.Join(q.ApplicationTags, ","))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if !q.StartedTimeBegin.IsZero() {
		v.Set("startedTimeBegin", strconv.FormatInt(q.StartedTimeBegin.UnixMilli(), 10))
	}
	return v
}

// Apps lists applications.
func (c *Client) Apps(ctx context.Context, q AppsQuery) ([]App, error) {
	return getDecoded(ctx, c, pathApps, q.values(), decodeApps)
}

// checkAppID checks an application id before it goes into a URL path.
func checkAppID(id string) error {
	if _, err := records.ParseApplicationID(id); err != nil {
		return fmt.Errorf("application id %q: want application_<cluster timestamp>_<sequence>, e.g. application_1700000000000_0001", id)
	}
	return nil
}

// App returns one application; ErrNotFound when the RM does not know it.
func (c *Client) App(ctx context.Context, id string) (*App, error) {
	if err := checkAppID(id); err != nil {
		return nil, err
	}
	return getDecoded(ctx, c, pathApps+"/"+id, nil, func(r io.Reader) (*App, error) {
		return decodeSingle(r, "app", id, (*appJSON).app)
	})
}

// AppAttempt is one attempt of an application's AM.
type AppAttempt struct {
	// ID is the attempt number (1, 2, ...).
	ID int64
	// AppAttemptID is "appattempt_<cluster>_<app>_<attempt>" (3.x; empty on older RMs).
	AppAttemptID    string
	State           string // appAttemptState (3.x)
	StartTime       time.Time
	FinishedTime    time.Time
	ContainerID     string
	NodeID          string
	NodeHTTPAddress string
	LogsLink        string
	Diagnostics     string
}

type appAttemptJSON struct {
	ID              jsonInt64  `json:"id"`
	AppAttemptID    jsonString `json:"appAttemptId"`
	AppAttemptState jsonString `json:"appAttemptState"`
	StartTime       jsonInt64  `json:"startTime"`
	FinishedTime    jsonInt64  `json:"finishedTime"`
	ContainerID     jsonString `json:"containerId"`
	NodeID          jsonString `json:"nodeId"`
	NodeHTTPAddress jsonString `json:"nodeHttpAddress"`
	LogsLink        jsonString `json:"logsLink"`
	Diagnostics     jsonString `json:"diagnosticsInfo"`
}

type appAttemptList []appAttemptJSON

// UnmarshalJSON implements json.Unmarshaler for {"appAttempt": [...]} and its variants.
func (l *appAttemptList) UnmarshalJSON(b []byte) error {
	return unmarshalWrapped((*[]appAttemptJSON)(l), b, "appAttempt", "appAttempts")
}

func decodeAppAttempts(r io.Reader) ([]AppAttempt, error) {
	var v struct {
		AppAttempts appAttemptList `json:"appAttempts"`
	}
	if err := decodeJSON(r, &v); err != nil {
		return nil, fmt.Errorf("app attempts: %w", err)
	}
	out := make([]AppAttempt, 0, len(v.AppAttempts))
	for _, a := range v.AppAttempts {
		out = append(out, AppAttempt{
			ID: int64(a.ID), AppAttemptID: string(a.AppAttemptID), State: string(a.AppAttemptState),
			StartTime: millis(a.StartTime), FinishedTime: millis(a.FinishedTime),
			ContainerID: string(a.ContainerID), NodeID: string(a.NodeID), NodeHTTPAddress: string(a.NodeHTTPAddress),
			LogsLink: string(a.LogsLink), Diagnostics: string(a.Diagnostics),
		})
	}
	return out, nil
}

// AppAttempts returns the attempts of an application's AM.
func (c *Client) AppAttempts(ctx context.Context, id string) ([]AppAttempt, error) {
	if err := checkAppID(id); err != nil {
		return nil, err
	}
	return getDecoded(ctx, c, pathApps+"/"+id+"/appattempts", nil, decodeAppAttempts)
}

// decodeAppState decodes the answer of /apps/{id}/state, {"state": "RUNNING"}.
func decodeAppState(r io.Reader, id string) (records.ApplicationState, error) {
	var v struct {
		State jsonString `json:"state"`
	}
	if err := decodeJSON(r, &v); err != nil {
		return "", fmt.Errorf("app %s state: %w", id, err)
	}
	return records.ApplicationState(v.State), nil
}

// AppState returns an application's state (GET /apps/{id}/state).
func (c *Client) AppState(ctx context.Context, id string) (records.ApplicationState, error) {
	if err := checkAppID(id); err != nil {
		return "", err
	}
	return getDecoded(ctx, c, pathApps+"/"+id+"/state", nil, func(r io.Reader) (records.ApplicationState, error) {
		return decodeAppState(r, id)
	})
}

// KillApplication asks the RM to kill an application (PUT /apps/{id}/state {"state":"KILLED"}) and
// returns the state the RM reported. inProgress is true when the RM answered 202 Accepted: the kill
// is under way (the reported state may still be ACCEPTED or RUNNING); poll with WaitApp. Killing an
// application that has already ended answers 200 with its final state (FINISHED, FAILED).
// Killing is not retried blindly: only a standby's redirect or a refused connection sends it again.
func (c *Client) KillApplication(ctx context.Context, id string) (state records.ApplicationState, inProgress bool, err error) {
	if err := checkAppID(id); err != nil {
		return "", false, err
	}
	body, _ := json.Marshal(map[string]records.ApplicationState{"state": records.AppKilled})
	cl := call{method: http.MethodPut, path: pathApps + "/" + id + "/state", body: body,
		want: []int{http.StatusOK, http.StatusAccepted}}
	err = c.do(ctx, cl, func(_ rmAddress, r *rawResponse) error {
		inProgress = r.StatusCode == http.StatusAccepted
		data, err := io.ReadAll(io.LimitReader(r.Body, maxErrorBody))
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		state, err = decodeAppState(bytes.NewReader(data), id)
		return err
	})
	return state, inProgress, err
}

// WaitApp polls an application every period (default 1s) until done(app) is true or ctx ends,
// and returns the last App seen. Passing nil for done waits for a terminal state.
func (c *Client) WaitApp(ctx context.Context, id string, period time.Duration, done func(*App) bool) (*App, error) {
	if done == nil {
		done = func(a *App) bool { return a.State.Terminal() }
	}
	if period <= 0 {
		period = defaultPollPeriod
	}
	for {
		app, err := c.App(ctx, id)
		if err != nil {
			return app, err
		}
		if done(app) {
			return app, nil
		}
		if err := ctxsleep.Sleep(ctx, period); err != nil {
			return app, err
		}
	}
}
