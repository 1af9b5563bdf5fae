package preflight

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
)

// Hadoop keys read by the NodeManager checks.
const (
	keyResourcePlugins   = "yarn.nodemanager.resource-plugins"
	keyPluggableDevices  = "yarn.nodemanager.pluggable-device-framework.enabled"
	keyDeviceClasses     = "yarn.nodemanager.pluggable-device-framework.device-classes"
	keyContainerExecutor = "yarn.nodemanager.container-executor.class"
	keyResourcesHandler  = "yarn.nodemanager.linux-container-executor.resources-handler.class"
	keyCgroupsMount      = "yarn.nodemanager.linux-container-executor.cgroups.mount"
	keyCgroupsMountPath  = "yarn.nodemanager.linux-container-executor.cgroups.mount-path"
	linuxExecutor        = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
	cgroupsHandler       = "org.apache.hadoop.yarn.server.nodemanager.util.CgroupsLCEResourcesHandler"
)

// noHadoop is the skip reason of the checks that need a Hadoop configuration.
const noHadoop = "no Hadoop configuration (give --hadoop-conf, or set HADOOP_CONF_DIR or HADOOP_HOME)"

// resourceTypesCheck reports yarn.resource-types-invalid.
func (f *facts) resourceTypesCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	for _, p := range f.typeProblems {
		if p.Code == profile.CodeResourceTypesInvalid {
			out.add(problemStatus(p), p.Source.String(), p.Fix, "%s", message(p))
		}
	}
	var declared []string
	for _, rt := range f.types.All() {
		if rt.Name != records.MemoryMB && rt.Name != records.VCores {
			declared = append(declared, rt.Name)
		}
	}
	if len(declared) == 0 {
		out.pass("", "yarn.resource-types declares no type besides memory-mb and vcores")
		return
	}
	out.pass(sourceOf(f.in.Hadoop, profile.KeyResourceTypes), "yarn.resource-types declares %s", strings.Join(declared, ", "))
}

// undeclaredCheck reports yarn.resource-type-undeclared: each requested type that
// yarn.resource-types does not declare, and NodeManager resources of undeclared types. When the
// live RM knows a type anyway, the local files are out of date: a warning.
func (f *facts) undeclaredCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	known := f.live.knownTypes()
	problems := slices.Clone(f.tr.Problems)
	problems = append(problems, f.nodeProblems...)
	for _, p := range problems {
		if p.Code != profile.CodeResourceTypeUndeclared {
			continue
		}
		t := p.Key
		if v, ok := f.in.Flink.Lookup(p.Key); ok {
			t = v.Value
		} else if rest, ok := strings.CutPrefix(p.Key, profile.KeyNodeResourcePrefix); ok {
			t = rest
		}
		if known != nil && known[t] {
			out.warn(p.Source.String(),
				fmt.Sprintf("update the Hadoop configuration in %s from the cluster's (resource-types.xml)", f.in.Hadoop.Dir()),
				"%s (the ResourceManager at %s knows '%s', so only this configuration is out of date)", message(p), f.live.rm, t)
			continue
		}
		out.fail(p.Source.String(), p.Fix, "%s", message(p))
	}
	ext := f.extendedRequest()
	var ok []string
	for _, res := range ext {
		if _, found := f.types.Lookup(res.Name); found {
			ok = append(ok, res.Name)
		}
	}
	switch {
	case len(ext) == 0:
		out.pass("", "no resource type besides memory-mb and vcores is requested")
	case len(ok) > 0:
		out.pass(sourceOf(f.in.Hadoop, profile.KeyResourceTypes), "declared in yarn.resource-types: %s", strings.Join(ok, ", "))
	}
}

// maxAllocationCheck reports yarn.max-allocation-exceeded: each requested amount above its type's
// maximum allocation (units converted). Where the ResourceManager reports its effective maximum
// allocation (/ws/v1/cluster/scheduler-overview, Hadoop 3.4+: the configured maximum capped by
// the largest NodeManager, what it checks requests against), that decides; else the
// configuration's: memory-mb and vcores against yarn.scheduler.maximum-allocation-mb/-vcores (or
// yarn.resource-types.memory-mb/vcores.*), other types against
// yarn.resource-types.<type>.maximum-allocation.
func (f *facts) maxAllocationCheck(_ context.Context, out *results) {
	if f.in.Hadoop == nil && f.live.effectiveMax().Len() == 0 {
		// The ResourceManager's effective maximum allocation stands in for the files.
		out.skip(noHadoop)
		return
	}
	effective := f.live.effectiveMax()
	var fine []string
	usedLive := false
	for _, res := range f.tr.Resource.All() {
		rt, declared := f.types.Lookup(res.Name)
		if eff, ok := effective.Quantity(res.Name); ok {
			usedLive = true
			if line, ok := f.maxAllocationLive(out, res, eff, rt, declared); ok {
				fine = append(fine, line)
			}
			continue
		}
		if !declared {
			continue // undeclared: yarn.resource-type-undeclared says so
		}
		unit := requestUnit(res.Name)
		cmp, err := records.Compare(unit, res.Value, rt.Units, rt.Maximum)
		if err != nil {
			out.warn(f.origin(res.Name), "fix the unit of the resource type", "%s: cannot compare %d with the maximum allocation %d%s: %v",
				res.Name, res.Value, rt.Maximum, rt.Units, err)
			continue
		}
		maxKey, maxSrc := maxKeyOf(rt)
		if cmp > 0 {
			out.fail(f.origin(res.Name),
				fmt.Sprintf("ask for at most %s of %s per %s, or raise %s on the ResourceManager", fmtAmount(rt.Maximum, rt.Units), res.Name, f.subj.one, maxKey),
				"%s: the %s asks for %s, above the maximum allocation %s (%s%s): %s",
				res.Name, f.subj.one, fmtAmount(res.Value, unit), fmtAmount(rt.Maximum, rt.Units), maxKey, atSource(maxSrc), rejected)
			continue
		}
		if rt.Maximum == math.MaxInt64 {
			fine = append(fine, fmt.Sprintf("%s %s (no maximum)", res.Name, fmtAmount(res.Value, unit)))
		} else {
			fine = append(fine, fmt.Sprintf("%s %s ≤ %s", res.Name, fmtAmount(res.Value, unit), fmtAmount(rt.Maximum, rt.Units)))
		}
	}
	switch {
	case len(fine) > 0 && usedLive:
		out.pass(f.live.rm+pathOverview, "within the maximum allocations (the ResourceManager's effective ones where it reports them): %s", strings.Join(fine, ", "))
	case len(fine) > 0:
		out.pass("", "within the configured maximum allocations: %s", strings.Join(fine, ", "))
	case out.has(StatusFail, StatusWarn):
	case f.in.Hadoop == nil:
		out.skip("%s, and the ResourceManager's effective maximum allocation lists no requested type", noHadoop)
	default:
		out.skip("no requested resource type is declared in this configuration")
	}
}

// rejected is what the RM answers a request above the maximum allocation.
const rejected = "YARN rejects the request (InvalidResourceRequestException: requested resource is greater than maximum allowed allocation)"

// maxAllocationLive judges one requested resource against the ResourceManager's effective maximum
// allocation eff; rt is its type in the Hadoop configuration when declared there. It reports
// findings itself and returns the pass line when the request is within eff. A configuration whose
// own maximum is below the request the RM allows is out of date: a warning.
func (f *facts) maxAllocationLive(out *results, res records.Resource, eff records.Quantity, rt profile.ResourceType, declared bool) (string, bool) {
	asked := records.Quantity{Value: res.Value, Units: requestUnit(res.Name)}
	src := f.live.rm + pathOverview
	cmp, err := asked.Cmp(eff)
	if err != nil {
		out.warn(f.origin(res.Name), "check the resource type's unit on the ResourceManager",
			"%s: cannot compare %s with the ResourceManager's effective maximum allocation %s: %v", res.Name, asked, eff, err)
		return "", false
	}
	configured := records.Quantity{}
	maxKey, maxSrc := "", ""
	if declared {
		configured = records.Quantity{Value: rt.Maximum, Units: rt.Units}
		maxKey, maxSrc = maxKeyOf(rt)
	}
	if cmp > 0 {
		fix := fmt.Sprintf("ask for at most %s of %s per %s", fmtAmount(eff.Value, eff.Units), res.Name, f.subj.one)
		why := "the configured maximum capped by the largest NodeManager"
		switch c, err := eff.Cmp(configured); {
		case !declared:
			key, _ := maxKeyOf(profile.ResourceType{Name: res.Name})
			fix += fmt.Sprintf(", or raise %s on the ResourceManager, or give the NodeManagers more %s", key, res.Name)
		case err == nil && c < 0:
			fix += fmt.Sprintf(", or add NodeManagers with more %s: the largest one caps the configured maximum", res.Name)
			why = fmt.Sprintf("the configured maximum, %s (%s%s), capped by the largest NodeManager", fmtAmount(configured.Value, configured.Units), maxKey, atSource(maxSrc))
		default:
			fix += fmt.Sprintf(", or raise %s on the ResourceManager", maxKey)
			why = fmt.Sprintf("the configured maximum, %s%s", maxKey, atSource(maxSrc))
		}
		out.fail(f.origin(res.Name), fix,
			"%s: the %s asks for %s, above the ResourceManager's effective maximum allocation %s (%s%s: %s): %s",
			res.Name, f.subj.one, fmtAmount(asked.Value, asked.Units), fmtAmount(eff.Value, eff.Units), f.live.rm, pathOverview, why, rejected)
		return "", false
	}
	if declared {
		if c, err := asked.Cmp(configured); err == nil && c > 0 {
			out.warn(maxSrc,
				fmt.Sprintf("update the Hadoop configuration in %s from the cluster's", f.in.Hadoop.Dir()),
				"%s: this configuration's maximum allocation %s (%s%s) is below the request %s, but the ResourceManager at %s allows %s (%s), so only this configuration is out of date",
				res.Name, fmtAmount(configured.Value, configured.Units), maxKey, atSource(maxSrc), fmtAmount(asked.Value, asked.Units), f.live.rm, fmtAmount(eff.Value, eff.Units), src)
			return "", false
		}
	}
	return fmt.Sprintf("%s %s ≤ %s (effective)", res.Name, fmtAmount(asked.Value, asked.Units), fmtAmount(eff.Value, eff.Units)), true
}

// requestUnit is the unit of an amount in Flink's request: memory-mb in Mi, everything else as a
// plain number (Flink builds ResourceInformation without a unit; the RM converts it).
func requestUnit(name string) string {
	if name == records.MemoryMB {
		return records.MemoryUnits
	}
	return ""
}

// maxKeyOf returns the key that sets a type's maximum allocation and its source.
func maxKeyOf(rt profile.ResourceType) (string, string) {
	switch rt.Name {
	case records.MemoryMB:
		return profile.KeySchedulerMaximumMB, rt.MaximumSource.String()
	case records.VCores:
		return profile.KeySchedulerMaximumVCores, rt.MaximumSource.String()
	}
	return profile.KeyResourceTypes + "." + rt.Name + ".maximum-allocation", rt.MaximumSource.String()
}

// atSource renders " at src" or "" (or " default" when src is empty).
func atSource(src string) string {
	if src == "" {
		return ", Hadoop's default"
	}
	return " at " + src
}

// fmtAmount renders an amount with its unit.
func fmtAmount(v int64, unit string) string {
	if v == math.MaxInt64 {
		return "unlimited"
	}
	return records.Quantity{Value: v, Units: unit}.String()
}

// nmResourcesCheck reports yarn.nm-resources: each requested type must be offered by a
// NodeManager (a resource plugin, a yarn.nodemanager.resource-type.<t> count, or the pluggable
// device framework), and a GPU/FPGA plugin needs LinuxContainerExecutor and cgroups to isolate.
func (f *facts) nmResourcesCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	hc := f.in.Hadoop
	for _, p := range f.nodeProblems {
		if p.Code == profile.CodeNodeResourcesInvalid {
			out.add(problemStatus(p), p.Source.String(), p.Fix, "%s", message(p))
		}
	}
	ext := f.extendedRequest()
	if len(ext) == 0 {
		out.pass("", "no resource type besides memory-mb and vcores is requested")
		return
	}
	pluginsProp, _ := hc.Lookup(keyResourcePlugins)
	plugins := conf.TrimmedStrings(pluginsProp.Value)
	pluggable := hc.GetBool(keyPluggableDevices, false) &&
		strings.TrimSpace(hc.Get(keyDeviceClasses)) != ""
	for _, res := range ext {
		t := res.Name
		switch {
		case slices.Contains(plugins, t):
			out.pass(pluginsProp.Source.String(), "%s: offered by the NodeManager resource plugin (%s)", t, keyResourcePlugins)
			if t == records.GPU || t == records.FPGA {
				// Each device type has its own handler and container-executor.cfg module.
				f.isolationCheck(out, t, pluginsProp.Source.String())
			}
			continue
		case pluggable:
			out.pass(sourceOf(hc, keyDeviceClasses), "%s: the pluggable device framework is on (%s); its device plugins name their resource types", t, keyDeviceClasses)
			continue
		}
		if nr, ok := nodeResource(f.nodeResources, t); ok {
			if nr.Value > 0 {
				out.pass(nr.Source.String(), "%s: %s%s = %d%s per NodeManager (a plain count: scheduled, not isolated)", t, profile.KeyNodeResourcePrefix, t, nr.Value, nr.Units)
				continue
			}
			out.warn(nr.Source.String(), fmt.Sprintf("set %s%s to the number of devices of each NodeManager", profile.KeyNodeResourcePrefix, t),
				"%s: the NodeManager configuration offers %d, so no container gets one", t, nr.Value)
			continue
		}
		if n := f.live.nodesOffering(t); n > 0 {
			out.pass(f.live.rm, "%s: not configured in %s, but %d RUNNING NodeManagers advertise it", t, hc.Dir(), n)
			continue
		}
		fix := fmt.Sprintf("on the NodeManagers, set %s=%s (with the GPU/FPGA plugin) or %s%s=<count> in node-resources.xml", keyResourcePlugins, t, profile.KeyNodeResourcePrefix, t)
		if t != records.GPU && t != records.FPGA {
			fix = fmt.Sprintf("on the NodeManagers, set %s%s=<count> in node-resources.xml (or configure a device plugin)", profile.KeyNodeResourcePrefix, t)
		}
		out.warn(f.origin(t), fix,
			"%s: no %s entry and no %s%s count in %s: no NodeManager configured from it offers %s, so YARN's maximum for it is 0 (if this is not the NodeManagers' configuration, check theirs)",
			t, keyResourcePlugins, profile.KeyNodeResourcePrefix, t, hc.Dir(), t)
	}
}

// isolationCheck warns when a GPU/FPGA plugin runs without LinuxContainerExecutor and cgroups.
func (f *facts) isolationCheck(out *results, t, src string) {
	hc := f.in.Hadoop
	exec := strings.TrimSpace(hc.Get(keyContainerExecutor))
	if !strings.HasSuffix(exec, "LinuxContainerExecutor") {
		shown := exec
		if shown == "" {
			shown = "DefaultContainerExecutor (Hadoop's default)"
		}
		out.warn(sourceOr(hc, keyContainerExecutor, src),
			fmt.Sprintf("set %s=%s with cgroups (container-executor.cfg: [gpu]/[fpga] module.enabled=true)", keyContainerExecutor, linuxExecutor),
			"%s: the resource plugin runs with %s: devices are scheduled but not isolated, so any container can use every device", t, shown)
		return
	}
	// LinuxContainerExecutor builds its resource-handler chain with a handler for every resource
	// plugin, each given an initialised cgroups handler (ResourceHandlerModule,
	// addHandlersFromConfiguredResourcePlugins, Hadoop 3.2-3.5), whatever resources-handler.class
	// says; the GPU/FPGA handlers use the devices controller. Without cgroups.mount or a
	// mount-path the NodeManager finds the controllers in /proc/mounts.
	where := "the devices controller as /proc/mounts shows it"
	switch {
	case strings.TrimSpace(hc.Get(keyCgroupsMountPath)) != "":
		where = fmt.Sprintf("the cgroups at %s (%s)", strings.TrimSpace(hc.Get(keyCgroupsMountPath)), keyCgroupsMountPath)
	case hc.GetBool(keyCgroupsMount, false):
		where = fmt.Sprintf("cgroups it mounts (%s=true)", keyCgroupsMount)
	}
	note, ok := f.executorModuleCheck(out, t)
	if !ok {
		return
	}
	out.pass(sourceOf(hc, keyContainerExecutor), "%s: isolated by LinuxContainerExecutor with cgroups: the resource plugin's handler uses %s%s", t, where, note)
}

func nodeResource(list []profile.NodeResource, name string) (profile.NodeResource, bool) {
	for _, nr := range list {
		if nr.Name == name {
			return nr, true
		}
	}
	return profile.NodeResource{}, false
}

// sourceOf is the source of a Hadoop key as text, "" when absent.
func sourceOf(hc *conf.HadoopConfig, key string) string {
	if p, ok := hc.Lookup(key); ok {
		return p.Source.String()
	}
	return ""
}

// sourceOr is the source of a Hadoop key, or fallback when the key is absent.
func sourceOr(hc *conf.HadoopConfig, key, fallback string) string {
	if s := sourceOf(hc, key); s != "" {
		return s
	}
	return fallback
}
