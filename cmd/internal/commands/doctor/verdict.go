package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/view"
)

// LinuxContainerExecutor is the class of the executor under which YARN isolates GPUs.
const LinuxContainerExecutor = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"

// The fixes Judge proposes, by what they change.
const (
	fixExecutor = "yarn-site.xml: yarn.nodemanager.container-executor.class=" + LinuxContainerExecutor +
		" (with the setuid container-executor binary): YARN isolates GPUs only under LinuxContainerExecutor"
	fixPlugin = "yarn-site.xml: yarn.nodemanager.resource-plugins=yarn.io/gpu, so that the NodeManager assigns" +
		" each container its GPUs (yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices=auto)"
	fixModule = "container-executor.cfg: [gpu] module.enabled=true, so that container-executor denies a container" +
		" the GPUs it was not given (devices cgroup)"
	fixCgroup = "the devices cgroup: yarn.nodemanager.linux-container-executor.cgroups.mount=true (or mount the" +
		" devices controller at yarn.nodemanager.linux-container-executor.cgroups.mount-path) and container-executor.cfg" +
		" [cgroups] root=/sys/fs/cgroup, yarn-hierarchy=yarn"
	fixDriver = "the node's containers see no NVIDIA driver: load it on the node (nvidia-smi works on the host), and" +
		" for Docker containers set yarn.nodemanager.resource-plugins.gpu.docker-plugin=nvidia-docker-v2"
	fixAllowed = "the GPUs given do not open: check yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices (the" +
		" minors YARN hands out must be the host's) and that /dev/nvidia* belong to the container's user or group"
	fixDisagree = "NVML and the driver's procfs list different GPUs: the user-space driver (libnvidia-ml) and the" +
		" kernel module differ; install matching versions and restart the node"
)

// Judge decides the verdict on the node a probe ran on, from its report alone: which GPUs the
// container could open against what it was given (the NodeManager's assignment where the GPU
// plugin reports one, else the count YARN allocated). *_VISIBLE_DEVICES do not count: a program
// can unset them, so they hide devices but do not isolate them.
func Judge(p *view.DoctorProbe) view.DoctorNode {
	n := view.DoctorNode{Node: p.Node, Probe: p}
	var opens, shut []view.DoctorDevice
	for _, d := range p.Listed {
		if d.Opens {
			opens = append(opens, d)
		} else {
			shut = append(shut, d)
		}
	}
	if p.Driver.Agree == "no" {
		n.Notes = append(n.Notes, fmt.Sprintf("NVML lists %s, procfs %s", idList(p.Driver.NVML), idList(p.Driver.Procfs)))
	}
	for _, e := range p.Errors {
		n.Notes = append(n.Notes, "probe: "+e)
	}
	if c := p.Coordination; len(c.Held) > 0 {
		keys := make([]string, len(c.Held))
		for i, h := range c.Held {
			keys[i] = fmt.Sprintf("%s (pid %d)", h.Key, h.PID)
		}
		n.Notes = append(n.Notes, fmt.Sprintf("yarn-er's coordination (%s) records %d device(s) handed out on the node: %s",
			c.File, len(c.Held), strings.Join(keys, ", ")))
	}
	// What the container was given: the NodeManager's minors, or a count.
	assigned := p.NodeManager.State == AssignAssigned
	var extra, missing []string
	if assigned {
		for _, d := range opens {
			if d.Minor < 0 || !slices.Contains(p.NodeManager.Minors, int64(d.Minor)) {
				extra = append(extra, devName(d))
			}
		}
		for _, m := range p.NodeManager.Minors {
			if !slices.ContainsFunc(opens, func(d view.DoctorDevice) bool { return int64(d.Minor) == m }) {
				missing = append(missing, fmt.Sprintf("minor %d", m))
			}
		}
	}
	given := fmt.Sprintf("%d GPU(s)", p.Granted)
	if assigned {
		given = fmt.Sprintf("%d GPU(s) (the NodeManager assigned minor %s)", p.Granted, joinInts(p.NodeManager.Minors))
	}
	switch {
	case len(p.Listed) == 0:
		n.Verdict = view.VerdictNoGPUs
		n.Reason = fmt.Sprintf("the container was given %s but the driver lists none in it", given)
		n.Fix = []string{fixDriver}
	case assigned && len(extra) > 0, !assigned && int64(len(opens)) > p.Granted:
		n.Verdict = view.VerdictLeak
		n.Reason = fmt.Sprintf("the container was given %s but can open %d: %s", given, len(opens), devNames(opens))
		if p.Cgroup.AllowsAll {
			n.Reason += "; its devices cgroup allows every device (a *:* rwm)"
		}
		if v := firstSet(p.Env, "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"); v != "" {
			n.Notes = append(n.Notes, v+" hides GPUs from CUDA but isolates nothing: a program can unset it")
		}
		n.Fix = leakFixes(p)
	case len(missing) > 0, !assigned && int64(len(opens)) < p.Granted:
		n.Verdict = view.VerdictNoGPUs
		n.Reason = fmt.Sprintf("the container was given %s but can open %d", given, len(opens))
		if len(opens) > 0 {
			n.Reason += ": " + devNames(opens)
		}
		if len(shut) > 0 {
			n.Reason += fmt.Sprintf(" (%s: %s)", devName(shut[0]), shut[0].Error)
		}
		n.Fix = []string{fixAllowed}
	default:
		n.Verdict = view.VerdictOK
		n.Reason = fmt.Sprintf("the container was given %s and can open exactly those: %s", given, devNames(opens))
		if len(shut) > 0 {
			n.Reason += fmt.Sprintf("; the other %d the driver lists do not open", len(shut))
		}
	}
	if p.Driver.Agree == "no" {
		n.Fix = append(n.Fix, fixDisagree)
	}
	return n
}

// leakFixes are the fixes of a leak, in the order to try them, from what the probe saw of the
// node's configuration (an unknown setting counts as wrong).
func leakFixes(p *view.DoctorProbe) []string {
	var fix []string
	if p.Executor.Class != LinuxContainerExecutor {
		fix = append(fix, fixExecutor)
	}
	if !strings.Contains(p.Executor.Plugins, "yarn.io/gpu") || p.NodeManager.State == AssignNoPlugin {
		fix = append(fix, fixPlugin)
	}
	fix = append(fix, fixModule)
	if !strings.EqualFold(strings.TrimSpace(p.Executor.CgroupsMount), "true") || p.Cgroup.AllowsAll {
		fix = append(fix, fixCgroup)
	}
	return fix
}

// Missing returns the verdict on a node whose probe left no report: timeout when none came in
// time (the container may never have been allocated), probe-failed when its container ended
// without one.
func Missing(node string, timedOut bool, why string) view.DoctorNode {
	if timedOut {
		return view.DoctorNode{Node: node, Verdict: view.VerdictTimeout, Reason: why,
			Fix: []string{"check that the node has a free yarn.io/gpu and is not unhealthy (yarn-er cluster nodes), or raise --timeout"}}
	}
	return view.DoctorNode{Node: node, Verdict: view.VerdictProbeFailed, Reason: why,
		Fix: []string{"read the probe's log (yarn-er app logs APP_ID) and the NodeManager's"}}
}

func devName(d view.DoctorDevice) string {
	if d.Minor >= 0 {
		return fmt.Sprintf("/dev/nvidia%d (%s)", d.Minor, d.ID)
	}
	return d.ID
}

func devNames(ds []view.DoctorDevice) string {
	if len(ds) == 0 {
		return "none"
	}
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = devName(d)
	}
	return strings.Join(names, ", ")
}

func idList(ids []string) string {
	if ids == nil {
		return "nothing (unavailable)"
	}
	if len(ids) == 0 {
		return "no GPU"
	}
	return strings.Join(ids, ", ")
}

func joinInts(ms []int64) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = fmt.Sprint(m)
	}
	return strings.Join(s, ",")
}

// firstSet returns "NAME=value" of the first of names set in env, "" when none is.
func firstSet(env map[string]string, names ...string) string {
	for _, k := range names {
		if v, ok := env[k]; ok {
			return k + "=" + v
		}
	}
	return ""
}
