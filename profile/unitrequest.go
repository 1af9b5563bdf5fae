package profile

import (
	"fmt"

	"github.com/yarn-er/yarn-er/records"
)

// CodeResourceTypeUnit: yarn.resource-types declares a type Flink asks for with a unit. Flink builds
// each external resource with ResourceInformation.newInstance(name, amount), without a unit, and
// the ResourceManager converts that plain amount to the declared unit (16 → 0 for Gi, 3 → 3000 for
// m): the TaskManagers get another amount than configured.
const CodeResourceTypeUnit = "yarn.resource-type-unit"

// RMResource is one entry of a TaskManager request as the ResourceManager reads it: Flink's
// amount, converted from "no unit" to the unit the cluster declares for the type.
type RMResource struct {
	// Name is the resource type.
	Name string `json:"name"`
	// Sent is the amount Flink puts in the request (memory-mb in Mi, everything else unitless).
	Sent int64 `json:"sent"`
	// Value is what the ResourceManager reads, in Units.
	Value int64 `json:"value"`
	// Units is the type's declared unit ("" for plain counts).
	Units string `json:"units"`
}

// rmView returns how the ResourceManager reads Flink's request for one external resource of the
// given declared type, and whether that differs from what Flink configured.
func rmView(rt ResourceType, amount int64) (RMResource, bool, error) {
	r := RMResource{Name: rt.Name, Sent: amount, Value: amount, Units: rt.Units}
	if rt.Units == "" {
		return r, false, nil
	}
	v, err := records.Convert("", rt.Units, amount)
	if err != nil {
		return r, true, err
	}
	r.Value = v
	return r, true, nil
}

// checkUnit reports a requested type that the cluster declares with a unit (a warning: Flink does
// not refuse it, but the TaskManagers get another amount) and records the ResourceManager's view.
func (t *translator) checkUnit(rk resourceKeys, rt ResourceType) {
	view, converted, err := rmView(rt, rk.amount)
	t.out.RMRequest = append(t.out.RMRequest, view)
	if !converted {
		return
	}
	unitsKey := resourceTypesPrefix + rt.Name + suffixUnits
	fix := fmt.Sprintf("declare %s without a unit: remove %s from resource-types.xml on the ResourceManager and every NodeManager (Flink's amount is a plain count), and give the NodeManagers' yarn.nodemanager.resource-type.%s as a plain count too", rt.Name, unitsKey, rt.Name)
	src := rk.yarnKey.Source
	if err != nil {
		t.add(SeverityWarning, CodeResourceTypeUnit, src, rk.yarnKey.Key, fix,
			"yarn.resource-types declares '%s' with unit '%s' (%s, %s): Flink sends %d without a unit, which the ResourceManager cannot convert to %s: %v",
			rt.Name, rt.Units, unitsKey, rt.Source, rk.amount, rt.Units, err)
		return
	}
	t.add(SeverityWarning, CodeResourceTypeUnit, src, rk.yarnKey.Key, fix,
		"yarn.resource-types declares '%s' with unit '%s' (%s, %s): Flink sends external-resource.%s.amount = %d without a unit (ResourceInformation.newInstance(name, amount)), so the ResourceManager reads %d%s%s",
		rt.Name, rt.Units, unitsKey, rt.Source, rk.name, rk.amount, view.Value, rt.Units, unitConsequence(view))
}

func unitConsequence(v RMResource) string {
	if v.Value == 0 {
		return ": the TaskManagers get none"
	}
	return fmt.Sprintf(", not %d", v.Sent)
}
