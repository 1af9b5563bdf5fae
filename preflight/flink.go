package preflight

import (
	"fmt"
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

// flinkChecks reports the checks on Flink's configuration.
func (r *runner) flinkChecks() {
	if r.in.Container != nil {
		for _, id := range IDs() {
			if AreaOf(id) == AreaFlink {
				r.c.skip(id, "the %s is given directly, not computed from a Flink configuration", r.containerName())
			}
		}
		return
	}
	for _, p := range r.tr.Problems {
		id := problemID(p.Code)
		if AreaOf(id) != AreaFlink {
			continue // yarn.resource-type-undeclared: reported with the Hadoop checks
		}
		r.c.add(id, problemStatus(p), p.Source.String(), p.Fix, "%s", message(p))
	}
	ers := r.tr.ExternalResources
	listSrc := ""
	if v, ok := r.in.Flink.Lookup(profile.KeyExternalResources); ok {
		listSrc = v.Source.String()
	}
	names := make([]string, 0, len(ers))
	for _, er := range ers {
		names = append(names, er.Name)
	}

	if len(ers) == 0 {
		r.c.pass(IDResourceNotListed, listSrc, "no external-resource.<name>.* keys outside external-resources")
		for _, id := range []string{IDAmountInvalid, IDNoYarnConfigKey, IDDuplicateConfigKey, IDNoDriverFactory} {
			r.c.skip(id, "no external resources are configured (external-resources is empty or not set)")
		}
	} else {
		r.c.pass(IDResourceNotListed, listSrc, "every external-resource.<name>.* key belongs to a listed resource (%s)", strings.Join(names, ", "))
		amounts := make([]string, 0, len(ers))
		keys := make([]string, 0, len(ers))
		drivers := make([]string, 0, len(ers))
		for _, er := range ers {
			amounts = append(amounts, fmt.Sprintf("%s: %d", er.Name, er.Amount))
			if er.YarnConfigKey != "" {
				keys = append(keys, er.Name+" → "+er.YarnConfigKey)
			}
			if er.DriverFactoryClass != "" {
				drivers = append(drivers, er.Name+": "+er.DriverFactoryClass)
			}
		}
		r.c.pass(IDAmountInvalid, "", "amounts per TaskManager: %s", strings.Join(amounts, ", "))
		if len(keys) > 0 {
			r.c.pass(IDNoYarnConfigKey, "", "requested on YARN: %s", strings.Join(keys, ", "))
			r.c.pass(IDDuplicateConfigKey, "", "each resource has a YARN resource type of its own")
		} else {
			r.c.pass(IDDuplicateConfigKey, "", "no resource names a YARN resource type")
		}
		if len(drivers) > 0 {
			r.c.pass(IDNoDriverFactory, "", "driver factories: %s", strings.Join(drivers, "; "))
		}
	}
	r.taskManagerResources()
	r.discoveryChecks()
}

// taskManagerResources reports the container the TaskManager asks for.
func (r *runner) taskManagerResources() {
	if r.tr.Resource.Len() == 0 {
		r.c.skip(IDTaskManagerResources, "the TaskManager container could not be computed")
		return
	}
	r.c.pass(IDTaskManagerResources, "", "TaskManager container %s", r.tr.Resource.String())
}
