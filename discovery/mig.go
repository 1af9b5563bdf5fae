package discovery

import (
	"fmt"
	"strings"
)

// MIGProfileOfName returns the MIG profile a resource name asks for: "1g.10gb" for
// "nvidia.com/mig-1g.10gb" or "mig-1g.10gb" (the name part after the last '/' starting with
// "mig-", any case), "" for any other name.
func MIGProfileOfName(name string) string {
	name = strings.TrimSpace(name)
	local := name[strings.LastIndex(name, "/")+1:]
	if len(local) <= 4 || !strings.EqualFold(local[:4], "mig-") {
		return ""
	}
	return strings.ToLower(local[4:])
}

// migProfileOfModel returns the profile in a MIG device's name as NVML and nvidia-smi give it
// ("NVIDIA A100-SXM4-40GB MIG 1g.5gb" → "1g.5gb"), "" when the name has none.
func migProfileOfModel(model string) string {
	i := strings.LastIndex(model, " MIG ")
	if i < 0 {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(model[i+len(" MIG "):]))
}

// filterKind keeps the devices a request of kind (and, for KindMIG, profile) may have, and
// returns the others with the reason:
//   - KindMIG: MIG slices only, of the profile when one is given (every slice is its own
//     device with its own MIG- UUID);
//   - KindGPU: whole GPUs; MIG slices too on a host without any whole GPU (slices offered as
//     yarn.io/gpu, one per "GPU", by an nvidia-smi wrapper), never on a host with both, where
//     yarn.io/gpu counts the whole GPUs and the slices are a resource type of their own;
//   - other kinds: everything (the vendor chains already keep to their kind).
func filterKind(devs []Device, kind Kind, profile string) (kept []Device, skipped []SkippedDevice) {
	switch kind {
	case KindMIG:
		for _, d := range devs {
			switch {
			case d.Kind != KindMIG:
				skipped = append(skipped, SkippedDevice{ID: d.ID, Reason: "not a MIG slice (a MIG resource type asks for slices only)"})
			case profile != "" && d.migProfile() != profile:
				skipped = append(skipped, SkippedDevice{ID: d.ID, Reason: fmt.Sprintf("a MIG %s slice, not %s", orUnknown(d.migProfile()), profile)})
			default:
				kept = append(kept, d)
			}
		}
		return kept, skipped
	case KindGPU:
		whole := false
		for _, d := range devs {
			whole = whole || d.Kind == KindGPU
		}
		if !whole {
			return devs, nil
		}
		for _, d := range devs {
			if d.Kind == KindMIG {
				skipped = append(skipped, SkippedDevice{ID: d.ID, Reason: "a MIG slice, and this host has whole GPUs, which gpu asks for: ask for its MIG resource type (nvidia.com/mig-" + orUnknown(d.migProfile()) + ")"})
				continue
			}
			kept = append(kept, d)
		}
		return kept, skipped
	}
	return devs, nil
}

// migProfile is the device's MIG profile ("" when not a slice or not known).
func (d Device) migProfile() string {
	if d.MIG == nil {
		return ""
	}
	if d.MIG.Profile != "" {
		return strings.ToLower(d.MIG.Profile)
	}
	return migProfileOfModel(d.Model)
}

func orUnknown(s string) string {
	if s == "" {
		return "<profile>"
	}
	return s
}
