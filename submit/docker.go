package submit

import (
	"debug/elf"
	"path"
	"strings"

	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/records"
)

// DefaultDockerCoordinationDir is the host directory mounted read-write into every Docker
// container whose rank locks devices, so that `yarn-er exec` in containers of one node shares
// one coordination file (a container's own /var/tmp is private to it). Each NodeManager host must
// have it (mode 1777, like /var/tmp) and allow it in container-executor.cfg's [docker]
// docker.allowed.rw-mounts.
const DefaultDockerCoordinationDir = "/var/lib/yarn-er"

// dockerCoordinationName is the coordination file's name in that directory.
const dockerCoordinationName = "yarn-er-coordination"

// DockerRequest runs the ranks in Docker containers of the NodeManagers' Docker runtime
// (yarn-er submit --image; image: in a job file). The ApplicationMaster stays a plain container.
type DockerRequest struct {
	// Image is the image of every role without its own (RoleRequest.Image); "": only the roles
	// that name one run in Docker.
	Image string
	// Mounts are further bind mounts (--docker-mount SRC:DST[:ro|rw]).
	Mounts []records.DockerMount
	// Network is the container network (--docker-network; "": the NodeManagers' default).
	Network string
	// Privileged asks for privileged containers (--docker-run-privileged); never set otherwise.
	Privileged bool
	// CoordinationDir is the host directory mounted for the coordination file of the ranks that
	// lock devices; "" means DefaultDockerCoordinationDir, "none" mounts none (the ranks then
	// coordinate only within their own container).
	CoordinationDir string
}

// roleDocker is the Docker settings of a role whose image is image ("": none) and whose ranks
// lock devices when locks is set.
func (d *DockerRequest) roleDocker(image string, locks bool) *jobspec.Docker {
	if image == "" {
		return nil
	}
	out := &jobspec.Docker{Image: image, Network: d.Network, Privileged: d.Privileged}
	if dir := d.coordinationDir(); locks && dir != "" {
		out.Mounts = append(out.Mounts, records.DockerMount{Source: dir, Target: dir})
		out.CoordinationFile = path.Join(dir, dockerCoordinationName)
	}
	out.Mounts = append(out.Mounts, d.Mounts...)
	return out
}

func (d *DockerRequest) coordinationDir() string {
	switch d.CoordinationDir {
	case "":
		return DefaultDockerCoordinationDir
	case "none":
		return ""
	}
	return d.CoordinationDir
}

// validate checks the Docker settings without the cluster; images are those of the request and
// its roles.
func (d *DockerRequest) validate(images []string) error {
	if d == nil {
		return nil
	}
	any := false
	for _, im := range images {
		any = any || im != ""
	}
	if !any {
		if d.Network != "" || d.Privileged || len(d.Mounts) > 0 || d.CoordinationDir != "" {
			return badRequest("--image", "--docker-network, --docker-mount, --docker-run-privileged and --docker-coordination-dir need an image: give --image (or image: in the job file)")
		}
		return nil
	}
	if dir := d.CoordinationDir; dir != "" && dir != "none" {
		if _, err := records.ParseDockerMount(dir + ":" + dir); err != nil || strings.ContainsRune(dir, ':') {
			return badRequest("--docker-coordination-dir", "%q: an absolute host directory (or none)", dir)
		}
	}
	for _, im := range images {
		if im == "" {
			continue
		}
		probe := d.roleDocker(im, true)
		if err := probe.Validate("docker"); err != nil {
			flag := "--image"
			switch {
			case strings.Contains(err.Error(), "docker.mounts"):
				flag = "--docker-mount"
			case strings.Contains(err.Error(), "docker.network"):
				flag = "--docker-network"
			}
			return badRequest(flag, "%v", err)
		}
	}
	return nil
}

// preflightDocker is what the preflight checks of a role's Docker settings.
func preflightDocker(d *jobspec.Docker) *preflight.DockerRequest {
	if d == nil {
		return nil
	}
	return &preflight.DockerRequest{Image: d.Image, Mounts: d.Mounts, Network: d.Network, Privileged: d.Privileged}
}

// validateDocker checks the request's Docker settings and images.
func (r *Request) validateDocker() error {
	d := r.Docker
	images := []string{}
	if d != nil {
		images = append(images, d.Image)
	}
	for _, rr := range r.Roles {
		images = append(images, rr.Image)
	}
	if d == nil {
		d = &DockerRequest{}
	}
	return d.validate(images)
}

// docker reports whether a role of the plan runs in Docker containers.
func (p *Plan) docker() bool {
	for _, pr := range p.Roles {
		if pr.Docker != nil {
			return true
		}
	}
	return false
}

// DynamicInterpreter returns the program interpreter (PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2)
// of the ELF executable at path: a dynamically linked binary (yarn-er built with cgo for NVML)
// needs that loader and its C library in every image it runs in. "" for a static binary, or a file
// that is not ELF or cannot be read.
func DynamicInterpreter(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		const maxInterp = 4096
		buf := make([]byte, min(p.Filesz, maxInterp))
		n, _ := p.ReadAt(buf, 0)
		return strings.TrimRight(string(buf[:n]), "\x00")
	}
	return ""
}
