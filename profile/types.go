package profile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
)

// Hadoop configuration keys read by LoadResourceTypes and LoadNodeResources.
const (
	// KeyResourceTypes is the comma-separated list of extra resource types.
	KeyResourceTypes = "yarn.resource-types"
	// resourceTypesPrefix starts every per-type key: yarn.resource-types.<r>.units and so on.
	resourceTypesPrefix = KeyResourceTypes + "."

	suffixUnits   = ".units"
	suffixType    = ".type"
	suffixTags    = ".tags"
	suffixMinimum = ".minimum-allocation"
	suffixMaximum = ".maximum-allocation"

	// KeySchedulerMinimumMB and the three keys after it are the scheduler's limits for the
	// mandatory types, overridden by yarn.resource-types.{memory-mb,vcores}.{minimum,maximum}-allocation.
	KeySchedulerMinimumMB     = "yarn.scheduler.minimum-allocation-mb"
	KeySchedulerMaximumMB     = "yarn.scheduler.maximum-allocation-mb"
	KeySchedulerMinimumVCores = "yarn.scheduler.minimum-allocation-vcores"
	KeySchedulerMaximumVCores = "yarn.scheduler.maximum-allocation-vcores"

	// CountableType is the only resource type kind Hadoop knows (ResourceTypes.COUNTABLE).
	CountableType = "COUNTABLE"
)

// Hadoop's defaults for the scheduler's allocation limits (YarnConfiguration).
const (
	DefaultMinimumMB     = 1024
	DefaultMaximumMB     = 8192
	DefaultMinimumVCores = 1
	DefaultMaximumVCores = 4
)

// ResourceType is a resource type the ResourceManager knows, as ResourceUtils builds it.
type ResourceType struct {
	// Name is the type's name, e.g. "yarn.io/gpu".
	Name string `json:"name"`
	// Units is the type's unit ("" for plain counts, "Mi" for memory-mb).
	Units string `json:"units"`
	// Type is the kind, always "COUNTABLE".
	Type string `json:"type"`
	// Minimum is the minimum allocation (requests are normalized up to it).
	Minimum int64 `json:"minimumAllocation"`
	// Maximum is the maximum allocation a single container may ask for.
	Maximum int64 `json:"maximumAllocation"`
	// Tags are the type's tags (yarn.resource-types.<r>.tags), e.g. system:csi-volume.
	Tags []string `json:"tags,omitempty"`
	// Source is where the type is declared (the yarn.resource-types property); zero for memory-mb and
	// vcores, which always exist.
	Source conf.Source `json:"-"`
	// MinimumSource and MaximumSource are where the allocation limits come from; zero for defaults.
	MinimumSource conf.Source `json:"-"`
	MaximumSource conf.Source `json:"-"`
}

// ResourceTypes is the set of resource types of a cluster: memory-mb and vcores first, then the
// declared types in the order yarn.resource-types lists them.
type ResourceTypes struct {
	types []ResourceType
	// fromConfig reports whether yarn.resource-types was read from a configuration (as opposed to
	// DefaultResourceTypes, which knows nothing about the cluster).
	fromConfig bool
}

// DefaultResourceTypes returns the types every cluster has, with Hadoop's default limits:
// memory-mb (Mi, 1024..8192) and vcores (1..4).
func DefaultResourceTypes() *ResourceTypes {
	return &ResourceTypes{types: []ResourceType{
		{Name: records.MemoryMB, Units: records.MemoryUnits, Type: CountableType, Minimum: DefaultMinimumMB, Maximum: DefaultMaximumMB},
		{Name: records.VCores, Units: "", Type: CountableType, Minimum: DefaultMinimumVCores, Maximum: DefaultMaximumVCores},
	}}
}

// All returns the types, memory-mb and vcores first.
func (t *ResourceTypes) All() []ResourceType {
	if t == nil {
		return nil
	}
	out := make([]ResourceType, len(t.types))
	for i, rt := range t.types {
		rt.Tags = append([]string(nil), rt.Tags...)
		out[i] = rt
	}
	return out
}

// Names returns the type names, memory-mb and vcores first.
func (t *ResourceTypes) Names() []string {
	if t == nil {
		return nil
	}
	out := make([]string, len(t.types))
	for i := range t.types {
		out[i] = t.types[i].Name
	}
	return out
}

// Lookup returns the type called name.
func (t *ResourceTypes) Lookup(name string) (ResourceType, bool) {
	if t == nil {
		return ResourceType{}, false
	}
	for _, rt := range t.types {
		if rt.Name == name {
			rt.Tags = append([]string(nil), rt.Tags...)
			return rt, true
		}
	}
	return ResourceType{}, false
}

// FromConfig reports whether the types were read from a Hadoop configuration (LoadResourceTypes with
// a non-nil configuration) rather than being the defaults.
func (t *ResourceTypes) FromConfig() bool { return t != nil && t.fromConfig }

// hadoopGetStrings splits a list value as Hadoop's older Configuration.getStrings does (a
// StringTokenizer on ','): no trimming, empty items skipped.
func hadoopGetStrings(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// LoadResourceTypes builds the resource types from a Hadoop configuration the way the
// ResourceManager's ResourceUtils does (checked against Hadoop 3.5.0), and reports every problem it
// finds instead of stopping at the first. A nil configuration gives DefaultResourceTypes and no
// problems.
//
// Read: yarn.resource-types (trimmed comma list, as getTrimmedStrings splits it), and per type
// yarn.resource-types.<r>.units (default ""), .type (default COUNTABLE, the only kind),
// .minimum-allocation (default 0), .maximum-allocation (default 2^63-1) and .tags. memory-mb and
// vcores take their limits from yarn.resource-types.{memory-mb,vcores}.{minimum,maximum}-allocation
// when set (and not -1), else from yarn.scheduler.{minimum,maximum}-allocation-{mb,vcores}
// (defaults 1024, 8192, 1, 4).
//
// Errors (the ResourceManager would refuse to start, or no request could fit): an empty item, a
// name breaking Hadoop's rule, a reserved name (memory, memory-mb, vcores), a name listed twice, an
// unknown unit or type, yarn.io/gpu or yarn.io/fpga with a unit, a non-numeric limit, a minimum above
// the maximum, and memory/vcores limits that are not positive. Warnings: blanks around names (older
// Hadoop releases do not trim them and fail), per-type keys for undeclared types, a negative
// minimum. Types with errors are left out of the result.
func LoadResourceTypes(hc *conf.HadoopConfig) (*ResourceTypes, []Problem) {
	if hc == nil {
		return DefaultResourceTypes(), nil
	}
	l := typeLoader{hc: hc}
	types := l.load()
	return &ResourceTypes{types: types, fromConfig: true}, l.problems
}

type typeLoader struct {
	problemList
	hc *conf.HadoopConfig
}

func (l *typeLoader) errorf(src conf.Source, key, fix, format string, args ...any) {
	l.add(SeverityError, CodeResourceTypesInvalid, src, key, fix, format, args...)
}

func (l *typeLoader) warnf(src conf.Source, key, fix, format string, args ...any) {
	l.add(SeverityWarning, CodeResourceTypesInvalid, src, key, fix, format, args...)
}

// getLong reads key like Configuration.getLong, reporting a bad number; ok is false when the key is
// absent or bad.
func (l *typeLoader) getLong(key string) (int64, conf.Source, bool) {
	p, found := l.hc.Lookup(key)
	if !found {
		return 0, conf.Source{}, false
	}
	v, err := parseHadoopLong(p.Value)
	if err != nil {
		l.errorf(p.Source, key, "give a whole number (decimal, or hexadecimal with 0x)",
			"java.lang.NumberFormatException: %v", err)
		return 0, p.Source, false
	}
	return v, p.Source, true
}

func (l *typeLoader) load() []ResourceType {
	mem := ResourceType{Name: records.MemoryMB, Units: records.MemoryUnits, Type: CountableType}
	cpu := ResourceType{Name: records.VCores, Units: "", Type: CountableType}
	mem.Minimum, mem.MinimumSource = l.mandatoryLimit(records.MemoryMB+suffixMinimum, KeySchedulerMinimumMB, DefaultMinimumMB)
	mem.Maximum, mem.MaximumSource = l.mandatoryLimit(records.MemoryMB+suffixMaximum, KeySchedulerMaximumMB, DefaultMaximumMB)
	cpu.Minimum, cpu.MinimumSource = l.mandatoryLimit(records.VCores+suffixMinimum, KeySchedulerMinimumVCores, DefaultMinimumVCores)
	cpu.Maximum, cpu.MaximumSource = l.mandatoryLimit(records.VCores+suffixMaximum, KeySchedulerMaximumVCores, DefaultMaximumVCores)
	l.checkMandatoryLimits(mem, "memory", KeySchedulerMinimumMB, KeySchedulerMaximumMB)
	l.checkMandatoryLimits(cpu, "vcores", KeySchedulerMinimumVCores, KeySchedulerMaximumVCores)
	out := []ResourceType{mem, cpu}

	listProp, listed := l.hc.Lookup(KeyResourceTypes)
	declared := map[string]bool{}
	if listed {
		names := conf.TrimmedStrings(listProp.Value)
		if item, found := untrimmedItem(hadoopGetStrings(listProp.Value)); found && len(names) > 0 {
			l.warnf(listProp.Source, KeyResourceTypes, "write the list without blanks or line breaks, e.g. yarn.io/gpu,yarn.io/fpga",
				"%q has blanks or line breaks around its names: Hadoop 3.5 trims them, but releases that read the list with getStrings (no trimming) take %q as a name and refuse to start",
				listProp.Value, item)
		}
		for _, name := range names {
			rt, ok := l.declaredType(name, listProp.Source, declared)
			declared[name] = true
			if ok {
				out = append(out, rt)
			}
		}
	}
	l.checkStrayKeys(declared)
	return out
}

// untrimmedItem returns the first item with blanks around it or a line break in it.
func untrimmedItem(items []string) (string, bool) {
	for _, it := range items {
		if conf.JavaTrim(it) != it || strings.Contains(it, "\n") {
			return it, true
		}
	}
	return "", false
}

// mandatoryLimit mirrors ResourceUtils.getAllocation: the resource-types key unless absent or -1,
// else the scheduler key, else the default.
func (l *typeLoader) mandatoryLimit(typeKeySuffix, schedulerKey string, def int64) (int64, conf.Source) {
	if v, src, ok := l.getLong(resourceTypesPrefix + typeKeySuffix); ok && v != -1 {
		return v, src
	}
	if v, src, ok := l.getLong(schedulerKey); ok {
		return v, src
	}
	return def, conf.Source{}
}

// checkMandatoryLimits applies the scheduler's start-up check (min and max > 0, max >= min) with the
// CapacityScheduler's wording.
func (l *typeLoader) checkMandatoryLimits(rt ResourceType, what, minKey, maxKey string) {
	if rt.Minimum > 0 && rt.Maximum >= rt.Minimum {
		return
	}
	src := rt.MinimumSource
	if rt.Minimum > 0 && !rt.MaximumSource.IsZero() {
		src = rt.MaximumSource
	}
	l.errorf(src, "", fmt.Sprintf("set %s and %s (or yarn.resource-types.%s.minimum-allocation / maximum-allocation) to positive values with the minimum not above the maximum", minKey, maxKey, rt.Name),
		"Invalid resource scheduler %s allocation configuration, %s=%d, %s=%d, min and max should be greater than 0, max should be no smaller than min.",
		what, minKey, rt.Minimum, maxKey, rt.Maximum)
}

// declaredType reads one name of yarn.resource-types.
func (l *typeLoader) declaredType(name string, listSrc conf.Source, seen map[string]bool) (ResourceType, bool) {
	if name == "" {
		l.errorf(listSrc, KeyResourceTypes, "remove the empty item (a leading comma or two commas in a row) from yarn.resource-types",
			"Incomplete configuration for resource type ''. One of name, units or type is configured incorrectly.")
		return ResourceType{}, false
	}
	if seen[name] {
		// (its own keys were read, and any problem with them reported, where it is listed first)
		l.errorf(listSrc, KeyResourceTypes, fmt.Sprintf("list %s once in yarn.resource-types", name),
			"Error in config, key '%s' specified twice", name)
		return ResourceType{}, false
	}
	prefix := resourceTypesPrefix + name
	ok := true
	rt := ResourceType{Name: name, Units: "", Type: CountableType, Minimum: 0, Maximum: math.MaxInt64, Source: listSrc}
	unitsProp, hasUnits := l.hc.Lookup(prefix + suffixUnits)
	if hasUnits {
		rt.Units = unitsProp.Value
	}
	if p, found := l.hc.Lookup(prefix + suffixType); found {
		rt.Type = p.Value
		if rt.Type != CountableType {
			l.errorf(p.Source, p.Name, "set it to COUNTABLE (the only type) or remove it",
				"java.lang.IllegalArgumentException: No enum constant org.apache.hadoop.yarn.api.protocolrecords.ResourceTypes.%s", rt.Type)
			ok = false
		}
	}
	if v, src, found := l.getLong(prefix + suffixMinimum); found {
		rt.Minimum, rt.MinimumSource = v, src
	} else if !src.IsZero() {
		ok = false
	}
	if v, src, found := l.getLong(prefix + suffixMaximum); found {
		rt.Maximum, rt.MaximumSource = v, src
	} else if !src.IsZero() {
		ok = false
	}
	if p, found := l.hc.Lookup(prefix + suffixTags); found {
		rt.Tags = conf.TrimmedStrings(p.Value)
	}
	if err := records.ValidateResourceName(name); err != nil {
		l.errorf(listSrc, KeyResourceTypes, "rename the type: start with a letter, use letters, digits, '.', '_' or '-', with an optional name space such as yarn.io/ in front",
			"%s", err.Error())
		return ResourceType{}, false
	}
	if records.IsReservedName(name) {
		l.errorf(listSrc, KeyResourceTypes, fmt.Sprintf("remove %s from yarn.resource-types: memory-mb and vcores always exist; set their limits with yarn.scheduler.*-allocation-mb/-vcores", name),
			"Attempt to re-define mandatory resource '%s'.", name)
		return ResourceType{}, false
	}
	// Hadoop checks yarn.io/gpu and yarn.io/fpga against their built-in definition before it checks
	// that the unit exists.
	switch {
	case (name == records.GPU || name == records.FPGA) && ok && rt.Units != "":
		l.errorf(unitsProp.Source, unitsProp.Name, fmt.Sprintf("remove %s (or leave it empty): YARN counts %s devices without a unit", unitsProp.Name, name),
			"Defined mandatory resource type=%s inside resource-types.xml, however its type or unit is conflict to mandatory resource types, expected type=COUNTABLE, unit=; actual type=%s actual unit=%s",
			name, rt.Type, rt.Units)
		ok = false
	case !records.IsKnownUnit(rt.Units):
		l.errorf(unitsProp.Source, unitsProp.Name, "use one of Hadoop's units: p n u m k M G T P Ki Mi Gi Ti Pi, or leave it empty for plain counts",
			"%s", (&records.UnitError{Unit: rt.Units}).Error())
		ok = false
	}
	if ok && rt.Minimum > rt.Maximum {
		src := rt.MinimumSource
		if src.IsZero() {
			src = rt.MaximumSource
		}
		l.errorf(src, "", fmt.Sprintf("make %s%s at most %s%s", prefix, suffixMinimum, prefix, suffixMaximum),
			"minimum allocation %d of resource type '%s' is greater than its maximum allocation %d: no request for it can be satisfied",
			rt.Minimum, name, rt.Maximum)
		ok = false
	}
	if ok && rt.Minimum < 0 {
		l.warnf(rt.MinimumSource, prefix+suffixMinimum, "set it to 0 or more",
			"negative minimum allocation %d for resource type '%s'", rt.Minimum, name)
	}
	return rt, ok
}

// checkStrayKeys warns about yarn.resource-types.<r>.* keys that Hadoop ignores because <r> is not
// declared (memory-mb and vcores take only minimum/maximum-allocation).
func (l *typeLoader) checkStrayKeys(declared map[string]bool) {
	for _, p := range l.hc.WithPrefix(resourceTypesPrefix) {
		rest := strings.TrimPrefix(p.Name, resourceTypesPrefix)
		var name, suffix string
		for _, s := range []string{suffixUnits, suffixType, suffixTags, suffixMinimum, suffixMaximum} {
			if strings.HasSuffix(rest, s) {
				name, suffix = strings.TrimSuffix(rest, s), s
				break
			}
		}
		if name == "" || declared[name] {
			continue
		}
		if (name == records.MemoryMB || name == records.VCores) && (suffix == suffixMinimum || suffix == suffixMaximum) {
			continue
		}
		if name == records.MemoryMB || name == records.VCores {
			l.warnf(p.Source, p.Name, "remove it: memory-mb is always in Mi and vcores has no unit",
				"ignored by Hadoop: the unit and kind of the mandatory resource %s cannot be changed", name)
			continue
		}
		l.warnf(p.Source, p.Name, fmt.Sprintf("add %s to yarn.resource-types, or remove this property", name),
			"ignored by Hadoop: %s is not listed in yarn.resource-types", name)
	}
}

// NodeResource is a resource a NodeManager offers, as NodeManagerHardwareUtils computes it.
type NodeResource struct {
	// Name is the resource type.
	Name string `json:"name"`
	// Value is the amount in Units, after Hadoop's conversion to the type's unit.
	Value int64 `json:"value"`
	// Units is the type's unit.
	Units string `json:"units"`
	// Detected is true when the NodeManager measures the amount itself at start-up
	// (yarn.nodemanager.resource.detect-hardware-capabilities); Value is 0 then.
	Detected bool `json:"detected,omitempty"`
	// Source is where the amount is configured; zero for defaults.
	Source conf.Source `json:"-"`
}

// NodeManager keys read by LoadNodeResources.
const (
	// KeyNodeResourcePrefix starts yarn.nodemanager.resource-type.<r> keys.
	KeyNodeResourcePrefix = "yarn.nodemanager.resource-type."
	// KeyNodeMemoryMB is the memory offered for containers, in MiB (-1: default or detected).
	KeyNodeMemoryMB = "yarn.nodemanager.resource.memory-mb"
	// KeyNodeVCores is the number of vcores offered for containers (-1: default or detected).
	KeyNodeVCores = "yarn.nodemanager.resource.cpu-vcores"
	// KeyDetectHardware turns on the NodeManager's own measurement of memory and cores.
	KeyDetectHardware = "yarn.nodemanager.resource.detect-hardware-capabilities"
)

// Hadoop's NodeManager defaults when nothing is configured and detection is off.
const (
	DefaultNodeMemoryMB = 8192
	DefaultNodeVCores   = 8
)

// LoadNodeResources computes what a NodeManager with this configuration offers, as
// ResourceUtils.getNodeResourceInformation and NodeManagerHardwareUtils.getNodeResources do (checked
// against Hadoop 3.5.0): memory-mb from yarn.nodemanager.resource.memory-mb and vcores from
// yarn.nodemanager.resource.cpu-vcores (-1 or absent: measured when detect-hardware-capabilities is
// true, else 8192 and 8), and every yarn.nodemanager.resource-type.<r> = <value>[<unit>], converted
// to the unit the type declares (values without a unit are in the base unit "": 5 for a "Gi" type
// is 5 bytes, which Hadoop turns into 0).
//
// types gives the declared units; nil means LoadResourceTypes(hc). Errors (the NodeManager would not
// start): memory, memory-mb or vcores as a resource-type key, a value that is not <long><letters>, an
// unknown unit, an overflow, a type the ResourceManager does not declare (only when types come from a
// configuration). Warnings: a value that Hadoop's conversion truncates. The result lists memory-mb,
// vcores, then the other resources sorted by name; resources with errors are left out.
func LoadNodeResources(hc *conf.HadoopConfig, types *ResourceTypes) ([]NodeResource, []Problem) {
	if types == nil {
		types, _ = LoadResourceTypes(hc)
	}
	var found problemList
	add := found.add
	detect := hc.GetBool(KeyDetectHardware, false)
	mandatory := func(name, key, units string, def int64) NodeResource {
		nr := NodeResource{Name: name, Units: units, Value: def}
		p, ok := hc.Lookup(key)
		v := int64(-1)
		if ok {
			n, err := parseHadoopInt(p.Value)
			if err != nil {
				add(SeverityError, CodeNodeResourcesInvalid, p.Source, key, "give a whole number (-1 for the default)",
					"java.lang.NumberFormatException: %v", err)
			} else {
				v = n
				nr.Source = p.Source
			}
		}
		switch {
		case v == -1 && detect:
			nr.Value, nr.Detected, nr.Source = 0, true, conf.Source{}
		case v == -1:
			nr.Value, nr.Source = def, conf.Source{}
		case v <= 0:
			nr.Value = v
			add(SeverityWarning, CodeNodeResourcesInvalid, p.Source, key, "give a positive number, or -1 for the default",
				"%s=%d: the NodeManager offers no %s to containers", key, v, name)
		default:
			nr.Value = v
		}
		return nr
	}
	out := []NodeResource{
		mandatory(records.MemoryMB, KeyNodeMemoryMB, records.MemoryUnits, DefaultNodeMemoryMB),
		mandatory(records.VCores, KeyNodeVCores, "", DefaultNodeVCores),
	}
	for _, p := range hc.WithPrefix(KeyNodeResourcePrefix) {
		name := strings.TrimPrefix(p.Name, KeyNodeResourcePrefix)
		if records.IsReservedName(name) {
			add(SeverityError, CodeNodeResourcesInvalid, p.Source, p.Name,
				fmt.Sprintf("remove it and set %s or %s instead", KeyNodeMemoryMB, KeyNodeVCores),
				"Attempt to re-define mandatory resource '%s'.", name)
			continue
		}
		value, unit, err := parseNodeResourceValue(p.Value)
		if err != nil {
			add(SeverityError, CodeNodeResourcesInvalid, p.Source, p.Name, "write the amount as a whole number followed directly by an optional unit, e.g. 4 or 16Gi",
				"%s", err.Error())
			continue
		}
		rt, declared := types.Lookup(name)
		if !declared && types.FromConfig() {
			add(SeverityError, CodeResourceTypeUndeclared, p.Source, p.Name,
				fmt.Sprintf("add %s to yarn.resource-types (resource-types.xml) on the ResourceManager and NodeManagers, or remove this property", name),
				"resource type '%s' is not declared in yarn.resource-types: the NodeManager fails to start (ResourceNotFoundException)", name)
			continue
		}
		dest := rt.Units
		converted := value
		if unit != dest {
			converted, err = records.Convert(unit, dest, value)
			if err != nil {
				add(SeverityError, CodeNodeResourcesInvalid, p.Source, p.Name,
					fmt.Sprintf("use a smaller amount or a unit closer to the type's unit %q", dest), "%s", err.Error())
				continue
			}
			if c, cerr := records.Compare(unit, value, dest, converted); cerr == nil && c != 0 {
				add(SeverityWarning, CodeNodeResourcesInvalid, p.Source, p.Name,
					fmt.Sprintf("write the amount in the type's unit, e.g. %d%s", converted, dest),
					"%d%s becomes %d%s when Hadoop converts it to the unit of resource type '%s' (a value without unit is in the base unit)",
					value, unit, converted, dest, name)
			}
		}
		out = append(out, NodeResource{Name: name, Value: converted, Units: dest, Source: p.Source})
	}
	// WithPrefix is sorted by key, so the extra resources are sorted by name.
	return out, found.problems
}

// parseNodeResourceValue splits a NodeManager resource value like ResourceUtils.parseResourceValue
// and getValue: the unit starts at the first letter and must be letters only ("Units 'G1' contains
// non alphabet characters, which is not allowed."); the rest must be a Java long, with no blanks.
func parseNodeResourceValue(s string) (int64, string, error) {
	i := strings.IndexFunc(s, isJavaLetter)
	if i < 0 {
		i = len(s)
	}
	units := s[i:]
	if strings.IndexFunc(units, func(r rune) bool { return !isJavaLetter(r) }) >= 0 {
		return 0, "", fmt.Errorf("Units '%s' contains non alphabet characters, which is not allowed.", units)
	}
	v, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("java.lang.NumberFormatException: For input string: %q", s[:i])
	}
	if !records.IsKnownUnit(units) {
		return 0, "", &records.UnitError{Unit: units}
	}
	return v, units, nil
}
