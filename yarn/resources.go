package yarn

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/yarn-er/yarn-er/profile"
)

// Resource names YARN always knows (org.apache.hadoop.yarn.api.records.ResourceInformation). They
// are package profile's names, repeated here so that callers of the client need not import it.
const (
	// Memory is the memory resource, in Mi.
	Memory = profile.MemoryMB
	// VCores is the virtual-core resource, unit-less.
	VCores = profile.VCores
	// GPU is the name YARN's GPU plugin uses.
	GPU = profile.GPU
	// FPGA is the name YARN's FPGA plugin uses.
	FPGA = profile.FPGA
)

// Quantity is an amount of one resource type, in that type's unit as the RM reports it
// (Memory in "Mi", VCores and most devices in "", others in any Hadoop unit such as "k" or "Gi").
//
// Unit arithmetic is package profile's (profile.Convert, profile.Compare): exact, never through a
// float, and with Hadoop's error messages.
type Quantity struct {
	// Value is the amount in Units.
	Value int64
	// Units is the Hadoop unit of Value: "" or one of p n u m k M G T P Ki Mi Gi Ti Pi.
	Units string
}

// String renders the quantity as Hadoop writes one: the value followed by its unit ("4", "8192Mi").
func (q Quantity) String() string { return q.asProfile().String() }

// asProfile returns q as a profile.Quantity.
func (q Quantity) asProfile() profile.Quantity {
	return profile.Quantity{Value: q.Value, Unit: q.Units}
}

// ErrUnknownUnit is matched (errors.Is) by every error about a unit Hadoop does not know. It is
// profile.ErrUnknownUnit.
var ErrUnknownUnit = profile.ErrUnknownUnit

// ErrOverflow is matched (errors.Is) by every conversion whose result does not fit an int64. It is
// profile.ErrOverflow.
var ErrOverflow = profile.ErrOverflow

// Cmp compares q with o exactly, converting units: -1 when q < o, 0 when equal, +1 when q > o.
// It fails only for a unit Hadoop does not know (a *profile.UnitError); two quantities in the same
// unit compare by value whatever the unit, as the RM reported both.
func (q Quantity) Cmp(o Quantity) (int, error) {
	if q.Units == o.Units {
		return cmp.Compare(q.Value, o.Value), nil
	}
	return profile.Compare(q.Units, q.Value, o.Units, o.Value)
}

// In converts q to units. Like Hadoop's UnitsConversionUtil it rounds toward zero when the result
// is not whole; exact reports whether no rounding happened. A result beyond int64 is an error
// matching ErrOverflow, an unknown unit one matching ErrUnknownUnit. A quantity already in units
// is returned as is.
func (q Quantity) In(units string) (v int64, exact bool, err error) {
	if q.Units == units {
		return q.Value, true, nil
	}
	v, err = profile.Convert(q.Units, units, q.Value)
	switch {
	case errors.Is(err, profile.ErrOverflow):
		return 0, false, fmt.Errorf("converting %s to %q overflows a 64-bit integer: %w", q, units, err)
	case err != nil:
		return 0, false, err
	}
	// Convert truncates: the result is exact when it converts back to the same amount.
	c, err := profile.Compare(units, v, q.Units, q.Value)
	if err != nil {
		return 0, false, err
	}
	return v, c == 0, nil
}

// Resources maps a resource name (Memory, VCores, GPU, "nvidia.com/gpu", ...) to its quantity.
// Memory and vcores are entries like any other, so code treats every type the same way. A nil
// Resources is empty.
type Resources map[string]Quantity

// Value returns the amount of name in its own units, 0 when absent.
func (r Resources) Value(name string) int64 { return r[name].Value }

// Has reports whether name is present with a value above zero.
func (r Resources) Has(name string) bool { return r[name].Value > 0 }

// Names returns the resource names: Memory and VCores first (when present), then the rest sorted.
func (r Resources) Names() []string {
	names := make([]string, 0, len(r))
	for _, n := range []string{Memory, VCores} {
		if _, ok := r[n]; ok {
			names = append(names, n)
		}
	}
	rest := make([]string, 0, len(r))
	for n := range r {
		if n != Memory && n != VCores {
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
		out[n] = Quantity{Value: saturatingAdd(cur.Value, v), Units: cur.Units}
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
		out[name] = Quantity{Value: int64(ri.Value), Units: string(ri.Units)}
	}
	if _, ok := out[Memory]; !ok && r.Memory != nil {
		out[Memory] = Quantity{Value: int64(*r.Memory), Units: profile.MemoryUnits}
	}
	if _, ok := out[VCores]; !ok && r.VCores != nil {
		out[VCores] = Quantity{Value: int64(*r.VCores)}
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
