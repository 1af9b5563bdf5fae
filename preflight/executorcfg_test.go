package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseExecutorCfg(t *testing.T) {
	cfg := parseExecutorCfg([]byte("yarn.nodemanager.linux-container-executor.group=hadoop\n# comment\n[gpu]\n  module.enabled = true \n[cgroups]\nroot=/sys/fs/cgroup\nyarn-hierarchy=yarn\nnot a line\n[fpga]\nmodule.enabled=false\n"))
	assert.Equal(t, executorValue{value: "hadoop", line: 1}, cfg[""]["yarn.nodemanager.linux-container-executor.group"])
	assert.Equal(t, executorValue{value: "true", line: 4}, cfg["gpu"]["module.enabled"])
	assert.Equal(t, "yarn", cfg["cgroups"]["yarn-hierarchy"].value)
	assert.Equal(t, "false", cfg["fpga"]["module.enabled"].value)
	assert.Empty(t, parseExecutorCfg(nil)[""])
}

func TestNMIsolationContainerExecutorCfg(t *testing.T) {
	const lce = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
	files := goodHadoop().with("node-resources.xml", "", "").
		with("yarn-site.xml", "yarn.nodemanager.resource-plugins", "yarn.io/gpu").
		with("yarn-site.xml", keyContainerExecutor, lce).with("yarn-site.xml", keyCgroupsMount, "true")
	gpuOnly := withoutLines(goodFlink, "external-resource.fpga", "external-resources") + "external-resources: gpu\n"
	cases := []struct {
		name   string
		cfg    string // "" : no container-executor.cfg
		status Status
		parts  []string
	}{
		{name: "not in the configuration", status: StatusPass, parts: []string{"isolated by LinuxContainerExecutor with cgroups", "no container-executor.cfg in"}},
		{name: "gpu module enabled", cfg: "[gpu]\nmodule.enabled=true\n", status: StatusPass, parts: []string{"container-executor.cfg:2 enables the gpu module"}},
		{name: "gpu module disabled", cfg: "[gpu]\nmodule.enabled=false\n", status: StatusWarn, parts: []string{`[gpu] module.enabled is "false"`, "fail to launch"}},
		{name: "no gpu section", cfg: "[cgroups]\nroot=/sys/fs/cgroup\n", status: StatusWarn, parts: []string{"[gpu] module.enabled is not set"}},
	}
	// Each device type has its own module: the fpga one is checked too.
	t.Run("fpga module of its own", func(t *testing.T) {
		dir := files.with("yarn-site.xml", "yarn.nodemanager.resource-plugins", "yarn.io/gpu,yarn.io/fpga").write(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, containerExecutorCfg), []byte("[gpu]\nmodule.enabled=true\n"), 0o644))
		rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: loadDir(t, dir)})
		e := requireOne(t, rep, IDNMResources, StatusWarn, "yarn.io/fpga: [fpga] module.enabled is not set")
		assert.Contains(t, e.Fix, `"[fpga]" with "module.enabled=true"`)
		assert.NotContains(t, e.Message, "yarn.io/gpu")
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := files.write(t)
			if tc.cfg != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, containerExecutorCfg), []byte(tc.cfg), 0o644))
			}
			rep := run(t, Input{Flink: flinkConf(t, gpuOnly), Hadoop: loadDir(t, dir)})
			var found bool
			for _, e := range rep.entries(IDNMResources) {
				if e.Status == tc.status && containsAll(e.Message, tc.parts) {
					found = true
					if tc.status == StatusWarn {
						assert.Contains(t, e.Fix, `"[gpu]" with "module.enabled=true"`)
					}
				}
			}
			assert.True(t, found, "%+v", rep.entries(IDNMResources))
		})
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func FuzzParseExecutorCfg(f *testing.F) {
	f.Add([]byte("[gpu]\nmodule.enabled=true\n"))
	f.Add([]byte("a=b\n[x\n]\n=\n[]\n#c=d\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := parseExecutorCfg(data)
		if cfg[""] == nil {
			t.Fatal("no default section")
		}
		for _, sec := range cfg {
			for _, v := range sec {
				if v.line < 1 {
					t.Fatalf("line %d", v.line)
				}
			}
		}
	})
}
