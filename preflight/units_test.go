package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResourceTypeUnit(t *testing.T) {
	// Plain counts: passes and shows what the ResourceManager reads.
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: goodHadoop().load(t)})
	e := requireOne(t, rep, IDResourceTypeUnit, StatusPass, "yarn.io/gpu 2", "yarn.io/fpga 1")
	assert.Contains(t, e.Message, "plain count")

	// A custom type declared in Gi: Flink's 16 becomes 0 Gi at the ResourceManager.
	npu := withoutLines(goodFlink, "external-resource", "external-resources") +
		"external-resources: npu\nexternal-resource.npu.amount: 16\nexternal-resource.npu.yarn.config-key: acme.com/npu\n" +
		"external-resource.npu.driver-factory.class: com.acme.NPUDriverFactory\n"
	hc := goodHadoop().with("resource-types.xml", "yarn.resource-types", "acme.com/npu").
		with("resource-types.xml", "yarn.resource-types.acme.com/npu.units", "Gi").
		with("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/gpu", "").
		with("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/fpga", "").
		with("node-resources.xml", "yarn.nodemanager.resource-type.acme.com/npu", "64Gi").load(t)
	rep = run(t, Input{Flink: flinkConf(t, npu), Hadoop: hc})
	e = requireOne(t, rep, IDResourceTypeUnit, StatusFail, "declares 'acme.com/npu' with unit 'Gi'", "reads 0Gi: the TaskManagers get none")
	assert.Contains(t, e.Source, "flink-conf.yaml:")
	assert.Contains(t, e.Fix, "remove yarn.resource-types.acme.com/npu.units")

	// Without a Hadoop configuration the check cannot run.
	rep = run(t, Input{Flink: flinkConf(t, goodFlink)})
	requireOne(t, rep, IDResourceTypeUnit, StatusSkip)
}
