package preflight

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
)

// migProfilePattern is an NVIDIA MIG profile as nvidia-smi and NVML name it: an optional compute
// instance part ("1c."), then the GPU instance's slices and memory ("1g.10gb", "3g.40gb",
// "1g.12gb"), optionally with the media extensions ("+me"), and NVIDIA's newer "+gfx"/"-me" forms.
var migProfilePattern = regexp.MustCompile(`^(\d+c\.)?\d+g\.\d+gb([+-](me|gfx|me\.all))?$`)

// MIGProfile returns the MIG profile a resource type names ("1g.10gb" for nvidia.com/mig-1g.10gb,
// mig-3g.40gb, yarn.io/mig-1g.10gb; the NVIDIA Kubernetes device plugin's mixed-strategy names
// are nvidia.com/mig-<profile>), and whether it names one. The name part after the last '/' must
// start with "mig-" (any case).
func MIGProfile(resourceType string) (string, bool) {
	local := resourceType[strings.LastIndex(resourceType, "/")+1:]
	if len(local) < 4 || !strings.EqualFold(local[:4], "mig-") {
		return "", false
	}
	p := strings.ToLower(local[4:])
	return p, migProfilePattern.MatchString(p)
}

// isMIGType reports whether a resource type is meant as MIG slices: its name after the last '/'
// starts with "mig-" (any case), whether or not the rest is a valid profile.
func isMIGType(name string) bool {
	local := name[strings.LastIndex(name, "/")+1:]
	return len(local) >= 4 && strings.EqualFold(local[:4], "mig-")
}

// migCheck reports yarn.mig-resources: MIG slices offered or asked for as YARN resource types
// (one custom type per profile, e.g. nvidia.com/mig-1g.10gb; YARN has no MIG plugin). Each such
// type must be a valid YARN resource name (Hadoop's ResourceUtils rule: the Kubernetes names
// with "+me" are not), name a MIG profile (yarn-er exec matches devices to it), be a plain count,
// and be offered by the NodeManagers; and a GPU plugin that also discovers the GPUs is a trap:
// Hadoop's GPU plugin offers every GPU nvidia-smi lists as yarn.io/gpu, a GPU in MIG mode too,
// whose container then gets no usable CUDA device.
func (f *facts) migCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	hc := f.in.Hadoop
	var names []string
	add := func(n string) {
		if isMIGType(n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, res := range f.extendedRequest() {
		add(res.Name)
	}
	for _, rt := range f.types.All() {
		add(rt.Name)
	}
	for _, nr := range f.nodeResources {
		add(nr.Name)
	}
	if len(names) == 0 {
		out.pass("", "no MIG resource type (nvidia.com/mig-<profile>) is declared, offered or asked for")
		return
	}
	requested := map[string]bool{}
	for _, res := range f.extendedRequest() {
		requested[res.Name] = true
	}
	found := false
	var offered []string
	for _, n := range names {
		src := sourceOr(hc, profile.KeyNodeResourcePrefix+n, sourceOr(hc, profile.KeyResourceTypes, hc.Dir()))
		if requested[n] {
			src = orDefault(f.origin(n), src)
		}
		if err := records.ValidateResourceName(n); err != nil {
			found = true
			fix := fmt.Sprintf("name the type %s (letters, digits, '.', '_' and '-' only) in resource-types.xml, node-resources.xml and the request", strings.NewReplacer("+", "-").Replace(n))
			out.fail(src, fix, "%s: %v (the NVIDIA Kubernetes device plugin's names with '+' cannot be YARN resource types)", n, err)
			continue
		}
		prof, ok := MIGProfile(n)
		if !ok {
			found = true
			out.warn(src, "name the type after the profile nvidia-smi -L prints, e.g. nvidia.com/mig-1g.10gb",
				"%s: %q is not a MIG profile as NVIDIA names them (<n>g.<m>gb, e.g. 1g.10gb, 3g.40gb): yarn-er exec cannot tell which slices it stands for", n, strings.TrimPrefix(strings.ToLower(n[strings.LastIndex(n, "/")+1:]), "mig-"))
			continue
		}
		if rt, ok := f.types.Lookup(n); ok && rt.Units != "" {
			found = true
			out.fail(sourceOr(hc, "yarn.resource-types."+n+".units", src), fmt.Sprintf("remove yarn.resource-types.%s.units: MIG slices are a count", n),
				"%s is declared with unit %q: a request for 1 slice is converted and rounded (MIG slices are counted, not measured)", n, rt.Units)
		}
		if nr, ok := nodeResource(f.nodeResources, n); ok && nr.Value > 0 {
			offered = append(offered, fmt.Sprintf("%s = %d per NodeManager (profile %s)", n, nr.Value, prof))
		} else if requested[n] {
			found = true
			out.fail(src, fmt.Sprintf("offer the slices on the MIG NodeManagers: %s%s = <slices of profile %s on the node> in node-resources.xml", profile.KeyNodeResourcePrefix, n, prof),
				"%s is asked for, but no NodeManager configuration offers it: the containers wait forever", n)
		}
	}
	if slices.Contains(hc.GetTrimmedStrings(keyResourcePlugins), records.GPU) && len(offered) > 0 {
		found = true
		out.warn(sourceOr(hc, keyResourcePlugins, hc.Dir()),
			fmt.Sprintf("list only the GPUs with MIG off in %s (index:minor,...; yarn-er discover --format json shows which GPUs are MIG slices), or run the MIG NodeManagers without the GPU plugin", keyAllowedGPUDevices),
			"the GPU plugin offers every GPU nvidia-smi lists as %s, a GPU in MIG mode too, while %s offer its slices: a container given a GPU in MIG mode gets no usable CUDA device, and the GPU is counted twice",
			records.GPU, strings.Join(names, ", "))
	}
	if !found {
		out.pass(sourceOf(hc, profile.KeyResourceTypes),
			"MIG slices as resource types: %s; YARN schedules them as counts (no NodeManager plugin assigns a slice), and yarn-er exec hands each container its own slices' MIG UUIDs",
			strings.Join(offered, "; "))
	}
}

// keyAllowedGPUDevices is the GPU plugin's device list.
const keyAllowedGPUDevices = "yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices"
