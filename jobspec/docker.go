package jobspec

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/yarn-er/yarn-er/records"
)

// Docker runs a role's ranks in Docker containers of the NodeManagers' Docker runtime
// (LinuxContainerExecutor's DockerLinuxContainerRuntime): the AM sets the YARN_CONTAINER_RUNTIME_*
// variables of each rank's launch context from it. The ApplicationMaster itself always runs in a
// plain container.
type Docker struct {
	// Image is the Docker image (YARN_CONTAINER_RUNTIME_DOCKER_IMAGE).
	Image string `json:"image"`
	// Mounts are bind mounts (YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS).
	Mounts []records.DockerMount `json:"mounts,omitempty"`
	// Network is the container network ("": the NodeManagers' default).
	Network string `json:"network,omitempty"`
	// Privileged asks for a privileged container.
	Privileged bool `json:"privileged,omitempty"`
	// CoordinationFile, when set, is the coordination file `yarn-er exec` uses in the container
	// (YARN_ER_COORDINATION_FILE), below a mounted host directory so that ranks in different
	// containers of one node share it.
	CoordinationFile string `json:"coordinationFile,omitempty"`
}

// EnvCoordinationFile is the variable through which the AM hands `yarn-er exec` its coordination
// file (the --coordination-file setting's environment form).
const EnvCoordinationFile = "YARN_ER_COORDINATION_FILE"

// MaxImageLength bounds an image name (Docker's own limit on a reference is 255 per component).
const MaxImageLength = 1024

var dockerNetworkName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Validate checks the Docker settings; field names the spec field in errors ("docker",
// "roles[0].docker").
func (d *Docker) Validate(field string) error {
	if d == nil {
		return nil
	}
	switch {
	case d.Image == "":
		return invalid(field+".image", "empty: name the image, e.g. registry.example.com:5000/ml/torch:2.4")
	case len(d.Image) > MaxImageLength:
		return invalid(field+".image", "%d bytes: at most %d", len(d.Image), MaxImageLength)
	case strings.ContainsFunc(d.Image, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == ',' || r == '=' }):
		return invalid(field+".image", "%q holds a space, a control character, ',' or '=', which no image name has", d.Image)
	}
	if _, err := records.FormatDockerMounts(d.Mounts); err != nil {
		return invalid(field+".mounts", "%v", err)
	}
	if d.Network != "" && (len(d.Network) > 255 || !dockerNetworkName.MatchString(d.Network)) {
		return invalid(field+".network", "%q: a Docker network name is letters, digits, '_', '.' and '-'", d.Network)
	}
	if f := d.CoordinationFile; f != "" {
		if !strings.HasPrefix(f, "/") || strings.ContainsAny(f, "\x00\n") {
			return invalid(field+".coordinationFile", "%q: an absolute path", f)
		}
	}
	return nil
}

// Env returns the variables of a rank's launch context that select the Docker runtime, with the
// coordination file when one is set.
func (d *Docker) Env() map[string]string {
	if d == nil {
		return nil
	}
	env := map[string]string{
		records.EnvRuntimeType: records.RuntimeDocker,
		records.EnvDockerImage: d.Image,
	}
	if len(d.Mounts) > 0 {
		// Validated: FormatDockerMounts cannot fail here.
		if m, err := records.FormatDockerMounts(d.Mounts); err == nil {
			env[records.EnvDockerMounts] = m
		}
	}
	if d.Network != "" {
		env[records.EnvDockerNetwork] = d.Network
	}
	if d.Privileged {
		env[records.EnvDockerPrivileged] = "true" // Hadoop accepts only "true"; unset otherwise
	}
	if d.CoordinationFile != "" {
		env[EnvCoordinationFile] = d.CoordinationFile
	}
	return env
}

// RoleDocker returns the Docker settings of role r of spec s: the role's own, else the spec's
// (nil: a plain container).
func (s *Spec) RoleDocker(r Role) *Docker {
	if r.Docker != nil {
		return r.Docker
	}
	return s.Docker
}

// String describes the settings for dry runs and logs.
func (d *Docker) String() string {
	if d == nil {
		return "none"
	}
	var b strings.Builder
	b.WriteString("image " + d.Image)
	for _, m := range d.Mounts {
		fmt.Fprintf(&b, ", mount %s", m)
	}
	if d.Network != "" {
		b.WriteString(", network " + d.Network)
	}
	if d.Privileged {
		b.WriteString(", privileged")
	}
	return b.String()
}

// IsMIGKind reports whether a devices kind names MIG slices: a valid resource type whose name
// after the last '/' starts with "mig-" (nvidia.com/mig-1g.10gb). `yarn-er exec --name KIND` then
// locks MIG devices of that profile.
func IsMIGKind(kind string) bool {
	local := kind[strings.LastIndex(kind, "/")+1:]
	return len(local) > 4 && strings.EqualFold(local[:4], "mig-") && records.ValidateResourceName(kind) == nil
}
