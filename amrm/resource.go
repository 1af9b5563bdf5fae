package amrm

import (
	"fmt"
	"math"
	"slices"

	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/records"
)

// ResourceType is a resource type the ResourceManager knows, from its registration response.
type ResourceType struct {
	Name  string
	Units string
	// Type is the resource type's kind; COUNTABLE is the only one Hadoop defines.
	Type string
}

// wireUnits returns the unit a type travels in: Mi for memory-mb, none for vcores, else the
// registered type's.
func wireUnits(name string, types map[string]ResourceType) string {
	switch name {
	case records.MemoryMB:
		return records.MemoryUnits
	case records.VCores:
		return ""
	}
	return types[name].Units
}

// resourceProto encodes r, each amount converted to its wire unit (memory in Mi, other types in
// their registered type's unit).
func resourceProto(r records.Resources, types map[string]ResourceType) (*yarnpb.ResourceProto, error) {
	in := func(name string) (int64, error) {
		q, ok := r.Quantity(name)
		if !ok {
			return 0, nil
		}
		v, _, err := q.In(wireUnits(name, types))
		if err != nil {
			return 0, fmt.Errorf("amrm: resource %s in %s: %w", name, r, err)
		}
		return v, nil
	}
	mem, err := in(records.MemoryMB)
	if err != nil {
		return nil, err
	}
	vcores, err := in(records.VCores)
	if err != nil {
		return nil, err
	}
	if vcores > math.MaxInt32 || vcores < 0 || mem < 0 {
		return nil, fmt.Errorf("amrm: resource %s out of range", r)
	}
	p := &yarnpb.ResourceProto{Memory: proto.Int64(mem), VirtualCores: proto.Int32(int32(vcores))}
	var names []string
	for _, e := range r.All() {
		if e.Name != records.MemoryMB && e.Name != records.VCores {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		v, err := in(k)
		if err != nil {
			return nil, err
		}
		p.ResourceValueMap = append(p.ResourceValueMap, &yarnpb.ResourceInformationProto{
			Key:   proto.String(k),
			Value: proto.Int64(v),
			Units: proto.String(types[k].Units),
			Type:  yarnpb.ResourceTypesProto_COUNTABLE.Enum(),
		})
	}
	return p, nil
}

// resourceFromProto decodes p: memory-mb (Mi) and vcores, then the other types in the RM's order,
// each converted to its registered type's unit (an amount that does not convert, or of a type not
// registered, keeps the unit it came in). A missing proto is the empty vector.
func resourceFromProto(p *yarnpb.ResourceProto, types map[string]ResourceType) records.Resources {
	if p == nil {
		return records.Resources{}
	}
	r := records.NewResources(p.GetMemory(), int64(p.GetVirtualCores()))
	for _, e := range p.GetResourceValueMap() {
		k := e.GetKey()
		if k == records.MemoryMB || k == records.VCores {
			continue // carried by fields 1 and 2
		}
		q := records.Quantity{Value: e.GetValue(), Units: e.GetUnits()}
		if t, ok := types[k]; ok {
			if e.Units == nil {
				q.Units = t.Units
			} else if v, err := records.Convert(q.Units, t.Units, q.Value); err == nil {
				q = records.Quantity{Value: v, Units: t.Units}
			}
		}
		r.Set(k, q)
	}
	return r
}
