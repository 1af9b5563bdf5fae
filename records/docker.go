package records

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// The environment variables with which a YARN application asks LinuxContainerExecutor's Docker
// runtime for a container (Hadoop's DockerContainers.md, DockerLinuxContainerRuntime).
const (
	// EnvRuntimeType selects the runtime: "docker" runs the container in a Docker container.
	EnvRuntimeType = "YARN_CONTAINER_RUNTIME_TYPE"
	// EnvDockerImage names the image.
	EnvDockerImage = "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"
	// EnvDockerMounts lists bind mounts, "source:target[:mode]" separated by commas.
	EnvDockerMounts = "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"
	// EnvDockerNetwork names the container network (one of
	// yarn.nodemanager.runtime.linux.docker.allowed-container-networks).
	EnvDockerNetwork = "YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"
	// EnvDockerPrivileged asks for a privileged container; only "true" is accepted, so it is set
	// or left unset, never "false".
	EnvDockerPrivileged = "YARN_CONTAINER_RUNTIME_DOCKER_RUN_PRIVILEGED_CONTAINER"
	// RuntimeDocker is EnvRuntimeType's value for Docker.
	RuntimeDocker = "docker"
)

// maxDockerMounts bounds the mounts of one container (each becomes a docker run argument that
// container-executor checks against its allowed lists).
const maxDockerMounts = 64

// DockerMount is one bind mount of a Docker container: a host path, the path in the container
// and the mode container-executor checks it under (docker.allowed.ro-mounts for read-only,
// docker.allowed.rw-mounts for read-write).
type DockerMount struct {
	// Source is the absolute host path.
	Source string `json:"source"`
	// Target is the absolute path inside the container.
	Target string `json:"target"`
	// ReadOnly mounts it read-only ("ro"); else read-write ("rw").
	ReadOnly bool `json:"readOnly,omitempty"`
}

// String returns the mount in YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS's form, "source:target:ro" or
// "source:target:rw".
func (m DockerMount) String() string {
	mode := "rw"
	if m.ReadOnly {
		mode = "ro"
	}
	return m.Source + ":" + m.Target + ":" + mode
}

// DockerMountError is a mount yarn-er cannot hand to YARN; Mount is the text as given.
type DockerMountError struct {
	Mount string
	Msg   string
}

func (e *DockerMountError) Error() string {
	return fmt.Sprintf("docker mount %q: %s", e.Mount, e.Msg)
}

// ParseDockerMount reads "SOURCE:TARGET[:ro|rw]" (the form of YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS
// without bind propagation; no mode means rw, as in Hadoop). Both paths must be absolute and free
// of the characters the variable and container-executor's command file use as separators (',',
// ':', '=', newlines); ".." is refused, since container-executor checks the source against its
// allowed directories by prefix.
func ParseDockerMount(s string) (DockerMount, error) {
	bad := func(format string, args ...any) (DockerMount, error) {
		return DockerMount{}, &DockerMountError{Mount: s, Msg: fmt.Sprintf(format, args...)}
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return bad("want SOURCE:TARGET or SOURCE:TARGET:ro|rw (absolute paths)")
	}
	m := DockerMount{Source: parts[0], Target: parts[1]}
	if len(parts) == 3 {
		switch parts[2] {
		case "ro":
			m.ReadOnly = true
		case "rw":
		default:
			return bad("mode %q: want ro or rw", parts[2])
		}
	}
	for _, p := range []struct{ what, v string }{{"source", m.Source}, {"target", m.Target}} {
		switch {
		case !strings.HasPrefix(p.v, "/"):
			return bad("the %s %q is not an absolute path", p.what, p.v)
		case strings.ContainsAny(p.v, ",=\n\r\x00"):
			return bad("the %s contains ',', '=' or a control character, which YARN's mount list cannot carry", p.what)
		case slices.Contains(strings.Split(p.v, "/"), ".."):
			return bad("the %s contains \"..\": give the path itself", p.what)
		}
	}
	m.Source, m.Target = path.Clean(m.Source), path.Clean(m.Target)
	return m, nil
}

// FormatDockerMounts returns the value of YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS for mounts: each
// mount's String, separated by commas. It refuses more than 64 mounts and two mounts on one
// target (Docker refuses a duplicate mount point when the container starts).
func FormatDockerMounts(mounts []DockerMount) (string, error) {
	if len(mounts) > maxDockerMounts {
		return "", fmt.Errorf("%d docker mounts: at most %d", len(mounts), maxDockerMounts)
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(mounts))
	for _, m := range mounts {
		if _, err := ParseDockerMount(m.String()); err != nil {
			return "", err
		}
		t := path.Clean(m.Target)
		if seen[t] {
			return "", &DockerMountError{Mount: m.String(), Msg: "a second mount on the target " + t}
		}
		seen[t] = true
		out = append(out, m.String())
	}
	return strings.Join(out, ","), nil
}

// ImageTrusted reports whether container-executor takes image as coming from one of the trusted
// registries (container-executor.cfg [docker] docker.trusted.registries): the image name, as
// given, starts with "<registry>/". Docker Hub's official images are trusted as "library" only
// when named "library/<name>". container-executor drops every bind mount of an untrusted image
// (the NodeManager's own included), and its devices and capabilities.
func ImageTrusted(image string, registries []string) (registry string, ok bool) {
	for _, r := range registries {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		prefix := r
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(image, prefix) {
			return r, true
		}
	}
	return "", false
}
