package profile

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/javafmt"
	"github.com/yarn-er/yarn-er/records"
)

// Flink configuration keys read by Translate.
const (
	// KeyExternalResources lists the enabled external resources, separated by ';'.
	KeyExternalResources = "external-resources"
	// ExternalResourcePrefix starts every per-resource key: external-resource.<name>.<suffix>.
	ExternalResourcePrefix = "external-resource."
	// Per-resource key suffixes (after external-resource.<name>.).
	SuffixAmount              = "amount"
	SuffixYarnConfigKey       = "yarn.config-key"
	SuffixKubernetesConfigKey = "kubernetes.config-key"
	SuffixDriverFactoryClass  = "driver-factory.class"
	SuffixParamPrefix         = "param."

	// KeyProcessSize is the TaskManager's total process memory, the container's memory on YARN.
	KeyProcessSize = "taskmanager.memory.process.size"
	// KeyFlinkSize is the TaskManager's total Flink memory (the process size without JVM metaspace
	// and overhead).
	KeyFlinkSize = "taskmanager.memory.flink.size"
	// KeyCPUCores is the TaskManager's CPU cores (a double).
	KeyCPUCores = "taskmanager.cpu.cores"
	// KeyYarnVCores is Flink's YARN fallback for the vcores of a TaskManager container (default -1).
	KeyYarnVCores = "yarn.containers.vcores"
	// KeyTaskSlots is the number of slots per TaskManager (default 1), the last fallback for vcores.
	KeyTaskSlots = "taskmanager.numberOfTaskSlots"

	// noneResources is Flink's reserved value of external-resources meaning "no external resources".
	noneResources = "none"
)

// ExternalResource is one enabled Flink external resource.
type ExternalResource struct {
	// Name is the resource's name in external-resources.
	Name string `json:"name"`
	// Amount is external-resource.<name>.amount, per TaskManager.
	Amount int64 `json:"amount"`
	// YarnConfigKey is external-resource.<name>.yarn.config-key, the YARN resource type; "" means the
	// resource is not requested from YARN.
	YarnConfigKey string `json:"yarnConfigKey"`
	// KubernetesConfigKey is external-resource.<name>.kubernetes.config-key.
	KubernetesConfigKey string `json:"kubernetesConfigKey"`
	// DriverFactoryClass is external-resource.<name>.driver-factory.class.
	DriverFactoryClass string `json:"driverFactoryClass"`
	// Params are the external-resource.<name>.param.* values by the name after "param.", as the
	// driver sees them; never nil.
	Params map[string]string `json:"params"`
	// Source is where the amount is configured.
	Source conf.Source `json:"-"`
}

// Origin tells which configuration entry a value of the vector comes from.
type Origin struct {
	// Key is the Flink key, e.g. taskmanager.memory.process.size; "" for a default.
	Key string
	// Source is the entry's file:line or -D flag; zero for a default.
	Source conf.Source
}

// Translation is the YARN side of a Flink configuration: the resource vector of one TaskManager
// container and the enabled external resources.
type Translation struct {
	// Resource is the container's resource vector: memory-mb (left out when Flink's configuration
	// does not give the process size), vcores, then each external resource requested from YARN by its
	// yarn.config-key, in the order external-resources lists them.
	Resource records.Resources
	// Origins tells, for each entry of Resource, where its value comes from.
	Origins map[string]Origin
	// ExternalResources are the enabled external resources with a valid amount, in the order listed.
	ExternalResources []ExternalResource
	// RMRequest is each external resource of Resource as the ResourceManager reads it, in the
	// unit the cluster declares for its type; only with resource types from a configuration.
	RMRequest []RMResource
	// Memory is the TaskManager's memory as Flink derives it; nil when Flink would refuse the
	// configuration (the error is among Problems).
	Memory *TaskManagerMemory
	// Problems are the warnings and errors found, in the order found.
	Problems []Problem
}

// Warnings returns the problems of severity warning.
func (t *Translation) Warnings() []Problem { return Warnings(t.Problems) }

// TranslateOptions tunes Translate.
type TranslateOptions struct {
	// ResourceTypes are the cluster's resource types (LoadResourceTypes). When they come from a
	// configuration, each requested type they do not declare is a yarn.resource-type-undeclared
	// warning. nil: no such check.
	ResourceTypes *ResourceTypes
	// FlinkVersion selects Flink 1.x or 2.x rules where they differ (the TaskManager memory model);
	// FlinkVersionUnset means DefaultFlinkVersion of the configuration's files.
	FlinkVersion FlinkVersion
}

// Translate computes the YARN container a Flink TaskManager asks for, with Flink's semantics
// (ExternalResourceUtils, YarnWorkerResourceSpecFactory, TaskExecutorProcessSpecContainerResource-
// PriorityAdapter), checked against Flink's source:
//
//   - external-resources is split like any Flink list (';', trimmed, quoting); the exact value
//     "none" (a string, not a YAML sequence [none]) means no resources. Flink keeps the names in a
//     set: duplicates are merged (the first occurrence keeps its place) and empty items
//     ("gpu;;fpga") are ignored.
//   - external-resource.<name>.amount must be a Java long: missing or <= 0 is a warning and the
//     resource is ignored (as Flink ignores it); anything else ("2.5", "abc", 2^63) is an error, as
//     Flink fails on it ("Could not parse value ...").
//   - a blank external-resource.<name>.yarn.config-key is a warning: the resource is enabled for the
//     TaskManager but not requested from YARN. Two resources naming the same key are a warning: as
//     Flink, yarn-er requests only the last of them in Java HashSet order. A key that breaks
//     Hadoop's resource name rule (" yarn.io/gpu ") is an error, as Flink finds no such type on any
//     cluster; one naming memory, memory-mb or vcores is an error.
//   - a missing driver-factory.class is a warning; external-resource.<name>.* keys for names that
//     external-resources does not list are warnings.
//   - memory-mb is the TaskManager's total process size as Flink derives it (DeriveTaskManagerMemory:
//     the process size, the flink size, or task heap + managed memory, with every fraction, min and
//     max, and in Flink 1.x the legacy taskmanager.heap.size), in MiB rounded down as Flink's
//     MemorySize.getMebiBytes does (a warning says so when it is not a whole MiB). A memory
//     configuration Flink refuses is an error with Flink's reason, the keys and a fix.
//   - vcores is taskmanager.cpu.cores, else yarn.containers.vcores when > 0, else
//     taskmanager.numberOfTaskSlots (default 1), rounded up to a whole number as Flink does on YARN
//     (a warning says so); zero or negative is an error, as in Flink.
//
// Errors are returned joined (errors.Join of *conf.Error values naming file:line or -D flag, each
// with a fix, whose Err is a *CodedError); the returned Translation is then partial but its Problems
// hold everything found.
func Translate(fc *conf.FlinkConfig, opts TranslateOptions) (*Translation, error) {
	tr := &translator{fc: fc, out: &Translation{Origins: map[string]Origin{}}}
	version := opts.FlinkVersion
	if version == FlinkVersionUnset {
		version = DefaultFlinkVersion(fc.Files())
	}
	checkConfigFile(fc, version, &tr.problemList)
	tr.memory(version)
	tr.vcores()
	tr.externalResources(opts.ResourceTypes)
	if tr.out.ExternalResources == nil {
		tr.out.ExternalResources = []ExternalResource{}
	}
	tr.out.Problems = tr.problems
	return tr.out, joinErrors(tr.out.Problems)
}

type translator struct {
	problemList
	fc  *conf.FlinkConfig
	out *Translation
}

// value returns key's entry and the string Flink converts typed options from.
func (t *translator) value(key string) (conf.FlinkValue, string, bool) {
	v, ok := t.fc.Lookup(key)
	if !ok {
		return v, "", false
	}
	return v, t.fc.FlinkString(key), true
}

// parseFailed reports a value Flink cannot convert, with Flink's wording.
func (t *translator) parseFailed(code string, v conf.FlinkValue, text, fix string, cause error) {
	msg := fmt.Sprintf("Could not parse value '%s' for key '%s'.", text, v.Key)
	if cause != nil {
		msg += " " + cause.Error()
	}
	t.add(SeverityError, code, v.Source, v.Key, fix, "%s", msg)
}

func (t *translator) memory(v FlinkVersion) {
	mem, problems, ref := DeriveTaskManagerMemory(t.fc, v)
	t.problems = append(t.problems, problems...)
	if ref != nil {
		t.memoryRefused(ref)
		return
	}
	t.out.Memory = mem
	origin := t.memoryOrigin(mem)
	mib := mem.ContainerMB
	switch {
	case mib == 0:
		t.add(SeverityError, CodeMemoryInvalid, origin.Source, origin.Key, "give the TaskManager at least 1m, in practice 1g or more",
			"a process size of %d bytes is less than 1 MiB: YARN refuses a container request with memory-mb 0 (\"Invalid value for resource 'memory-mb'. Value cannot be 0(zero).\")", mem.TotalProcess)
		return
	case mib > math.MaxInt32:
		t.add(SeverityError, CodeMemoryInvalid, origin.Source, origin.Key, "give a realistic process size, e.g. 4g",
			"Value '%d' for resource memory is more than the maximum for an integer.", mib)
		return
	}
	if mem.TotalProcess%(1<<20) != 0 {
		t.add(SeverityWarning, CodeMemoryInvalid, origin.Source, origin.Key, fmt.Sprintf("configure a whole number of MiB, e.g. %s: %dm", KeyProcessSize, mib),
			"the TaskManager's process size, %d bytes, is not a whole number of MiB: Flink asks YARN for %d MiB (it rounds down)", mem.TotalProcess, mib)
	}
	t.out.Resource.Set(records.MemoryMB, records.Quantity{Value: mib, Units: records.MemoryUnits})
	t.out.Origins[records.MemoryMB] = origin
}

// memoryOrigin names the key memory-mb comes from: the process size when configured (or the legacy
// heap key mapped to it), else the key of the derivation path.
func (t *translator) memoryOrigin(mem *TaskManagerMemory) Origin {
	key := KeyProcessSize
	switch {
	case mem.LegacyHeapKey != "":
		key = mem.LegacyHeapKey
	case t.has(KeyProcessSize):
	case mem.DerivedFrom == MemoryFromFlinkSize:
		key = KeyFlinkSize
	case mem.DerivedFrom == MemoryFromFineGrained:
		key = KeyTaskHeap
	}
	v, _ := t.fc.Lookup(key)
	return Origin{Key: key, Source: v.Source}
}

func (t *translator) has(key string) bool {
	_, ok := t.fc.Lookup(key)
	return ok
}

// memoryRefused reports a memory configuration Flink refuses, naming the keys involved.
func (t *translator) memoryRefused(ref *MemoryRefusal) {
	var src conf.Source
	key := ""
	var parts []string
	for _, k := range ref.Keys {
		v, ok := t.fc.Lookup(k)
		if !ok {
			continue
		}
		if key == "" {
			key, src = k, v.Source
		}
		parts = append(parts, fmt.Sprintf("%s = %s (%s)", k, v.Value, v.Source))
	}
	if key == "" && len(ref.Keys) > 0 {
		key = ref.Keys[0]
	}
	msg := ref.FlinkMessage
	if ref.Detail != "" {
		msg += " (" + ref.Detail + ")"
	}
	if len(parts) > 0 {
		msg += " Configured: " + strings.Join(parts, ", ")
	}
	t.add(SeverityError, ref.Code, src, key, ref.Fix, "%s", msg)
}

// parseCPUKey looks key up and parses its Flink text with parse; set is false when key is not
// configured. A value that does not parse is reported as CodeCPUInvalid with fix and comes back
// with ok false.
func parseCPUKey[T int64 | float64](t *translator, key string, parse func(string) (T, error), fix string) (n T, origin Origin, set, ok bool) {
	v, text, set := t.value(key)
	if !set {
		return n, Origin{}, false, true
	}
	n, err := parse(text)
	if err != nil {
		t.parseFailed(CodeCPUInvalid, v, text, fix, err)
		return n, Origin{}, true, false
	}
	return n, Origin{Key: v.Key, Source: v.Source}, true, true
}

func (t *translator) vcores() {
	// Flink reads yarn.containers.vcores first (as the fallback) whether or not taskmanager.cpu.cores
	// is set, so a bad value fails either way.
	// An unset fallback is 0, which, like -1, means none.
	fallback, fbOrigin, _, ok := parseCPUKey(t, KeyYarnVCores, parseJavaInt,
		"set yarn.containers.vcores to a whole number of vcores, or remove it")
	if !ok {
		return
	}
	f, coresOrigin, hasCores, ok := parseCPUKey(t, KeyCPUCores, parseJavaDouble, "set taskmanager.cpu.cores to a positive number, e.g. 4")
	if !ok {
		return
	}
	var (
		cores  float64
		origin Origin
	)
	switch {
	case hasCores:
		cores, origin = f, coresOrigin
	case fallback > 0:
		cores, origin = float64(fallback), fbOrigin
	default:
		slots, slotsOrigin, hasSlots, ok := parseCPUKey(t, KeyTaskSlots, parseJavaInt, "set taskmanager.numberOfTaskSlots to a positive whole number")
		if !ok {
			return
		}
		if !hasSlots {
			slots = 1
		}
		cores, origin = float64(slots), slotsOrigin
	}
	if math.IsNaN(cores) || math.IsInf(cores, 0) {
		t.add(SeverityError, CodeCPUInvalid, origin.Source, origin.Key, "set taskmanager.cpu.cores to a positive number, e.g. 4",
			"%v is not a usable number of CPU cores: Flink fails on it (java.lang.NumberFormatException: Infinite or NaN)", cores)
		return
	}
	if cores <= 0 {
		t.add(SeverityError, CodeCPUInvalid, origin.Source, origin.Key,
			"set taskmanager.cpu.cores (or yarn.containers.vcores, or taskmanager.numberOfTaskSlots) to a positive number",
			"TaskExecutors need to be started with a positive number of CPU cores. Please configure %s accordingly.", KeyCPUCores)
		return
	}
	rounded := math.Max(math.Ceil(cores), 1)
	if rounded > math.MaxInt32 {
		t.add(SeverityError, CodeCPUInvalid, origin.Source, origin.Key, "give a realistic number of cores",
			"The amount of cpu cores %.0f cannot exceed Integer.MAX_VALUE: %d", rounded, math.MaxInt32)
		return
	}
	if rounded != cores {
		t.add(SeverityWarning, CodeCPUInvalid, origin.Source, origin.Key, fmt.Sprintf("set it to a whole number, e.g. %.0f", rounded),
			"%v is not a whole number: on YARN, Flink rounds it up to %.0f vcores", cores, rounded)
	}
	t.out.Resource.Set(records.VCores, records.Quantity{Value: int64(rounded)})
	t.out.Origins[records.VCores] = origin
}

// resourceKeys is what one listed external resource configures.
type resourceKeys struct {
	name      string
	amount    int64
	amountOK  bool
	amountSrc conf.Source
	yarnKey   conf.FlinkValue
	hasYarn   bool
	// overwritten: another resource with the same yarn.config-key replaces this one (Flink's
	// "Duplicate config key"), so it is not requested from YARN.
	overwritten bool
}

func (t *translator) externalResources(types *ResourceTypes) {
	names, listSrc := t.listedNames()
	entries := t.fc.WithPrefix(ExternalResourcePrefix)
	t.notListed(entries, names, listSrc)

	var all []resourceKeys
	for _, name := range names {
		all = append(all, t.resource(name, listSrc))
	}
	t.duplicateKeys(all, names)

	for _, rk := range all {
		if !rk.amountOK {
			continue
		}
		prefix := ExternalResourcePrefix + rk.name + "."
		er := ExternalResource{
			Name:                rk.name,
			Amount:              rk.amount,
			KubernetesConfigKey: t.fc.Get(prefix + SuffixKubernetesConfigKey),
			DriverFactoryClass:  t.fc.Get(prefix + SuffixDriverFactoryClass),
			Params:              map[string]string{},
			Source:              rk.amountSrc,
		}
		for _, p := range entries {
			if param, ok := strings.CutPrefix(p.Key, prefix+SuffixParamPrefix); ok {
				er.Params[param] = p.Value
			}
		}
		if isJavaBlank(er.DriverFactoryClass) {
			t.add(SeverityWarning, CodeNoDriverFactory, rk.amountSrc, prefix+SuffixDriverFactoryClass,
				fmt.Sprintf("set %s%s to %s (its plugin must be in Flink's plugins/ directory)", prefix, SuffixDriverFactoryClass, suggestedDriver(rk.name)),
				"Could not find driver class name for %s. Please make sure %s%s is configured. Without a driver the TaskManager gets no information about its %s devices.",
				rk.name, prefix, SuffixDriverFactoryClass, rk.name)
		}
		if rk.hasYarn {
			er.YarnConfigKey = rk.yarnKey.Value
			if !rk.overwritten && t.requestable(rk, types) {
				sent := flinkAmount(rk.amount)
				if sent != rk.amount {
					t.add(SeverityWarning, CodeAmountInvalid, rk.amountSrc, prefix+SuffixAmount,
						fmt.Sprintf("set %s%s to a sane number of devices (at most 2^53)", prefix, SuffixAmount),
						"Flink keeps an external resource's amount as a double: %d reaches YARN as %d", rk.amount, sent)
				}
				t.out.Resource.Set(rk.yarnKey.Value, records.Quantity{Value: sent})
				t.out.Origins[rk.yarnKey.Value] = Origin{Key: prefix + SuffixAmount, Source: rk.amountSrc}
			}
		}
		t.out.ExternalResources = append(t.out.ExternalResources, er)
	}
}

// flinkAmount is the amount Flink asks YARN for when a resource's configured amount is a: Flink
// keeps it as a double (ExternalResource's value, a BigDecimal made from Double.toString) and reads
// it back with longValue, which keeps the low 64 bits of the whole part. Up to 2^53 that is a
// itself; above it precision goes, and near 2^63 the sign (9223372036854775807 becomes
// -9223372036854775616).
func flinkAmount(a int64) int64 {
	if a >= -(1<<53) && a <= 1<<53 {
		return a
	}
	r, ok := new(big.Rat).SetString(javafmt.Double(float64(a)))
	if !ok {
		return a
	}
	whole := new(big.Int).Quo(r.Num(), r.Denom())
	return int64(new(big.Int).And(whole, new(big.Int).SetUint64(math.MaxUint64)).Uint64())
}

// listedNames returns the distinct non-empty names of external-resources in order, and the list's
// source.
func (t *translator) listedNames() ([]string, conf.Source) {
	v, ok := t.fc.Lookup(KeyExternalResources)
	// Flink compares the option's string form with "none": a YAML sequence [none] renders as a
	// list, not as "none", so it names a resource called none.
	if !ok || (v.List == nil && v.Value == noneResources) {
		return nil, v.Source
	}
	items, err := v.Items()
	if err != nil {
		fix := "separate names with ';' and quote a name containing ';' or a quote"
		msg := err.Error()
		var ce *conf.Error
		if errors.As(err, &ce) {
			if ce.Fix != "" {
				fix = ce.Fix
			}
			if ce.Err != nil {
				msg = ce.Err.Error()
			}
		}
		t.add(SeverityError, CodeExternalResourcesInvalid, v.Source, v.Key, fix, "%s", msg)
		return nil, v.Source
	}
	var names []string
	seen := map[string]bool{}
	for _, it := range items {
		if it == "" || seen[it] {
			continue
		}
		seen[it] = true
		names = append(names, it)
	}
	return names, v.Source
}

// notListed warns about external-resource.<name>.* keys whose name external-resources does not list.
func (t *translator) notListed(entries []conf.FlinkValue, listed []string, listSrc conf.Source) {
	reported := map[string]bool{}
	for _, v := range entries {
		rest := strings.TrimPrefix(v.Key, ExternalResourcePrefix)
		if slices.ContainsFunc(listed, func(n string) bool { return strings.HasPrefix(rest, n+".") }) {
			continue
		}
		name := guessResourceName(rest)
		if reported[name] {
			continue
		}
		reported[name] = true
		fix := fmt.Sprintf("add %s to external-resources (names are separated by ';'), or remove the %s%s.* keys", name, ExternalResourcePrefix, name)
		if listSrc.IsZero() {
			fix = fmt.Sprintf("set external-resources: %s (names are separated by ';'), or remove the %s%s.* keys", name, ExternalResourcePrefix, name)
		}
		t.add(SeverityWarning, CodeResourceNotListed, v.Source, v.Key, fix,
			"%s%s.* is configured but %s is not in external-resources, so Flink ignores it", ExternalResourcePrefix, name, name)
	}
}

// guessResourceName extracts <name> from "<name>.<suffix>" for the known suffixes, else takes the
// text before the first '.'.
func guessResourceName(rest string) string {
	for _, s := range []string{SuffixAmount, SuffixDriverFactoryClass, SuffixYarnConfigKey, SuffixKubernetesConfigKey} {
		if n, ok := strings.CutSuffix(rest, "."+s); ok && n != "" {
			return n
		}
	}
	if i := strings.Index(rest, "."+SuffixParamPrefix); i > 0 {
		return rest[:i]
	}
	if i := strings.IndexByte(rest, '.'); i > 0 {
		return rest[:i]
	}
	return rest
}

// resource reads one listed resource's amount and yarn.config-key.
func (t *translator) resource(name string, listSrc conf.Source) resourceKeys {
	prefix := ExternalResourcePrefix + name + "."
	rk := resourceKeys{name: name}
	amountKey := prefix + SuffixAmount
	if v, text, ok := t.value(amountKey); !ok {
		t.add(SeverityWarning, CodeAmountInvalid, listSrc, amountKey,
			fmt.Sprintf("set %s to a positive whole number, e.g. 1", amountKey),
			"The amount of the %s should be configured. Will ignore that resource.", name)
	} else if n, err := parseJavaLong(text); err != nil {
		t.parseFailed(CodeAmountInvalid, v, text, fmt.Sprintf("set %s to a positive whole number, e.g. 1", amountKey), nil)
	} else if n <= 0 {
		t.add(SeverityWarning, CodeAmountInvalid, v.Source, amountKey,
			fmt.Sprintf("set %s to a positive whole number, or remove %s from external-resources", amountKey, name),
			"%d is not a positive amount, so Flink ignores %s (Flink logs \"The amount of the %d should be positive while finding %s. Will ignore that resource.\")",
			n, name, n, name)
	} else {
		rk.amount, rk.amountOK, rk.amountSrc = n, true, v.Source
	}
	yarnKey := prefix + SuffixYarnConfigKey
	if v, ok := t.fc.Lookup(yarnKey); ok && !isJavaBlank(v.Value) {
		rk.yarnKey, rk.hasYarn = v, true
	} else if rk.amountOK {
		src := rk.amountSrc
		if ok {
			src = v.Source
		}
		t.add(SeverityWarning, CodeNoYarnConfigKey, src, yarnKey,
			fmt.Sprintf("set %s to the YARN resource type, e.g. %s", yarnKey, suggestedYarnType(name)),
			"Could not find valid %s for %s: the TaskManager is told about %s but YARN is not asked for it", yarnKey, name, name)
	}
	return rk
}

// suggestedYarnType guesses the YARN resource type for a resource name, for fix texts.
func suggestedYarnType(name string) string {
	if strings.Contains(strings.ToLower(name), "fpga") {
		return records.FPGA
	}
	return records.GPU
}

// suggestedDriver names a driver factory for a resource name, for fix texts.
func suggestedDriver(name string) string {
	if strings.Contains(strings.ToLower(name), "gpu") {
		return "org.apache.flink.externalresource.gpu.GPUDriverFactory (Flink's GPU driver)"
	}
	return "the class name of your ExternalResourceDriverFactory (Flink ships a driver for GPUs only)"
}

// duplicateKeys marks the resources whose yarn.config-key another resource also names. Flink walks
// the names in the order of a java.util.HashSet and the last one with the key overwrites the others,
// with a warning; yarn-er does the same and warns.
func (t *translator) duplicateKeys(all []resourceKeys, names []string) {
	rank := javaHashSetOrder(names, t.listLen())
	winner := map[string]int{}
	for i, rk := range all {
		if !rk.hasYarn {
			continue
		}
		key := rk.yarnKey.Value
		if w, dup := winner[key]; !dup || rank[rk.name] > rank[all[w].name] {
			winner[key] = i
		}
	}
	for i := range all {
		rk := &all[i]
		if !rk.hasYarn {
			continue
		}
		w := all[winner[rk.yarnKey.Value]]
		if w.name == rk.name {
			continue
		}
		rk.overwritten = true
		t.add(SeverityWarning, CodeDuplicateConfigKey, rk.yarnKey.Source, rk.yarnKey.Key,
			fmt.Sprintf("give %s and %s different yarn.config-keys, or configure the device once", rk.name, w.name),
			"Duplicate config key %s occurred for external resources, the one named %s will overwrite the value: Flink does not request %s (%s), only %s (%s)",
			rk.yarnKey.Value, w.name, rk.name, rk.yarnKey.Source, w.name, w.yarnKey.Source)
	}
}

// listLen returns the number of items external-resources lists, duplicates and empty items
// included (the size Flink's HashSet is created for).
func (t *translator) listLen() int {
	v, _ := t.fc.Lookup(KeyExternalResources)
	items, _ := v.Items()
	return len(items)
}

// javaHashSetOrder returns the position of each distinct name when Flink iterates
// new HashSet<>(list) of a list of listLen items: by bucket (String.hashCode spread as HashMap
// does, over a table of the next power of two >= max(listLen/0.75+1, 16)), then by insertion. It
// ignores the resizing a bucket of 8 or more colliding names would cause.
func javaHashSetOrder(names []string, listLen int) map[string]int {
	capacity := 1
	for n := max(int(float32(listLen)/0.75)+1, 16); capacity < n; {
		capacity <<= 1
	}
	bucket := func(s string) uint32 {
		var h int32
		for _, u := range utf16.Encode([]rune(s)) {
			h = 31*h + int32(u)
		}
		x := uint32(h)
		return (x ^ x>>16) & uint32(capacity-1)
	}
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(bucket(a), bucket(b)) })
	rank := make(map[string]int, len(order))
	for i, n := range order {
		rank[n] = i
	}
	return rank
}

// requestable checks the yarn.config-key of a resource with a valid amount and reports whether it
// goes into the vector.
func (t *translator) requestable(rk resourceKeys, types *ResourceTypes) bool {
	key := rk.yarnKey.Value
	src := rk.yarnKey.Source
	if records.IsReservedName(key) {
		t.add(SeverityError, CodeYarnConfigKeyInvalid, src, rk.yarnKey.Key,
			"set it to the resource type of the device, e.g. yarn.io/gpu",
			"yarn.config-key %s names a mandatory YARN resource: Flink would overwrite the container's %s with the amount of %s", key, key, rk.name)
		return false
	}
	if err := records.ValidateResourceName(key); err != nil {
		// No cluster can declare such a type (Hadoop trims and checks the names of
		// yarn.resource-types), so Flink's check of the cluster's types always fails.
		t.add(SeverityError, CodeYarnConfigKeyInvalid, src, rk.yarnKey.Key,
			"set it to a YARN resource type name such as yarn.io/gpu, without blanks",
			"External resource %s is not supported by the Yarn cluster. (%s No cluster can declare it.)", key, err.Error())
		return false
	}
	if types.FromConfig() {
		if rt, ok := types.Lookup(key); ok {
			t.checkUnit(rk, rt)
		} else {
			t.add(SeverityWarning, CodeResourceTypeUndeclared, src, rk.yarnKey.Key,
				fmt.Sprintf("add %s to yarn.resource-types (resource-types.xml) on the ResourceManager and offer it on the NodeManagers, or fix the key", key),
				"resource type '%s' is not declared in yarn.resource-types: the ResourceManager drops unknown resource types from requests, so the TaskManagers would get no %s (recent Flink versions fail instead: \"External resource %s is not supported by the Yarn cluster.\")",
				key, rk.name, key)
		}
	}
	return true
}

// isJavaBlank reports whether s is empty or only whitespace as Java's Character.isWhitespace sees it
// (Flink's StringUtils.isNullOrWhitespaceOnly).
func isJavaBlank(s string) bool {
	for _, r := range s {
		if !conf.IsJavaWhitespace(r) {
			return false
		}
	}
	return true
}
