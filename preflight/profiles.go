package preflight

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
)

// profileFacts are the ResourceManager's resource profiles, read once for the checks of
// yarn.resource-profiles and yarn.profile-max-allocation.
type profileFacts struct {
	// off: the ResourceManager has no resource profiles (their checks do not apply); why says so.
	off bool
	why string
	// profiles are the profiles read, nil when they could not be (err).
	profiles *profile.ResourceProfiles
	err      error
}

// resourceProfiles reads the ResourceManager's resource profiles on first use.
func (f *facts) resourceProfiles() *profileFacts {
	if f.prof != nil {
		return f.prof
	}
	hc := f.in.Hadoop
	f.prof = &profileFacts{}
	if !profile.ProfilesEnabled(hc) {
		f.prof.off = true
		f.prof.why = fmt.Sprintf("%s is not true: the ResourceManager has no resource profiles", profile.KeyProfilesEnabled)
		return f.prof
	}
	f.prof.profiles, f.prof.err = profile.LoadResourceProfiles(hc, f.types)
	return f.prof
}

// profilesCheck reports yarn.resource-profiles: the ResourceManager's resource profiles, when it
// has them enabled, are valid.
func (f *facts) profilesCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	hc := f.in.Hadoop
	rp := f.resourceProfiles()
	switch {
	case rp.off:
		out.notApplicable("%s", rp.why)
	case rp.err != nil:
		var pe *profile.ProfilesError
		fix := "correct the ResourceManager's profiles file"
		if errors.As(rp.err, &pe) {
			fix = pe.Fix
		}
		out.fail(profile.ProfilesPath(hc), fix, "%v: the ResourceManager does not start with it (%s at %s)", rp.err, profile.KeyProfilesEnabled, sourceOf(hc, profile.KeyProfilesEnabled))
	default:
		out.pass(rp.profiles.Path, "%d profiles: %s", len(rp.profiles.Names()), strings.Join(rp.profiles.Names(), ", "))
	}
}

// profileMaxAllocationCheck reports yarn.profile-max-allocation: each resource profile is within
// the maximum allocation (the ResourceManager's effective one where it reports it, else the
// configured one).
func (f *facts) profileMaxAllocationCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, noHadoop) {
		return
	}
	rp := f.resourceProfiles()
	switch {
	case rp.off:
		out.notApplicable("%s", rp.why)
		return
	case rp.err != nil:
		out.skip("the profiles file could not be read")
		return
	}
	profiles := rp.profiles
	effective := f.live.effectiveMax()
	over := false
	for _, name := range profiles.Names() {
		v, _ := profiles.Get(name)
		for _, res := range v.All() {
			limit, fromLive := effective.Quantity(res.Name)
			where, key := "", ""
			if fromLive {
				where = f.live.rm + pathOverview
			} else {
				rt, ok := f.types.Lookup(res.Name)
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
			out.warn(profiles.Path, fix, "profile %s asks for %s of %s, above %s, %s: every request by this profile is refused",
				name, res.Quantity(), res.Name, what, fmtAmount(limit.Value, limit.Units))
		}
	}
	if !over {
		out.pass(profiles.Path, "every profile is within the maximum allocation")
	}
}
