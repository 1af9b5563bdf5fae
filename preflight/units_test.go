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

// Without a Hadoop configuration the live NodeManagers tell the units.
func TestResourceTypeUnitLive(t *testing.T) {
	total := map[string]int64{"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2, "acme.com/npu": 64}
	rm := newFakeRM(t, synthCluster(stdTypes, uniformNodes(2, total), bigMax))
	rep := run(t, Input{Flink: flinkConf(t, goodFlink), Client: rmClient(t, rm.URL())})
	requireOne(t, rep, IDResourceTypeUnit, StatusPass, "plain count on the ResourceManager", "yarn.io/gpu 2")

	types := append(append([]rtype{}, stdTypes...), rtype{"acme.com/npu", "Gi"})
	rm = newFakeRM(t, synthCluster(types, uniformNodes(2, total), bigMax))
	npu := goodFlink + "external-resources: gpu;fpga;npu\nexternal-resource.npu.amount: 16\nexternal-resource.npu.yarn.config-key: acme.com/npu\nexternal-resource.npu.driver-factory.class: x.Y\n"
	rep = run(t, Input{Flink: flinkConf(t, npu), Client: rmClient(t, rm.URL())})
	e := requireOne(t, rep, IDResourceTypeUnit, StatusFail, "declares 'acme.com/npu' with unit 'Gi'", "reads 0Gi: the TaskManagers get none")
	assert.Contains(t, e.Fix, "remove yarn.resource-types.acme.com/npu.units")
}
