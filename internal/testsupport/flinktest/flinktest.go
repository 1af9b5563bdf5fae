// Package flinktest holds the Flink configuration fixtures and helpers that the tests of several
// packages share.
package flinktest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
)

// GPUsAndFPGA is the TaskManager part of a legacy flink-conf.yaml asking for 2 GPUs (Flink's GPU
// driver, coordination mode) and 1 FPGA, up to the FPGA's driver factory, which the fixtures built
// on it name differently.
const GPUsAndFPGA = `taskmanager.memory.process.size: 4096m
taskmanager.numberOfTaskSlots: 4
external-resources: gpu;fpga
external-resource.gpu.amount: 2
external-resource.gpu.yarn.config-key: yarn.io/gpu
external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory
external-resource.gpu.param.discovery-script.args: --enable-coordination-mode
external-resource.fpga.amount: 1
external-resource.fpga.yarn.config-key: yarn.io/fpga
`

// TwoGPUsOneFPGA is a legacy flink-conf.yaml asking for 2 GPUs (Flink's GPU driver, coordination
// mode) and 1 FPGA per TaskManager, with a JobManager memory size: examples/flink-conf.yaml without
// its comments and discovery-script path.
const TwoGPUsOneFPGA = GPUsAndFPGA + `external-resource.fpga.driver-factory.class: org.apache.flink.externalresource.fpga.FPGADriverFactory
jobmanager.memory.process.size: 1600m
`

// ParseLegacy parses text as a legacy flink-conf.yaml, then sets each key=value of dynamic as a
// -D dynamic property would. It fails the test on any error.
func ParseLegacy(t testing.TB, text string, dynamic ...string) *conf.FlinkConfig {
	t.Helper()
	fc, err := conf.ParseFlinkLegacy("flink-conf.yaml", []byte(text))
	require.NoError(t, err)
	for _, d := range dynamic {
		k, v, ok := strings.Cut(d, "=")
		require.True(t, ok, d)
		fc.Set(k, v, conf.Source{Flag: "-D " + k})
	}
	return fc
}
