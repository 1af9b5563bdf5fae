package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlinkChecksPassOnGoodConfiguration(t *testing.T) {
	rep := run(t, Input{Flink: flinkConf(t, goodFlink)})
	requireOne(t, rep, IDResourceNotListed, StatusPass, "gpu, fpga")
	requireOne(t, rep, IDAmountInvalid, StatusPass, "gpu: 2", "fpga: 1")
	requireOne(t, rep, IDNoYarnConfigKey, StatusPass, "gpu → yarn.io/gpu", "fpga → yarn.io/fpga")
	requireOne(t, rep, IDDuplicateConfigKey, StatusPass)
	requireOne(t, rep, IDNoDriverFactory, StatusPass, GPUDriverFactory)
	requireOne(t, rep, IDTaskManagerResources, StatusPass, "<memory-mb:4096, vcores:4, yarn.io/gpu:2, yarn.io/fpga:1>")
}

func TestFlinkChecksFindings(t *testing.T) {
	cases := []struct {
		name   string
		text   string
		id     string
		status Status
		msg    string
		fix    string
		source string
	}{
		{
			name: "typo in a resource name", id: IDResourceNotListed, status: StatusWarn,
			text: goodFlink + "external-resource.gpus.amount: 2\n",
			msg:  "gpus is not in external-resources", fix: "add gpus to external-resources",
			source: "flink-conf.yaml:12",
		},
		{
			name: "external-resources cannot be split", id: IDResourceNotListed, status: StatusFail,
			text: withoutLines(goodFlink, "external-resources:") + "external-resources: gpu;'fpga\n",
			msg:  "Quoting", source: "flink-conf.yaml:11",
		},
		{
			name: "amount missing", id: IDAmountInvalid, status: StatusFail,
			text: withoutLines(goodFlink, "external-resource.gpu.amount"),
			msg:  "The amount of the gpu should be configured", fix: "external-resource.gpu.amount to a positive whole number",
			source: "flink-conf.yaml:3",
		},
		{
			name: "amount zero", id: IDAmountInvalid, status: StatusFail,
			text: withoutLines(goodFlink, "external-resource.gpu.amount") + "external-resource.gpu.amount: 0\n",
			msg:  "0 is not a positive amount", source: "flink-conf.yaml:11",
		},
		{
			name: "amount not a whole number", id: IDAmountInvalid, status: StatusFail,
			text: withoutLines(goodFlink, "external-resource.gpu.amount") + "external-resource.gpu.amount: 2.5\n",
			msg:  "Could not parse value '2.5'", source: "flink-conf.yaml:11",
		},
		{
			name: "no yarn.config-key", id: IDNoYarnConfigKey, status: StatusWarn,
			text: withoutLines(goodFlink, "external-resource.fpga.yarn.config-key"),
			msg:  "YARN is not asked for it", fix: "yarn.io/fpga",
		},
		{
			name: "yarn.config-key that no cluster can declare", id: IDNoYarnConfigKey, status: StatusFail,
			text: withoutLines(goodFlink, "external-resource.fpga.yarn.config-key") + "external-resource.fpga.yarn.config-key: 10fpga\n",
			msg:  "not a valid resource name",
		},
		{
			name: "yarn.config-key naming memory", id: IDNoYarnConfigKey, status: StatusFail,
			text: withoutLines(goodFlink, "external-resource.fpga.yarn.config-key") + "external-resource.fpga.yarn.config-key: memory-mb\n",
			msg:  "mandatory YARN resource",
		},
		{
			name: "two resources on one type", id: IDDuplicateConfigKey, status: StatusFail,
			text: withoutLines(goodFlink, "external-resource.fpga.yarn.config-key") + "external-resource.fpga.yarn.config-key: yarn.io/gpu\n",
			msg:  "Duplicate config key yarn.io/gpu", fix: "different yarn.config-keys",
		},
		{
			name: "no driver factory", id: IDNoDriverFactory, status: StatusWarn,
			text: withoutLines(goodFlink, "external-resource.fpga.driver-factory.class"),
			msg:  "Could not find driver class name for fpga", fix: "ExternalResourceDriverFactory",
		},
		{
			name: "no memory option", id: IDTaskManagerResources, status: StatusFail,
			text: withoutLines(goodFlink, "taskmanager.memory.process.size"),
			msg:  "Either required fine-grained memory",
		},
		{
			name: "bad cpu cores", id: IDTaskManagerResources, status: StatusFail,
			text: goodFlink + "taskmanager.cpu.cores: -2\n",
			msg:  "positive number of CPU cores",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, tc.text)})
			es := rep.entries(tc.id)
			require.NotEmpty(t, es)
			e := es[0]
			assert.Equal(t, tc.status, e.Status, "%+v", e)
			assert.Contains(t, e.Message, tc.msg)
			if tc.fix != "" {
				assert.Contains(t, e.Fix, tc.fix)
			} else {
				assert.NotEmpty(t, e.Fix)
			}
			if tc.source != "" {
				assert.Equal(t, tc.source, e.Source)
			}
		})
	}
}

func TestFlinkChecksWithoutExternalResources(t *testing.T) {
	rep := run(t, Input{Flink: flinkConf(t, "taskmanager.memory.process.size: 2g\n")})
	requireOne(t, rep, IDResourceNotListed, StatusPass)
	for _, id := range []string{IDAmountInvalid, IDNoYarnConfigKey, IDDuplicateConfigKey, IDNoDriverFactory, IDDiscoveryScript, IDCoordinationArgs} {
		requireOne(t, rep, id, StatusSkip)
	}
	assert.True(t, rep.OK)
	assert.Contains(t, rep.Verdict(), "memory and vcores only")
}

func TestDashDOverridesAreSources(t *testing.T) {
	rep := run(t, Input{Flink: flinkConf(t, goodFlink, "external-resource.gpu.amount=-1")})
	e := requireOne(t, rep, IDAmountInvalid, StatusFail, "-1 is not a positive amount")
	assert.Equal(t, "-D external-resource.gpu.amount", e.Source)
}
