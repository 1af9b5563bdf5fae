package profile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/boundedfile"
	"github.com/yarn-er/yarn-er/records"
)

// YARN resource profiles (Hadoop 3.1+): the ResourceManager reads named resource vectors from a
// JSON file when profiles are enabled, and hands them to every ApplicationMaster at registration.
const (
	KeyProfilesEnabled  = "yarn.resourcemanager.resource-profiles.enabled"
	KeyProfilesFile     = "yarn.resourcemanager.resource-profiles.source-file"
	DefaultProfilesFile = "resource-profiles.json"
	// DefaultProfile is the profile every profiles file must have.
	DefaultProfile = "default"
	// maxProfilesFile bounds the file read.
	maxProfilesFile = 1 << 20
)

// ResourceProfiles are the profiles of a resource-profiles.json, each in its types' units.
type ResourceProfiles struct {
	// Path is the file they were read from.
	Path     string
	profiles map[string]records.Resources
}

// Names returns the profiles' names, sorted.
func (p *ResourceProfiles) Names() []string { return slices.Sorted(maps.Keys(p.profiles)) }

// Get returns a profile's vector.
func (p *ResourceProfiles) Get(name string) (records.Resources, bool) {
	v, ok := p.profiles[name]
	return v, ok
}

// Smallest returns the smallest profile that holds v (every resource of v at most the profile's,
// units converted; a resource the profile lacks holds nothing), ordered by memory-mb, then
// vcores, then name; ok is false when none does.
func (p *ResourceProfiles) Smallest(v records.Resources) (string, bool) {
	var fits []string
	for _, name := range p.Names() {
		if holds(p.profiles[name], v) {
			fits = append(fits, name)
		}
	}
	if len(fits) == 0 {
		return "", false
	}
	slices.SortStableFunc(fits, func(a, b string) int {
		pa, pb := p.profiles[a], p.profiles[b]
		return cmp.Or(cmp.Compare(pa.Value(records.MemoryMB), pb.Value(records.MemoryMB)),
			cmp.Compare(pa.Value(records.VCores), pb.Value(records.VCores)))
	})
	return fits[0], true
}

// holds reports whether every resource of v is at most profile's.
func holds(profile, v records.Resources) bool {
	for _, r := range v.All() {
		if r.Value == 0 {
			continue
		}
		have, ok := profile.Quantity(r.Name)
		if !ok {
			return false
		}
		if c, err := r.Quantity().Cmp(have); err != nil || c > 0 {
			return false
		}
	}
	return true
}

// ErrProfiles matches every *ProfilesError.
var ErrProfiles = errors.New("resource profiles")

// ProfilesError is a profiles file the ResourceManager would refuse (it does not start).
type ProfilesError struct {
	Path    string
	Profile string // "" for the file as a whole
	Key     string
	Msg     string
	Fix     string
}

func (e *ProfilesError) Error() string {
	where := e.Path
	if e.Profile != "" {
		where += ": profile " + e.Profile
	}
	if e.Key != "" {
		where += ": " + e.Key
	}
	msg := where + ": " + e.Msg
	if e.Fix != "" {
		msg += " (fix: " + e.Fix + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrProfiles) true.
func (e *ProfilesError) Is(target error) bool { return target == ErrProfiles }

// ProfilesEnabled reports yarn.resourcemanager.resource-profiles.enabled.
func ProfilesEnabled(hc *conf.HadoopConfig) bool {
	return hc != nil && hc.GetBool(KeyProfilesEnabled, false)
}

// ProfilesPath is where the ResourceManager finds its profiles file: the source-file setting (default
// resource-profiles.json), looked up on its classpath first, which holds the configuration
// directory: a relative name is taken in hc's directory.
func ProfilesPath(hc *conf.HadoopConfig) string {
	name := strings.TrimSpace(hc.Get(KeyProfilesFile))
	if name == "" {
		name = DefaultProfilesFile
	}
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(hc.Dir(), name)
}

// LoadResourceProfiles reads the ResourceManager's profiles when hc enables them (nil, nil when
// it does not), checking them as ResourceProfilesManagerImpl does: a JSON object of profiles, each
// an object of resource name → amount (a number in the type's unit, or a string with one of
// Hadoop's units), every profile with memory-mb and vcores, a "default" profile, no "minimum" or
// "maximum" (they come from the resource types), and only declared types.
func LoadResourceProfiles(hc *conf.HadoopConfig, types *ResourceTypes) (*ResourceProfiles, error) {
	if !ProfilesEnabled(hc) {
		return nil, nil
	}
	path := ProfilesPath(hc)
	data, err := boundedfile.Read(path, maxProfilesFile)
	if err != nil {
		return nil, &ProfilesError{Path: path, Msg: err.Error(),
			Fix: fmt.Sprintf("put the ResourceManager's %s there (or set %s), or set %s=false", DefaultProfilesFile, KeyProfilesFile, KeyProfilesEnabled)}
	}
	return ParseResourceProfiles(path, data, types)
}

// ParseResourceProfiles parses a profiles file (see LoadResourceProfiles); path names it in errors.
func ParseResourceProfiles(path string, data []byte, types *ResourceTypes) (*ResourceProfiles, error) {
	if types == nil {
		types = DefaultResourceTypes()
	}
	bad := func(profile, key, fix, format string, args ...any) error {
		return &ProfilesError{Path: path, Profile: profile, Key: key, Msg: fmt.Sprintf(format, args...), Fix: fix}
	}
	var raw map[string]map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, bad("", "", `write {"default": {"memory-mb": 1024, "vcores": 1}, ...}`, "not a JSON object of profiles: %v", err)
	}
	out := &ResourceProfiles{Path: path, profiles: map[string]records.Resources{}}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		switch name {
		case "minimum", "maximum":
			return nil, bad(name, "", "remove it: the minimum and maximum come from the resource types' minimum and maximum allocation",
				"%q is not allowed (the ResourceManager refuses the file)", name)
		}
		var v records.Resources
		for _, key := range slices.Sorted(maps.Keys(raw[name])) {
			rt, ok := types.Lookup(key)
			if !ok {
				return nil, bad(name, key, fmt.Sprintf("declare %s in yarn.resource-types (resource-types.xml), or remove it from the profile", key),
					"resource type %q is not declared", key)
			}
			q, err := profileAmount(raw[name][key])
			if err != nil {
				return nil, bad(name, key, "give a whole number in the type's unit, or a string with a unit such as \"4Gi\"", "%v", err)
			}
			val := q.Value
			if q.Units != "" && q.Units != rt.Units {
				if val, err = records.Convert(q.Units, rt.Units, q.Value); err != nil {
					return nil, bad(name, key, "use a unit of the type's kind", "%s%s in %q: %v", fmtInt(q.Value), q.Units, rt.Units, err)
				}
			}
			v.Set(key, records.Quantity{Value: val, Units: rt.Units})
		}
		for _, must := range []string{records.MemoryMB, records.VCores} {
			if _, ok := v.Quantity(must); !ok {
				return nil, bad(name, must, fmt.Sprintf("add %q to the profile", must), "missing: every profile needs memory-mb and vcores")
			}
		}
		out.profiles[name] = v
	}
	if _, ok := out.profiles[DefaultProfile]; !ok {
		return nil, bad("", "", `add a "default" profile`, "no %q profile: the ResourceManager requires one", DefaultProfile)
	}
	return out, nil
}

func fmtInt(v int64) string { return fmt.Sprint(v) }

// profileAmount reads an amount: a JSON number (in the type's unit) or a string with a unit.
func profileAmount(raw json.RawMessage) (records.Quantity, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return records.ParseQuantity(strings.TrimSpace(s))
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return records.Quantity{}, fmt.Errorf("%s is not an amount", raw)
	}
	v, err := n.Int64()
	if err != nil || v < 0 {
		return records.Quantity{}, fmt.Errorf("%s is not a whole number of 0 or more", n)
	}
	return records.Quantity{Value: v}, nil
}
