package preflight

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
)

// problemID maps a profile problem code to the check that reports it.
func problemID(code string) string {
	switch code {
	case profile.CodeExternalResourcesInvalid:
		return IDResourceNotListed
	case profile.CodeYarnConfigKeyInvalid:
		return IDNoYarnConfigKey
	case profile.CodeMemoryInvalid, profile.CodeMemoryNotConfigured, profile.CodeMemoryInconsistent, profile.CodeCPUInvalid,
		profile.CodeConfigFileUnread:
		return IDTaskManagerResources
	case profile.CodeNodeResourcesInvalid:
		return IDNMResources
	}
	return code
}

// problemStatus is the status of a problem in its check: Flink leaving a listed resource out of the
// request (no or a non-positive amount, or another resource on the same yarn.config-key overwriting
// it, which Flink only warns about) fails, as does every error; other warnings warn.
func problemStatus(p profile.Problem) Status {
	if p.Severity == profile.SeverityError || p.Code == profile.CodeAmountInvalid || p.Code == profile.CodeDuplicateConfigKey {
		return StatusFail
	}
	return StatusWarn
}

// message renders a problem's message with its key in front when the message does not name it.
func message(p profile.Problem) string {
	if p.Key == "" || strings.Contains(p.Message, p.Key) {
		return p.Message
	}
	return p.Key + ": " + p.Message
}

// flinkProblems reports the problems of Flink's translation that belong to check out.id.
func (f *facts) flinkProblems(out *results) {
	for _, p := range f.tr.Problems {
		if problemID(p.Code) == out.id {
			out.add(problemStatus(p), p.Source.String(), p.Fix, "%s", message(p))
		}
	}
}

// unlistedProblems reports the problems of Flink's translation whose code no check of the table
// claims (codes a newer profile package may add) under their own ids.
func (f *facts) unlistedProblems(c *collector) {
	if f.in.Container != nil {
		return
	}
	ids := IDs()
	for _, p := range f.tr.Problems {
		id := problemID(p.Code)
		if AreaOf(id) == AreaFlink && !slices.Contains(ids, id) {
			c.of(id).add(problemStatus(p), p.Source.String(), p.Fix, "%s", message(p))
		}
	}
}

// noExternalResources is the skip reason of the checks of external resources when none is
// configured.
const noExternalResources = "no external resources are configured (external-resources is empty or not set)"

// resourceNotListedCheck reports flink.resource-not-listed: external-resource.<name>.* keys of a
// name that external-resources does not list.
func (f *facts) resourceNotListedCheck(_ context.Context, out *results) {
	if !f.needsFlink(out) {
		return
	}
	f.flinkProblems(out)
	listSrc := ""
	if v, ok := f.in.Flink.Lookup(profile.KeyExternalResources); ok {
		listSrc = v.Source.String()
	}
	ers := f.tr.ExternalResources
	if len(ers) == 0 {
		out.pass(listSrc, "no external-resource.<name>.* keys outside external-resources")
		return
	}
	names := make([]string, 0, len(ers))
	for _, er := range ers {
		names = append(names, er.Name)
	}
	out.pass(listSrc, "every external-resource.<name>.* key belongs to a listed resource (%s)", strings.Join(names, ", "))
}

// amountCheck reports flink.amount-invalid: each listed resource's amount.
func (f *facts) amountCheck(_ context.Context, out *results) {
	ers, ok := f.externalResources(out)
	if !ok {
		return
	}
	amounts := make([]string, 0, len(ers))
	for _, er := range ers {
		amounts = append(amounts, fmt.Sprintf("%s: %d", er.Name, er.Amount))
	}
	out.pass("", "amounts per TaskManager: %s", strings.Join(amounts, ", "))
}

// yarnConfigKeyCheck reports flink.no-yarn-config-key: each listed resource names the YARN
// resource type it is requested as.
func (f *facts) yarnConfigKeyCheck(_ context.Context, out *results) {
	ers, ok := f.externalResources(out)
	if !ok {
		return
	}
	var keys []string
	for _, er := range ers {
		if er.YarnConfigKey != "" {
			keys = append(keys, er.Name+" → "+er.YarnConfigKey)
		}
	}
	if len(keys) > 0 {
		out.pass("", "requested on YARN: %s", strings.Join(keys, ", "))
	}
}

// duplicateConfigKeyCheck reports flink.duplicate-config-key: no two resources name the same YARN
// resource type.
func (f *facts) duplicateConfigKeyCheck(_ context.Context, out *results) {
	ers, ok := f.externalResources(out)
	if !ok {
		return
	}
	if slices.ContainsFunc(ers, func(er profile.ExternalResource) bool { return er.YarnConfigKey != "" }) {
		out.pass("", "each resource has a YARN resource type of its own")
		return
	}
	out.pass("", "no resource names a YARN resource type")
}

// driverFactoryCheck reports flink.no-driver-factory: each listed resource has a driver factory.
func (f *facts) driverFactoryCheck(_ context.Context, out *results) {
	ers, ok := f.externalResources(out)
	if !ok {
		return
	}
	var drivers []string
	for _, er := range ers {
		if er.DriverFactoryClass != "" {
			drivers = append(drivers, er.Name+": "+er.DriverFactoryClass)
		}
	}
	if len(drivers) > 0 {
		out.pass("", "driver factories: %s", strings.Join(drivers, "; "))
	}
}

// taskManagerResourcesCheck reports flink.taskmanager-resources: the container the TaskManager
// asks for.
func (f *facts) taskManagerResourcesCheck(_ context.Context, out *results) {
	if !f.needsFlink(out) {
		return
	}
	f.flinkProblems(out)
	if f.tr.Resource.Len() == 0 {
		out.skip("the TaskManager container could not be computed")
		return
	}
	out.pass("", "TaskManager container %s", f.tr.Resource.String())
}

// externalResources is what the checks of each listed resource start with: not applicable to a
// container given directly, the translation's problems reported, a skip when Flink lists no
// resource; ok is false then.
func (f *facts) externalResources(out *results) (ers []profile.ExternalResource, ok bool) {
	if !f.needsFlink(out) {
		return nil, false
	}
	f.flinkProblems(out)
	if len(f.tr.ExternalResources) == 0 {
		out.skip(noExternalResources)
		return nil, false
	}
	return f.tr.ExternalResources, true
}
