package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/view"
)

// probeOf is a report of a container given granted GPUs, whose driver lists minors 0..listed-1,
// of which the minors in opens open.
func probeOf(granted int64, listed int, opens ...int) *view.DoctorProbe {
	p := &view.DoctorProbe{Version: view.DoctorProbeVersion, Node: "gpu-1:8041", Granted: granted, Listed: []view.DoctorDevice{},
		NodeManager: view.DoctorAssignment{State: AssignNoPlugin},
		Cgroup:      view.DoctorCgroup{Version: "v1", Rules: []string{"a *:* rwm"}, AllowsAll: true},
		Driver:      view.DoctorDriver{Agree: "n/a"},
		Executor:    view.DoctorExecutor{Class: defaultExecutor, CgroupsMount: "false", Source: "nodemanager /conf"}}
	for m := range listed {
		d := view.DoctorDevice{ID: "GPU-" + string(rune('a'+m)), Minor: m, Error: "/dev/nvidia: no such file or directory"}
		for _, o := range opens {
			if o == m {
				d.Opens, d.Error = true, ""
			}
		}
		p.Listed = append(p.Listed, d)
	}
	return p
}

// secured turns p into a report from a node with LinuxContainerExecutor, the GPU plugin and the
// devices cgroup mounted, its rules denying by default.
func secured(p *view.DoctorProbe, assigned ...int64) *view.DoctorProbe {
	p.Executor = view.DoctorExecutor{Class: LinuxContainerExecutor, Plugins: "yarn.io/gpu", CgroupsMount: "true", Source: "nodemanager /conf"}
	p.Cgroup = view.DoctorCgroup{Version: "v1", Rules: []string{"c 195:255 rwm"}}
	p.NodeManager = view.DoctorAssignment{State: AssignAssigned, Minors: assigned}
	return p
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		probe   *view.DoctorProbe
		verdict string
		reason  []string
		fix     []string
		notes   []string
	}{
		{name: "isolating by count: opens the one given of four", probe: probeOf(1, 4, 0), verdict: view.VerdictOK,
			reason: []string{"given 1 GPU(s) and can open exactly those: /dev/nvidia0 (GPU-a)", "the other 3 the driver lists do not open"}},
		{name: "leaky, DefaultContainerExecutor without the plugin", probe: probeOf(1, 4, 0, 1, 2, 3), verdict: view.VerdictLeak,
			reason: []string{"given 1 GPU(s) but can open 4", "allows every device (a *:* rwm)"},
			fix:    []string{fixExecutor, fixPlugin, fixModule, fixCgroup}},
		{name: "leaky under LinuxContainerExecutor: the [gpu] module is off", probe: func() *view.DoctorProbe {
			p := secured(probeOf(1, 2, 0, 1), 0)
			return p
		}(), verdict: view.VerdictLeak, reason: []string{"the NodeManager assigned minor 0", "can open 2: /dev/nvidia0 (GPU-a), /dev/nvidia1 (GPU-b)"},
			fix: []string{fixModule}},
		{name: "isolated by the NodeManager's assignment", probe: secured(probeOf(2, 4, 1, 3), 1, 3), verdict: view.VerdictOK,
			reason: []string{"the NodeManager assigned minor 1,3", "/dev/nvidia1 (GPU-b), /dev/nvidia3 (GPU-d)"}},
		{name: "the assigned GPU does not open", probe: secured(probeOf(1, 4), 2), verdict: view.VerdictNoGPUs,
			reason: []string{"can open 0", "/dev/nvidia0 (GPU-a): /dev/nvidia: no such file or directory"}, fix: []string{fixAllowed}},
		{name: "opens one of two given", probe: probeOf(2, 4, 3), verdict: view.VerdictNoGPUs,
			reason: []string{"given 2 GPU(s) but can open 1: /dev/nvidia3 (GPU-d)"}, fix: []string{fixAllowed}},
		{name: "no driver in the container", probe: probeOf(1, 0), verdict: view.VerdictNoGPUs,
			reason: []string{"the driver lists none in it"}, fix: []string{fixDriver}},
		{name: "CUDA_VISIBLE_DEVICES on a leak isolates nothing", probe: func() *view.DoctorProbe {
			p := probeOf(1, 2, 0, 1)
			p.Env = map[string]string{"CUDA_VISIBLE_DEVICES": "1"}
			p.Executor.Plugins, p.NodeManager.State = "yarn.io/gpu", AssignNone
			return p
		}(), verdict: view.VerdictLeak, reason: []string{"can open 2"}, fix: []string{fixExecutor, fixModule, fixCgroup},
			notes: []string{"CUDA_VISIBLE_DEVICES=1 hides GPUs from CUDA but isolates nothing: a program can unset it"}},
		{name: "NVML and procfs disagree", probe: func() *view.DoctorProbe {
			p := probeOf(1, 2, 1)
			p.Driver = view.DoctorDriver{NVML: []string{"GPU-a"}, Procfs: []string{"GPU-a", "GPU-b"}, Agree: "no"}
			p.Errors = []string{"listing the GPUs: nvidia-smi timed out"}
			return p
		}(), verdict: view.VerdictOK, fix: []string{fixDisagree},
			notes: []string{"NVML lists GPU-a, procfs GPU-a, GPU-b", "probe: listing the GPUs: nvidia-smi timed out"}},
		{name: "yarn-er's coordination has handed devices out", probe: func() *view.DoctorProbe {
			p := probeOf(1, 2, 1)
			p.Coordination = view.DoctorCoordination{File: "/var/tmp/yarn-er-coordination", Held: []view.DoctorHeld{{Key: "0000:10:00.0", PID: 7}}}
			return p
		}(), verdict: view.VerdictOK,
			notes: []string{"yarn-er's coordination (/var/tmp/yarn-er-coordination) records 1 device(s) handed out on the node: 0000:10:00.0 (pid 7)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Judge(tc.probe)
			assert.Equal(t, tc.verdict, n.Verdict)
			assert.Equal(t, tc.probe.Node, n.Node)
			assert.Same(t, tc.probe, n.Probe)
			for _, r := range tc.reason {
				assert.Contains(t, n.Reason, r)
			}
			assert.Equal(t, tc.fix, n.Fix)
			assert.Equal(t, tc.notes, n.Notes)
		})
	}
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		timedOut bool
		verdict  string
		fix      string
	}{
		{timedOut: true, verdict: view.VerdictTimeout, fix: "raise --timeout"},
		{timedOut: false, verdict: view.VerdictProbeFailed, fix: "yarn-er app logs"},
	} {
		n := Missing("gpu-2:8041", tc.timedOut, "why")
		assert.Equal(t, tc.verdict, n.Verdict)
		assert.Equal(t, "why", n.Reason)
		assert.Nil(t, n.Probe)
		require.Len(t, n.Fix, 1)
		assert.Contains(t, n.Fix[0], tc.fix)
	}
}

func TestAssemble(t *testing.T) {
	ok, leak := probeOf(1, 4, 0), probeOf(1, 4, 0, 1)
	ok.Node, leak.Node = "a:1", "b:1"
	first := probeOf(1, 4)
	first.Node = "a:1" // an earlier report of the same node: the last one counts
	for _, tc := range []struct {
		timedOut bool
		last     string
	}{{true, view.VerdictTimeout}, {false, view.VerdictProbeFailed}} {
		d := Assemble([]string{"a:1", "b:1", "c:1"}, []view.DoctorProbe{*first, *ok, *leak, {Node: "stranger:1"}}, tc.timedOut, "no report")
		require.Len(t, d.Nodes, 3)
		assert.Equal(t, []string{"a:1", "b:1", "c:1"}, []string{d.Nodes[0].Node, d.Nodes[1].Node, d.Nodes[2].Node})
		assert.Equal(t, view.VerdictOK, d.Nodes[0].Verdict)
		assert.Equal(t, view.VerdictLeak, d.Nodes[1].Verdict)
		assert.Equal(t, tc.last, d.Nodes[2].Verdict)
		assert.Equal(t, 1, d.Leaks)
	}
}

// The reports the probes wrote on the mini-YARN (docker/mini-yarn start --isolate-node 0, with and
// without --gpu-plugin), as `yarn-er app logs APP --file stdout` printed them: NodeManager 0's
// containers open only their own GPU, NodeManager 1's all four.
func TestCapturedReports(t *testing.T) {
	for _, tc := range []struct {
		file   string
		nm     string
		plugin string
	}{
		{file: "logs-isolate-3.5.0.txt", nm: AssignNoPlugin},
		{file: "logs-gpu-plugin-3.5.0.txt", nm: AssignNone, plugin: "yarn.io/gpu"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			defer f.Close()
			reports, err := ParseReports(f)
			require.NoError(t, err)
			require.Len(t, reports, 2)
			verdicts := map[string]int{}
			for i := range reports {
				p := &reports[i]
				n := Judge(p)
				verdicts[n.Verdict]++
				isolated := strings.Contains(p.Env["YARN_ER_HOST_ROOT"], "/containers/")
				want := view.VerdictLeak
				if isolated {
					want = view.VerdictOK
				}
				assert.Equal(t, want, n.Verdict, "%s: %s", p.Node, n.Reason)
				assert.Equal(t, tc.nm, p.NodeManager.State)
				assert.Equal(t, "dev.yarner.miniyarn.IsolatingExecutor", p.Executor.Class)
				assert.Equal(t, tc.plugin, p.Executor.Plugins)
				assert.Len(t, p.Listed, 4)
				if n.Verdict == view.VerdictLeak {
					assert.Equal(t, fixExecutor, n.Fix[0])
					assert.Contains(t, n.Fix, fixModule)
					assert.Equal(t, tc.plugin == "", slices.Contains(n.Fix, fixPlugin), "the plugin fix only where it is off")
				}
			}
			assert.Equal(t, map[string]int{view.VerdictOK: 1, view.VerdictLeak: 1}, verdicts)
		})
	}
}
