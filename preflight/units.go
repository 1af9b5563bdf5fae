package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
)

// unitCheck reports yarn.resource-type-unit: each requested type that yarn.resource-types declares
// with a unit fails, since Flink sends plain amounts and the ResourceManager converts them to the
// declared unit.
func (f *facts) unitCheck(_ context.Context, out *results) {
	if f.in.Hadoop == nil {
		// The live NodeManagers' units stand in for resource-types.xml.
		if !f.liveUnitCheck(out) {
			out.skip(noHadoop)
		}
		return
	}
	failed := false
	for _, p := range f.tr.Problems {
		if p.Code == profile.CodeResourceTypeUnit {
			out.fail(p.Source.String(), p.Fix, "%s", message(p))
			failed = true
		}
	}
	if failed {
		return
	}
	var plain []string
	for _, v := range f.tr.RMRequest {
		plain = append(plain, fmt.Sprintf("%s %d", v.Name, v.Value))
	}
	if len(plain) == 0 {
		out.pass("", "no declared resource type besides memory-mb and vcores is requested")
		return
	}
	out.pass(sourceOf(f.in.Hadoop, profile.KeyResourceTypes),
		"every requested type is a plain count, as Flink's amounts are; the ResourceManager reads %s", strings.Join(plain, ", "))
}

// liveUnitCheck is yarn.resource-type-unit without a Hadoop configuration: the units come from
// the live RUNNING NodeManagers' resources. It reports whether it could decide.
func (f *facts) liveUnitCheck(out *results) bool {
	if f.live == nil || f.live.nodesErr != nil || f.live.infoErr != nil {
		return false
	}
	units := map[string]string{}
	for _, n := range f.live.running() {
		for _, e := range n.total().All() {
			if _, seen := units[e.Name]; !seen {
				units[e.Name] = e.Units
			}
		}
	}
	ext := f.extendedRequest()
	if len(ext) == 0 {
		out.pass("", "no resource type besides memory-mb and vcores is requested")
		return true
	}
	var plain []string
	failed := false
	for _, res := range ext {
		u, known := units[res.Name]
		if !known {
			continue
		}
		if u == "" {
			plain = append(plain, fmt.Sprintf("%s %d", res.Name, res.Value))
			continue
		}
		failed = true
		read := "a value it cannot convert"
		if v, err := records.Convert("", u, res.Value); err == nil {
			read = fmt.Sprintf("%d%s", v, u)
			if v == 0 {
				read += ": the " + f.subj.many + " get none"
			}
		}
		out.fail(f.origin(res.Name),
			fmt.Sprintf("declare %s without a unit: remove yarn.resource-types.%s.units from resource-types.xml on the ResourceManager and every NodeManager (Flink's amount is a plain count)", res.Name, res.Name),
			"the ResourceManager at %s declares '%s' with unit '%s' (its NodeManagers report it so): Flink sends %d without a unit (ResourceInformation.newInstance(name, amount)), so the ResourceManager reads %s",
			f.live.rm, res.Name, u, res.Value, read)
	}
	switch {
	case failed:
	case len(plain) > 0:
		out.pass(f.live.rm, "every requested type is a plain count on the ResourceManager, as Flink's amounts are: %s", strings.Join(plain, ", "))
	default:
		return false
	}
	return true
}
