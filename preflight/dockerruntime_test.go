package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

// dockerRuntimeCfg is a container-executor.cfg as an administrator writes it for Docker containers
// with GPUs through nvidia-docker-v2 (Hadoop's DockerContainers.md and UsingGpus.md examples):
// the yarn-er coordination directory allowed read-write, the registry trusted.
const dockerRuntimeCfg = `yarn.nodemanager.linux-container-executor.group=hadoop
banned.users=hdfs,yarn,mapred,bin
min.user.id=1000
[gpu]
  module.enabled=true
[cgroups]
  root=/sys/fs/cgroup
  yarn-hierarchy=yarn
[docker]
  module.enabled=true
  docker.trusted.registries=registry.example.com:5000,library
  docker.allowed.runtimes=runc,nvidia
  docker.allowed.networks=bridge,host,none
  docker.allowed.ro-mounts=/sys/fs/cgroup,/etc/passwd,/etc/group
  docker.allowed.rw-mounts=/hadoop/yarn/local,/hadoop/yarn/log,/var/lib/yarn-er
  docker.privileged-containers.enabled=false
`

// dockerRequest is what `yarn-er submit --image registry.example.com:5000/ml/torch:2.4 --gpus 1`
// asks: the coordination directory mounted read-write.
func dockerRequest() *DockerRequest {
	return &DockerRequest{
		Image:  "registry.example.com:5000/ml/torch:2.4",
		Mounts: []records.DockerMount{{Source: "/var/lib/yarn-er", Target: "/var/lib/yarn-er"}},
	}
}

func gpuContainer() *records.Resources {
	v := records.NewResources(1024, 1, records.Resource{Name: records.GPU, Value: 1})
	return &v
}

// TestDockerRuntimeCheck: a Docker submission (and a cluster that allows Docker) against
// yarn-site.xml and container-executor.cfg files missing one piece each. Every case but the
// first two failed before yarn.docker-runtime existed (no check looked at them).
func TestDockerRuntimeCheck(t *testing.T) {
	withReq := func(f func(*DockerRequest)) *DockerRequest {
		d := dockerRequest()
		f(d)
		return d
	}
	cfgWith := func(old, new string) string { return strings.Replace(dockerRuntimeCfg, old, new, 1) }
	for _, tc := range []struct {
		name     string
		docker   *DockerRequest
		files    hadoopFiles
		executor string // container-executor.cfg; "" for none
		gpu      bool
		want     Status // the worst status
		parts    []string
	}{
		{"no Docker anywhere", nil, goodHadoop(), "", true, StatusPass, []string{"no Docker image asked for"}},
		{"ready (v2)", dockerRequest(), dockerHadoop(), dockerRuntimeCfg, true, StatusPass, []string{"allows it", "nvidia-docker-v2"}},
		{"ready without container-executor.cfg here", dockerRequest(), dockerHadoop(), "", true, StatusPass, []string{"is not checked"}},
		{"DefaultContainerExecutor", dockerRequest(), dockerHadoop().with("yarn-site.xml", keyContainerExecutor, ""), dockerRuntimeCfg, true, StatusFail,
			[]string{"DefaultContainerExecutor", "runs no Docker container"}},
		{"docker not an allowed runtime", dockerRequest(), dockerHadoop().with("yarn-site.xml", keyAllowedRuntimes, "default"), dockerRuntimeCfg, true, StatusFail,
			[]string{"does not allow docker"}},
		{"[docker] module off", dockerRequest(), dockerHadoop(), cfgWith("  module.enabled=true\n  docker.trusted", "  module.enabled=false\n  docker.trusted"), true, StatusFail,
			[]string{"[docker] module.enabled is not true"}},
		{"untrusted registry", withReq(func(d *DockerRequest) { d.Image = "nvcr.io/nvidia/pytorch:24.05-py3" }), dockerHadoop(), dockerRuntimeCfg, true, StatusFail,
			[]string{"nvcr.io/nvidia/pytorch:24.05-py3 is from no registry", "drops every bind mount"}},
		{"official image without library/", withReq(func(d *DockerRequest) { d.Image = "ubuntu:22.04" }), dockerHadoop(), dockerRuntimeCfg, false, StatusFail,
			[]string{"ubuntu:22.04 is from no registry", "library/NAME"}},
		{"official image as library/", withReq(func(d *DockerRequest) { d.Image = "library/ubuntu:22.04" }), dockerHadoop(), dockerRuntimeCfg, false, StatusPass,
			[]string{"allows it"}},
		{"coordination directory not allowed", dockerRequest(), dockerHadoop(), cfgWith(",/var/lib/yarn-er", ""), true, StatusFail,
			[]string{"/var/lib/yarn-er:/var/lib/yarn-er:rw is under no directory", "docker.allowed.rw-mounts"}},
		{"read-only mount allowed read-only", withReq(func(d *DockerRequest) {
			d.Mounts = append(d.Mounts, records.DockerMount{Source: "/etc/passwd", Target: "/etc/passwd", ReadOnly: true})
		}), dockerHadoop(), dockerRuntimeCfg, true, StatusPass, []string{"allows it"}},
		{"read-write mount allowed only read-only", withReq(func(d *DockerRequest) {
			d.Mounts = append(d.Mounts, records.DockerMount{Source: "/etc/passwd", Target: "/etc/passwd"})
		}), dockerHadoop(), dockerRuntimeCfg, true, StatusFail, []string{"/etc/passwd:/etc/passwd:rw is under no directory of [docker] docker.allowed.rw-mounts"}},
		{"a sibling with a common prefix is not below", withReq(func(d *DockerRequest) {
			d.Mounts = []records.DockerMount{{Source: "/var/lib/yarn-er2", Target: "/x"}}
		}), dockerHadoop(), dockerRuntimeCfg, true, StatusFail, []string{"/var/lib/yarn-er2:/x:rw is under no directory"}},
		{"network not allowed by yarn-site", withReq(func(d *DockerRequest) { d.Network = "overlay1" }), dockerHadoop(), cfgWith("bridge,host,none", "bridge,host,none,overlay1"), true, StatusFail,
			[]string{`network "overlay1" is not among yarn.nodemanager.runtime.linux.docker.allowed-container-networks (host,none,bridge)`}},
		{"network not allowed by container-executor.cfg", withReq(func(d *DockerRequest) { d.Network = "overlay1" }),
			dockerHadoop().with("yarn-site.xml", keyDockerNetworks, "host,overlay1"), dockerRuntimeCfg, true, StatusFail,
			[]string{`not among [docker] docker.allowed.networks`}},
		{"privileged refused by yarn-site", withReq(func(d *DockerRequest) { d.Privileged = true }), dockerHadoop(), cfgWith("privileged-containers.enabled=false", "privileged-containers.enabled=true"), true, StatusFail,
			[]string{"privileged container is asked for", keyDockerPrivileged}},
		{"privileged refused by container-executor.cfg", withReq(func(d *DockerRequest) { d.Privileged = true }),
			dockerHadoop().with("yarn-site.xml", keyDockerPrivileged, "true"), dockerRuntimeCfg, true, StatusFail,
			[]string{"[docker] docker.privileged-containers.enabled is \"false\""}},
		{"GPU: nvidia runtime not allowed", dockerRequest(), dockerHadoop(), cfgWith("runc,nvidia", "runc"), true, StatusFail,
			[]string{"nvidia runtime", "docker.allowed.runtimes"}},
		{"GPU: no GPU plugin", dockerRequest(), dockerHadoop().with("yarn-site.xml", keyResourcePlugins, ""), dockerRuntimeCfg, true, StatusFail,
			[]string{"no GPU plugin"}},
		{"GPU: no GPU asked, no plugin needed", dockerRequest(), dockerHadoop().with("yarn-site.xml", keyResourcePlugins, ""), dockerRuntimeCfg, false, StatusPass,
			[]string{"allows it"}},
		{"GPU: nvidia-docker-v1 by default", dockerRequest(), dockerHadoop().with("yarn-site.xml", keyGPUDockerPlugin, ""),
			dockerRuntimeCfg + "  docker.allowed.volume-drivers=nvidia-docker\n  docker.allowed.devices=/dev/nvidiactl,/dev/nvidia-uvm,/dev/nvidia0\n", true, StatusWarn,
			[]string{"retired nvidia-docker-plugin"}},
		{"GPU: nvidia-docker-v1 endpoint not a URL", dockerRequest(),
			dockerHadoop().with("yarn-site.xml", keyGPUDockerPlugin, "nvidia-docker-v1").with("yarn-site.xml", keyNvidiaDockerV1URL, "localhost:3476"),
			dockerRuntimeCfg + "  docker.allowed.volume-drivers=nvidia-docker\n  docker.allowed.devices=/dev/nvidiactl\n", true, StatusFail,
			[]string{"is not an http URL"}},
		{"cluster allows docker, no image asked: [docker] off", nil, dockerHadoop(), "[docker]\n  module.enabled=false\n", false, StatusFail,
			[]string{"the container-executor runs no Docker container"}},
		{"cluster allows docker, unknown Docker plugin", nil, dockerHadoop().with("yarn-site.xml", keyGPUDockerPlugin, "nvidia-container-toolkit"), dockerRuntimeCfg, false, StatusFail,
			[]string{"not a Docker plugin Hadoop knows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := tc.files.load(t)
			if tc.executor != "" {
				require.NoError(t, os.WriteFile(filepath.Join(hc.Dir(), containerExecutorCfg), []byte(tc.executor), 0o644))
			}
			vec := records.NewResources(1024, 1)
			if tc.gpu {
				vec = *gpuContainer()
			}
			rep := run(t, Input{Container: &vec, Hadoop: hc, Docker: tc.docker})
			entries := rep.entries(IDDockerRuntime)
			require.NotEmpty(t, entries)
			var msgs []string
			worst := StatusPass
			for _, e := range entries {
				msgs = append(msgs, e.Message+" | fix: "+e.Fix+" | at "+e.Source)
				if e.Status == StatusFail || (e.Status == StatusWarn && worst == StatusPass) {
					worst = e.Status
				}
			}
			assert.Equal(t, tc.want, worst, "%v", msgs)
			for _, part := range tc.parts {
				assert.Contains(t, strings.Join(msgs, "\n"), part)
			}
			for _, e := range entries {
				if e.Status == StatusFail || e.Status == StatusWarn {
					assert.NotEmpty(t, e.Fix, "every finding says how to fix it")
					assert.NotEmpty(t, e.Source, "every finding names its file")
				}
			}
		})
	}
}

// TestDockerRuntimeSourceLines: a finding in container-executor.cfg names its line.
func TestDockerRuntimeSourceLines(t *testing.T) {
	hc := dockerHadoop().load(t)
	cfg := strings.Replace(dockerRuntimeCfg, "docker.trusted.registries=registry.example.com:5000,library", "docker.trusted.registries=centos", 1)
	require.NoError(t, os.WriteFile(filepath.Join(hc.Dir(), containerExecutorCfg), []byte(cfg), 0o644))
	rep := run(t, Input{Container: gpuContainer(), Hadoop: hc, Docker: dockerRequest()})
	entries := rep.entries(IDDockerRuntime)
	require.Len(t, entries, 1)
	assert.Equal(t, filepath.Join(hc.Dir(), containerExecutorCfg)+":11", entries[0].Source)
}

func TestMountAllowed(t *testing.T) {
	allowed := []string{"/var/lib/yarn-er", "/hadoop/", "regex:^nvidia_driver_.*$"}
	for src, want := range map[string]bool{
		"/var/lib/yarn-er":         true,
		"/var/lib/yarn-er/":        true,
		"/var/lib/yarn-er/x":       true,
		"/var/lib/yarn-er2":        false,
		"/hadoop/yarn/local":       true,
		"/var/lib":                 false,
		"nvidia_driver_550.54.15":  false,
		"/var/lib/yarn-er/../etc":  false,
		"/var/lib/yarn-er/./coord": true,
	} {
		assert.Equal(t, want, mountAllowed(src, allowed), src)
	}
	assert.True(t, mountAllowed("/anything", []string{"/"}))
}

// TestDockerRuntimeClusterOnly: a cluster that allows Docker, checked without an image asked for.
func TestDockerRuntimeClusterOnly(t *testing.T) {
	hc := dockerHadoop().with("yarn-site.xml", keyResourcePlugins, "").load(t)
	require.NoError(t, os.WriteFile(filepath.Join(hc.Dir(), containerExecutorCfg), []byte(dockerRuntimeCfg), 0o644))
	rep := run(t, Input{Container: gpuContainer(), Hadoop: hc})
	entries := rep.entries(IDDockerRuntime)
	require.Len(t, entries, 1)
	assert.Equal(t, StatusPass, entries[0].Status)
	assert.Equal(t, "the NodeManagers allow the docker runtime and their configuration can run Docker containers", entries[0].Message)
}

// TestDockerRuntimeFlink: Flink's TaskManagers in Docker (containerized.taskmanager.env) get the
// container-executor's rules for their image and mounts; the executor, runtimes and GPU plugin are
// yarn.docker-gpu's, so they are not reported twice.
func TestDockerRuntimeFlink(t *testing.T) {
	base := []string{flinkTMRuntimeType + "=docker", flinkTMDockerImage + "=registry.example.com:5000/flink-gpu:1.20",
		flinkTMDockerMounts + "=/var/lib/yarn-er:/var/lib/yarn-er:rw"}
	for _, tc := range []struct {
		name  string
		flink []string
		files hadoopFiles
		want  Status
		parts []string
	}{
		{"ready", base, dockerHadoop(), StatusPass, []string{"the TaskManagers run in Docker image registry.example.com:5000/flink-gpu:1.20 and container-executor's rules allow"}},
		{"untrusted image", append(base[:1:1], flinkTMDockerImage+"=nvcr.io/nvidia/flink:1", base[2]), dockerHadoop(), StatusFail,
			[]string{"nvcr.io/nvidia/flink:1 is from no registry"}},
		{"mount not allowed", append(base[:2:2], flinkTMDockerMounts+"=/data:/data:rw+rslave"), dockerHadoop(), StatusFail,
			[]string{"/data:/data:rw is under no directory of [docker] docker.allowed.rw-mounts"}},
		{"propagation alone is read-write", append(base[:2:2], flinkTMDockerMounts+"=/var/lib/yarn-er:/c:rshared,/etc/passwd:/etc/passwd:ro+rprivate"), dockerHadoop(), StatusPass,
			[]string{"allow its image and mounts"}},
		{"unreadable mount", append(base[:2:2], flinkTMDockerMounts+"=data:/data"), dockerHadoop(), StatusFail,
			[]string{flinkTMDockerMounts + `: docker mount "data:/data": the source "data" is not an absolute path`}},
		{"LCE missing is yarn.docker-gpu's", base, dockerHadoop().with("yarn-site.xml", keyContainerExecutor, ""), StatusPass, []string{"allow its image and mounts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := tc.files.load(t)
			require.NoError(t, os.WriteFile(filepath.Join(hc.Dir(), containerExecutorCfg), []byte(dockerRuntimeCfg), 0o644))
			rep := run(t, Input{Flink: flinkConf(t, goodFlink, tc.flink...), Hadoop: hc})
			var msgs []string
			worst := StatusPass
			for _, e := range rep.entries(IDDockerRuntime) {
				msgs = append(msgs, e.Message)
				if e.Status == StatusFail {
					worst = StatusFail
					assert.NotEmpty(t, e.Fix)
				}
			}
			assert.Equal(t, tc.want, worst, "%v", msgs)
			for _, p := range tc.parts {
				assert.Contains(t, strings.Join(msgs, "\n"), p)
			}
		})
	}
}
