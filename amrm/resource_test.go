package amrm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

func TestConvertUnits(t *testing.T) {
	tests := []struct {
		from, to string
		v, want  int64
		err      bool
	}{
		{"", "", 5, 5, false},
		{"Gi", "Mi", 2, 2048, false},
		{"Mi", "Gi", 3000, 2, false}, // truncates like Hadoop
		{"k", "", 3, 3000, false},
		{"", "k", 2999, 2, false},
		{"m", "", 1500, 1, false},
		{"Pi", "", 1 << 20, 0, true}, // overflow
		{"X", "", 1, 0, true},
	}
	for _, tt := range tests {
		got, err := convertUnits(tt.from, tt.to, tt.v)
		if tt.err {
			assert.Error(t, err, "%d %s->%s", tt.v, tt.from, tt.to)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, "%d %s->%s", tt.v, tt.from, tt.to)
	}
}

func TestResourceProtoRoundTrip(t *testing.T) {
	types := map[string]ResourceType{
		ResourceMemory:    {Name: ResourceMemory, Units: "Mi"},
		ResourceVCores:    {Name: ResourceVCores},
		ResourceGPU:       {Name: ResourceGPU},
		"example.com/mem": {Name: "example.com/mem", Units: "Mi"},
	}
	r := Resource{MemoryMB: 2048, VCores: 2, Extended: map[string]int64{ResourceGPU: 1}}
	p, err := resourceProto(r, types)
	require.NoError(t, err)
	assert.Equal(t, int64(2048), p.GetMemory())
	assert.Equal(t, int32(2), p.GetVirtualCores())
	require.Len(t, p.GetResourceValueMap(), 1, "memory and vcores travel in fields 1 and 2 only")
	assert.Equal(t, ResourceGPU, p.GetResourceValueMap()[0].GetKey())
	assert.Equal(t, "", p.GetResourceValueMap()[0].GetUnits())
	assert.Equal(t, r, resourceFromProto(p, types))

	// What Hadoop's ResourcePBImpl sends: every type in the map, memory and vcores included.
	in := &yarnpb.ResourceProto{
		Memory: proto.Int64(1024), VirtualCores: proto.Int32(1),
		ResourceValueMap: []*yarnpb.ResourceInformationProto{
			{Key: proto.String(ResourceMemory), Value: proto.Int64(1024), Units: proto.String("Mi")},
			{Key: proto.String(ResourceVCores), Value: proto.Int64(1), Units: proto.String("")},
			{Key: proto.String(ResourceGPU), Value: proto.Int64(4), Units: proto.String("")},
			{Key: proto.String("example.com/mem"), Value: proto.Int64(2), Units: proto.String("Gi")},
		},
	}
	assert.Equal(t, Resource{MemoryMB: 1024, VCores: 1, Extended: map[string]int64{ResourceGPU: 4, "example.com/mem": 2048}},
		resourceFromProto(in, types))

	_, err = resourceProto(Resource{VCores: 1 << 40}, types)
	assert.Error(t, err)
	assert.Equal(t, "memory-mb=2048,vcores=2,yarn.io/gpu=1", r.String())
	assert.Equal(t, int64(1), r.Get(ResourceGPU))
	assert.Equal(t, int64(2048), r.Get(ResourceMemory))
}
