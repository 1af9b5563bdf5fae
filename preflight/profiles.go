package preflight

import (
	"errors"
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
)

// profilesCheck reports yarn.resource-profiles and yarn.profile-max-allocation: the
// ResourceManager's resource profiles, when it has them enabled, are valid, and each within the
// maximum allocation (the ResourceManager's effective one where it reports it, else the
// configured one).
func (r *runner) profilesCheck() {
	hc := r.in.Hadoop
	if !profile.ProfilesEnabled(hc) {
		r.profilesOff = true
		why := fmt.Sprintf("%s is not true: the ResourceManager has no resource profiles", profile.KeyProfilesEnabled)
		r.c.skip(IDResourceProfiles, "%s", why)
		r.c.skip(IDProfileMaxAllocation, "%s", why)
		return
	}
	enabledAt := sourceOf(hc, profile.KeyProfilesEnabled)
	profiles, err := profile.LoadResourceProfiles(hc, r.types)
	if err != nil {
		var pe *profile.ProfilesError
		fix := "correct the ResourceManager's profiles file"
		if errors.As(err, &pe) {
			fix = pe.Fix
		}
		r.c.fail(IDResourceProfiles, profile.ProfilesPath(hc), fix, "%v: the ResourceManager does not start with it (%s at %s)", err, profile.KeyProfilesEnabled, enabledAt)
		r.c.skip(IDProfileMaxAllocation, "the profiles file could not be read")
		return
	}
	r.c.pass(IDResourceProfiles, profiles.Path, "%d profiles: %s", len(profiles.Names()), strings.Join(profiles.Names(), ", "))

	effective := r.live.effectiveMax()
	over := false
	for _, name := range profiles.Names() {
		v, _ := profiles.Get(name)
		for _, res := range v.All() {
			limit, fromLive := effective.Quantity(res.Name)
			where, key := "", ""
			if fromLive {
				where = r.live.rm + pathOverview
			} else {
				rt, ok := r.types.Lookup(res.Name)
				if !ok {
					continue
				}
				limit = records.Quantity{Value: rt.Maximum, Units: rt.Units}
				key, where = maxKeyOf(rt)
			}
			c, err := res.Quantity().Cmp(limit)
			if err != nil || c <= 0 {
				continue
			}
			over = true
			what := "the ResourceManager's effective maximum allocation"
			fix := fmt.Sprintf("make profile %s ask for at most %s of %s in %s, or give the NodeManagers more", name, fmtAmount(limit.Value, limit.Units), res.Name, profiles.Path)
			if key != "" {
				what = "the maximum allocation " + key + atSource(where)
				fix = fmt.Sprintf("make profile %s ask for at most %s of %s in %s, or raise %s", name, fmtAmount(limit.Value, limit.Units), res.Name, profiles.Path, key)
			}
			r.c.warn(IDProfileMaxAllocation, profiles.Path, fix, "profile %s asks for %s of %s, above %s, %s: every request by this profile is refused",
				name, res.Quantity(), res.Name, what, fmtAmount(limit.Value, limit.Units))
		}
	}
	if !over {
		r.c.pass(IDProfileMaxAllocation, profiles.Path, "every profile is within the maximum allocation")
	}
}
