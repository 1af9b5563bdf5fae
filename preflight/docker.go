package preflight

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/records"
)

// Docker on YARN with GPUs: the keys of the NodeManagers' Docker runtime (Hadoop's
// DockerContainers.md, UsingGpus.md) and of Flink's per-container environment that selects it.
const (
	keyAllowedRuntimes   = "yarn.nodemanager.runtime.linux.allowed-runtimes"
	keyDockerImageName   = "yarn.nodemanager.runtime.linux.docker.image-name"
	keyGPUDockerPlugin   = "yarn.nodemanager.resource-plugins.gpu.docker-plugin"
	flinkTMRuntimeType   = "containerized.taskmanager.env.YARN_CONTAINER_RUNTIME_TYPE"
	flinkTMDockerImage   = "containerized.taskmanager.env.YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"
	dockerPluginV1       = "nvidia-docker-v1"
	dockerPluginV2       = "nvidia-docker-v2"
	dockerSection        = "docker"
	dockerModuleEnabled  = "module.enabled"
	dockerAllowedRuntime = "docker.allowed.runtimes"
	dockerAllowedVolDrv  = "docker.allowed.volume-drivers"
	dockerAllowedDevices = "docker.allowed.devices"
)

// dockerCheck: when the TaskManagers run in Docker containers (Flink's
// containerized.taskmanager.env.YARN_CONTAINER_RUNTIME_TYPE=docker), everything a Docker
// container with GPUs needs on the NodeManagers: LinuxContainerExecutor (the Docker runtime is one
// of its runtimes), docker among the allowed runtimes, an image, and for GPUs the GPU plugin with
// its Docker plugin and what container-executor.cfg must allow for it (the nvidia runtime for
// nvidia-docker-v2; the volume driver and the device nodes for v1). Each missing piece is an entry.
func (f *facts) dockerCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	if f.in.Flink == nil {
		out.pass("", "no Flink configuration: the containers do not ask for the Docker runtime")
		return
	}
	rt, rtSrc := f.flinkValue(flinkTMRuntimeType)
	if !strings.EqualFold(rt, "docker") {
		out.pass(rtSrc, "%s do not run in Docker containers (%s is not docker)", f.subj.many, flinkTMRuntimeType)
		return
	}
	hc := f.in.Hadoop
	found := false
	fail := func(src, fix, format string, args ...any) {
		found = true
		out.fail(src, fix, format, args...)
	}
	if exec := strings.TrimSpace(hc.Get(keyContainerExecutor)); !strings.HasSuffix(exec, "LinuxContainerExecutor") {
		fail(sourceOr(hc, keyContainerExecutor, hc.Dir()),
			fmt.Sprintf("on the NodeManagers set %s=%s: the Docker runtime is one of its runtimes", keyContainerExecutor, linuxExecutor),
			"the %s ask for the Docker runtime (%s), but the NodeManagers use %s, which runs no Docker container", f.subj.many, rtSrc, orDefault(exec, "DefaultContainerExecutor (Hadoop's default)"))
	}
	if allowed := hc.GetTrimmedStrings(keyAllowedRuntimes); !slices.Contains(allowed, "docker") {
		fail(sourceOr(hc, keyAllowedRuntimes, hc.Dir()),
			fmt.Sprintf("on the NodeManagers set %s=default,docker", keyAllowedRuntimes),
			"%s = %q does not allow docker: the NodeManagers refuse the %s' containers", keyAllowedRuntimes, strings.Join(allowed, ","), f.subj.many)
	}
	if img, _ := f.flinkValue(flinkTMDockerImage); img == "" && strings.TrimSpace(hc.Get(keyDockerImageName)) == "" {
		fail(rtSrc, fmt.Sprintf("set %s to the image (or %s on the NodeManagers)", flinkTMDockerImage, keyDockerImageName),
			"the %s ask for the Docker runtime but name no image", f.subj.many)
	}
	if f.requestsGPU() {
		f.dockerGPUChecks(fail)
	}
	if !found {
		out.pass(rtSrc, "the %s run in Docker containers and the NodeManagers' configuration allows it%s", f.subj.many, f.dockerGPUNote())
	}
}

// requestsGPU reports whether the container asks for yarn.io/gpu.
func (f *facts) requestsGPU() bool {
	for _, res := range f.extendedRequest() {
		if res.Name == records.GPU && res.Value > 0 {
			return true
		}
	}
	return false
}

// dockerGPUNote says which Docker plugin hands the GPUs to the containers, for the pass message.
func (f *facts) dockerGPUNote() string {
	if !f.requestsGPU() {
		return ""
	}
	return ", with GPUs through " + orDefault(strings.TrimSpace(f.in.Hadoop.Get(keyGPUDockerPlugin)), dockerPluginV1)
}

// dockerGPUChecks: a Docker container gets GPUs only from the GPU plugin's Docker plugin, and
// container-executor.cfg must allow what that plugin adds to the docker run.
func (f *facts) dockerGPUChecks(fail func(src, fix, format string, args ...any)) {
	hc := f.in.Hadoop
	if !slices.Contains(hc.GetTrimmedStrings(keyResourcePlugins), records.GPU) {
		fail(sourceOr(hc, keyResourcePlugins, hc.Dir()),
			fmt.Sprintf("on the NodeManagers set %s=%s (GPUs as a plain count reach no Docker container)", keyResourcePlugins, records.GPU),
			"the %s ask for yarn.io/gpu in Docker containers, but the NodeManagers run no GPU plugin: the containers are scheduled with GPUs and get no device", f.subj.many)
	}
	plugin := orDefault(strings.TrimSpace(hc.Get(keyGPUDockerPlugin)), dockerPluginV1)
	if plugin != dockerPluginV1 && plugin != dockerPluginV2 {
		fail(sourceOr(hc, keyGPUDockerPlugin, hc.Dir()), fmt.Sprintf("set %s to %s or %s", keyGPUDockerPlugin, dockerPluginV2, dockerPluginV1),
			"%s = %q is not a Docker plugin Hadoop knows", keyGPUDockerPlugin, plugin)
		return
	}
	dir := hc.Dir()
	if dir == "" {
		return
	}
	cfg, path, ok, err := readExecutorCfg(dir)
	if !ok || err != nil {
		return // container-executor.cfg lives elsewhere (it is root's): not checked, as for [gpu]
	}
	sec := cfg[dockerSection]
	if v := sec[dockerModuleEnabled]; v.value != "true" {
		fail(fmt.Sprintf("%s:%d", path, v.line), fmt.Sprintf("add \"[docker]\" with \"module.enabled=true\" to %s", containerExecutorCfg),
			"[docker] module.enabled is not true in %s: the container-executor runs no Docker container", path)
	}
	list := func(key string) []string {
		var out []string
		for _, f := range strings.Split(sec[key].value, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	at := func(key string) string {
		if v, ok := sec[key]; ok {
			return fmt.Sprintf("%s:%d", path, v.line)
		}
		return path
	}
	switch plugin {
	case dockerPluginV2:
		if !slices.Contains(list(dockerAllowedRuntime), "nvidia") {
			fail(at(dockerAllowedRuntime), fmt.Sprintf("add nvidia to %s in [docker] of %s", dockerAllowedRuntime, containerExecutorCfg),
				"%s uses the nvidia runtime, which [docker] %s (%q) does not allow: the containers fail to launch", dockerPluginV2, dockerAllowedRuntime, sec[dockerAllowedRuntime].value)
		}
	case dockerPluginV1:
		if !slices.ContainsFunc(list(dockerAllowedVolDrv), func(s string) bool { return strings.HasPrefix(s, "nvidia-docker") }) {
			fail(at(dockerAllowedVolDrv), fmt.Sprintf("add nvidia-docker to %s in [docker] of %s (or use %s=%s)", dockerAllowedVolDrv, containerExecutorCfg, keyGPUDockerPlugin, dockerPluginV2),
				"%s mounts the driver with the nvidia-docker volume driver, which [docker] %s does not allow", dockerPluginV1, dockerAllowedVolDrv)
		}
		if devs := list(dockerAllowedDevices); !slices.Contains(devs, "/dev/nvidiactl") {
			fail(at(dockerAllowedDevices), fmt.Sprintf("add /dev/nvidiactl,/dev/nvidia-uvm,/dev/nvidia-uvm-tools and each /dev/nvidiaN to %s in [docker] of %s", dockerAllowedDevices, containerExecutorCfg),
				"%s passes the GPUs' device nodes, which [docker] %s does not allow", dockerPluginV1, dockerAllowedDevices)
		}
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
