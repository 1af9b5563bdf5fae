package preflight

import (
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
)

// unitCheck reports yarn.resource-type-unit: each requested type that yarn.resource-types declares
// with a unit fails, since Flink sends plain amounts and the ResourceManager converts them to the
// declared unit.
func (r *runner) unitCheck() {
	failed := false
	for _, p := range r.tr.Problems {
		if p.Code == profile.CodeResourceTypeUnit {
			r.c.fail(IDResourceTypeUnit, p.Source.String(), p.Fix, "%s", message(p))
			failed = true
		}
	}
	if failed {
		return
	}
	var plain []string
	for _, v := range r.tr.RMRequest {
		plain = append(plain, fmt.Sprintf("%s %d", v.Name, v.Value))
	}
	if len(plain) == 0 {
		r.c.pass(IDResourceTypeUnit, "", "no declared resource type besides memory-mb and vcores is requested")
		return
	}
	r.c.pass(IDResourceTypeUnit, sourceOf(r.in.Hadoop, profile.KeyResourceTypes),
		"every requested type is a plain count, as Flink's amounts are; the ResourceManager reads %s", strings.Join(plain, ", "))
}
