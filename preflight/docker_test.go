package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dockerHadoop is goodHadoop with the NodeManagers ready for Docker containers with GPUs
// (nvidia-docker-v2).
func dockerHadoop() hadoopFiles {
	return goodHadoop().
		with("yarn-site.xml", keyContainerExecutor, linuxExecutor).
		with("yarn-site.xml", keyAllowedRuntimes, "default,docker").
		with("yarn-site.xml", keyResourcePlugins, "yarn.io/gpu").
		with("yarn-site.xml", keyGPUDockerPlugin, "nvidia-docker-v2")
}

const dockerExecutorCfg = "[gpu]\nmodule.enabled=true\n[docker]\nmodule.enabled=true\ndocker.allowed.runtimes=runc,nvidia\n"

// TestDockerGPUCheck: Flink's TaskManagers in Docker containers with GPUs, against NodeManager
// configurations missing one piece each.
func TestDockerGPUCheck(t *testing.T) {
	docker := []string{flinkTMRuntimeType + "=docker", flinkTMDockerImage + "=example/flink-gpu:1"}
	for _, tc := range []struct {
		name     string
		flink    []string
		files    hadoopFiles
		executor string // container-executor.cfg, "" for none
		want     Status
		parts    []string
	}{
		{"no Docker", nil, goodHadoop(), "", StatusPass, []string{"do not run in Docker"}},
		{"ready (v2)", docker, dockerHadoop(), dockerExecutorCfg, StatusPass, []string{"allows it", "nvidia-docker-v2"}},
		{"DefaultContainerExecutor", docker, dockerHadoop().with("yarn-site.xml", keyContainerExecutor, ""), dockerExecutorCfg, StatusFail,
			[]string{"runs no Docker container"}},
		{"docker not allowed", docker, dockerHadoop().with("yarn-site.xml", keyAllowedRuntimes, "default"), dockerExecutorCfg, StatusFail,
			[]string{"does not allow docker"}},
		{"no image", []string{flinkTMRuntimeType + "=docker"}, dockerHadoop(), dockerExecutorCfg, StatusFail, []string{"name no image"}},
		{"no GPU plugin", docker, dockerHadoop().with("yarn-site.xml", keyResourcePlugins, ""), dockerExecutorCfg, StatusFail,
			[]string{"no GPU plugin", "get no device"}},
		{"nvidia runtime not allowed", docker, dockerHadoop(), "[docker]\nmodule.enabled=true\ndocker.allowed.runtimes=runc\n", StatusFail,
			[]string{"nvidia runtime", "docker.allowed.runtimes"}},
		{"docker module off", docker, dockerHadoop(), "[docker]\ndocker.allowed.runtimes=nvidia\n", StatusFail, []string{"[docker] module.enabled is not true"}},
		{"v1 without the volume driver and devices", docker, dockerHadoop().with("yarn-site.xml", keyGPUDockerPlugin, ""),
			"[docker]\nmodule.enabled=true\n", StatusFail, []string{"nvidia-docker volume driver"}},
		{"unknown Docker plugin", docker, dockerHadoop().with("yarn-site.xml", keyGPUDockerPlugin, "nvidia-container-toolkit"), dockerExecutorCfg, StatusFail,
			[]string{"not a Docker plugin Hadoop knows"}},
		{"no container-executor.cfg here", docker, dockerHadoop(), "", StatusPass, []string{"allows it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := tc.files.load(t)
			if tc.executor != "" {
				require.NoError(t, os.WriteFile(filepath.Join(hc.Dir(), containerExecutorCfg), []byte(tc.executor), 0o644))
			}
			rep := run(t, Input{Flink: flinkConf(t, goodFlink, tc.flink...), Hadoop: hc})
			entries := rep.entries(IDDockerGPU)
			require.NotEmpty(t, entries)
			var msgs []string
			worst := StatusPass
			for _, e := range entries {
				msgs = append(msgs, e.Message)
				if e.Status == StatusFail {
					worst = StatusFail
				}
			}
			assert.Equal(t, tc.want, worst, "%v", msgs)
			for _, part := range tc.parts {
				assert.Contains(t, strings.Join(msgs, "\n"), part)
			}
		})
	}
}
