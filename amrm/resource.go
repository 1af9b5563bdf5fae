package amrm

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/records"
)

// Resource is a YARN resource vector: memory in MiB, virtual cores, and other resource types by
// name (yarn.io/gpu, ...), each in the units the ResourceManager declared for the type.
type Resource struct {
	MemoryMB int64
	VCores   int64
	// Extended holds every other resource type, e.g. {"yarn.io/gpu": 1}.
	Extended map[string]int64
}

// String formats the resource like "memory-mb=1024,vcores=1,yarn.io/gpu=1".
func (r Resource) String() string {
	parts := []string{fmt.Sprintf("%s=%d", records.MemoryMB, r.MemoryMB), fmt.Sprintf("%s=%d", records.VCores, r.VCores)}
	for _, k := range slices.Sorted(maps.Keys(r.Extended)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, r.Extended[k]))
	}
	return strings.Join(parts, ",")
}

// Get returns the value of a resource type by name (memory-mb and vcores included).
func (r Resource) Get(name string) int64 {
	switch name {
	case records.MemoryMB:
		return r.MemoryMB
	case records.VCores:
		return r.VCores
	}
	return r.Extended[name]
}

func (r Resource) clone() Resource {
	r.Extended = maps.Clone(r.Extended)
	return r
}

// ResourceType is a resource type the ResourceManager knows, from its registration response.
type ResourceType struct {
	Name  string
	Units string
	// Type is the resource type's kind; COUNTABLE is the only one Hadoop defines.
	Type string
}

// resourceProto encodes r; extended values carry the units of their registered type.
func resourceProto(r Resource, types map[string]ResourceType) (*yarnpb.ResourceProto, error) {
	if r.VCores > math.MaxInt32 || r.VCores < 0 || r.MemoryMB < 0 {
		return nil, fmt.Errorf("amrm: resource %s out of range", r)
	}
	p := &yarnpb.ResourceProto{Memory: proto.Int64(r.MemoryMB), VirtualCores: proto.Int32(int32(r.VCores))}
	for _, k := range slices.Sorted(maps.Keys(r.Extended)) {
		p.ResourceValueMap = append(p.ResourceValueMap, &yarnpb.ResourceInformationProto{
			Key:   proto.String(k),
			Value: proto.Int64(r.Extended[k]),
			Units: proto.String(types[k].Units),
			Type:  yarnpb.ResourceTypesProto_COUNTABLE.Enum(),
		})
	}
	return p, nil
}

// resourceFromProto decodes p; extended values are converted to their registered type's units.
func resourceFromProto(p *yarnpb.ResourceProto, types map[string]ResourceType) Resource {
	r := Resource{MemoryMB: p.GetMemory(), VCores: int64(p.GetVirtualCores())}
	for _, e := range p.GetResourceValueMap() {
		k := e.GetKey()
		if k == records.MemoryMB || k == records.VCores {
			continue // carried by fields 1 and 2
		}
		v := e.GetValue()
		if t, ok := types[k]; ok && e.Units != nil && e.GetUnits() != t.Units {
			if cv, err := records.Convert(e.GetUnits(), t.Units, v); err == nil {
				v = cv
			}
		}
		if r.Extended == nil {
			r.Extended = map[string]int64{}
		}
		r.Extended[k] = v
	}
	return r
}
