package amrm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/records"
)

func TestResourceProtoRoundTrip(t *testing.T) {
	types := map[string]ResourceType{
		records.MemoryMB:  {Name: records.MemoryMB, Units: "Mi"},
		records.VCores:    {Name: records.VCores},
		records.GPU:       {Name: records.GPU},
		"example.com/mem": {Name: "example.com/mem", Units: "Mi"},
	}
	r := records.NewResources(2048, 2, records.Resource{Name: records.GPU, Value: 1})
	p, err := resourceProto(r, types)
	require.NoError(t, err)
	assert.Equal(t, int64(2048), p.GetMemory())
	assert.Equal(t, int32(2), p.GetVirtualCores())
	require.Len(t, p.GetResourceValueMap(), 1, "memory and vcores travel in fields 1 and 2 only")
	assert.Equal(t, records.GPU, p.GetResourceValueMap()[0].GetKey())
	assert.Equal(t, "", p.GetResourceValueMap()[0].GetUnits())
	assert.Equal(t, r, resourceFromProto(p, types))

	// What Hadoop's ResourcePBImpl sends: every type in the map, memory and vcores included.
	in := &yarnpb.ResourceProto{
		Memory: proto.Int64(1024), VirtualCores: proto.Int32(1),
		ResourceValueMap: []*yarnpb.ResourceInformationProto{
			{Key: proto.String(records.MemoryMB), Value: proto.Int64(1024), Units: proto.String("Mi")},
			{Key: proto.String(records.VCores), Value: proto.Int64(1), Units: proto.String("")},
			{Key: proto.String(records.GPU), Value: proto.Int64(4), Units: proto.String("")},
			{Key: proto.String("example.com/mem"), Value: proto.Int64(2), Units: proto.String("Gi")},
		},
	}
	assert.Equal(t, records.NewResources(1024, 1, records.Resource{Name: records.GPU, Value: 4}, records.Resource{Name: "example.com/mem", Value: 2048, Units: "Mi"}),
		resourceFromProto(in, types))

	_, err = resourceProto(records.NewResources(0, 1<<40), types)
	assert.Error(t, err)
	assert.Equal(t, "<memory-mb:2048, vcores:2, yarn.io/gpu:1>", r.String())

	// An amount in another unit travels in the registered type's unit.
	p, err = resourceProto(records.NewResources(1, 1, records.Resource{Name: "example.com/mem", Value: 2, Units: "Gi"}), types)
	require.NoError(t, err)
	require.Len(t, p.GetResourceValueMap(), 1)
	assert.Equal(t, int64(2048), p.GetResourceValueMap()[0].GetValue())
	assert.Equal(t, "Mi", p.GetResourceValueMap()[0].GetUnits())
	p, err = resourceProto(records.ResourcesOf(records.Resource{Name: records.MemoryMB, Value: 2, Units: "Gi"}), types)
	require.NoError(t, err)
	assert.Equal(t, int64(2048), p.GetMemory(), "memory-mb travels in Mi")
	_, err = resourceProto(records.NewResources(1, 1, records.Resource{Name: records.GPU, Value: 1, Units: "parsecs"}), types)
	assert.ErrorIs(t, err, records.ErrUnknownUnit)
}
