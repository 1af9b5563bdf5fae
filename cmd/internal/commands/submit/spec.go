package submit

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/jobfile"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/view"
)

// roleFlags are the flags that size or run one role: with --spec they override the job file's
// role when it has exactly one.
var roleFlags = []string{"containers", "gpus", "fpgas", "resource", "memory", "vcores", "restarts", "profile"}

// specRequest reads the job file of --spec and applies the flags given beside it.
func specRequest(opts *Options) (submit.Request, error) {
	changed := func(name string) bool { return opts.changed != nil && opts.changed(name) }
	if opts.Flink.Path != "" || len(opts.Flink.Dynamic) > 0 {
		return submit.Request{}, cmdutil.Usagef("--flink-conf gives one container: it does not go with --spec (give the roles' resources in the job file)")
	}
	job, err := jobfile.ReadFile(opts.Spec)
	if err != nil {
		return submit.Request{}, &cmdutil.UsageError{Err: err}
	}
	r, err := job.Request()
	if err != nil {
		return r, &cmdutil.UsageError{Err: err}
	}
	f := opts.Req
	var given []string
	for _, fl := range roleFlags {
		if changed(fl) {
			given = append(given, "--"+fl)
		}
	}
	if len(opts.Args) > 0 {
		given = append(given, "a command after --")
	}
	if len(given) > 0 {
		if len(r.Roles) != 1 {
			names := make([]string, len(r.Roles))
			for i, rr := range r.Roles {
				names[i] = rr.Name
			}
			return r, cmdutil.Usagef("%s: %s has %d roles (%s); these flags override a job file of one role only: edit the role in the file",
				strings.Join(given, ", "), opts.Spec, len(r.Roles), strings.Join(names, ", "))
		}
		rr := &r.Roles[0]
		if changed("containers") {
			rr.Containers = f.Containers
		}
		if changed("gpus") {
			rr.GPUs = f.GPUs
		}
		if changed("fpgas") {
			rr.FPGAs = f.FPGAs
		}
		if changed("resource") {
			rr.Resources = f.Resources
		}
		if changed("memory") {
			rr.Memory = f.Memory
		}
		if changed("vcores") {
			rr.VCores = f.VCores
		}
		if changed("restarts") {
			rr.Restarts = f.Restarts
		}
		if changed("profile") {
			rr.Profile = f.Profile
			rr.GPUs, rr.FPGAs, rr.Resources, rr.Memory, rr.VCores = 0, 0, nil, "", 0
		}
		if len(opts.Args) > 0 {
			rr.Command = opts.Args
		}
	}
	for _, o := range []struct {
		flag string
		set  func()
	}{
		{"queue", func() { r.Queue = f.Queue }}, {"name", func() { r.Name = f.Name }}, {"tags", func() { r.Tags = f.Tags }},
		{"node-label", func() { r.NodeLabel = f.NodeLabel }}, {"am-vcores", func() { r.AMVCores = f.AMVCores }},
		{"max-attempts", func() { r.MaxAttempts = f.MaxAttempts }},
	} {
		if changed(o.flag) {
			o.set()
		}
	}
	r.Binary, r.AMBinary, r.KeepStaging, r.Force, r.HeartbeatMillis = f.Binary, f.AMBinary, f.KeepStaging, f.Force, f.HeartbeatMillis
	r.ShipKeytab = f.ShipKeytab
	return r, nil
}

// dryRun prints the resolved job: what submit would ask YARN for, and what each rank runs.
func dryRun(opts *Options, req submit.Request) error {
	var types *profile.ResourceTypes
	var profiles *profile.ResourceProfiles
	if hc, err := opts.Conn.HadoopConfig(); err == nil && hc != nil {
		types, _ = profile.LoadResourceTypes(hc)
		if profiles, err = req.Profiles(hc, types); err != nil {
			return &cmdutil.UsageError{Err: err}
		}
	}
	plan, err := req.Plan(types, profiles)
	if errors.Is(err, submit.ErrRequest) {
		return &cmdutil.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	v := view.Job{Name: plan.Name, Queue: req.Queue, NodeLabel: req.NodeLabel, Priority: req.Priority, Tags: req.Tags,
		Env: req.Env, Ranks: plan.Total, GangTimeout: plan.GangTimeout.String()}
	for _, it := range req.Files {
		v.Files = append(v.Files, it.Local+"#"+it.Name)
	}
	for _, it := range req.Archives {
		v.Archives = append(v.Archives, it.Local+"#"+it.Name)
	}
	for _, pr := range plan.Roles {
		vr := view.JobRole{Name: pr.Name, Count: pr.Containers, Resource: pr.Resource.String(), Command: pr.Command,
			Restarts: pr.Restarts, Env: pr.Env, DependsOn: pr.DependsOn, Gang: pr.GangName, Framework: pr.Framework, Profile: pr.Profile}
		if pr.Devices != nil {
			vr.Devices = fmt.Sprintf("%d %s (locked by yarn-er exec)", pr.Devices.Amount, pr.Devices.Kind)
		}
		if p := pr.Placement; p != nil {
			vr.Placement = &view.JobPlacement{Spread: p.Spread, Pack: p.Pack, Nodes: p.Nodes, Racks: p.Racks, Fallback: p.Fallback}
		}
		if d := pr.Docker; d != nil {
			vd := &view.JobDocker{Image: d.Image, Network: d.Network, Privileged: d.Privileged, CoordinationFile: d.CoordinationFile}
			for _, m := range d.Mounts {
				vd.Mounts = append(vd.Mounts, m.String())
			}
			vr.Docker = vd
		}
		v.Roles = append(v.Roles, vr)
	}
	return opts.F.Render(v, func(w io.Writer) error {
		// The table form is the YAML form: a job reads best as the file it came from.
		return cmdutil.WriteYAML(w, v)
	})
}
