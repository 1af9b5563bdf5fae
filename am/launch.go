package am

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// DeviceInfoFile is the file, in each container's working directory, where `yarn-er exec` writes
// the container's devices (discover's json format) before the program starts.
const DeviceInfoFile = "yarn-er-devices.json"

// Command returns the words of a rank's container command for a spec without roles (see
// RoleCommand).
func Command(spec *jobspec.Spec) []string { return RoleCommand(spec.RoleList()[0], nil) }

// RoleCommand returns the words of a rank's container command, as the NodeManager joins them
// into its launch script: the program under `./yarn-er exec` when the role locks devices, else
// the program itself, with stdout and stderr in the container's log directory. pre are shell
// words run before it (writing the peers file, setting TF_CONFIG), already quoted.
//
// The NodeManager writes the joined words into its script inside double quotes for
// `/bin/bash -c`, so each word is quoted twice: single quotes for that bash, then the
// double-quote specials ($ ` " \) escaped for the script's own shell. The program gets its
// arguments byte for byte.
func RoleCommand(role jobspec.Role, pre []string) []string {
	var argv []string
	if d := role.Devices; d != nil && d.Amount > 0 {
		argv = append(argv, "./"+jobspec.BinaryName, "exec",
			"--amount", strconv.FormatInt(d.Amount, 10),
			"--name", d.Kind,
			"--info-file", DeviceInfoFile,
			"--")
	}
	argv = append(argv, role.Command...)
	words := make([]string, 0, len(pre)+len(argv)+2)
	words = append(words, pre...)
	for _, a := range argv {
		words = append(words, launchQuote(a))
	}
	return append(words, "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr")
}

// launchQuote quotes a word for bash, then for the double-quoted string the NodeManager's launch
// script hands to bash -c.
func launchQuote(s string) string {
	q := s
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !isPlain(r) }) {
		q = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(q)
}

func isPlain(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,+@%", r)
}

// Environment returns a rank's container environment for a spec without roles: the spec's
// variables, then yarn-er's own (which win). It has no rendezvous (see RankLaunch).
func Environment(spec *jobspec.Spec, appID string, container records.ContainerID, rank int) map[string]string {
	env := make(map[string]string, len(spec.Env)+4)
	// The Docker runtime's variables first: the job's own --env wins (a coordination file of
	// the user's choosing, say).
	for k, v := range spec.Docker.Env() {
		env[k] = v
	}
	for k, v := range spec.Env {
		env[k] = v
	}
	env[jobspec.EnvAppID] = appID
	env[jobspec.EnvContainerID] = container.String()
	env[jobspec.EnvRank] = strconv.Itoa(rank)
	env[jobspec.EnvWorldSize] = strconv.Itoa(spec.Containers)
	return env
}

// LaunchContext returns the launch context of one rank's container of a spec without roles,
// without rendezvous (see RankLaunch).
func LaunchContext(spec *jobspec.Spec, appID string, c records.ContainerID, rank int, creds *records.Credentials) *amrm.LaunchContext {
	lc := &amrm.LaunchContext{
		Commands:       Command(spec),
		Environment:    Environment(spec, appID, c, rank),
		LocalResources: localResources(spec),
		Credentials:    creds,
	}
	return lc
}

func localResources(spec *jobspec.Spec) map[string]records.LocalResource {
	m := map[string]records.LocalResource{jobspec.BinaryName: spec.Binary.Resource()}
	for _, f := range spec.Files {
		m[f.Name] = f.Resource()
	}
	return m
}

// Capability converts the resource vector of a spec without roles to the units the
// ResourceManager declared.
func Capability(spec *jobspec.Spec, reg *amrm.Registration) (records.Resources, error) {
	return RoleCapability(spec.RoleList()[0], reg)
}

// RoleCapability converts a role's resource vector to the units the ResourceManager declared.
func RoleCapability(role jobspec.Role, reg *amrm.Registration) (records.Resources, error) {
	units := map[string]string{}
	for _, t := range reg.ResourceTypes {
		units[t.Name] = t.Units
	}
	units[records.MemoryMB] = records.MemoryUnits // memory is always asked in MiB
	units[records.VCores] = ""
	var r records.Resources
	for _, q := range role.Resource {
		to, ok := units[q.Name]
		if !ok {
			to = q.Units
		}
		v := q.Value
		if q.Units != to {
			var err error
			if v, err = records.Convert(q.Units, to, q.Value); err != nil {
				return r, fmt.Errorf("am: resource %s=%d%s in the ResourceManager's unit %q: %w", q.Name, q.Value, q.Units, to, err)
			}
		}
		r.Set(q.Name, records.Quantity{Value: v, Units: to})
	}
	return r, nil
}

// ErrNoProfile is a resource profile the ResourceManager did not hand the AM at registration.
var ErrNoProfile = errors.New("am: no such resource profile")

// ProfileCapability is the resource profile name as the ResourceManager declared it at
// registration (as Hadoop's AMRMClient resolves a ProfileCapability): the vector the AM asks for.
func ProfileCapability(name string, reg *amrm.Registration) (records.Resources, error) {
	if len(reg.ResourceProfiles) == 0 {
		return records.Resources{}, fmt.Errorf("%w: the job asks by profile %q, and the ResourceManager has no resource profiles (yarn.resourcemanager.resource-profiles.enabled is off there)", ErrNoProfile, name)
	}
	v, ok := reg.ResourceProfiles[name]
	if !ok {
		return records.Resources{}, fmt.Errorf("%w: the job asks by profile %q, and the ResourceManager's profiles are %s", ErrNoProfile, name, strings.Join(slices.Sorted(maps.Keys(reg.ResourceProfiles)), ", "))
	}
	return v, nil
}
