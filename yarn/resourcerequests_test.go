package yarn

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func TestResourceRequestsDecodeAndPending(t *testing.T) {
	// The shape of Hadoop 3.3's AppInfo.resourceRequests (ResourceRequestInfo), an off-switch ask
	// for 2 containers of 1 GPU each plus a rack ask that repeats them.
	body := `{"apps":{"app":[{"id":"application_1_0002","queue":"gpu","state":"ACCEPTED","finalStatus":"UNDEFINED",
 "resourceRequests":[
  {"priority":1,"resourceName":"*","numContainers":2,"relaxLocality":true,"nodeLabelExpression":"",
   "capability":{"memory":1024,"vCores":1,"resourceInformations":{"resourceInformation":[
     {"name":"memory-mb","value":1024,"units":"Mi"},{"name":"vcores","value":1,"units":""},
     {"name":"yarn.io/gpu","value":1,"units":""}]}}},
  {"priority":1,"resourceName":"/default-rack","numContainers":2,"relaxLocality":true,
   "capability":{"memory":1024,"vCores":1}}]}]}}`
	apps, err := decodeApps(strings.NewReader(body))
	require.NoError(t, err)
	require.Len(t, apps, 1)
	rr := apps[0].ResourceRequests
	require.Len(t, rr, 2)
	assert.Equal(t, "*", rr[0].ResourceName)
	assert.Equal(t, int64(2), rr[0].NumContainers)
	assert.Equal(t, int64(1), rr[0].Capability.Value(records.GPU))
	assert.True(t, rr[0].RelaxLocality)
	p, err := apps[0].PendingAny()
	require.NoError(t, err)
	assert.Equal(t, int64(2), p.Value(records.GPU))
	assert.Equal(t, int64(2048), p.Value(records.MemoryMB))

	overflow := App{ID: "a", ResourceRequests: []ResourceRequest{{ResourceName: "*", NumContainers: 1 << 62,
		Capability: records.ResourcesOf(records.Resource{Name: records.GPU, Value: 4})}}}
	_, err = overflow.PendingAny()
	assert.ErrorIs(t, err, ErrUnexpectedResponse)
}

// A SchedulingRequest, as Hadoop 3.5.0's RM lists it (recorded from the mini-YARN with the
// placement-constraints handler "scheduler"): no resourceName, its constraint and tags; it counts
// its pending containers once.
func TestSchedulingRequestDecodeAndPending(t *testing.T) {
	body := `{"apps":{"app":[{"id":"application_1796447155819_0003","queue":"default","state":"RUNNING","finalStatus":"UNDEFINED",
 "resourceRequests":[{"priority":1,"allocationRequestId":0,
   "capability":{"memory":128,"vCores":1,"resourceInformations":{"resourceInformation":[
     {"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":"memory-mb","resourceType":"COUNTABLE","units":"Mi","value":128},
     {"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":"vcores","resourceType":"COUNTABLE","units":"","value":1},
     {"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":"yarn.io/gpu","resourceType":"COUNTABLE","units":"","value":1}]}},
   "numContainers":1,"relaxLocality":false,"executionTypeRequest":{"executionType":"GUARANTEED","enforceExecutionType":true},
   "placementConstraint":"notin,node,worker","allocationTags":["worker"]}]}]}}`
	apps, err := decodeApps(strings.NewReader(body))
	require.NoError(t, err)
	require.Len(t, apps, 1)
	rr := apps[0].ResourceRequests
	require.Len(t, rr, 1)
	assert.Equal(t, "", rr[0].ResourceName)
	assert.Equal(t, "notin,node,worker", rr[0].PlacementConstraint)
	assert.Equal(t, []string{"worker"}, rr[0].AllocationTags)
	assert.True(t, rr[0].Anywhere())
	p, err := apps[0].PendingAny()
	require.NoError(t, err)
	assert.Equal(t, int64(1), p.Value(records.GPU))
	assert.Equal(t, int64(128), p.Value(records.MemoryMB))
}
