package yarn

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/yarn-er/yarn-er/records"
)

// Resources maps a resource name (Memory, VCores, GPU, "nvidia.com/gpu", ...) to its quantity.
// Memory and vcores are entries like any other, so code treats every type the same way. A nil
// Resources is empty.
type Resources map[string]records.Quantity

// Value returns the amount of name in its own units, 0 when absent.
func (r Resources) Value(name string) int64 { return r[name].Value }

// Has reports whether name is present with a value above zero.
func (r Resources) Has(name string) bool { return r[name].Value > 0 }

// Names returns the resource names: Memory and VCores first (when present), then the rest sorted.
func (r Resources) Names() []string {
	names := make([]string, 0, len(r))
	for _, n := range []string{records.MemoryMB, records.VCores} {
		if _, ok := r[n]; ok {
			names = append(names, n)
		}
	}
	rest := make([]string, 0, len(r))
	for n := range r {
		if n != records.MemoryMB && n != records.VCores {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// Values returns name → value in each resource's own units.
func (r Resources) Values() map[string]int64 {
	m := make(map[string]int64, len(r))
	for n, q := range r {
		m[n] = q.Value
	}
	return m
}

// Add returns r + o per resource name. A name present in one of them only is kept as is. Units
// that differ are converted to r's unit (rounding toward zero); a sum beyond int64 saturates at
// math.MaxInt64, Hadoop's "unbounded".
func (r Resources) Add(o Resources) (Resources, error) {
	out := make(Resources, max(len(r), len(o)))
	for n, q := range r {
		out[n] = q
	}
	for n, q := range o {
		cur, ok := out[n]
		if !ok {
			out[n] = q
			continue
		}
		v, _, err := q.In(cur.Units)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", n, err)
		}
		out[n] = records.Quantity{Value: saturatingAdd(cur.Value, v), Units: cur.Units}
	}
	return out, nil
}

func saturatingAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// ResourceInformation is one entry of a Hadoop ResourceInfo's resourceInformations list. Inside a
// node's or an application's resource MinimumAllocation and MaximumAllocation are the type's
// defaults (0 and 9223372036854775807), not limits: compare Value only.
type ResourceInformation struct {
	Name              string
	ResourceType      string // COUNTABLE
	Units             string
	Value             int64
	MinimumAllocation int64
	MaximumAllocation int64
	Tags              []string
	Attributes        map[string]string
}

// resourceInfoJSON is Hadoop's dao.ResourceInfo: {"memory": 8192, "vCores": 8,
// "resourceInformations": {"resourceInformation": [...]}}. Parents hold it by pointer: nil when
// the field is missing or null.
type resourceInfoJSON struct {
	Memory               *jsonInt64               `json:"memory"`
	VCores               *jsonInt64               `json:"vCores"`
	ResourceInformations resourceInformationsJSON `json:"resourceInformations"`
}

// resourceInformationsJSON accepts {"resourceInformation": [...]} and {"resourceInformation": {...}}
// (Jersey 1 and 2), a bare array of entries, a single entry, and null.
type resourceInformationsJSON []resourceInformationJSON

// UnmarshalJSON implements json.Unmarshaler in one pass over the wrapper object.
func (r *resourceInformationsJSON) UnmarshalJSON(b []byte) error {
	switch firstByte(b) {
	case '{':
		// Either the wrapper or, without it, a single entry: decode both views at once.
		var w struct {
			ResourceInformation list[resourceInformationJSON] `json:"resourceInformation"`
			resourceInformationJSON
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return fmt.Errorf("resourceInformations: %w", err)
		}
		switch {
		case w.ResourceInformation != nil:
			*r = resourceInformationsJSON(w.ResourceInformation)
		case w.Name != "":
			*r = resourceInformationsJSON{w.resourceInformationJSON}
		default:
			*r = nil
		}
		return nil
	case '[':
		var items []resourceInformationJSON
		if err := json.Unmarshal(b, &items); err != nil {
			return fmt.Errorf("resourceInformations: %w", err)
		}
		*r = items
		return nil
	}
	if isNull(b) {
		*r = nil
		return nil
	}
	return fmt.Errorf("resourceInformations: expected an object or a list, got %.20s", b)
}

type resourceInformationJSON struct {
	Name              jsonString   `json:"name"`
	ResourceType      jsonString   `json:"resourceType"`
	Units             jsonString   `json:"units"`
	Value             jsonInt64    `json:"value"`
	MinimumAllocation jsonInt64    `json:"minimumAllocation"`
	MaximumAllocation jsonInt64    `json:"maximumAllocation"`
	Tags              list[string] `json:"tags"`
	Attributes        entryList    `json:"attributes"`
}

// resources converts the decoded object into Resources. Memory and vcores come from
// resourceInformations when listed there, else from the legacy memory and vCores fields.
func (r *resourceInfoJSON) resources() (Resources, error) {
	if r == nil {
		return nil, nil
	}
	out := make(Resources, 2+len(r.ResourceInformations))
	for i, ri := range r.ResourceInformations {
		name := string(ri.Name)
		if name == "" {
			return nil, fmt.Errorf("%w: resourceInformation #%d has no name", ErrUnexpectedResponse, i+1)
		}
		out[name] = records.Quantity{Value: int64(ri.Value), Units: string(ri.Units)}
	}
	if _, ok := out[records.MemoryMB]; !ok && r.Memory != nil {
		out[records.MemoryMB] = records.Quantity{Value: int64(*r.Memory), Units: records.MemoryUnits}
	}
	if _, ok := out[records.VCores]; !ok && r.VCores != nil {
		out[records.VCores] = records.Quantity{Value: int64(*r.VCores)}
	}
	return out, nil
}

// information returns every resourceInformation entry in the RM's order.
func (r *resourceInfoJSON) information() ([]ResourceInformation, error) {
	if r == nil {
		return nil, nil
	}
	out := make([]ResourceInformation, 0, len(r.ResourceInformations))
	for _, ri := range r.ResourceInformations {
		attrs, err := ri.Attributes.stringMap()
		if err != nil {
			return nil, fmt.Errorf("%w: resource %s attributes: %w", ErrUnexpectedResponse, ri.Name, err)
		}
		out = append(out, ResourceInformation{
			Name:              string(ri.Name),
			ResourceType:      string(ri.ResourceType),
			Units:             string(ri.Units),
			Value:             int64(ri.Value),
			MinimumAllocation: int64(ri.MinimumAllocation),
			MaximumAllocation: int64(ri.MaximumAllocation),
			Tags:              []string(ri.Tags),
			Attributes:        attrs,
		})
	}
	return out, nil
}

// DecodeResource decodes one Hadoop ResourceInfo JSON object ({"memory": ..., "vCores": ...,
// "resourceInformations": ...}) into Resources. null decodes to nil. It is what every endpoint
// uses for its resource fields; it is exported for tools that read saved RM responses.
func DecodeResource(data []byte) (Resources, error) {
	var r *resourceInfoJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, unexpected("decode resource", err)
	}
	return r.resources()
}
