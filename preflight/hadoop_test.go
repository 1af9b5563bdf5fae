package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHadoopChecksPassOnGoodConfiguration(t *testing.T) {
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t)})
	e := requireOne(t, rep, IDResourceTypesInvalid, StatusPass, "yarn.io/gpu, yarn.io/fpga")
	assert.Contains(t, e.Source, "resource-types.xml:")
	requireOne(t, rep, IDResourceTypeUndeclared, StatusPass, "yarn.io/gpu, yarn.io/fpga")
	requireOne(t, rep, IDCalculatorNotDominant, StatusPass, DominantCalculator)
	requireOne(t, rep, IDMaxAllocationExceeded, StatusPass, "memory-mb 4096Mi ≤ 16384Mi", "vcores 4 ≤ 32", "yarn.io/gpu 2 (no maximum)")
	requireOne(t, rep, IDNMResources, StatusPass, "yarn.nodemanager.resource-type.yarn.io/gpu = 4")
}

func TestHadoopChecksSkipWithoutConfiguration(t *testing.T) {
	rep := run(t, Input{Flink: flinkConf(t, goodFlink)})
	for _, id := range []string{IDResourceTypesInvalid, IDResourceTypeUndeclared, IDCalculatorNotDominant, IDMaxAllocationExceeded, IDNMResources} {
		requireOne(t, rep, id, StatusSkip, "no Hadoop configuration")
	}
}

func TestResourceTypesInvalid(t *testing.T) {
	cases := []struct {
		name  string
		files hadoopFiles
		msg   string
	}{
		{"bad name", goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu,10fpga"), "is not a valid resource name"},
		{"reserved name", goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu,memory-mb"), "re-define mandatory resource 'memory-mb'"},
		{"duplicate", goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu,yarn.io/gpu"), "specified twice"},
		{"unknown unit", goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu,acme.com/x").
			with("resource-types.xml", "yarn.resource-types.acme.com/x.units", "Zi"), "Unknown unit 'Zi'"},
		{"minimum above maximum", goodHadoop().
			with("resource-types.xml", "yarn.resource-types.yarn.io/gpu.minimum-allocation", "4").
			with("resource-types.xml", "yarn.resource-types.yarn.io/gpu.maximum-allocation", "2"), "greater than its maximum allocation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: tc.files.load(t)})
			es := rep.entries(IDResourceTypesInvalid)
			require.NotEmpty(t, es)
			assert.Equal(t, StatusFail, es[0].Status)
			assert.Contains(t, es[0].Message, tc.msg)
			assert.Contains(t, es[0].Source, "resource-types.xml:")
			assert.NotEmpty(t, es[0].Fix)
		})
	}
	// Blanks around names: a warning (older Hadoop releases fail on them).
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu, yarn.io/fpga").load(t)})
	assert.Equal(t, []Status{StatusWarn}, rep.statuses(IDResourceTypesInvalid))
}

func TestResourceTypeUndeclared(t *testing.T) {
	hc := goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu").
		with("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/fpga", "").load(t)
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: hc})
	e := requireOne(t, rep, IDResourceTypeUndeclared, StatusFail, "'yarn.io/fpga' is not declared in yarn.resource-types")
	assert.Equal(t, "flink-conf.yaml:9", e.Source)
	assert.Contains(t, e.Fix, "add yarn.io/fpga to yarn.resource-types")

	// A NodeManager resource of an undeclared type: the NodeManager would not start.
	hc = goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu").load(t)
	rep = run(t, Input{Flink: flinkConf(t, withoutLines(goodFlink, "external-resource.fpga", "external-resources")+"external-resources: gpu\n"), Hadoop: hc})
	e = requireOne(t, rep, IDResourceTypeUndeclared, StatusFail, "the NodeManager fails to start")
	assert.Contains(t, e.Source, "node-resources.xml:")

	// No resource-types.xml at all, but the live RM knows both types: only the local copy is stale.
	hc = goodHadoop().with("resource-types.xml", "", "").with("node-resources.xml", "", "").load(t)
	rm := newFakeRM(t, goodCaptures(t))
	rep = run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: hc, Client: rmClient(t, rm.URL())})
	assert.Equal(t, []Status{StatusWarn}, rep.statuses(IDResourceTypeUndeclared))
	assert.Len(t, rep.entries(IDResourceTypeUndeclared), 2)
	assert.Contains(t, rep.entries(IDResourceTypeUndeclared)[0].Message, "only this configuration is out of date")
	requireOne(t, rep, IDTypeUnknown, StatusPass)
}

func TestMaxAllocationExceeded(t *testing.T) {
	// bwIn2k declares acme.com/bw in k with a maximum allocation of 2 (2k); askBW asks for amount of it.
	bwIn2k := goodHadoop().with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu,yarn.io/fpga,acme.com/bw").
		with("resource-types.xml", "yarn.resource-types.acme.com/bw.units", "k").
		with("resource-types.xml", "yarn.resource-types.acme.com/bw.maximum-allocation", "2")
	askBW := func(amount string) []string {
		return []string{"external-resources=gpu;fpga;bw", "external-resource.bw.amount=" + amount,
			"external-resource.bw.yarn.config-key=acme.com/bw", "external-resource.bw.driver-factory.class=x.Y"}
	}
	cases := []struct {
		name   string
		files  hadoopFiles
		flink  []string
		status Status
		parts  []string
		source string
	}{
		{
			name:   "gpu above its maximum",
			files:  goodHadoop().with("resource-types.xml", "yarn.resource-types.yarn.io/gpu.maximum-allocation", "1"),
			status: StatusFail, parts: []string{"yarn.io/gpu: the TaskManager asks for 2, above the maximum allocation 1", "resource-types.xml:"},
			source: "flink-conf.yaml:4",
		},
		{
			name:   "memory above yarn.scheduler.maximum-allocation-mb",
			files:  goodHadoop().with("yarn-site.xml", "yarn.scheduler.maximum-allocation-mb", "2048"),
			status: StatusFail, parts: []string{"memory-mb", "4096Mi", "2048Mi", "yarn.scheduler.maximum-allocation-mb"},
			source: "flink-conf.yaml:1",
		},
		{
			name:   "vcores above Hadoop's default maximum",
			files:  goodHadoop().with("yarn-site.xml", "yarn.scheduler.maximum-allocation-vcores", ""),
			flink:  []string{"taskmanager.numberOfTaskSlots=8"},
			status: StatusFail, parts: []string{"vcores", "asks for 8, above the maximum allocation 4", "Hadoop's default"},
		},
		{
			name:   "units converted: 3000 of a type in k with maximum 2k",
			files:  bwIn2k,
			flink:  askBW("3000"),
			status: StatusFail, parts: []string{"acme.com/bw", "3000", "2k"},
		},
		{
			name:   "units converted: 2000 within 2k",
			files:  bwIn2k,
			flink:  askBW("2000"),
			status: StatusPass, parts: []string{"acme.com/bw 2000 ≤ 2k"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, goodFlink, tc.flink...), Hadoop: tc.files.load(t)})
			first := requireFirst(t, rep, IDMaxAllocationExceeded, []Status{tc.status}, tc.parts...)
			if tc.source != "" {
				assert.Equal(t, tc.source, first.Source)
			}
			if tc.status == StatusFail {
				assert.Contains(t, first.Fix, "ask for at most")
			}
		})
	}
}

func TestNMResources(t *testing.T) {
	const lce = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
	plugin := goodHadoop().with("node-resources.xml", "", "").
		with("yarn-site.xml", "yarn.nodemanager.resource-plugins", "yarn.io/gpu,yarn.io/fpga")
	cases := []struct {
		name     string
		files    hadoopFiles
		statuses []Status
		parts    []string
		fix      string
	}{
		{
			name: "no plugin, no count", files: goodHadoop().with("node-resources.xml", "", ""),
			statuses: []Status{StatusWarn}, parts: []string{"yarn.io/gpu: no yarn.nodemanager.resource-plugins entry and no yarn.nodemanager.resource-type.yarn.io/gpu count"},
			fix: "yarn.nodemanager.resource-plugins=yarn.io/gpu",
		},
		{
			name: "count of zero", files: goodHadoop().with("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/gpu", "0"),
			statuses: []Status{StatusWarn}, parts: []string{"offers 0"},
		},
		{
			name: "plugin without LinuxContainerExecutor", files: plugin,
			statuses: []Status{StatusWarn}, parts: []string{"not isolated", "DefaultContainerExecutor"}, fix: lce,
		},
		{
			// The NodeManager gives every resource plugin's handler an initialised cgroups handler
			// whatever resources-handler.class and cgroups.mount say (found in /proc/mounts).
			name: "plugin with LinuxContainerExecutor, cgroups not configured", files: plugin.with("yarn-site.xml", keyContainerExecutor, lce),
			statuses: []Status{StatusPass}, parts: []string{"yarn.io/gpu: isolated by LinuxContainerExecutor with cgroups", "the devices controller as /proc/mounts shows it", "yarn.io/fpga: isolated"},
		},
		{
			name: "plugin with LinuxContainerExecutor, cgroups at a path",
			files: plugin.with("yarn-site.xml", keyContainerExecutor, lce).with("yarn-site.xml", keyCgroupsMountPath, "/cgroup").
				with("yarn-site.xml", keyResourcesHandler, "org.apache.hadoop.yarn.server.nodemanager.util.DefaultLCEResourcesHandler"),
			statuses: []Status{StatusPass}, parts: []string{"the cgroups at /cgroup (yarn.nodemanager.linux-container-executor.cgroups.mount-path)"},
		},
		{
			name:     "plugin with LinuxContainerExecutor and cgroups",
			files:    plugin.with("yarn-site.xml", keyContainerExecutor, lce).with("yarn-site.xml", keyCgroupsMount, "true"),
			statuses: []Status{StatusPass}, parts: []string{"resource plugin", "isolated by LinuxContainerExecutor with cgroups"},
		},
		{
			name: "bad node resource value", files: goodHadoop().with("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/gpu", "4x2"),
			statuses: []Status{StatusFail, StatusWarn}, parts: []string{"non alphabet"},
		},
		{
			name: "pluggable device framework",
			files: goodHadoop().with("node-resources.xml", "", "").with("yarn-site.xml", keyPluggableDevices, "true").
				with("yarn-site.xml", keyDeviceClasses, "com.nvidia.NvidiaGPUPluginForRuntimeV2"),
			statuses: []Status{StatusPass}, parts: []string{"pluggable device framework"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: tc.files.load(t)})
			first := requireFirst(t, rep, IDNMResources, tc.statuses, tc.parts...)
			if tc.fix != "" {
				assert.Contains(t, first.Fix, tc.fix)
			}
		})
	}

	// Not configured in this directory, but the live NodeManagers advertise the types.
	rm := newFakeRM(t, goodCaptures(t))
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().with("node-resources.xml", "", "").load(t), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDNMResources, StatusPass, "2 RUNNING NodeManagers advertise it")
}
