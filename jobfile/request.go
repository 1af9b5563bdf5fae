package jobfile

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/submit"
)

// Request returns the submission the job file describes. Files and archives with a relative
// LOCAL path are taken relative to the job file's directory; they must exist.
func (j *Job) Request() (submit.Request, error) {
	req := submit.Request{Name: j.Name, Queue: j.Queue, NodeLabel: j.NodeLabel, Priority: j.Priority, Tags: j.Tags,
		Gang: j.Gang, GangTimeout: j.GangTimeout, GangTimeoutAction: j.GangTimeoutAction, MaxAttempts: j.MaxAttempts, AMVCores: j.AMVCores}
	if len(j.Env) > 0 {
		req.Env = maps.Clone(j.Env)
	}
	if j.Image != "" {
		req.Docker = &submit.DockerRequest{Image: j.Image}
	}
	if j.AMMemory != "" {
		mb, err := submit.ParseMemoryMB(j.AMMemory)
		if err != nil || mb <= 0 {
			return req, &Error{File: j.File, Field: "am_memory", Msg: fmt.Sprintf("%q is not a size", j.AMMemory), Fix: "am_memory: 512m"}
		}
		req.AMMemoryMB = mb
	}
	dir := filepath.Dir(j.File)
	for _, list := range []struct {
		field string
		items []string
		typ   records.LocalResourceType
		out   *[]stage.Item
	}{{"files", j.Files, records.LocalFile, &req.Files}, {"archives", j.Archives, records.LocalArchive, &req.Archives}} {
		for i, it := range list.items {
			local, name, hasName := strings.Cut(it, "#")
			if local != "" && !filepath.IsAbs(local) {
				local = filepath.Join(dir, local)
				if !hasName {
					name = filepath.Base(local)
				}
				it = local + "#" + name
			}
			item, err := stage.ParseItem(it, list.typ)
			if err != nil {
				return req, &Error{File: j.File, Field: fmt.Sprintf("%s[%d]", list.field, i), Msg: err.Error(),
					Fix: "give LOCAL[#NAME], LOCAL relative to the job file's directory or absolute"}
			}
			*list.out = append(*list.out, item)
		}
	}
	for _, r := range j.Roles {
		rr := submit.RoleRequest{Name: r.Name, Containers: r.Count, GPUs: r.GPUs, FPGAs: r.FPGAs, Resources: r.Resources,
			Memory: r.Memory, VCores: r.VCores, Profile: r.Profile, Command: r.Command, Restarts: r.Restarts,
			Placement: r.Placement, DependsOn: r.DependsOn, Gang: r.Gang, Framework: r.Framework, Image: r.Image,
			Field: fmt.Sprintf("%s:%d: roles.%s", j.File, r.Line, r.Name)}
		if len(r.Env) > 0 {
			rr.Env = maps.Clone(r.Env)
		}
		req.Roles = append(req.Roles, rr)
	}
	return req, nil
}
