package yarn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/records"
)

// NewApplication is the answer of POST /ws/v1/cluster/apps/new-application.
type NewApplication struct {
	// ID is the new application id; it is consumed whether or not an application is submitted.
	ID string
	// MaximumResourceCapability is the largest container the scheduler grants now, every resource
	// type included: the effective per-type maximum (for extended types the smaller of
	// yarn.resource-types.<r>.maximum-allocation and the largest registered NodeManager).
	MaximumResourceCapability records.Resources
	// ResourceInformation is every entry of maximum-resource-capability as the RM sent it.
	ResourceInformation []ResourceInformation
}

// NewApplication asks the RM for a new application id (POST /apps/new-application). It is not
// retried blindly: each call consumes an id.
func (c *Client) NewApplication(ctx context.Context) (*NewApplication, error) {
	var out *NewApplication
	err := c.do(ctx, call{method: http.MethodPost, path: pathNewApp}, func(_ rmAddress, r *rawResponse) error {
		var v struct {
			ApplicationID jsonString        `json:"application-id"`
			MaxCapability *resourceInfoJSON `json:"maximum-resource-capability"`
		}
		if err := decodeJSON(r.Body, &v); err != nil {
			return fmt.Errorf("new application: %w", err)
		}
		if v.ApplicationID == "" {
			return fmt.Errorf("new application: %w: no application-id", ErrUnexpectedResponse)
		}
		res, err := v.MaxCapability.resources()
		if err != nil {
			return fmt.Errorf("new application: maximum-resource-capability: %w", err)
		}
		info, err := v.MaxCapability.information()
		if err != nil {
			return fmt.Errorf("new application: maximum-resource-capability: %w", err)
		}
		out = &NewApplication{ID: string(v.ApplicationID), MaximumResourceCapability: res, ResourceInformation: info}
		return nil
	})
	return out, err
}

// ApplicationSubmissionContext is the body of POST /ws/v1/cluster/apps
// (dao.ApplicationSubmissionContextInfo). Zero-valued optional fields are left out so the RM
// applies its defaults.
type ApplicationSubmissionContext struct {
	// ApplicationID comes from NewApplication. Required.
	ApplicationID   string
	ApplicationName string
	Queue           string
	// Priority is the application priority; nil leaves the RM's default.
	Priority *int32
	// AMContainerSpec is how to launch the ApplicationMaster.
	AMContainerSpec ContainerLaunchContext
	// UnmanagedAM: the AM runs outside YARN.
	UnmanagedAM bool
	// MaxAppAttempts: 0 leaves yarn.resourcemanager.am.max-attempts.
	MaxAppAttempts int32
	// AttemptFailuresValidityInterval in ms; 0 leaves the default.
	AttemptFailuresValidityInterval int64
	// Resource is the AM container. The RM reads memory and vCores only and silently ignores
	// extended resources here (RMWebAppUtil.createAppSubmissionContextResource); it checks them
	// against the configured yarn.scheduler.maximum-allocation-mb/-vcores.
	Resource records.Resources
	// ApplicationType, e.g. "Apache Flink".
	ApplicationType                         string
	KeepContainersAcrossApplicationAttempts bool
	ApplicationTags                         []string
	ReservationID                           string
	AppNodeLabelExpression                  string
	AMContainerNodeLabelExpression          string
	LogAggregationContext                   *LogAggregationContext
	AMBlackListingRequests                  *AMBlackListingRequests
	// CancelTokensWhenComplete: nil leaves the default (true).
	CancelTokensWhenComplete *bool
}

// ContainerLaunchContext is am-container-spec.
type ContainerLaunchContext struct {
	// LocalResources are files the NodeManager localises, by link name. Size and Timestamp must
	// equal the file's length and modification time (ms) exactly, or localisation fails.
	LocalResources map[string]records.LocalResource
	// Environment of the AM process; {{VAR}} and <CPS> are expanded by the NodeManager.
	Environment map[string]string
	// Commands run the AM; <LOG_DIR> is expanded by the NodeManager.
	Commands []string
	// ServiceData is handed to auxiliary services (sent base64-encoded).
	ServiceData map[string][]byte
	// Credentials are tokens and secrets for the AM; tokens are sent in Hadoop's URL string form
	// (records.Token.EncodeToURLString), secrets base64-encoded.
	Credentials *records.Credentials
	// ApplicationACLs maps VIEW_APP / MODIFY_APP to "user1,user2 group1".
	ApplicationACLs map[string]string
}

// LogAggregationContext configures log aggregation of the application.
type LogAggregationContext struct {
	LogIncludePattern              string `json:"log-include-pattern,omitempty"`
	LogExcludePattern              string `json:"log-exclude-pattern,omitempty"`
	RolledLogIncludePattern        string `json:"rolled-log-include-pattern,omitempty"`
	RolledLogExcludePattern        string `json:"rolled-log-exclude-pattern,omitempty"`
	LogAggregationPolicyClassName  string `json:"log-aggregation-policy-class-name,omitempty"`
	LogAggregationPolicyParameters string `json:"log-aggregation-policy-parameters,omitempty"`
}

// AMBlackListingRequests configures AM node blacklisting.
type AMBlackListingRequests struct {
	Enabled                 bool    `json:"am-black-listing-enabled"`
	DisableFailureThreshold float32 `json:"disable-failure-threshold,omitempty"`
}

// jsonEntry is one {"key": k, "value": v} of Hadoop's JAXB map encoding.
type jsonEntry struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

type jsonEntries struct {
	Entry []jsonEntry `json:"entry"`
}

func entriesOf[V any](m map[string]V, conv func(V) any) *jsonEntries {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := &jsonEntries{Entry: make([]jsonEntry, 0, len(keys))}
	for _, k := range keys {
		out.Entry = append(out.Entry, jsonEntry{Key: k, Value: conv(m[k])})
	}
	return out
}

// MarshalJSON renders the context as Hadoop's ApplicationSubmissionContextInfo.
func (s ApplicationSubmissionContext) MarshalJSON() ([]byte, error) {
	type localResourceJSON struct {
		Resource   string `json:"resource"`
		Type       string `json:"type"`
		Visibility string `json:"visibility"`
		Size       int64  `json:"size"`
		Timestamp  int64  `json:"timestamp"`
		Pattern    string `json:"pattern,omitempty"`
	}
	type credentialsJSON struct {
		Tokens  *jsonEntries `json:"tokens,omitempty"`
		Secrets *jsonEntries `json:"secrets,omitempty"`
	}
	type commandsJSON struct {
		Command []string `json:"command"`
	}
	type amSpecJSON struct {
		LocalResources  *jsonEntries     `json:"local-resources,omitempty"`
		Environment     *jsonEntries     `json:"environment,omitempty"`
		Commands        *commandsJSON    `json:"commands,omitempty"`
		ServiceData     *jsonEntries     `json:"service-data,omitempty"`
		Credentials     *credentialsJSON `json:"credentials,omitempty"`
		ApplicationACLs *jsonEntries     `json:"application-acls,omitempty"`
	}
	type resourceJSON struct {
		Memory int64 `json:"memory"`
		VCores int32 `json:"vCores"`
	}
	type tagsJSON struct {
		Tag []string `json:"tag"`
	}
	type body struct {
		ApplicationID                   string                  `json:"application-id"`
		ApplicationName                 string                  `json:"application-name,omitempty"`
		Queue                           string                  `json:"queue,omitempty"`
		Priority                        *int32                  `json:"priority,omitempty"`
		AMContainerSpec                 amSpecJSON              `json:"am-container-spec"`
		UnmanagedAM                     bool                    `json:"unmanaged-AM"`
		MaxAppAttempts                  int32                   `json:"max-app-attempts,omitempty"`
		Resource                        resourceJSON            `json:"resource"`
		ApplicationType                 string                  `json:"application-type,omitempty"`
		KeepContainers                  bool                    `json:"keep-containers-across-application-attempts"`
		ApplicationTags                 *tagsJSON               `json:"application-tags,omitempty"`
		ReservationID                   string                  `json:"reservation-id,omitempty"`
		AppNodeLabelExpression          string                  `json:"app-node-label-expression,omitempty"`
		AMContainerNodeLabelExpression  string                  `json:"am-container-node-label-expression,omitempty"`
		LogAggregationContext           *LogAggregationContext  `json:"log-aggregation-context,omitempty"`
		AttemptFailuresValidityInterval int64                   `json:"attempt-failures-validity-interval,omitempty"`
		AMBlackListingRequests          *AMBlackListingRequests `json:"am-black-listing-requests,omitempty"`
		CancelTokensWhenComplete        *bool                   `json:"cancel-tokens-when-complete,omitempty"`
	}
	mem, vcores, err := s.amSize()
	if err != nil {
		return nil, err
	}
	spec := s.AMContainerSpec
	b := body{
		ApplicationID: s.ApplicationID, ApplicationName: s.ApplicationName, Queue: s.Queue, Priority: s.Priority,
		UnmanagedAM: s.UnmanagedAM, MaxAppAttempts: s.MaxAppAttempts,
		Resource:        resourceJSON{Memory: mem, VCores: int32(vcores)},
		ApplicationType: s.ApplicationType, KeepContainers: s.KeepContainersAcrossApplicationAttempts,
		ReservationID: s.ReservationID, AppNodeLabelExpression: s.AppNodeLabelExpression,
		AMContainerNodeLabelExpression: s.AMContainerNodeLabelExpression,
		LogAggregationContext:          s.LogAggregationContext, AttemptFailuresValidityInterval: s.AttemptFailuresValidityInterval,
		AMBlackListingRequests: s.AMBlackListingRequests, CancelTokensWhenComplete: s.CancelTokensWhenComplete,
	}
	if len(s.ApplicationTags) > 0 {
		b.ApplicationTags = &tagsJSON{Tag: s.ApplicationTags}
	}
	b.AMContainerSpec.LocalResources = entriesOf(spec.LocalResources, func(r records.LocalResource) any {
		return localResourceJSON{Resource: r.URL, Type: string(r.EffectiveType()), Visibility: string(r.EffectiveVisibility()),
			Size: r.Size, Timestamp: r.Timestamp, Pattern: r.Pattern}
	})
	b.AMContainerSpec.Environment = entriesOf(spec.Environment, func(v string) any { return v })
	if len(spec.Commands) > 0 {
		b.AMContainerSpec.Commands = &commandsJSON{Command: spec.Commands}
	}
	b.AMContainerSpec.ServiceData = entriesOf(spec.ServiceData, func(v []byte) any {
		return base64.StdEncoding.EncodeToString(v)
	})
	if cr := spec.Credentials; cr != nil && (len(cr.Tokens) > 0 || len(cr.Secrets) > 0) {
		b.AMContainerSpec.Credentials = &credentialsJSON{
			Tokens:  entriesOf(cr.Tokens, func(v records.Token) any { return v.EncodeToURLString() }),
			Secrets: entriesOf(cr.Secrets, func(v []byte) any { return base64.StdEncoding.EncodeToString(v) }),
		}
	}
	b.AMContainerSpec.ApplicationACLs = entriesOf(spec.ApplicationACLs, func(v string) any { return v })
	return json.Marshal(b)
}

// amSize returns the AM container's memory in MiB and its vcores, the only parts of Resource the
// RM reads.
func (s ApplicationSubmissionContext) amSize() (memMiB, vcores int64, err error) {
	if q, ok := s.Resource.Quantity(records.MemoryMB); ok {
		if memMiB, _, err = q.In(records.MemoryUnits); err != nil {
			return 0, 0, fmt.Errorf("submission context for %s: AM memory %s: %w", s.ApplicationID, q, err)
		}
	}
	vcores, _ = s.Resource.Get(records.VCores)
	if memMiB < 0 || vcores < 0 {
		return 0, 0, fmt.Errorf("submission context for %s: negative AM resource (memory %d MB, %d vcores)",
			s.ApplicationID, memMiB, vcores)
	}
	if vcores > math.MaxInt32 {
		return 0, 0, fmt.Errorf("submission context for %s: %d vcores for the AM do not fit a Java int", s.ApplicationID, vcores)
	}
	return memMiB, vcores, nil
}

// validate checks what the RM would reject with a less helpful message.
func (s ApplicationSubmissionContext) validate() error {
	if err := checkAppID(s.ApplicationID); err != nil {
		return fmt.Errorf("submission context: %w (get one from NewApplication)", err)
	}
	if !s.UnmanagedAM && len(s.AMContainerSpec.Commands) == 0 {
		return fmt.Errorf("submission context for %s: the AM container spec has no command", s.ApplicationID)
	}
	if _, _, err := s.amSize(); err != nil {
		return err
	}
	for name, lr := range s.AMContainerSpec.LocalResources {
		if strings.TrimSpace(lr.URL) == "" {
			return fmt.Errorf("submission context for %s: local resource %q has no URL", s.ApplicationID, name)
		}
		if _, err := lr.ParsedURL(); err != nil {
			return fmt.Errorf("submission context for %s: local resource %q: %w", s.ApplicationID, name, err)
		}
	}
	return nil
}

// SubmitApplication submits an application (POST /ws/v1/cluster/apps); the RM answers 202 Accepted
// once it has taken the submission. It is not retried blindly: only a standby's redirect or a
// refused connection sends it again. REST submission may be disabled (ErrRESTSubmissionDisabled)
// or blocked for the static user on secure clusters (ErrForbidden).
func (c *Client) SubmitApplication(ctx context.Context, s ApplicationSubmissionContext) error {
	if err := s.validate(); err != nil {
		return err
	}
	body, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("submission context for %s: %w", s.ApplicationID, err)
	}
	// Sent again after a lost answer (a dropped connection, a timeout, a 5xx, a failover): the RM
	// takes a submission of an application id it already has as that application
	// (ClientRMService: "This is an earlier submitted application"), so a resend never makes a
	// second one.
	cl := call{method: http.MethodPost, path: pathApps, body: body, want: []int{http.StatusAccepted, http.StatusOK}, resendable: true}
	return c.do(ctx, cl, func(rmAddress, *rawResponse) error { return nil })
}
