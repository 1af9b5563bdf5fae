package amrm

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

// Names of the built-in and common resource types.
const (
	ResourceMemory = "memory-mb"
	ResourceVCores = "vcores"
	ResourceGPU    = "yarn.io/gpu"
	ResourceFPGA   = "yarn.io/fpga"
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
	parts := []string{fmt.Sprintf("%s=%d", ResourceMemory, r.MemoryMB), fmt.Sprintf("%s=%d", ResourceVCores, r.VCores)}
	for _, k := range slices.Sorted(maps.Keys(r.Extended)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, r.Extended[k]))
	}
	return strings.Join(parts, ",")
}

// Get returns the value of a resource type by name (memory-mb and vcores included).
func (r Resource) Get(name string) int64 {
	switch name {
	case ResourceMemory:
		return r.MemoryMB
	case ResourceVCores:
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
		if k == ResourceMemory || k == ResourceVCores {
			continue // carried by fields 1 and 2
		}
		v := e.GetValue()
		if t, ok := types[k]; ok && e.Units != nil && e.GetUnits() != t.Units {
			if cv, err := convertUnits(e.GetUnits(), t.Units, v); err == nil {
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

// unitScale gives each Hadoop unit (UnitsConversionUtil) as numerator/denominator of the base unit.
var unitScale = map[string][2]int64{
	"p": {1, 1_000_000_000_000_000}, "n": {1, 1_000_000_000}, "u": {1, 1_000_000}, "m": {1, 1000},
	"": {1, 1}, "k": {1000, 1}, "M": {1_000_000, 1}, "G": {1_000_000_000, 1}, "T": {1_000_000_000_000, 1},
	"P": {1_000_000_000_000_000, 1}, "Ki": {1 << 10, 1}, "Mi": {1 << 20, 1}, "Gi": {1 << 30, 1},
	"Ti": {1 << 40, 1}, "Pi": {1 << 50, 1},
}

// convertUnits converts v between Hadoop units, truncating like Hadoop does.
func convertUnits(from, to string, v int64) (int64, error) {
	if from == to {
		return v, nil
	}
	f, ok1 := unitScale[from]
	t, ok2 := unitScale[to]
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("amrm: unknown unit in conversion from %q to %q", from, to)
	}
	num := new(big.Int).Mul(big.NewInt(v), new(big.Int).Mul(big.NewInt(f[0]), big.NewInt(t[1])))
	den := new(big.Int).Mul(big.NewInt(f[1]), big.NewInt(t[0]))
	q := new(big.Int).Quo(num, den)
	if !q.IsInt64() {
		return 0, fmt.Errorf("amrm: converting %d from %q to %q overflows int64", v, from, to)
	}
	return q.Int64(), nil
}
