package preflight

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

// migHadoop is a cluster whose MIG NodeManagers offer an H100's slices as resource types, as the
// worked configuration of docs/flink-on-yarn-gpus.md writes them: seven 1g.10gb slices per node.
func migHadoop() hadoopFiles {
	return goodHadoop().
		with("resource-types.xml", "yarn.resource-types", "yarn.io/gpu,nvidia.com/mig-1g.10gb,nvidia.com/mig-3g.40gb").
		with("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/gpu", "").
		with("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/fpga", "").
		with("node-resources.xml", "yarn.nodemanager.resource-type.nvidia.com/mig-1g.10gb", "7").
		with("node-resources.xml", "yarn.nodemanager.resource-type.nvidia.com/mig-3g.40gb", "2")
}

func migContainer(name string, n int64) *records.Resources {
	v := records.NewResources(1024, 1, records.Resource{Name: name, Value: n})
	return &v
}

// TestMIGCheck: MIG slices as YARN resource types against configurations with one mistake each.
// Every case but the first failed before yarn.mig-resources existed.
func TestMIGCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		files     hadoopFiles
		container *records.Resources
		want      Status
		parts     []string
	}{
		{"no MIG", goodHadoop(), gpuContainer(), StatusPass, []string{"no MIG resource type"}},
		{"ready", migHadoop(), migContainer("nvidia.com/mig-1g.10gb", 1), StatusPass,
			[]string{"nvidia.com/mig-1g.10gb = 7 per NodeManager (profile 1g.10gb)", "MIG UUIDs"}},
		{"declared, not asked for", migHadoop(), gpuContainer(), StatusPass, []string{"nvidia.com/mig-3g.40gb = 2"}},
		{"Kubernetes name with +me", migHadoop().with("resource-types.xml", "yarn.resource-types", "nvidia.com/mig-1g.10gb"),
			migContainer("nvidia.com/mig-1g.10gb+me", 1), StatusFail,
			[]string{"'nvidia.com/mig-1g.10gb+me' is not a valid resource name", "nvidia.com/mig-1g.10gb-me"}},
		{"not a profile", migHadoop().with("resource-types.xml", "yarn.resource-types", "nvidia.com/mig-small").
			with("node-resources.xml", "yarn.nodemanager.resource-type.nvidia.com/mig-small", "7"),
			migContainer("nvidia.com/mig-small", 1), StatusWarn, []string{`"small" is not a MIG profile`}},
		{"with a unit", migHadoop().with("resource-types.xml", "yarn.resource-types.nvidia.com/mig-1g.10gb.units", "G"),
			migContainer("nvidia.com/mig-1g.10gb", 1), StatusFail, []string{`declared with unit "G"`}},
		{"asked for, offered nowhere", migHadoop().with("node-resources.xml", "yarn.nodemanager.resource-type.nvidia.com/mig-1g.10gb", ""),
			migContainer("nvidia.com/mig-1g.10gb", 1), StatusFail, []string{"no NodeManager configuration offers it", "yarn.nodemanager.resource-type.nvidia.com/mig-1g.10gb"}},
		{"GPU plugin next to slices", migHadoop().with("yarn-site.xml", keyResourcePlugins, "yarn.io/gpu"),
			migContainer("nvidia.com/mig-1g.10gb", 1), StatusWarn, []string{"a GPU in MIG mode too", keyAllowedGPUDevices}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Container: tc.container, Hadoop: tc.files.load(t)})
			entries := rep.entries(IDMIGResources)
			require.NotEmpty(t, entries)
			var msgs []string
			worst := StatusPass
			for _, e := range entries {
				msgs = append(msgs, e.Message+" | fix: "+e.Fix)
				if e.Status == StatusFail || (e.Status == StatusWarn && worst == StatusPass) {
					worst = e.Status
				}
				if e.Status == StatusFail || e.Status == StatusWarn {
					assert.NotEmpty(t, e.Fix)
				}
			}
			assert.Equal(t, tc.want, worst, "%v", msgs)
			for _, part := range tc.parts {
				assert.Contains(t, strings.Join(msgs, "\n"), part)
			}
		})
	}
}

func TestMIGProfile(t *testing.T) {
	for name, want := range map[string]string{
		"nvidia.com/mig-1g.10gb":    "1g.10gb",
		"nvidia.com/mig-3g.40gb":    "3g.40gb",
		"mig-7g.80gb":               "7g.80gb",
		"yarn.io/MIG-1g.12gb":       "1g.12gb",
		"nvidia.com/mig-1c.3g.40gb": "1c.3g.40gb",
		"nvidia.com/mig-1g.10gb-me": "1g.10gb-me",
	} {
		got, ok := MIGProfile(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	for _, name := range []string{"yarn.io/gpu", "nvidia.com/gpu", "nvidia.com/mig-", "nvidia.com/mig-small", "migration", ""} {
		_, ok := MIGProfile(name)
		assert.False(t, ok, name)
	}
}
