package profile

import (
	"fmt"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
)

// JobManager memory and vcores keys (Flink's JobManagerOptions and YarnConfigOptions).
const (
	KeyJMProcessSize     = "jobmanager.memory.process.size"
	KeyJMFlinkSize       = "jobmanager.memory.flink.size"
	KeyJMHeap            = "jobmanager.memory.heap.size"
	KeyJMOffHeap         = "jobmanager.memory.off-heap.size"
	KeyJMMetaspace       = "jobmanager.memory.jvm-metaspace.size"
	KeyJMOverheadMin     = "jobmanager.memory.jvm-overhead.min"
	KeyJMOverheadMax     = "jobmanager.memory.jvm-overhead.max"
	KeyJMOverheadFrac    = "jobmanager.memory.jvm-overhead.fraction"
	KeyJMLegacyHeapSize  = "jobmanager.heap.size"
	KeyJMLegacyHeapMB    = "jobmanager.heap.mb"
	KeyAppMasterVCores   = "yarn.appmaster.vcores"
	minJobManagerHeapMiB = 128 // JobManagerOptions.MIN_JVM_HEAP_SIZE: below it Flink only warns
)

var (
	optJMProcess = memOption{key: KeyJMProcessSize}
	optJMFlink   = memOption{key: KeyJMFlinkSize}
	optJMHeap    = memOption{key: KeyJMHeap}
	optJMOffHeap = memOption{key: KeyJMOffHeap, def: "128m"}
	optJMLegacy  = memOption{key: KeyJMLegacyHeapSize}
	jmJVM        = jvmOptions{process: optJMProcess, flink: optJMFlink,
		metaspace:   memOption{key: KeyJMMetaspace, def: "256m"},
		overheadMin: memOption{key: KeyJMOverheadMin, def: "192m"}, overheadMax: memOption{key: KeyJMOverheadMax, def: "1g"},
		overheadFrac: fracOption{key: KeyJMOverheadFrac, def: 0.1},
		parts:        []string{KeyJMHeap},
		sizes: []string{KeyJMProcessSize, KeyJMFlinkSize, KeyJMHeap, KeyJMOffHeap, KeyJMMetaspace, KeyJMOverheadMin, KeyJMOverheadMax,
			KeyJMLegacyHeapSize, KeyJMLegacyHeapMB}}
)

// JobManagerMemory is the JobManager's (the YARN ApplicationMaster's) memory as Flink's client
// derives it (JobManagerProcessUtils) before submitting. Sizes are in bytes; the JSON shape is
// public.
type JobManagerMemory struct {
	// FlinkVersion is the rule set used: 1.x or 2.x.
	FlinkVersion FlinkVersion `json:"flinkVersion"`
	// DerivedFrom is the path Flink took: fine-grained (the heap), flink-size or process-size.
	DerivedFrom string `json:"derivedFrom"`
	// LegacyHeapKey is jobmanager.heap.size or jobmanager.heap.mb when Flink 1.x mapped it to the
	// process size; "" otherwise.
	LegacyHeapKey string `json:"legacyHeapKey,omitempty"`

	JVMHeap      int64 `json:"jvmHeapBytes"`
	OffHeap      int64 `json:"offHeapBytes"`
	JVMMetaspace int64 `json:"jvmMetaspaceBytes"`
	JVMOverhead  int64 `json:"jvmOverheadBytes"`
	TotalFlink   int64 `json:"totalFlinkBytes"`
	TotalProcess int64 `json:"totalProcessBytes"`
	// ContainerMB is TotalProcess in whole MiB, rounded down: the ApplicationMaster container's
	// memory-mb.
	ContainerMB int64 `json:"containerMemoryMB"`
	// VCores is yarn.appmaster.vcores (default 1): the ApplicationMaster container's vcores.
	VCores int64 `json:"vcores"`
}

// Request returns the ApplicationMaster container's resource vector: memory-mb and vcores.
func (j *JobManagerMemory) Request() records.Resources {
	return records.NewResources(j.ContainerMB, j.VCores)
}

// DeriveJobManagerMemory derives the JobManager container as Flink version v's YARN client does
// (YarnClusterDescriptor: JobManagerProcessUtils after, in Flink 1.x, mapping jobmanager.heap.size
// / jobmanager.heap.mb to jobmanager.memory.process.size; vcores from yarn.appmaster.vcores). The
// JobManager's Flink memory is JVM heap + off-heap (default 128m); JVM metaspace (256m) and
// overhead (0.1, 192m..1g) are derived as for the TaskManager. A configuration Flink refuses
// returns a *MemoryRefusal with Flink's message (in 1.x "JobManager memory configuration failed: ...").
func DeriveJobManagerMemory(fc *conf.FlinkConfig, v FlinkVersion) (*JobManagerMemory, []Problem, *MemoryRefusal) {
	return DeriveJobManagerMemoryEnv(fc, v, nil)
}

// DeriveJobManagerMemoryEnv is DeriveJobManagerMemory with the environment of Flink's client
// (getenv; nil: empty), where Flink 1.x reads FLINK_JM_HEAP before jobmanager.heap.size: the
// client sizes the JobManager container (YarnClusterDescriptor). Flink 2.x ignores it.
func DeriveJobManagerMemoryEnv(fc *conf.FlinkConfig, v FlinkVersion, getenv func(string) string) (*JobManagerMemory, []Problem, *MemoryRefusal) {
	if v == FlinkVersionUnset {
		v = DefaultFlinkVersion(fc.Files())
	}
	m := &memModel{fc: fc, version: v, overlay: map[string]string{}, jvm: jmJVM, envHeapName: EnvJMHeap,
		envHeapSrc: "$" + EnvJMHeap}
	if getenv != nil {
		// Java's System.getenv tells an empty variable from an unset one; Go's Getenv does not:
		// an empty value counts as unset.
		if val := getenv(EnvJMHeap); val != "" {
			m.envHeap, m.envHeapSet = val, true
		}
	}
	if m.envHeapSet && v != Flink1 {
		m.add(SeverityWarning, CodeMemoryInvalid, conf.Source{}, "$"+EnvJMHeap,
			fmt.Sprintf("unset %s and set %s", EnvJMHeap, KeyJMProcessSize),
			"%s is set in the environment: Flink 2.x ignores it (Flink 1.x's client used it as %s)", EnvJMHeap, KeyJMProcessSize)
	}
	mem, ref := m.deriveJM()
	if ref != nil {
		// Flink 1.x wraps the reason; 2.x's client throws it as it is.
		prefix := ""
		if v == Flink1 {
			prefix = "JobManager memory configuration failed: "
		}
		return nil, m.problems, m.finish(ref, prefix)
	}
	mem.FlinkVersion = v
	mem.ContainerMB = mem.TotalProcess >> 20
	if mem.JVMHeap < minJobManagerHeapMiB<<20 {
		m.add(SeverityWarning, CodeMemoryInvalid, m.sourceOf(KeyJMProcessSize), KeyJMProcessSize,
			"give the JobManager more memory, e.g. jobmanager.memory.process.size: 1600m",
			"The configured or derived JVM heap memory size (%s) is less than its recommended minimum value (%s)", humanSize(mem.JVMHeap), humanSize(minJobManagerHeapMiB<<20))
	}
	mem.VCores = 1
	if vv, ok := fc.Lookup(KeyAppMasterVCores); ok {
		text := fc.FlinkString(KeyAppMasterVCores)
		n, err := parseJavaInt(text)
		if err != nil {
			return nil, m.problems, &MemoryRefusal{Code: CodeCPUInvalid, Keys: []string{vv.Key},
				FlinkMessage: fmt.Sprintf("Could not parse value '%s' for key '%s'.", text, vv.Key),
				Fix:          "set yarn.appmaster.vcores to a positive whole number, e.g. 1"}
		}
		mem.VCores = n
	}
	return mem, m.problems, nil
}

func (m *memModel) deriveJM() (*JobManagerMemory, *MemoryRefusal) {
	if m.version == Flink1 && !m.contains(optJMProcess) {
		if ref := m.mapJMLegacyHeap(); ref != nil {
			return nil, ref
		}
	}
	var (
		mem  *JobManagerMemory
		ref  *MemoryRefusal
		path string
	)
	switch {
	case m.contains(optJMHeap):
		mem, ref, path = m.jmFineGrained()
	case m.contains(optJMFlink):
		total, r := m.size(optJMFlink)
		if r != nil {
			return nil, r
		}
		mem, ref, path = m.jmFromFlink(total)
	case m.contains(optJMProcess):
		process, metaspace, overhead, r := m.jvmFromProcess()
		if r != nil {
			return nil, r
		}
		heap, off, r := m.jmFromTotalFlink(process - metaspace - overhead)
		if r != nil {
			return nil, r
		}
		mem, path = jmAssemble(heap, off, metaspace, overhead), MemoryFromProcessSize
	default:
		return nil, &MemoryRefusal{Code: CodeMemoryNotConfigured, Keys: []string{KeyJMProcessSize, KeyJMFlinkSize, KeyJMHeap},
			FlinkMessage: fmt.Sprintf("Either required fine-grained memory (%s), or Total Flink Memory size (%s), or Total Process Memory size (%s) need to be configured explicitly.",
				KeyJMHeap, memOptionString(optJMFlink), memOptionString(optJMProcess)),
			Fix: fmt.Sprintf("set %s, e.g. 1600m: on YARN it is the JobManager (ApplicationMaster) container's memory", KeyJMProcessSize)}
	}
	if ref != nil {
		return nil, ref
	}
	mem.DerivedFrom = path
	if _, mapped := m.overlay[KeyJMProcessSize]; mapped {
		mem.LegacyHeapKey = KeyJMLegacyHeapMB
		if _, ok := m.fc.Lookup(KeyJMLegacyHeapSize); ok {
			mem.LegacyHeapKey = KeyJMLegacyHeapSize
		}
		if m.jmFromEnv {
			mem.LegacyHeapKey = "$" + EnvJMHeap
		}
	}
	return mem, nil
}

func jmAssemble(heap, off, metaspace, overhead int64) *JobManagerMemory {
	return &JobManagerMemory{JVMHeap: heap, OffHeap: off, JVMMetaspace: metaspace, JVMOverhead: overhead,
		TotalFlink: heap + off, TotalProcess: heap + off + metaspace + overhead}
}

// jmFineGrained is JobManagerFlinkMemoryUtils.deriveFromRequiredFineGrainedOptions.
func (m *memModel) jmFineGrained() (*JobManagerMemory, *MemoryRefusal, string) {
	heap, ref := m.size(optJMHeap)
	if ref != nil {
		return nil, ref, ""
	}
	off, ref := m.size(optJMOffHeap)
	if ref != nil {
		return nil, ref, ""
	}
	if m.contains(optJMFlink) {
		total, ref := m.size(optJMFlink)
		if ref != nil {
			return nil, ref, ""
		}
		if m.contains(optJMOffHeap) {
			if heap+off != total {
				return nil, &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: []string{KeyJMHeap, KeyJMOffHeap, KeyJMFlinkSize},
					FlinkMessage: fmt.Sprintf("Sum of the configured JVM Heap Memory (%s) and the configured Off-heap Memory (%s) does not match the configured Total Flink Memory (%s). Please, make the configuration consistent or configure only one option: either JVM Heap or Total Flink Memory.",
						humanSize(heap), humanSize(off), humanSize(total)),
					Fix: fmt.Sprintf("configure only one of %s and %s", KeyJMHeap, KeyJMFlinkSize)}, ""
			}
		} else {
			if total < heap {
				return nil, &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: []string{KeyJMHeap, KeyJMFlinkSize},
					FlinkMessage: fmt.Sprintf("The configured JVM Heap Memory (%s) exceeds the configured Total Flink Memory (%s). Please, make the configuration consistent or configure only one option: either JVM Heap or Total Flink Memory.",
						humanSize(heap), humanSize(total)),
					Fix: fmt.Sprintf("configure only one of %s and %s", KeyJMHeap, KeyJMFlinkSize)}, ""
			}
			off = total - heap
		}
	}
	metaspace, overhead, ref := m.jvmFromFlink(heap + off)
	if ref != nil {
		return nil, ref, ""
	}
	return jmAssemble(heap, off, metaspace, overhead), nil, MemoryFromFineGrained
}

func (m *memModel) jmFromFlink(total int64) (*JobManagerMemory, *MemoryRefusal, string) {
	heap, off, ref := m.jmFromTotalFlink(total)
	if ref != nil {
		return nil, ref, ""
	}
	metaspace, overhead, ref := m.jvmFromFlink(total)
	if ref != nil {
		return nil, ref, ""
	}
	return jmAssemble(heap, off, metaspace, overhead), nil, MemoryFromFlinkSize
}

// jmFromTotalFlink is JobManagerFlinkMemoryUtils.deriveFromTotalFlinkMemory: off-heap as
// configured, the heap is the rest.
func (m *memModel) jmFromTotalFlink(total int64) (int64, int64, *MemoryRefusal) {
	off, ref := m.size(optJMOffHeap)
	if ref != nil {
		return 0, 0, ref
	}
	if total <= off {
		return 0, 0, &MemoryRefusal{Code: CodeMemoryInconsistent, Keys: m.presentKeys(KeyJMFlinkSize, KeyJMProcessSize, KeyJMOffHeap),
			FlinkMessage: fmt.Sprintf("The configured Total Flink Memory (%s) is less than the configured Off-heap Memory (%s).", humanSize(total), humanSize(off)),
			Fix:          fmt.Sprintf("raise the JobManager's memory (%s), or lower %s", KeyJMProcessSize, KeyJMOffHeap)}
	}
	return total - off, off, nil
}

// mapJMLegacyHeap maps $FLINK_JM_HEAP of the client, else jobmanager.heap.size / jobmanager.heap.mb,
// to the process size (Flink 1.x).
func (m *memModel) mapJMLegacyHeap() *MemoryRefusal {
	var bytes int64
	var key string
	envBytes, envSet, envRef := m.envLegacyHeap(KeyJMProcessSize)
	switch {
	case envRef != nil:
		return envRef
	case envSet:
		if m.version != Flink1 {
			return nil
		}
		bytes, key = envBytes, "$"+EnvJMHeap
		m.add(SeverityWarning, CodeMemoryInvalid, conf.Source{}, key,
			fmt.Sprintf("set %s: %dm instead, and unset %s (Flink 2.x ignores it)", KeyJMProcessSize, bytes>>20, EnvJMHeap),
			"%s is set in the environment: Flink 1.x's client uses it as %s (%s) before %s; Flink 2.x ignores it", EnvJMHeap, KeyJMProcessSize, humanSize(bytes), KeyJMLegacyHeapSize)
		m.overlay[KeyJMProcessSize] = fmt.Sprintf("%db", bytes)
		m.jmFromEnv = true
		return nil
	case m.contains(optJMLegacy):
		b, ref := m.size(optJMLegacy)
		if ref != nil {
			return ref
		}
		bytes, key = b, KeyJMLegacyHeapSize
	default:
		v, ok := m.fc.Lookup(KeyJMLegacyHeapMB)
		if !ok {
			return nil
		}
		text := m.fc.FlinkString(KeyJMLegacyHeapMB)
		n, err := parseJavaInt(text)
		if err != nil {
			return &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyJMLegacyHeapMB},
				FlinkMessage: rawPrefix + fmt.Sprintf("Could not parse value '%s' for key '%s'.", text, KeyJMLegacyHeapMB),
				Fix:          fmt.Sprintf("set %s instead, e.g. 1600m", KeyJMProcessSize)}
		}
		if n < 0 {
			return &MemoryRefusal{Code: CodeMemoryInvalid, Keys: []string{KeyJMLegacyHeapMB},
				FlinkMessage: fmt.Sprintf("Configured total process memory size (%dMB) must not be less than 0.", n),
				Fix:          fmt.Sprintf("set %s instead, e.g. 1600m", KeyJMProcessSize)}
		}
		bytes, key = n<<20, v.Key
	}
	m.add(SeverityWarning, CodeMemoryInvalid, m.sourceOf(key), key,
		fmt.Sprintf("set %s: %dm instead (Flink 2.x ignores %s)", KeyJMProcessSize, bytes>>20, key),
		"%s is deprecated: Flink 1.x on YARN uses it as %s (%s); Flink 2.x ignores it", key, KeyJMProcessSize, humanSize(bytes))
	m.overlay[KeyJMProcessSize] = fmt.Sprintf("%db", bytes)
	return nil
}
