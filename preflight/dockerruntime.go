package preflight

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/records"
)

// DockerRequest is what a submission asks of the NodeManagers' Docker runtime (yarn-er submit
// --image): the image, the bind mounts, the network and whether the container is privileged.
type DockerRequest struct {
	// Image is the Docker image, as YARN_CONTAINER_RUNTIME_DOCKER_IMAGE carries it.
	Image string
	// Mounts are the bind mounts (YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS).
	Mounts []records.DockerMount
	// Network is the container network ("": the NodeManagers' default network).
	Network string
	// Privileged asks for a privileged container.
	Privileged bool
}

// Keys of the Docker runtime in yarn-site.xml (Hadoop's DockerContainers.md, YarnConfiguration)
// and in container-executor.cfg's [docker] section (docker-util.c).
const (
	keyDockerNetworks        = "yarn.nodemanager.runtime.linux.docker.allowed-container-networks"
	keyDockerPrivileged      = "yarn.nodemanager.runtime.linux.docker.privileged-containers.allowed"
	keyDockerPrivilegedACL   = "yarn.nodemanager.runtime.linux.docker.privileged-containers.acl"
	keyNvidiaDockerV1URL     = "yarn.nodemanager.resource-plugins.gpu.docker-plugin.nvidiadocker-v1.endpoint"
	defaultDockerNetworks    = "host,none,bridge"
	dockerTrustedRegistries  = "docker.trusted.registries"
	dockerAllowedROMounts    = "docker.allowed.ro-mounts"
	dockerAllowedRWMounts    = "docker.allowed.rw-mounts"
	dockerAllowedNetworks    = "docker.allowed.networks"
	dockerPrivilegedEnabled  = "docker.privileged-containers.enabled"
	dockerPrivilegedRegistry = "docker.privileged-containers.registries"
)

// dockerRuntimeCheck reports yarn.docker-runtime: when the submission asks for a Docker image
// (Input.Docker) or the NodeManagers allow the docker runtime, whether their configuration can
// run the containers: LinuxContainerExecutor, docker among the allowed runtimes, container-executor.cfg
// (when this configuration directory has it) with [docker] enabled, the image from a trusted
// registry (container-executor silently drops every bind mount of an untrusted image, yarn-er's
// coordination directory and YARN's own directories included), each mount under an allowed
// directory, the network and a privileged container allowed on both sides; and, for GPUs, the
// GPU plugin's Docker plugin with what container-executor.cfg must allow for it (the checks of
// yarn.docker-gpu), and nvidia-docker-v1's endpoint. For Flink's TaskManagers in Docker
// (containerized.taskmanager.env), only what yarn.docker-gpu does not check: the image's trust,
// the mounts, the network and the privilege.
func (f *facts) dockerRuntimeCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	hc := f.in.Hadoop
	d := f.in.Docker
	allowed := hc.GetTrimmedStrings(keyAllowedRuntimes)
	clusterDocker := slices.Contains(allowed, records.RuntimeDocker)
	// Flink's TaskManagers in Docker: yarn.docker-gpu checks the executor, the runtimes and the
	// GPU plugin; this check adds the container-executor's rules for their image and mounts.
	fromFlink := false
	var flinkProblems []Check
	if d == nil && f.in.Flink != nil {
		d, flinkProblems = f.flinkDockerRequest()
		fromFlink = d != nil || len(flinkProblems) > 0
	}
	if d == nil && !clusterDocker && !fromFlink {
		out.pass(sourceOf(hc, keyAllowedRuntimes),
			"no Docker image asked for, and the NodeManagers allow no docker runtime (%s)", keyAllowedRuntimes)
		return
	}
	var seen []string
	fail := func(src, fix, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if slices.Contains(seen, msg) {
			return // dockerGPUChecks repeats the [docker] module check
		}
		seen = append(seen, msg)
		out.fail(src, fix, "%s", msg)
	}
	for _, p := range flinkProblems {
		fail(p.Source, p.Fix, "%s", p.Message)
	}
	who := "the NodeManagers allow the docker runtime"
	switch {
	case fromFlink && d != nil:
		who = fmt.Sprintf("the TaskManagers run in Docker image %s", d.Image)
	case d != nil:
		who = fmt.Sprintf("the containers run in Docker image %s", d.Image)
	}
	if fromFlink {
		if d != nil {
			f.dockerRequestYarnSite(d, fail)
		}
		// yarn.docker-gpu checks the [docker] module when the TaskManagers ask for GPUs.
		note := f.dockerExecutorCfgChecks(d, !f.requestsGPU(), fail)
		if len(seen) == 0 && d != nil {
			out.pass(sourceOf(hc, keyAllowedRuntimes), "%s and container-executor's rules allow its image and mounts (the executor, runtimes and GPU plugin: yarn.docker-gpu)%s", who, note)
		}
		return
	}
	if exec := strings.TrimSpace(hc.Get(keyContainerExecutor)); !strings.HasSuffix(exec, "LinuxContainerExecutor") {
		fail(sourceOr(hc, keyContainerExecutor, hc.Dir()),
			fmt.Sprintf("on the NodeManagers set %s=%s: the Docker runtime is one of its runtimes", keyContainerExecutor, linuxExecutor),
			"%s, but the NodeManagers use %s, which runs no Docker container", who, orDefault(exec, "DefaultContainerExecutor (Hadoop's default)"))
	}
	if d != nil && !clusterDocker {
		fail(sourceOr(hc, keyAllowedRuntimes, hc.Dir()),
			fmt.Sprintf("on the NodeManagers set %s=default,docker", keyAllowedRuntimes),
			"%s = %q does not allow docker: the NodeManagers refuse the containers", keyAllowedRuntimes, strings.Join(allowed, ","))
	}
	if d != nil {
		f.dockerRequestYarnSite(d, fail)
	}
	note := f.dockerExecutorCfgChecks(d, true, fail)
	if d != nil && f.requestsGPU() {
		f.dockerGPUChecks(fail)
	}
	if f.requestsGPU() || d == nil {
		f.nvidiaDockerV1Check(out, fail)
	}
	if len(seen) == 0 && !out.has(StatusWarn) {
		verdict := "and the configuration allows it"
		if d == nil {
			verdict = "and their configuration can run Docker containers"
		}
		out.pass(sourceOf(hc, keyAllowedRuntimes), "%s %s%s%s", who, verdict, f.dockerRuntimeGPUNote(d), note)
	}
}

// dockerRuntimeGPUNote names the Docker plugin that gives the containers their GPUs.
func (f *facts) dockerRuntimeGPUNote(d *DockerRequest) string {
	if d == nil || !f.requestsGPU() {
		return ""
	}
	return ", with GPUs through " + orDefault(strings.TrimSpace(f.in.Hadoop.Get(keyGPUDockerPlugin)), dockerPluginV1)
}

// dockerRequestYarnSite checks the request's network and privilege against yarn-site.xml.
func (f *facts) dockerRequestYarnSite(d *DockerRequest, fail func(src, fix, format string, args ...any)) {
	hc := f.in.Hadoop
	if d.Network != "" {
		nets := hc.GetTrimmedStrings(keyDockerNetworks)
		if _, set := hc.Lookup(keyDockerNetworks); !set {
			nets = strings.Split(defaultDockerNetworks, ",")
		}
		if !slices.Contains(nets, d.Network) {
			fail(sourceOr(hc, keyDockerNetworks, hc.Dir()), fmt.Sprintf("use one of %s, or add %s to %s on the NodeManagers", strings.Join(nets, ","), d.Network, keyDockerNetworks),
				"the network %q is not among %s (%s): the NodeManagers refuse the containers", d.Network, keyDockerNetworks, strings.Join(nets, ","))
		}
	}
	if d.Privileged {
		if v := strings.TrimSpace(hc.Get(keyDockerPrivileged)); !strings.EqualFold(v, "true") {
			fail(sourceOr(hc, keyDockerPrivileged, hc.Dir()), fmt.Sprintf("drop --docker-run-privileged, or set %s=true (and %s) on the NodeManagers", keyDockerPrivileged, keyDockerPrivilegedACL),
				"a privileged container is asked for, but %s is %q: the NodeManagers refuse it", keyDockerPrivileged, orDefault(v, "false (Hadoop's default)"))
		}
	}
}

// dockerExecutorCfgChecks checks container-executor.cfg's [docker] section when this configuration
// directory has the file (it is root's, and often lives elsewhere: then a note says it was not
// checked).
func (f *facts) dockerExecutorCfgChecks(d *DockerRequest, checkModule bool, fail func(src, fix, format string, args ...any)) string {
	dir := f.in.Hadoop.Dir()
	if dir == "" {
		return ""
	}
	cfg, path, found, err := readExecutorCfg(dir)
	switch {
	case !found:
		return fmt.Sprintf(" (no %s in %s: its [docker] section is not checked)", containerExecutorCfg, dir)
	case err != nil:
		return fmt.Sprintf(" (cannot read %s: %v; its [docker] section is not checked)", path, err)
	}
	sec := cfg[dockerSection]
	at := func(key string) string {
		if v, ok := sec[key]; ok {
			return fmt.Sprintf("%s:%d", path, v.line)
		}
		return path
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
	if v := sec[dockerModuleEnabled]; checkModule && v.value != "true" {
		fail(at(dockerModuleEnabled), fmt.Sprintf("add \"[docker]\" with \"module.enabled=true\" to %s", containerExecutorCfg),
			"[docker] module.enabled is not true in %s: the container-executor runs no Docker container", path)
	}
	if d == nil {
		return ""
	}
	trusted := list(dockerTrustedRegistries)
	if reg, ok := records.ImageTrusted(d.Image, trusted); !ok {
		fail(at(dockerTrustedRegistries), fmt.Sprintf("name the image with a trusted registry prefix (REGISTRY/NAME; Docker Hub's official images as library/NAME), or add its registry to %s in [docker] of %s", dockerTrustedRegistries, containerExecutorCfg),
			"the image %s is from no registry of [docker] %s (%q): the container-executor drops every bind mount of an untrusted image (the container's own working directory, the yarn-er binary and the coordination directory too) and its devices, so yarn-er exec cannot run in it",
			d.Image, dockerTrustedRegistries, strings.Join(trusted, ","))
	} else if d.Privileged {
		if priv := list(dockerPrivilegedRegistry); len(priv) > 0 {
			if _, ok := records.ImageTrusted(d.Image, priv); !ok {
				fail(at(dockerPrivilegedRegistry), fmt.Sprintf("add the image's registry (%s) to %s, or drop --docker-run-privileged", reg, dockerPrivilegedRegistry),
					"a privileged container is asked for, but the image is from no registry of [docker] %s", dockerPrivilegedRegistry)
			}
		}
	}
	ro, rw := list(dockerAllowedROMounts), list(dockerAllowedRWMounts)
	for _, m := range d.Mounts {
		okRW := mountAllowed(m.Source, rw)
		if okRW || (m.ReadOnly && mountAllowed(m.Source, ro)) {
			continue
		}
		key := dockerAllowedRWMounts
		if m.ReadOnly {
			key = dockerAllowedROMounts
		}
		fail(at(key), fmt.Sprintf("add %s (or a directory above it) to %s in [docker] of %s on every NodeManager, and make sure it exists there", m.Source, key, containerExecutorCfg),
			"the mount %s is under no directory of [docker] %s: the container-executor refuses the container", m, key)
	}
	if d.Network != "" {
		if nets := list(dockerAllowedNetworks); !slices.Contains(nets, d.Network) {
			fail(at(dockerAllowedNetworks), fmt.Sprintf("add %s to %s in [docker] of %s", d.Network, dockerAllowedNetworks, containerExecutorCfg),
				"the network %q is not among [docker] %s (%q): the container-executor refuses the container", d.Network, dockerAllowedNetworks, strings.Join(nets, ","))
		}
	}
	if d.Privileged {
		if v := sec[dockerPrivilegedEnabled].value; !strings.EqualFold(v, "true") && v != "1" {
			fail(at(dockerPrivilegedEnabled), fmt.Sprintf("set %s=true in [docker] of %s, or drop --docker-run-privileged", dockerPrivilegedEnabled, containerExecutorCfg),
				"a privileged container is asked for, but [docker] %s is %q", dockerPrivilegedEnabled, orDefault(v, "not set (false)"))
		}
	}
	return ""
}

// mountAllowed reports whether source is one of the allowed paths or below an allowed directory,
// compared as cleaned paths (container-executor compares real paths on the NodeManager, which a
// client cannot resolve: a symbolic link there may still refuse what passes here).
func mountAllowed(source string, allowed []string) bool {
	src := path.Clean(source)
	for _, a := range allowed {
		if strings.HasPrefix(a, "regex:") {
			continue // named volumes only; a host path never matches
		}
		a = path.Clean(a)
		if src == a || a == "/" || strings.HasPrefix(src, a+"/") {
			return true
		}
	}
	return false
}

// nvidiaDockerV1Check: with the GPU plugin on nvidia-docker-v1 (Hadoop's default), its endpoint
// must be an http(s) URL; nvidia-docker v1's plugin daemon is retired by NVIDIA, so a warning
// points to nvidia-docker-v2.
func (f *facts) nvidiaDockerV1Check(out *results, fail func(src, fix, format string, args ...any)) {
	hc := f.in.Hadoop
	if !slices.Contains(hc.GetTrimmedStrings(keyResourcePlugins), records.GPU) {
		return
	}
	plugin := orDefault(strings.TrimSpace(hc.Get(keyGPUDockerPlugin)), dockerPluginV1)
	switch plugin {
	case dockerPluginV2:
		return
	case dockerPluginV1:
	default:
		fail(sourceOr(hc, keyGPUDockerPlugin, hc.Dir()), fmt.Sprintf("set %s to %s or %s", keyGPUDockerPlugin, dockerPluginV2, dockerPluginV1),
			"%s = %q is not a Docker plugin Hadoop knows: the NodeManagers fail to start the GPU plugin", keyGPUDockerPlugin, plugin)
		return
	}
	if ep := strings.TrimSpace(hc.Get(keyNvidiaDockerV1URL)); ep != "" {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fail(sourceOr(hc, keyNvidiaDockerV1URL, hc.Dir()), fmt.Sprintf("set %s to the nvidia-docker-plugin's URL (default http://localhost:3476/v1.0/docker/cli), or use %s=%s", keyNvidiaDockerV1URL, keyGPUDockerPlugin, dockerPluginV2),
				"%s = %q is not an http URL: the NodeManagers cannot ask nvidia-docker-plugin for the GPUs' volumes and devices", keyNvidiaDockerV1URL, ep)
			return
		}
	}
	out.warn(sourceOr(hc, keyGPUDockerPlugin, hc.Dir()),
		fmt.Sprintf("set %s=%s (the nvidia container runtime) and allow nvidia in [docker] docker.allowed.runtimes", keyGPUDockerPlugin, dockerPluginV2),
		"the GPU plugin hands Docker containers their GPUs through %s (%s), which needs NVIDIA's retired nvidia-docker-plugin daemon at %s",
		dockerPluginV1, orDefault(hc.Get(keyGPUDockerPlugin), "Hadoop's default"), orDefault(hc.Get(keyNvidiaDockerV1URL), "http://localhost:3476/v1.0/docker/cli"))
}

// Flink's per-TaskManager variables of the Docker runtime.
const (
	flinkTMDockerMounts     = "containerized.taskmanager.env." + records.EnvDockerMounts
	flinkTMDockerNetwork    = "containerized.taskmanager.env." + records.EnvDockerNetwork
	flinkTMDockerPrivileged = "containerized.taskmanager.env." + records.EnvDockerPrivileged
)

// flinkDockerRequest is the Docker container Flink's TaskManagers ask for through
// containerized.taskmanager.env (nil when they run plain, or name no image: yarn.docker-gpu
// reports that), with the mounts it cannot read as failed checks.
func (f *facts) flinkDockerRequest() (*DockerRequest, []Check) {
	rt, _ := f.flinkValue(flinkTMRuntimeType)
	if !strings.EqualFold(rt, records.RuntimeDocker) {
		return nil, nil
	}
	img, _ := f.flinkValue(flinkTMDockerImage)
	if img == "" && f.in.Hadoop != nil {
		img = strings.TrimSpace(f.in.Hadoop.Get(keyDockerImageName))
	}
	var problems []Check
	d := &DockerRequest{Image: img}
	if v, src := f.flinkValue(flinkTMDockerMounts); v != "" {
		for _, m := range strings.Split(v, ",") {
			dm, err := parseHadoopMount(strings.TrimSpace(m))
			if err != nil {
				problems = append(problems, Check{Source: src, Fix: fmt.Sprintf("write %s as SOURCE:TARGET[:ro|rw], comma-separated, absolute paths", flinkTMDockerMounts),
					Message: fmt.Sprintf("%s: %v: the NodeManagers refuse the TaskManagers' containers", flinkTMDockerMounts, err)})
				continue
			}
			d.Mounts = append(d.Mounts, dm)
		}
	}
	d.Network, _ = f.flinkValue(flinkTMDockerNetwork)
	if v, _ := f.flinkValue(flinkTMDockerPrivileged); strings.EqualFold(v, "true") {
		d.Privileged = true
	}
	if img == "" {
		return nil, problems
	}
	return d, problems
}

// parseHadoopMount reads one entry of YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS as the NodeManagers do:
// SOURCE:TARGET with an optional mode, ro or rw, possibly with a bind propagation option
// (rw+rslave, or the option alone, which is read-write).
func parseHadoopMount(s string) (records.DockerMount, error) {
	parts := strings.Split(s, ":")
	if len(parts) == 3 {
		mode := parts[2]
		base, _, hasProp := strings.Cut(mode, "+")
		switch {
		case hasProp && (base == "ro" || base == "rw"):
			parts[2] = base
		case isPropagation(mode):
			parts[2] = "rw"
		}
	}
	return records.ParseDockerMount(strings.Join(parts, ":"))
}

func isPropagation(s string) bool {
	switch s {
	case "shared", "rshared", "slave", "rslave", "private", "rprivate":
		return true
	}
	return false
}
