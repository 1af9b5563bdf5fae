package submit

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
)

// RoleRequest is one role of a job with roles (yarn-er submit --spec): like the flags of a
// job without roles, per role.
type RoleRequest struct {
	// Name is the role's name (YARN_ER_ROLE).
	Name string
	// Containers is the number of ranks (0 means 1).
	Containers int
	// GPUs, FPGAs, Resources, Memory and VCores size each container as --gpus, --fpgas,
	// --resource, --memory and --vcores do; Profile names a YARN resource profile instead.
	GPUs, FPGAs int64
	Resources   []string
	Memory      string
	VCores      int64
	Profile     string
	// Command is the program and its arguments.
	Command []string
	// Env is added to the role's containers (over Request.Env).
	Env map[string]string
	// Restarts is how often one rank may be restarted after it failed.
	Restarts int
	// Placement says where the role's ranks may land (nil: anywhere).
	Placement *jobspec.Placement
	// DependsOn are roles whose ranks must all run before this role is asked for.
	DependsOn []string
	// Gang: the role's ranks start together (Request.Gang puts every role in one gang).
	Gang bool
	// Framework is "", jobspec.FrameworkPyTorch or jobspec.FrameworkTensorFlow.
	Framework string
	// Image runs the role's ranks in this Docker image (over Request.Docker's image), with the
	// request's other Docker settings.
	Image string
	// Field names the role in errors (default "role NAME").
	Field string
	// NoDeviceLock runs the command as YARN starts the container, not under `yarn-er exec`: it
	// locks no device and its environment names none (yarn-er doctor's probe, which looks at the
	// container as the NodeManager made it).
	NoDeviceLock bool
}

// PlannedRole is a role resolved for submission: its container vector in the cluster's units.
type PlannedRole struct {
	RoleRequest
	// Resource is each container's vector; Devices what `yarn-er exec` locks.
	Resource records.Resources
	Devices  *jobspec.Devices
	// GangName is the gang the role starts with ("": none).
	GangName string
	// Docker is the role's Docker container (nil: a plain container).
	Docker *jobspec.Docker
}

// Plan is a request resolved without the cluster: what would be submitted.
type Plan struct {
	Name        string
	Roles       []PlannedRole
	Total       int
	GangTimeout time.Duration
}

func (rr *RoleRequest) field(f string) string {
	p := rr.Field
	if p == "" {
		p = "role " + rr.Name
	}
	if f == "" {
		return p
	}
	return p + "." + f
}

// flagToField maps the flag names Request.Container names in errors to a role's field names.
var flagToField = map[string]string{"--memory": "memory", "--vcores": "vcores", "--gpus": "gpus", "--fpgas": "fpgas", "--resource": "resources"}

// roleVector is the role's container vector (see Request.Container), with errors naming the
// role's fields.
func (rr *RoleRequest) vector(types *profile.ResourceTypes) (records.Resources, error) {
	one := Request{GPUs: rr.GPUs, FPGAs: rr.FPGAs, Resources: rr.Resources, Memory: rr.Memory, VCores: rr.VCores}
	v, err := one.Container(types)
	if re, ok := err.(*RequestError); ok {
		f := re.Flag
		for flag, field := range flagToField {
			if strings.HasPrefix(f, flag) {
				f = rr.field(field) + strings.TrimPrefix(f, flag)
				break
			}
		}
		return v, &RequestError{Flag: f, Msg: re.Msg}
	}
	return v, err
}

// validateRoles checks the roles of a request with roles, without the cluster.
func (r *Request) validateRoles() error {
	if len(r.Command) > 0 {
		return badRequest("", "the job has roles, each with its command: give no command after -- (or edit the role's command)")
	}
	if r.Flink != nil {
		return badRequest("--flink-conf", "gives one container: it does not go with a job of roles")
	}
	names := map[string]bool{}
	total := 0
	for i := range r.Roles {
		rr := &r.Roles[i]
		if !jobspec.ValidRoleName(rr.Name) {
			return badRequest(rr.field(""), "%q: a role name is letters, digits, - and _, starting with a letter, at most 63", rr.Name)
		}
		if names[rr.Name] {
			return badRequest(rr.field(""), "the role is given twice")
		}
		names[rr.Name] = true
		if rr.Containers < 0 {
			return badRequest(rr.field("count"), "%d: must be 1 or more", rr.Containers)
		}
		total += max(rr.Containers, 1)
		if len(rr.Command) == 0 || rr.Command[0] == "" {
			return badRequest(rr.field("command"), "empty: give the program to run, e.g. command: [python, train.py]")
		}
		if n := commandBytes(rr.Command); n > MaxCommandBytes {
			return badRequest(rr.field("command"), "%d bytes as the NodeManager's launch script runs it, more than the %d that fit in one argument of bash -c: put it in a script and ship it with files:", n, MaxCommandBytes)
		}
		if rr.Restarts < 0 {
			return badRequest(rr.field("restarts"), "%d: must not be negative", rr.Restarts)
		}
		if pl := rr.Placement; pl != nil {
			for j, n := range pl.Nodes {
				if n == "" || strings.ContainsFunc(n, func(c rune) bool { return c <= ' ' || c == ',' || c == 0x7f }) {
					return badRequest(rr.field(fmt.Sprintf("placement.nodes[%d]", j)), "%q: want a NodeManager's host or host:port as `yarn-er cluster nodes` lists it", n)
				}
			}
			for j, rack := range pl.Racks {
				if err := jobspec.CheckRack(rack); err != nil {
					return badRequest(rr.field(fmt.Sprintf("placement.racks[%d]", j)), "%v: give a rack as `yarn-er cluster nodes` lists it, e.g. /default-rack", err)
				}
			}
			if len(pl.Racks) > 0 && len(pl.Nodes) > 0 {
				return badRequest(rr.field("placement.racks"), "with placement.nodes: the nodes name the NodeManagers already; keep nodes or racks, not both")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(rr.Env)) {
			if err := checkEnv(k, rr.Env[k]); err != nil {
				re := err.(*RequestError)
				return badRequest(rr.field("env"), "%s", re.Msg)
			}
		}
		for j, a := range rr.Command {
			if err := (&Request{Command: []string{a}}).checkText(); err != nil {
				return badRequest(rr.field(fmt.Sprintf("command[%d]", j)), "%v", err)
			}
		}
		if rr.Profile != "" && (rr.GPUs != 0 || rr.FPGAs != 0 || len(rr.Resources) > 0 || rr.Memory != "" || rr.VCores != 0) {
			return badRequest(rr.field("profile"), "%q with memory, vcores, gpus, fpgas or resources: give the profile alone, or the resources without it", rr.Profile)
		}
	}
	if total > jobspec.MaxContainers {
		return badRequest("roles", "%d ranks in all, above yarn-er's hard bound of %d ranks per job: ask for fewer, or split the job", total, jobspec.MaxContainers)
	}
	for i := range r.Roles {
		if rr := &r.Roles[i]; rr.Framework == jobspec.FrameworkTensorFlow && total > maxTFRanks {
			return badRequest(rr.field("framework"), "tensorflow: TF_CONFIG lists every rank of the job, and yarn-er passes it for jobs of at most %d ranks (this one has %d): split the job", maxTFRanks, total)
		}
	}
	for i := range r.Roles {
		rr := &r.Roles[i]
		for _, d := range rr.DependsOn {
			if !names[d] || d == rr.Name {
				return badRequest(rr.field("depends_on"), "%q is not another role of the job", d)
			}
		}
	}
	deps := make([]jobspec.Role, len(r.Roles))
	for i, rr := range r.Roles {
		deps[i] = jobspec.Role{Name: rr.Name, DependsOn: rr.DependsOn}
	}
	if cyc := jobspec.DependencyCycle(deps); cyc != nil {
		return badRequest("depends_on", "goes round in a cycle: %s: remove one dependency", strings.Join(cyc, " -> "))
	}
	if r.GangTimeout < 0 {
		return badRequest("gang_timeout", "%v: must be positive", r.GangTimeout)
	}
	switch r.GangTimeoutAction {
	case "", jobspec.GangFail, jobspec.GangWait:
	default:
		return badRequest("gang_timeout_action", "%q: %s or %s", r.GangTimeoutAction, jobspec.GangFail, jobspec.GangWait)
	}
	return nil
}

// Plan resolves the request as Submit would, without the cluster: its roles (the one role of the
// flags, jobspec.DefaultRole, when it has none) with their container vectors in the units of
// types (nil: plain counts), a role that names a resource profile with that profile's vector from
// profiles (the ResourceManager's resource-profiles.json; nil: profiles are not enabled). It is
// what `yarn-er submit --dry-run` prints.
func (r *Request) Plan(types *profile.ResourceTypes, profiles *profile.ResourceProfiles) (*Plan, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	p := &Plan{Name: r.appName(), GangTimeout: r.GangTimeout}
	if p.GangTimeout == 0 {
		p.GangTimeout = time.Duration(jobspec.DefaultGangTimeoutMillis) * time.Millisecond
	}
	if len(r.Roles) == 0 {
		var vec records.Resources
		var err error
		if r.Profile != "" {
			if r.Flink != nil || r.GPUs != 0 || r.FPGAs != 0 || len(r.Resources) > 0 || r.Memory != "" || r.VCores != 0 {
				return nil, badRequest("--profile", "gives the whole container: drop --gpus, --fpgas, --resource, --memory, --vcores and --flink-conf, or drop --profile")
			}
			vec, err = profileVector("--profile", r.Profile, profiles)
		} else {
			vec, err = r.Container(types)
		}
		if err != nil {
			return nil, err
		}
		n := max(r.Containers, 1)
		p.Roles = []PlannedRole{{RoleRequest: RoleRequest{Name: jobspec.DefaultRole, Containers: n, Command: r.Command, Restarts: r.Restarts, Profile: r.Profile},
			Resource: vec, Devices: devices(vec)}}
		p.Roles[0].Docker = r.roleDocker("", p.Roles[0].Devices)
		p.Total = n
		return p, nil
	}
	for _, rr := range r.Roles {
		var vec records.Resources
		var err error
		if rr.Profile != "" {
			vec, err = profileVector(rr.field("profile"), rr.Profile, profiles)
		} else {
			vec, err = rr.vector(types)
		}
		if err != nil {
			return nil, err
		}
		rr.Containers = max(rr.Containers, 1)
		pr := PlannedRole{RoleRequest: rr, Resource: vec, Devices: devices(vec)}
		if rr.NoDeviceLock {
			pr.Devices = nil
		}
		pr.Docker = r.roleDocker(rr.Image, pr.Devices)
		switch {
		case r.Gang:
			pr.GangName = "job"
		case rr.Gang:
			pr.GangName = rr.Name
		case rr.Framework == jobspec.FrameworkTensorFlow:
			// TF_CONFIG lists every tensorflow task: they start together.
			pr.GangName = "tensorflow"
		}
		p.Roles = append(p.Roles, pr)
		p.Total += rr.Containers
	}
	return p, nil
}

// roleDocker is the Docker container of a role whose own image is image ("": the request's).
func (r *Request) roleDocker(image string, devs *jobspec.Devices) *jobspec.Docker {
	d := r.Docker
	if d == nil {
		d = &DockerRequest{}
	}
	if image == "" {
		image = d.Image
	}
	return d.roleDocker(image, devs != nil && devs.Amount > 0)
}

// specRoles are the spec's roles of a plan of a request with roles (nil without roles).
func (p *Plan) specRoles(req *Request) []jobspec.Role {
	if len(req.Roles) == 0 {
		return nil
	}
	out := make([]jobspec.Role, len(p.Roles))
	for i, pr := range p.Roles {
		env := pr.Env
		if len(env) == 0 {
			env = nil
		}
		out[i] = jobspec.Role{Name: pr.Name, Containers: pr.Containers, Restarts: pr.Restarts, Priority: containerPriority + int32(i),
			Resource: quantities(pr.Resource), Devices: pr.Devices, Command: pr.Command, Env: env, Gang: pr.GangName,
			DependsOn: pr.DependsOn, Framework: pr.Framework, Placement: pr.Placement, Profile: pr.Profile, Docker: pr.Docker}
	}
	return out
}

// profileVector is a resource profile's vector from the ResourceManager's profiles; flag names
// the flag or field in errors.
func profileVector(flag, name string, profiles *profile.ResourceProfiles) (records.Resources, error) {
	if profiles == nil {
		return records.Resources{}, badRequest(flag, "%q: the Hadoop configuration does not enable resource profiles (%s): ask by resources instead, or give the ResourceManager's configuration (--hadoop-conf) with profiles on",
			name, profile.KeyProfilesEnabled)
	}
	v, ok := profiles.Get(name)
	if !ok {
		return records.Resources{}, badRequest(flag, "%q is not a resource profile of the ResourceManager (%s has: %s): give one of them",
			name, profiles.Path, strings.Join(profiles.Names(), ", "))
	}
	return v, nil
}

// Profiles returns the ResourceManager's resource profiles from hc when the request names one
// (nil otherwise, or when hc does not enable them), for Plan; a profiles file the ResourceManager
// could not read either is an error.
func (r *Request) Profiles(hc *conf.HadoopConfig, types *profile.ResourceTypes) (*profile.ResourceProfiles, error) {
	asked := r.Profile != ""
	for _, rr := range r.Roles {
		asked = asked || rr.Profile != ""
	}
	if !asked || hc == nil {
		return nil, nil
	}
	p, err := profile.LoadResourceProfiles(hc, types)
	if err != nil {
		return nil, badRequest("--profile", "%v", err)
	}
	return p, nil
}

// maxTFRanks is am.MaxPeersRanks (this package does not import the AM side): the most ranks of a
// job whose ranks get TF_CONFIG.
const maxTFRanks = 2048
