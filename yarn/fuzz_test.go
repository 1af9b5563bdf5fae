package yarn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yarn-er/yarn-er/records"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/ (from the captures and the hand-written
// variants); f.Add adds a few edge cases on top.

// encodeResource renders a vector as a Hadoop ResourceInfo (the inverse of DecodeResource).
func encodeResource(r records.Resources) []byte {
	var b bytes.Buffer
	b.WriteString(`{"resourceInformations":{"resourceInformation":[`)
	for i, e := range r.All() {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(e.Name)
		units, _ := json.Marshal(e.Units)
		fmt.Fprintf(&b, `{"name":%s,"units":%s,"value":%d}`, name, units, e.Value)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// fuzzDecode fuzzes decode with f's corpus: it fails only with an ErrUnexpectedResponse, and what it
// decodes from data passes check.
func fuzzDecode[T any](f *testing.F, decode func(io.Reader) (T, error), check func(t *testing.T, data []byte, v T)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decode(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrUnexpectedResponse) {
				t.Fatalf("decode error is not ErrUnexpectedResponse: %v", err)
			}
			return
		}
		check(t, data, v)
	})
}

func FuzzDecodeResource(f *testing.F) {
	f.Add([]byte(`{"memory":9223372036854775807,"vCores":-1}`))
	f.Add([]byte(`{"resourceInformations":{"resourceInformation":{"name":"yarn.io/gpu","value":"4","units":"Gi"}}}`))
	f.Add([]byte(`{"memory":1e3,"resourceInformations":[{"name":"a","value":2.0E1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeResource(data)
		if err != nil {
			return
		}
		var names strings.Builder
		for _, e := range r.All() {
			names.WriteString(e.Name)
			if e.Name == "" {
				t.Fatalf("decoded an empty resource name from %q", data)
			}
		}
		// Whatever decodes must survive a round trip exactly: no float64 anywhere.
		if !utf8.ValidString(names.String()) {
			return // JSON encoding would replace invalid UTF-8
		}
		back, err := DecodeResource(encodeResource(r))
		if err != nil {
			t.Fatalf("re-decoding %v: %v", r, err)
		}
		if !slices.Equal(back.All(), r.All()) {
			t.Fatalf("round trip changed %v into %v", r.All(), back.All())
		}
	})
}

func FuzzDecodeRemoteError(f *testing.F) {
	f.Add(404, "application/json", []byte(`{"RemoteException":{"exception":"NotFoundException","message":"m","javaClassName":"a.b.NotFoundException"}}`))
	f.Add(403, "text/plain", []byte("App submission via REST is disabled."))
	f.Add(401, "text/html", []byte(`<html><title>Error 401 x</title><pre>y</pre></html>`))
	f.Add(500, "", []byte(`{"message":null}`))
	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		e := DecodeRemoteError(status, contentType, body)
		if e == nil || e.StatusCode != status {
			t.Fatalf("status %d not kept: %+v", status, e)
		}
		_ = e.Error()
		if status == http.StatusNotFound && !errors.Is(e, ErrNotFound) {
			t.Fatalf("404 is not ErrNotFound")
		}
		if status >= 500 && !errors.Is(e, ErrServer) {
			t.Fatalf("%d is not ErrServer", status)
		}
		if errors.Is(e, ErrRESTSubmissionDisabled) && !errors.Is(e, ErrForbidden) {
			t.Fatalf("submission disabled without forbidden: %+v", e)
		}
		if !strings.HasPrefix(strings.TrimSpace(string(body)), "{") && len(e.Message) > 1000+len("…") {
			t.Fatalf("message of %d bytes not truncated", len(e.Message))
		}
	})
}

func FuzzDecodeNodes(f *testing.F) {
	f.Add([]byte(`{"nodes":{"node":{"id":"h:1","usedResource":{"memory":1},"availableResource":{"memory":9223372036854775807}}}}`))
	fuzzDecode(f, decodeNodes, func(t *testing.T, data []byte, nodes []Node) {
		for _, n := range nodes {
			if n.TotalDerived && n.Total.Len() == 0 {
				t.Fatalf("derived total missing on %+v", n)
			}
		}
	})
}

func FuzzDecodeScheduler(f *testing.F) {
	f.Add([]byte(`{"scheduler":{"schedulerInfo":{"type":"fairScheduler","rootQueue":{"queueName":"root","childQueues":{"queue":{"queueName":"root.a","schedulingPolicy":"DRF"}}}}}}`))
	f.Add([]byte(`{"scheduler":{"schedulerInfo":{"type":"capacityScheduler","queues":{"queue":[{"queueName":"a","queues":null}]}}}}`))
	fuzzDecode(f, decodeScheduler, func(t *testing.T, data []byte, s *Scheduler) {
		n := 0
		var count func(q *Queue)
		count = func(q *Queue) {
			n++
			for _, c := range q.Children {
				count(c)
			}
		}
		if s.Root != nil {
			count(s.Root)
		}
		if len(s.Queues()) != n {
			t.Fatalf("Queues() lists %d queues of %d", len(s.Queues()), n)
		}
		for _, q := range s.Queues() {
			if q.Name != "" && q.Path == "" {
				t.Fatalf("queue %q has no path", q.Name)
			}
			if q.Path != "" && s.Queue(q.Path) == nil {
				t.Fatalf("queue %q not found by its path", q.Path)
			}
		}
	})
}

func FuzzDecodeSchedulerOverview(f *testing.F) {
	f.Add([]byte(`{"scheduler":{"schedulerType":"Fifo Scheduler","schedulingResourceType":"memory-mb (unit=Mi),vcores","maximumAllocation":{"memory":8192,"vCores":4}}}`))
	f.Add([]byte(`{"schedulerType":"x","schedulingResourceType":",, a (,b"}`))
	fuzzDecode(f, decodeSchedulerOverview, func(t *testing.T, data []byte, o *SchedulerOverview) {
		for _, n := range o.ResourceTypes {
			if n == "" || strings.ContainsAny(n, ", ") {
				t.Fatalf("bad type name %q from %q", n, o.SchedulingResourceType)
			}
		}
	})
}

func FuzzDecodeAppContainers(f *testing.F) {
	f.Add([]byte(`{"container":[{"containerId":"c","allocatedMB":1,"allocatedResources":{"entry":[{"key":"yarn.io/gpu","value":1}]}}]}`))
	f.Add([]byte(`{"containers":{"container":{"containerId":"c"}}}`))
	fuzzDecode(f, decodeAppContainers, func(t *testing.T, data []byte, cs []AppContainer) {
		for _, c := range cs {
			if c.Resource.Len() < 2 {
				t.Fatalf("container %q without memory-mb and vcores", c.ID)
			}
		}
	})
}

// FuzzDecodeApps: /ws/v1/cluster/apps, the outstanding asks (resourceRequests) included; what
// an application still asks for never fails on a decoded one but with ErrUnexpectedResponse.
func FuzzDecodeApps(f *testing.F) {
	f.Add([]byte(`{"apps":{"app":[{"id":"application_1_0001","state":"ACCEPTED","finalStatus":"UNDEFINED","resourceRequests":[{"priority":1,"resourceName":"*","numContainers":3,"relaxLocality":true,"nodeLabelExpression":"gpu","capability":{"memory":1024,"vCores":1,"resourceInformations":{"resourceInformation":[{"name":"yarn.io/gpu","value":2,"units":""}]}}}]}]}}`))
	f.Add([]byte(`{"apps":{"app":[{"id":"application_1_0001","state":"RUNNING","finalStatus":"UNDEFINED","resourceRequests":[{"priority":1,"allocationRequestId":0,"numContainers":1,"relaxLocality":false,"placementConstraint":"notin,node,worker","allocationTags":["worker"],"capability":{"memory":128,"vCores":1}}]}]}}`))
	f.Add([]byte(`{"apps":{"app":{"id":"a","finalStatus":"","resourceRequests":{"resourceName":"*","numContainers":9223372036854775807,"capability":{"memory":9223372036854775807}}}}}`))
	fuzzDecode(f, decodeApps, func(t *testing.T, data []byte, apps []App) {
		for i := range apps {
			if _, err := apps[i].PendingAny(); err != nil && !errors.Is(err, ErrUnexpectedResponse) {
				t.Fatalf("PendingAny: %v", err)
			}
		}
	})
}
