package profile

import (
	"fmt"
	"math"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/javafmt"
)

// TaskManager memory keys (Flink's TaskManagerOptions), besides KeyProcessSize and KeyFlinkSize.
const (
	KeyFrameworkHeap    = "taskmanager.memory.framework.heap.size"
	KeyFrameworkOffHeap = "taskmanager.memory.framework.off-heap.size"
	KeyTaskHeap         = "taskmanager.memory.task.heap.size"
	KeyTaskOffHeap      = "taskmanager.memory.task.off-heap.size"
	KeyManagedSize      = "taskmanager.memory.managed.size"
	KeyManagedFraction  = "taskmanager.memory.managed.fraction"
	KeyNetworkMin       = "taskmanager.memory.network.min"
	KeyNetworkMax       = "taskmanager.memory.network.max"
	KeyNetworkFraction  = "taskmanager.memory.network.fraction"
	KeyJVMMetaspace     = "taskmanager.memory.jvm-metaspace.size"
	KeyJVMOverheadMin   = "taskmanager.memory.jvm-overhead.min"
	KeyJVMOverheadMax   = "taskmanager.memory.jvm-overhead.max"
	KeyJVMOverheadFrac  = "taskmanager.memory.jvm-overhead.fraction"
	KeyLegacyHeapSize   = "taskmanager.heap.size"
	KeyLegacyHeapMB     = "taskmanager.heap.mb"
	// KeyAMEnvTMHeap sets FLINK_TM_HEAP in the environment of Flink's ApplicationMaster (the
	// JobManager container), where Flink 1.x's resource manager derives the TaskManager
	// container: there it comes before taskmanager.heap.size.
	KeyAMEnvTMHeap = "containerized.master.env." + EnvTMHeap
	// EnvTMHeap and EnvJMHeap are Flink 1.x's legacy heap environment variables
	// (MemoryBackwardsCompatibilityUtils), read before the legacy heap keys; Flink 2.x reads
	// neither.
	EnvTMHeap            = "FLINK_TM_HEAP"
	EnvJMHeap            = "FLINK_JM_HEAP"
	KeyLegacyNetBuffers  = "taskmanager.network.numberOfBuffers"
	KeyMemorySegmentSize = "taskmanager.memory.segment-size"
)

// Problem codes of the TaskManager memory model (besides CodeMemoryInvalid).
const (
	// CodeMemoryNotConfigured: none of taskmanager.memory.process.size, taskmanager.memory.flink.size
	// or task heap + managed memory is configured (nor, in Flink 1.x, taskmanager.heap.size/.mb);
	// Flink refuses to start the TaskManagers.
	CodeMemoryNotConfigured = "flink.memory-not-configured"
	// CodeMemoryInconsistent: the configured memory sizes contradict each other (JVM overhead
	// outside its min/max, metaspace + overhead over the process size, components over the flink
	// size, a fraction outside [0, 1) or a min over its max); Flink refuses them.
	CodeMemoryInconsistent = "flink.memory-inconsistent"
)

// memOption is one MemorySize option: its key, deprecated keys (read after the key, in order) and
// Flink's default ("" means none).
type memOption struct {
	key        string
	deprecated []string
	def        string
}

// fracOption is one Float option with its Flink default.
type fracOption struct {
	key        string
	deprecated []string
	def        float32
}

var (
	optProcess        = memOption{key: KeyProcessSize}
	optFlink          = memOption{key: KeyFlinkSize}
	optFrameworkHeap  = memOption{key: KeyFrameworkHeap, def: "128m"}
	optFrameworkOff   = memOption{key: KeyFrameworkOffHeap, def: "128m"}
	optTaskHeap       = memOption{key: KeyTaskHeap}
	optTaskOff        = memOption{key: KeyTaskOffHeap, def: "0"}
	optManaged        = memOption{key: KeyManagedSize, deprecated: []string{"taskmanager.memory.size"}}
	optNetMin         = memOption{key: KeyNetworkMin, deprecated: []string{"taskmanager.network.memory.min"}, def: "64m"}
	optNetMax         = memOption{key: KeyNetworkMax, deprecated: []string{"taskmanager.network.memory.max"}, def: "9223372036854775807"}
	optMetaspace      = memOption{key: KeyJVMMetaspace, def: "256m"}
	optOverheadMin    = memOption{key: KeyJVMOverheadMin, def: "192m"}
	optOverheadMax    = memOption{key: KeyJVMOverheadMax, def: "1g"}
	optLegacyHeap     = memOption{key: KeyLegacyHeapSize}
	optSegmentSize    = memOption{key: KeyMemorySegmentSize, def: "32kb"}
	optManagedFrac    = fracOption{key: KeyManagedFraction, def: 0.4}
	optNetFrac        = fracOption{key: KeyNetworkFraction, deprecated: []string{"taskmanager.network.memory.fraction"}, def: 0.1}
	optOverheadFrac   = fracOption{key: KeyJVMOverheadFrac, def: 0.1}
	minMemoryPageSize = int64(4096) // Flink's MemoryManager.MIN_PAGE_SIZE
)

// Memory derivation paths, in the order Flink tries them.
const (
	// MemoryFromFineGrained: task heap and managed memory are both configured.
	MemoryFromFineGrained = "fine-grained"
	// MemoryFromFlinkSize: taskmanager.memory.flink.size is configured.
	MemoryFromFlinkSize = "flink-size"
	// MemoryFromProcessSize: taskmanager.memory.process.size is configured (or, in Flink 1.x on
	// YARN, mapped from taskmanager.heap.size / taskmanager.heap.mb).
	MemoryFromProcessSize = "process-size"
)

// TaskManagerMemory is a TaskManager's memory as Flink derives it (TaskExecutorProcessUtils and
// ProcessMemoryUtils). Sizes are in bytes; the JSON shape is public.
type TaskManagerMemory struct {
	// FlinkVersion is the rule set used: 1.x or 2.x.
	FlinkVersion FlinkVersion `json:"flinkVersion"`
	// DerivedFrom is the path Flink took: fine-grained, flink-size or process-size.
	DerivedFrom string `json:"derivedFrom"`
	// LegacyHeapKey is taskmanager.heap.size or taskmanager.heap.mb when Flink 1.x mapped it to the
	// process size; "" otherwise.
	LegacyHeapKey string `json:"legacyHeapKey,omitempty"`
	// LegacyNetworkBuffers tells that network memory came from taskmanager.network.numberOfBuffers
	// (Flink 1.x only).
	LegacyNetworkBuffers bool `json:"legacyNetworkBuffers,omitempty"`

	FrameworkHeap    int64 `json:"frameworkHeapBytes"`
	FrameworkOffHeap int64 `json:"frameworkOffHeapBytes"`
	TaskHeap         int64 `json:"taskHeapBytes"`
	TaskOffHeap      int64 `json:"taskOffHeapBytes"`
	Network          int64 `json:"networkBytes"`
	Managed          int64 `json:"managedBytes"`
	JVMMetaspace     int64 `json:"jvmMetaspaceBytes"`
	JVMOverhead      int64 `json:"jvmOverheadBytes"`
	// TotalFlink is the sum of the six Flink components.
	TotalFlink int64 `json:"totalFlinkBytes"`
	// TotalProcess is TotalFlink plus JVM metaspace and overhead: the container's memory.
	TotalProcess int64 `json:"totalProcessBytes"`
	// ContainerMB is TotalProcess in whole MiB, rounded down (MemorySize.getMebiBytes): the
	// memory-mb Flink's ApplicationMaster requests.
	ContainerMB int64 `json:"containerMemoryMB"`
}

// MemoryRefusal is a TaskManager memory configuration Flink refuses.
type MemoryRefusal struct {
	// Code is the problem code (CodeMemoryNotConfigured, CodeMemoryInconsistent or CodeMemoryInvalid).
	Code string
	// FlinkMessage is the message of the exception Flink throws, as Flink words it.
	FlinkMessage string
	// Detail is the reason inside a wrapped exception, when Flink's message hides it; "" otherwise.
	Detail string
	// Keys are the options involved, the main one first.
	Keys []string
	// Fix says how to repair the configuration.
	Fix string
}

func (r *MemoryRefusal) Error() string { return r.FlinkMessage }

// DeriveTaskManagerMemory derives the TaskManager's memory from fc as Flink version v does on YARN
// (the ApplicationMaster's and the client's TaskExecutorProcessUtils.processSpecFromConfig, after
// Flink 1.x's mapping of the legacy heap options to taskmanager.memory.process.size):
//
//   - task heap + managed memory configured: network memory is the rest of the flink size when that
//     is configured, else derived with its fraction of everything else (inverse fraction);
//   - else the flink size: managed memory and network memory by fraction (capped to min/max) unless
//     configured, task heap is the rest;
//   - else the process size: JVM overhead by fraction (capped), metaspace as configured, the flink
//     size is the rest;
//   - else Flink refuses ("Either required fine-grained memory ...").
//
// JVM overhead comes from the process size when it is configured (and must fall within its
// min/max), else from its fraction of flink size + metaspace. Every size follows Flink's MemorySize
// arithmetic (exact decimal products, truncated). A configuration Flink refuses returns a
// *MemoryRefusal with Flink's message; the warnings (legacy keys, rounding) come back as problems.
func DeriveTaskManagerMemory(fc *conf.FlinkConfig, v FlinkVersion) (*TaskManagerMemory, []Problem, *MemoryRefusal) {
	if v == FlinkVersionUnset {
		v = DefaultFlinkVersion(fc.Files())
	}
	m := &memModel{fc: fc, version: v, overlay: map[string]string{}, jvm: tmJVM, envHeapName: EnvTMHeap}
	if ev, ok := fc.Lookup(KeyAMEnvTMHeap); ok {
		m.envHeap, m.envHeapSrc, m.envHeapSet = ev.Value, ev.Source.String(), true
	}
	mem, ref := m.derive()
	return mem, m.problems, ref
}

// envLegacyHeap is the start of MemoryBackwardsCompatibilityUtils.getLegacyHeapMemoryIfExplicitlyConfigured
// (Flink 1.x): a set legacy heap environment variable wins over the legacy keys, and a value
// MemorySize cannot parse fails. ok is false when the variable is not set.
func (m *memModel) envLegacyHeap(fixKey string) (bytes int64, ok bool, ref *MemoryRefusal) {
	if !m.envHeapSet {
		return 0, false, nil
	}
	b, err := ParseMemorySize(m.envHeap)
	if err != nil {
		return 0, true, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{m.envHeapSrc},
			FlinkMessage: fmt.Sprintf("Cannot read total process memory size from environment variable value %s.", m.envHeap),
			Detail:       err.Error(),
			Fix:          fmt.Sprintf("set %s to a size such as 4096m (%s), or unset it and set %s", m.envHeapName, m.envHeapSrc, fixKey)}
	}
	return b, true, nil
}

type memModel struct {
	problemList
	fc      *conf.FlinkConfig
	version FlinkVersion
	// envHeap is the legacy heap environment variable of the process modelled (FLINK_TM_HEAP
	// of the ApplicationMaster, FLINK_JM_HEAP of the client), its source and whether it is set.
	envHeap                 string
	envHeapSrc, envHeapName string
	envHeapSet              bool
	// jmFromEnv: the JobManager's process size comes from $FLINK_JM_HEAP.
	jmFromEnv bool
	// overlay holds values Flink sets on its copy of the configuration (the legacy heap mapping).
	overlay map[string]string
	// jvm are the process, flink size, metaspace and overhead options of the process modelled.
	jvm jvmOptions
}

// find returns the key holding a value for the option (the key itself, then its deprecated keys)
// and that value's text.
func (m *memModel) find(key string, deprecated []string) (string, string, bool) {
	if s, ok := m.overlay[key]; ok {
		return key, s, true
	}
	for _, k := range append([]string{key}, deprecated...) {
		if _, ok := m.fc.Lookup(k); ok {
			return k, m.fc.FlinkString(k), true
		}
	}
	return "", "", false
}

func (m *memModel) contains(o memOption) bool {
	_, _, ok := m.find(o.key, o.deprecated)
	return ok
}

func (m *memModel) containsFrac(o fracOption) bool {
	_, _, ok := m.find(o.key, o.deprecated)
	return ok
}

// size is ProcessMemoryUtils.getMemorySizeFromConfig.
func (m *memModel) size(o memOption) (int64, *MemoryRefusal) {
	_, text, ok := m.find(o.key, o.deprecated)
	if !ok {
		text = o.def
	}
	if text == "" && !ok {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{o.key},
			FlinkMessage: fmt.Sprintf("Cannot read memory size from config option '%s'.", o.key),
			Detail:       "The memory option is not set and has no default value.",
			Fix:          fmt.Sprintf("set %s", o.key)}
	}
	b, err := ParseMemorySize(text)
	if err != nil {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{o.key},
			FlinkMessage: fmt.Sprintf("Cannot read memory size from config option '%s'.", o.key),
			Detail:       fmt.Sprintf("Could not parse value '%s' for key '%s'. %s", text, o.key, err.Error()),
			Fix:          fmt.Sprintf("write %s as a size such as 1024m or 4g (a number without unit is bytes)", o.key)}
	}
	return b, nil
}

// fraction is Configuration.get of a Float option. Its parse errors are not Flink configuration
// errors: Flink does not prefix them (raw is set).
func (m *memModel) fraction(o fracOption) (float32, *MemoryRefusal) {
	_, text, ok := m.find(o.key, o.deprecated)
	if !ok {
		return o.def, nil
	}
	f, err := parseJavaFloat(text)
	if err != nil {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{o.key}, FlinkMessage: rawPrefix +
			fmt.Sprintf("Could not parse value '%s' for key '%s'.", text, o.key),
			Fix: fmt.Sprintf("write %s as a fraction such as 0.1", o.key)}
	}
	return f, nil
}

// rawPrefix marks a FlinkMessage that Flink does not wrap in "TaskManager memory configuration
// failed: " (the exception is not an IllegalConfigurationException); it is removed before use.
const rawPrefix = "\x00raw:"

type rangeFraction struct {
	min, max int64
	fraction float64
}

// rangeOf is ProcessMemoryUtils.getRangeFraction: min <= max and 0 <= fraction < 1.
func (m *memModel) rangeOf(minB, maxB int64, fo fracOption, keys ...string) (rangeFraction, *MemoryRefusal) {
	f32, ref := m.fraction(fo)
	if ref != nil {
		return rangeFraction{}, ref
	}
	f := float64(f32)
	if minB <= maxB && f >= 0 && f < 1 {
		return rangeFraction{min: minB, max: maxB, fraction: f}, nil
	}
	detail := "min value must be less or equal to max value"
	if minB <= maxB {
		detail = "fraction must be in range [0, 1)"
	}
	return rangeFraction{}, &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: append([]string{fo.key}, keys...),
		FlinkMessage: fmt.Sprintf("Inconsistently configured %s (%s) and its min (%s), max (%s) value",
			optionString(fo), javafmt.Double(f), humanSize(minB), humanSize(maxB)),
		Detail: detail,
		Fix:    fmt.Sprintf("keep %s in [0, 1) and its min at most its max", fo.key)}
}

// optionString renders a Float option as ConfigOption.toString does.
func optionString(o fracOption) string {
	fb := make([]string, len(o.deprecated))
	for i, k := range o.deprecated {
		fb[i] = "{key=" + k + ", isDeprecated=true}"
	}
	return fmt.Sprintf("Key: '%s' , default: %s (fallback keys: [%s])", o.key, javafmt.Float(o.def), strings.Join(fb, ", "))
}

func memOptionString(o memOption) string {
	def := "null"
	if o.def != "" {
		b, _ := ParseMemorySize(o.def)
		def = memorySizeString(b)
	}
	return fmt.Sprintf("Key: '%s' , default: %s (fallback keys: [])", o.key, def)
}

// memorySizeString is MemorySize.toString: the largest unit that divides the size exactly.
func memorySizeString(b int64) string {
	units := [...]struct {
		name string
		mult int64
	}{{"bytes", 1}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40}}
	best := 0
	for i, u := range units {
		if b%u.mult != 0 {
			break
		}
		best = i
	}
	return fmt.Sprintf("%d %s", b/units[best].mult, units[best].name)
}

// capToMinMax derives a size with a fraction of base and caps it to the range.
func capToMinMax(base int64, factor float64, r rangeFraction) (int64, *MemoryRefusal) {
	v, ok := javaMultiply(base, factor)
	if !ok {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, FlinkMessage: rawPrefix + errLongOverflow, Fix: "give realistic memory sizes"}
	}
	switch {
	case v > r.max:
		v = r.max
	case v < r.min:
		v = r.min
	}
	return v, nil
}

func withFraction(base int64, r rangeFraction) (int64, *MemoryRefusal) {
	return capToMinMax(base, r.fraction, r)
}

func withInverseFraction(base int64, r rangeFraction) (int64, *MemoryRefusal) {
	return capToMinMax(base, r.fraction/(1-r.fraction), r)
}

// sum adds sizes with Math.addExact.
func sum(parts ...int64) (int64, *MemoryRefusal) {
	var total int64
	for _, p := range parts {
		var ok bool
		if total, ok = addExact(total, p); !ok {
			return 0, &MemoryRefusal{Code: CodeMemoryInvalid, FlinkMessage: rawPrefix + errLongOverflow, Fix: "give realistic memory sizes"}
		}
	}
	return total, nil
}

func (m *memModel) derive() (*TaskManagerMemory, *MemoryRefusal) {
	if ref := m.mapLegacyHeap(); ref != nil {
		return nil, m.finish(ref, "TaskManager failed to map legacy JVM heap option to the new one: ")
	}
	mem, ref := m.processSpec()
	if ref != nil {
		return nil, m.finish(ref, "TaskManager memory configuration failed: ")
	}
	mem.FlinkVersion = m.version
	mem.ContainerMB = mem.TotalProcess >> 20
	return mem, nil
}

// finish adds Flink's wrapping to an IllegalConfigurationException's message, and names the
// configured sizes when the refusal names no key (an overflow of their sum).
func (m *memModel) finish(ref *MemoryRefusal, prefix string) *MemoryRefusal {
	if len(ref.Keys) == 0 {
		for _, k := range m.jvm.sizes {
			if _, ok := m.fc.Lookup(k); ok {
				ref.Keys = append(ref.Keys, k)
			}
		}
	}
	if s, ok := strings.CutPrefix(ref.FlinkMessage, rawPrefix); ok {
		ref.FlinkMessage = s
	} else {
		ref.FlinkMessage = prefix + ref.FlinkMessage
	}
	return ref
}

// mapLegacyHeap is Flink 1.x's getConfigurationMapLegacyTaskManagerHeapSizeToConfigOption as the
// ApplicationMaster runs it: FLINK_TM_HEAP of its environment (containerized.master.env.
// FLINK_TM_HEAP), else taskmanager.heap.size, else taskmanager.heap.mb.
func (m *memModel) mapLegacyHeap() *MemoryRefusal {
	legacy := m.fc.WithPrefix("taskmanager.heap.")
	if m.version != Flink1 {
		if v, ok := m.fc.Lookup(KeyAMEnvTMHeap); ok {
			m.add(SeverityWarning, CodeMemoryInvalid, v.Source, v.Key,
				"set taskmanager.memory.process.size (the container's memory on YARN) instead",
				"%s (%s in the ApplicationMaster's environment) is ignored by Flink 2.x (Flink 1.x on YARN used it as %s)", v.Key, EnvTMHeap, KeyProcessSize)
		}
		for _, v := range legacy {
			if v.Key == KeyLegacyHeapSize || v.Key == KeyLegacyHeapMB {
				m.add(SeverityWarning, CodeMemoryInvalid, v.Source, v.Key,
					"set taskmanager.memory.process.size (the container's memory on YARN) instead",
					"%s is ignored by Flink 2.x (removed in 2.0; Flink 1.x on YARN used it as %s)", v.Key, KeyProcessSize)
			}
		}
		return nil
	}
	if m.contains(optProcess) {
		return nil
	}
	var bytes int64
	var key string
	if b, ok, ref := m.envLegacyHeap(KeyProcessSize); ref != nil {
		return ref
	} else if ok {
		bytes, key = b, KeyAMEnvTMHeap
	} else if m.contains(optLegacyHeap) {
		b, ref := m.size(optLegacyHeap)
		if ref != nil {
			return ref
		}
		bytes, key = b, KeyLegacyHeapSize
	} else if v, ok := m.fc.Lookup(KeyLegacyHeapMB); ok {
		text := m.fc.FlinkString(KeyLegacyHeapMB)
		n, err := parseJavaInt(text)
		if err != nil {
			return &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyLegacyHeapMB},
				FlinkMessage: rawPrefix + fmt.Sprintf("Could not parse value '%s' for key '%s'.", text, KeyLegacyHeapMB),
				Fix:          "set taskmanager.memory.process.size instead, e.g. 4096m"}
		}
		if n < 0 {
			return &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyLegacyHeapMB},
				FlinkMessage: fmt.Sprintf("Configured total process memory size (%dMB) must not be less than 0.", n),
				Fix:          "set taskmanager.memory.process.size instead, e.g. 4096m"}
		}
		bytes, key = n<<20, v.Key
	} else {
		return nil
	}
	src := m.sourceOf(key)
	m.add(SeverityWarning, CodeMemoryInvalid, src, key,
		fmt.Sprintf("set %s: %dm instead (Flink 2.x ignores %s)", KeyProcessSize, bytes>>20, key),
		"%s is deprecated: Flink 1.x on YARN uses it as %s (%s); Flink 2.x ignores it", key, KeyProcessSize, humanSize(bytes))
	m.overlay[KeyProcessSize] = fmt.Sprintf("%db", bytes)
	return nil
}

func (m *memModel) sourceOf(key string) conf.Source {
	v, _ := m.fc.Lookup(key)
	return v.Source
}

// processSpec is ProcessMemoryUtils.memoryProcessSpecFromConfig for the TaskManager.
func (m *memModel) processSpec() (*TaskManagerMemory, *MemoryRefusal) {
	var (
		mem *TaskManagerMemory
		ref *MemoryRefusal
	)
	switch {
	case m.contains(optTaskHeap) && m.contains(optManaged):
		mem, ref = m.fromFineGrained()
		if mem != nil {
			mem.DerivedFrom = MemoryFromFineGrained
		}
	case m.contains(optFlink):
		mem, ref = m.fromFlinkSize()
		if mem != nil {
			mem.DerivedFrom = MemoryFromFlinkSize
		}
	case m.contains(optProcess):
		mem, ref = m.fromProcessSize()
		if mem != nil {
			mem.DerivedFrom = MemoryFromProcessSize
		}
	default:
		fix := fmt.Sprintf("set %s, e.g. 4096m: on YARN it is the TaskManager container's memory", KeyProcessSize)
		if m.version == Flink2 {
			for _, k := range []string{KeyLegacyHeapSize, KeyLegacyHeapMB} {
				if _, ok := m.fc.Lookup(k); ok {
					fix += fmt.Sprintf(" (Flink 2.x no longer reads %s)", k)
				}
			}
		}
		return nil, &MemoryRefusal{Code: CodeMemoryNotConfigured,
			Keys: []string{KeyProcessSize, KeyFlinkSize, KeyTaskHeap, KeyManagedSize},
			FlinkMessage: fmt.Sprintf("Either required fine-grained memory (%s and %s), or Total Flink Memory size (%s), or Total Process Memory size (%s) need to be configured explicitly.",
				KeyTaskHeap, KeyManagedSize, memOptionString(optFlink), memOptionString(optProcess)),
			Fix: fix}
	}
	if ref != nil {
		return nil, ref
	}
	return mem, nil
}

// flinkParts are the six Flink components.
type flinkParts struct {
	frameworkHeap, frameworkOff, taskHeap, taskOff, network, managed int64
	legacyNetwork                                                    bool
}

func (p flinkParts) total() (int64, *MemoryRefusal) {
	return sum(p.frameworkHeap, p.frameworkOff, p.taskHeap, p.taskOff, p.network, p.managed)
}

func (m *memModel) fromFineGrained() (*TaskManagerMemory, *MemoryRefusal) {
	var p flinkParts
	var ref *MemoryRefusal
	if p.taskHeap, ref = m.size(optTaskHeap); ref != nil {
		return nil, ref
	}
	if p.managed, ref = m.size(optManaged); ref != nil {
		return nil, ref
	}
	if p.frameworkHeap, p.frameworkOff, p.taskOff, ref = m.frameworkAndTaskOff(); ref != nil {
		return nil, ref
	}
	exclNetwork, ref := sum(p.frameworkHeap, p.frameworkOff, p.taskHeap, p.taskOff, p.managed)
	if ref != nil {
		return nil, ref
	}
	if m.contains(optFlink) {
		total, ref := m.size(optFlink)
		if ref != nil {
			return nil, ref
		}
		if p.network, ref = m.networkLeft(p, exclNetwork, total); ref != nil {
			return nil, ref
		}
	} else if p.network, p.legacyNetwork, ref = m.derivedNetwork(exclNetwork, withInverseFraction); ref != nil {
		return nil, ref
	}
	if ref := m.checkTotalFlink(p); ref != nil {
		return nil, ref
	}
	return m.withJVMFromFlink(p)
}

func (m *memModel) fromFlinkSize() (*TaskManagerMemory, *MemoryRefusal) {
	total, ref := m.size(optFlink)
	if ref != nil {
		return nil, ref
	}
	p, ref := m.fromTotalFlink(total)
	if ref != nil {
		return nil, ref
	}
	return m.withJVMFromFlink(p)
}

func (m *memModel) fromProcessSize() (*TaskManagerMemory, *MemoryRefusal) {
	process, metaspace, overhead, ref := m.jvmFromProcess()
	if ref != nil {
		return nil, ref
	}
	p, ref := m.fromTotalFlink(process - metaspace - overhead)
	if ref != nil {
		return nil, ref
	}
	return m.assemble(p, metaspace, overhead)
}

// jvmOptions are the options of ProcessMemoryUtils for one kind of process (TaskManager or
// JobManager).
type jvmOptions struct {
	process, flink, metaspace, overheadMin, overheadMax memOption
	overheadFrac                                        fracOption
	// parts are the fine-grained keys named with the process and flink sizes in messages.
	parts []string
	// sizes are every size option of the process, deprecated and legacy keys included: the keys an
	// error about the sizes together (an overflow) names.
	sizes []string
}

var tmJVM = jvmOptions{process: optProcess, flink: optFlink, metaspace: optMetaspace,
	overheadMin: optOverheadMin, overheadMax: optOverheadMax, overheadFrac: optOverheadFrac,
	parts: []string{KeyTaskHeap, KeyManagedSize},
	sizes: append(keysOf(optProcess, optFlink, optFrameworkHeap, optFrameworkOff, optTaskHeap, optTaskOff, optManaged,
		optNetMin, optNetMax, optMetaspace, optOverheadMin, optOverheadMax, optLegacyHeap), KeyLegacyHeapMB)}

// keysOf returns the keys of opts, each followed by its deprecated keys.
func keysOf(opts ...memOption) []string {
	var keys []string
	for _, o := range opts {
		keys = append(append(keys, o.key), o.deprecated...)
	}
	return keys
}

// jvmFromProcess is deriveJvmMetaspaceAndOverheadWithTotalProcessMemory: the configured process
// size, its metaspace and its overhead (a fraction of it, capped to min/max).
func (m *memModel) jvmFromProcess() (process, metaspace, overhead int64, ref *MemoryRefusal) {
	o := m.jvm
	if process, ref = m.size(o.process); ref != nil {
		return
	}
	if metaspace, ref = m.size(o.metaspace); ref != nil {
		return
	}
	r, ref := m.overheadRange()
	if ref != nil {
		return
	}
	if overhead, ref = withFraction(process, r); ref != nil {
		return
	}
	jvm, ref := sum(metaspace, overhead)
	if ref != nil {
		return
	}
	if jvm > process {
		ref = &MemoryRefusal{Code: CodeMemoryInconsistent,
			Keys: []string{o.process.key, o.metaspace.key, o.overheadFrac.key, o.overheadMin.key, o.overheadMax.key},
			FlinkMessage: fmt.Sprintf("Sum of configured JVM Metaspace (%s) and JVM Overhead (%s) exceed configured Total Process Memory (%s).",
				humanSize(metaspace), humanSize(overhead), humanSize(process)),
			Fix: fmt.Sprintf("raise %s, or lower %s and %s", o.process.key, o.metaspace.key, o.overheadMin.key)}
	}
	return
}

// fromTotalFlink is TaskExecutorFlinkMemoryUtils.deriveFromTotalFlinkMemory.
func (m *memModel) fromTotalFlink(total int64) (flinkParts, *MemoryRefusal) {
	var p flinkParts
	var ref *MemoryRefusal
	if p.frameworkHeap, p.frameworkOff, p.taskOff, ref = m.frameworkAndTaskOff(); ref != nil {
		return p, ref
	}
	if m.contains(optTaskHeap) {
		if p.taskHeap, ref = m.size(optTaskHeap); ref != nil {
			return p, ref
		}
		if p.managed, ref = m.managedAbsoluteOrFraction(total); ref != nil {
			return p, ref
		}
		excl, ref := sum(p.frameworkHeap, p.frameworkOff, p.taskHeap, p.taskOff, p.managed)
		if ref != nil {
			return p, ref
		}
		if p.network, ref = m.networkLeft(p, excl, total); ref != nil {
			return p, ref
		}
	} else {
		if p.managed, ref = m.managedAbsoluteOrFraction(total); ref != nil {
			return p, ref
		}
		if p.network, p.legacyNetwork, ref = m.derivedNetwork(total, withFraction); ref != nil {
			return p, ref
		}
		excl, ref := sum(p.frameworkHeap, p.frameworkOff, p.taskOff, p.managed, p.network)
		if ref != nil {
			return p, ref
		}
		if excl > total {
			return p, &MemoryRefusal{Code: CodeMemoryInconsistent,
				Keys: m.presentKeys(KeyFlinkSize, KeyProcessSize, KeyFrameworkHeap, KeyFrameworkOffHeap, KeyTaskOffHeap, KeyManagedSize, KeyManagedFraction, KeyNetworkMin, KeyNetworkFraction),
				FlinkMessage: fmt.Sprintf("Sum of configured Framework Heap Memory (%s), Framework Off-Heap Memory (%s), Task Off-Heap Memory (%s), Managed Memory (%s) and Network Memory (%s) exceed configured Total Flink Memory (%s).",
					humanSize(p.frameworkHeap), humanSize(p.frameworkOff), humanSize(p.taskOff), humanSize(p.managed), humanSize(p.network), humanSize(total)),
				Fix: "raise the TaskManager's memory (taskmanager.memory.process.size or flink.size), or lower the managed, network, framework or task off-heap sizes"}
		}
		p.taskHeap = total - excl
	}
	if ref := m.checkTotalFlink(p); ref != nil {
		return p, ref
	}
	return p, nil
}

// presentKeys returns keys with the first one first and then those configured.
func (m *memModel) presentKeys(keys ...string) []string {
	out := []string{keys[0]}
	for _, k := range keys[1:] {
		if _, ok := m.fc.Lookup(k); ok {
			out = append(out, k)
		}
	}
	return out
}

func (m *memModel) exceedsFlinkWithTaskHeap(p flinkParts, total int64) *MemoryRefusal {
	return &MemoryRefusal{Code: CodeMemoryInconsistent,
		Keys: m.presentKeys(KeyTaskHeap, KeyFlinkSize, KeyProcessSize, KeyManagedSize, KeyManagedFraction, KeyFrameworkHeap, KeyFrameworkOffHeap, KeyTaskOffHeap),
		FlinkMessage: fmt.Sprintf("Sum of configured Framework Heap Memory (%s), Framework Off-Heap Memory (%s), Task Heap Memory (%s), Task Off-Heap Memory (%s) and Managed Memory (%s) exceed configured Total Flink Memory (%s).",
			humanSize(p.frameworkHeap), humanSize(p.frameworkOff), humanSize(p.taskHeap), humanSize(p.taskOff), humanSize(p.managed), humanSize(total)),
		Fix: fmt.Sprintf("lower %s or %s, or raise the TaskManager's total memory", KeyTaskHeap, KeyManagedSize)}
}

func (m *memModel) frameworkAndTaskOff() (int64, int64, int64, *MemoryRefusal) {
	fh, ref := m.size(optFrameworkHeap)
	if ref != nil {
		return 0, 0, 0, ref
	}
	fo, ref := m.size(optFrameworkOff)
	if ref != nil {
		return 0, 0, 0, ref
	}
	to, ref := m.size(optTaskOff)
	if ref != nil {
		return 0, 0, 0, ref
	}
	return fh, fo, to, nil
}

func (m *memModel) managedAbsoluteOrFraction(base int64) (int64, *MemoryRefusal) {
	if m.contains(optManaged) {
		return m.size(optManaged)
	}
	r, ref := m.rangeOf(0, math.MaxInt64, optManagedFrac)
	if ref != nil {
		return 0, ref
	}
	return withFraction(base, r)
}

// networkLeft is the network memory that total leaves over the other parts of p, whose sum is excl
// (Flink's path when both the task heap and the total Flink memory are known).
func (m *memModel) networkLeft(p flinkParts, excl, total int64) (int64, *MemoryRefusal) {
	if excl > total {
		return 0, m.exceedsFlinkWithTaskHeap(p, total)
	}
	network := total - excl
	return network, m.checkNetworkExplicit(network, total)
}

// derivedNetwork is the network memory where no total fixes it: Flink 1.x's numberOfBuffers when
// that is what is configured (legacy true), else the network range with fraction applied to base.
func (m *memModel) derivedNetwork(base int64, fraction func(int64, rangeFraction) (int64, *MemoryRefusal)) (network int64, legacy bool, ref *MemoryRefusal) {
	if m.usingLegacyNetwork() {
		network, ref = m.legacyNetwork()
		return network, ref == nil, ref
	}
	r, ref := m.networkRange()
	if ref != nil {
		return 0, false, ref
	}
	network, ref = fraction(base, r)
	return network, false, ref
}

func (m *memModel) networkRange() (rangeFraction, *MemoryRefusal) {
	minB, ref := m.size(optNetMin)
	if ref != nil {
		return rangeFraction{}, ref
	}
	maxB, ref := m.size(optNetMax)
	if ref != nil {
		return rangeFraction{}, ref
	}
	return m.rangeOf(minB, maxB, optNetFrac, KeyNetworkMin, KeyNetworkMax)
}

func (m *memModel) overheadRange() (rangeFraction, *MemoryRefusal) {
	minB, ref := m.size(m.jvm.overheadMin)
	if ref != nil {
		return rangeFraction{}, ref
	}
	maxB, ref := m.size(m.jvm.overheadMax)
	if ref != nil {
		return rangeFraction{}, ref
	}
	return m.rangeOf(minB, maxB, m.jvm.overheadFrac, m.jvm.overheadMin.key, m.jvm.overheadMax.key)
}

// usingLegacyNetwork: Flink 1.x reads taskmanager.network.numberOfBuffers when it is set and none
// of the network min/max/fraction options is.
func (m *memModel) usingLegacyNetwork() bool {
	if m.version != Flink1 {
		return false
	}
	if m.contains(optNetMin) || m.contains(optNetMax) || m.containsFrac(optNetFrac) {
		return false
	}
	_, ok := m.fc.Lookup(KeyLegacyNetBuffers)
	return ok
}

// legacyNetwork is numberOfBuffers times the memory segment size (Flink 1.x).
func (m *memModel) legacyNetwork() (int64, *MemoryRefusal) {
	text := m.fc.FlinkString(KeyLegacyNetBuffers)
	n, err := parseJavaInt(text)
	if err != nil {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyLegacyNetBuffers},
			FlinkMessage: rawPrefix + fmt.Sprintf("Could not parse value '%s' for key '%s'.", text, KeyLegacyNetBuffers),
			Fix:          fmt.Sprintf("remove %s and size network memory with %s / %s", KeyLegacyNetBuffers, KeyNetworkFraction, KeyNetworkMax)}
	}
	page, ref := m.pageSize()
	if ref != nil {
		return 0, ref
	}
	if n < 0 {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyLegacyNetBuffers},
			FlinkMessage: rawPrefix + "bytes must be >= 0",
			Fix:          fmt.Sprintf("remove %s and size network memory with %s / %s", KeyLegacyNetBuffers, KeyNetworkFraction, KeyNetworkMax)}
	}
	return n * page, nil
}

// pageSize is ConfigurationParserUtils.getPageSize.
func (m *memModel) pageSize() (int64, *MemoryRefusal) {
	text := optSegmentSize.def
	if _, ok := m.fc.Lookup(KeyMemorySegmentSize); ok {
		text = m.fc.FlinkString(KeyMemorySegmentSize)
	}
	b, err := ParseMemorySize(text)
	fix := fmt.Sprintf("set %s to a power of two of at least 4kb, e.g. 32kb", KeyMemorySegmentSize)
	if err != nil {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyMemorySegmentSize},
			FlinkMessage: rawPrefix + fmt.Sprintf("Could not parse value '%s' for key '%s'.", text, KeyMemorySegmentSize), Fix: fix}
	}
	if b > math.MaxInt32 {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyMemorySegmentSize},
			FlinkMessage: rawPrefix + fmt.Sprintf("Cannot downcast long value %d to integer.", b), Fix: fix}
	}
	if b < minMemoryPageSize {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyMemorySegmentSize},
			FlinkMessage: fmt.Sprintf("Invalid configuration value for %s : %d - Minimum memory segment size is %d", KeyMemorySegmentSize, b, minMemoryPageSize), Fix: fix}
	}
	if b&(b-1) != 0 {
		return 0, &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyMemorySegmentSize},
			FlinkMessage: fmt.Sprintf("Invalid configuration value for %s : %d - Memory segment size must be a power of 2.", KeyMemorySegmentSize, b), Fix: fix}
	}
	return b, nil
}

// checkNetworkExplicit is sanityCheckNetworkMemoryWithExplicitlySetTotalFlinkAndHeapMemory.
func (m *memModel) checkNetworkExplicit(network, total int64) *MemoryRefusal {
	ref := m.checkNetwork(network, total)
	if ref == nil || strings.HasPrefix(ref.FlinkMessage, rawPrefix) {
		return ref
	}
	detail := ref.FlinkMessage
	if ref.Detail != "" {
		detail += " " + ref.Detail
	}
	return &MemoryRefusal{Code: CodeMemoryInconsistent,
		Keys:         m.presentKeys(KeyNetworkMin, KeyNetworkMax, KeyNetworkFraction, KeyLegacyNetBuffers, KeyFlinkSize, KeyProcessSize, KeyTaskHeap, KeyManagedSize),
		FlinkMessage: "If Total Flink, Task Heap and (or) Managed Memory sizes are explicitly configured then the Network Memory size is the rest of the Total Flink memory after subtracting all other configured types of memory, but the derived Network Memory is inconsistent with its configuration.",
		Detail:       detail,
		Fix:          fmt.Sprintf("configure only some of the sizes (e.g. drop %s and let Flink derive it), or widen %s/%s", KeyTaskHeap, KeyNetworkMin, KeyNetworkMax)}
}

func (m *memModel) checkNetwork(network, total int64) *MemoryRefusal {
	_ = total // Flink only logs when the derived size does not match the fraction
	if m.usingLegacyNetwork() {
		configured, ref := m.legacyNetwork()
		if ref != nil {
			return ref
		}
		if configured != network {
			return &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: []string{KeyLegacyNetBuffers},
				FlinkMessage: fmt.Sprintf("Derived Network Memory size (%s) does not match configured Network Memory size (%s).", humanSize(network), humanSize(configured))}
		}
		return nil
	}
	r, ref := m.networkRange()
	if ref != nil {
		return ref
	}
	if network > r.max || network < r.min {
		return &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: []string{KeyNetworkMin, KeyNetworkMax},
			FlinkMessage: fmt.Sprintf("Derived Network Memory size (%s) is not in configured Network Memory range [%s, %s].", humanSize(network), humanSize(r.min), humanSize(r.max))}
	}
	return nil
}

// checkTotalFlink is sanityCheckTotalFlinkMemory.
func (m *memModel) checkTotalFlink(p flinkParts) *MemoryRefusal {
	if !m.contains(optFlink) {
		return nil
	}
	configured, ref := m.size(optFlink)
	if ref != nil {
		return ref
	}
	total, ref := p.total()
	if ref != nil {
		return ref
	}
	if configured == total {
		return nil
	}
	return &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: m.presentKeys(KeyFlinkSize, KeyTaskHeap, KeyManagedSize, KeyNetworkMin, KeyNetworkMax),
		FlinkMessage: fmt.Sprintf("Configured and Derived Flink internal memory sizes (total %s) do not add up to the configured Total Flink Memory size (%s). Configured and Derived Flink internal memory sizes are: Framework Heap Memory (%s), Framework Off-Heap Memory (%s), Task Heap Memory (%s), Task Off-Heap Memory (%s), Network Memory (%s), Managed Memory (%s).",
			humanSize(total), humanSize(configured), humanSize(p.frameworkHeap), humanSize(p.frameworkOff), humanSize(p.taskHeap), humanSize(p.taskOff), humanSize(p.network), humanSize(p.managed)),
		Fix: fmt.Sprintf("make the configured components add up to %s, or configure fewer of them", KeyFlinkSize)}
}

// withJVMFromFlink derives JVM metaspace and overhead from the flink size, then assembles the spec.
func (m *memModel) withJVMFromFlink(p flinkParts) (*TaskManagerMemory, *MemoryRefusal) {
	flinkTotal, ref := p.total()
	if ref != nil {
		return nil, ref
	}
	metaspace, overhead, ref := m.jvmFromFlink(flinkTotal)
	if ref != nil {
		return nil, ref
	}
	return m.assemble(p, metaspace, overhead)
}

// jvmFromFlink is deriveJvmMetaspaceAndOverheadFromTotalFlinkMemory: with a configured process
// size the overhead is the rest (and must fall within its min/max), else its fraction of flink
// size + metaspace.
func (m *memModel) jvmFromFlink(flinkTotal int64) (metaspace, overhead int64, ref *MemoryRefusal) {
	o := m.jvm
	if metaspace, ref = m.size(o.metaspace); ref != nil {
		return
	}
	flinkAndMeta, ref := sum(flinkTotal, metaspace)
	if ref != nil {
		return
	}
	if !m.contains(o.process) {
		r, ref := m.overheadRange()
		if ref != nil {
			return 0, 0, ref
		}
		overhead, ref = withInverseFraction(flinkAndMeta, r)
		return metaspace, overhead, ref
	}
	process, ref := m.size(o.process)
	if ref != nil {
		return
	}
	keys := m.presentKeys(append([]string{o.process.key, o.flink.key}, append(o.parts, o.metaspace.key)...)...)
	if process < flinkAndMeta {
		ref = &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: keys,
			FlinkMessage: fmt.Sprintf("The configured Total Process Memory size (%s) is less than the sum of the derived Total Flink Memory size (%s) and the configured or default JVM Metaspace size  (%s).",
				humanSize(process), humanSize(flinkTotal), humanSize(metaspace)),
			Fix: fmt.Sprintf("raise %s, or set only one of %s and %s", o.process.key, o.process.key, o.flink.key)}
		return
	}
	overhead = process - flinkAndMeta
	r, ref := m.overheadRange()
	if ref != nil {
		return
	}
	if overhead > r.max || overhead < r.min {
		ref = &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: append(keys, o.overheadMin.key, o.overheadMax.key),
			FlinkMessage: fmt.Sprintf("Derived JVM Overhead size (%s) is not in configured JVM Overhead range [%s, %s].",
				humanSize(overhead), humanSize(r.min), humanSize(r.max)),
			Fix: fmt.Sprintf("set only one of %s and %s (Flink derives the other), or adjust %s/%s so that process size - flink size - metaspace (%s) falls within them",
				o.process.key, o.flink.key, o.overheadMin.key, o.overheadMax.key, humanSize(overhead))}
	}
	return
}

func (m *memModel) assemble(p flinkParts, metaspace, overhead int64) (*TaskManagerMemory, *MemoryRefusal) {
	flinkTotal, ref := p.total()
	if ref != nil {
		return nil, ref
	}
	process, ref := sum(flinkTotal, metaspace, overhead)
	if ref != nil {
		return nil, ref
	}
	return &TaskManagerMemory{
		LegacyHeapKey:        m.legacyHeapKey(),
		LegacyNetworkBuffers: p.legacyNetwork,
		FrameworkHeap:        p.frameworkHeap,
		FrameworkOffHeap:     p.frameworkOff,
		TaskHeap:             p.taskHeap,
		TaskOffHeap:          p.taskOff,
		Network:              p.network,
		Managed:              p.managed,
		JVMMetaspace:         metaspace,
		JVMOverhead:          overhead,
		TotalFlink:           flinkTotal,
		TotalProcess:         process,
	}, nil
}

func (m *memModel) legacyHeapKey() string {
	if _, mapped := m.overlay[KeyProcessSize]; !mapped {
		return ""
	}
	if _, ok := m.fc.Lookup(KeyLegacyHeapSize); ok {
		return KeyLegacyHeapSize
	}
	return KeyLegacyHeapMB
}
