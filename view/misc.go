package view

import (
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
)

// Translate is `yarn-er translate`: {"resource": {...}, "externalResources": [...], "warnings": [...]},
// plus (additions) "memory", the TaskManager's memory as Flink derives it, "rmRequest", the
// external resources as the ResourceManager reads them (with a Hadoop configuration), and
// "sources", where each value of "resource" comes from.
type Translate struct {
	Resource          records.Resources          `json:"resource"`
	ExternalResources []profile.ExternalResource `json:"externalResources"`
	Warnings          []string                   `json:"warnings"`
	Memory            *profile.TaskManagerMemory `json:"memory,omitempty"`
	RMRequest         []profile.RMResource       `json:"rmRequest,omitempty"`
	Sources           []ValueSource              `json:"sources"`
	// Profile is the smallest YARN resource profile that holds the container, when the Hadoop
	// configuration enables profiles (omitted otherwise).
	Profile *ProfileFit `json:"profile,omitempty"`
}

// ProfileFit is the smallest resource profile that holds a container.
type ProfileFit struct {
	// Name is the profile's name ("" when none holds the container); Resource its vector.
	Name     string            `json:"name"`
	Resource records.Resources `json:"resource"`
	// File is the profiles file; Profiles all its profile names.
	File     string   `json:"file"`
	Profiles []string `json:"profiles"`
}

// ValueSource says where one value of a resource vector comes from: the Flink key and its
// file:line or -D flag, or Flink's default.
type ValueSource struct {
	// Resource is the resource type, e.g. memory-mb.
	Resource string `json:"resource"`
	// Key is the Flink key the value comes from; "" for Flink's default.
	Key string `json:"key"`
	// Source is the key's "file:line" or "-D key"; "" for Flink's default.
	Source string `json:"source"`
	// Default is true when no key sets the value and Flink's default applies.
	Default bool `json:"default"`
}

// TranslateSources lists where each value of v comes from, in the vector's order.
func TranslateSources(v records.Resources, origins map[string]profile.Origin) []ValueSource {
	out := make([]ValueSource, 0, v.Len())
	for _, r := range v.All() {
		o := origins[r.Name]
		out = append(out, ValueSource{Resource: r.Name, Key: o.Key, Source: o.Source.String(), Default: o.Key == ""})
	}
	return out
}

// BuildInfo is `yarn-er version`: what this binary is.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// Discovery lists the device-discovery backends and whether this build has each.
	Discovery []DiscoveryBackend `json:"discovery"`
}

// DiscoveryBackend is one device-discovery backend (the names of `discover --backend`) as this build
// has it.
type DiscoveryBackend struct {
	Name string `json:"name"`
	// Available says whether this binary can use the backend at all.
	Available bool `json:"available"`
	// Build is how the backend is built in: "cgo" (NVML, libnvidia-ml.so.1 loaded at run time),
	// "go" (pure Go), or why it is unavailable, e.g. "unavailable (CGO_ENABLED=0 build)".
	Build string `json:"build"`
}

// Discover is `yarn-er discover --format json` and exec's --info-file: the devices chosen out of
// what discovery found.
type Discover struct {
	Name         string                    `json:"name"`
	Amount       int                       `json:"amount"`
	Vendor       discovery.Vendor          `json:"vendor"`
	Backend      string                    `json:"backend"`
	Devices      []discovery.Device        `json:"devices"`
	Available    int                       `json:"available"`
	Coordination *Coordination             `json:"coordination"`
	Skipped      []discovery.SkippedDevice `json:"skipped"`
	Probes       []discovery.ProbeResult   `json:"probes"`
	Warnings     []string                  `json:"warnings"`
	NVMLCompiled bool                      `json:"nvmlCompiled"`
}

// Coordination says where and for whom discover recorded the devices.
type Coordination struct {
	File     string          `json:"file"`
	Owner    discovery.Owner `json:"owner"`
	Released []string        `json:"released,omitempty"`
}
