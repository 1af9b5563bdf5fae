package yarn

import (
	"encoding/json"
	"fmt"

	"github.com/yarn-er/yarn-er/records"
)

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

// resources converts the decoded object into a resource vector in the RM's order (memory-mb and
// vcores first). Memory and vcores come from resourceInformations when listed there, else from the
// legacy memory and vCores fields. A missing object is the empty vector.
func (r *resourceInfoJSON) resources() (records.Resources, error) {
	var out records.Resources
	if r == nil {
		return out, nil
	}
	for i, ri := range r.ResourceInformations {
		name := intern(string(ri.Name))
		if name == "" {
			return records.Resources{}, fmt.Errorf("%w: resourceInformation #%d has no name", ErrUnexpectedResponse, i+1)
		}
		out.Set(name, records.Quantity{Value: int64(ri.Value), Units: intern(string(ri.Units))})
	}
	if _, ok := out.Get(records.MemoryMB); !ok && r.Memory != nil {
		out.Set(records.MemoryMB, records.Quantity{Value: int64(*r.Memory), Units: records.MemoryUnits})
	}
	if _, ok := out.Get(records.VCores); !ok && r.VCores != nil {
		out.Set(records.VCores, records.Quantity{Value: int64(*r.VCores)})
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
// "resourceInformations": ...}) into a resource vector. null decodes to the empty vector. It is
// what every endpoint uses for its resource fields; it is exported for tools that read saved RM
// responses.
func DecodeResource(data []byte) (records.Resources, error) {
	var r *resourceInfoJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return records.Resources{}, unexpected("decode resource", err)
	}
	return r.resources()
}
