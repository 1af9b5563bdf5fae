package profile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
)

// Flink sends external resources without a unit; a type declared with one is converted by the
// ResourceManager (checked against Flink 1.20.0/2.0.0 and Hadoop 3.5.0: testdata/flink-golden,
// custom-type-*).
func TestTranslateTypeWithUnit(t *testing.T) {
	cases := []struct {
		name, unit string
		amount     string
		want       RMResource
		warn       string
	}{
		{name: "no unit", unit: "", amount: "3", want: RMResource{Name: "acme.com/npu", Sent: 3, Value: 3}},
		{name: "kilo", unit: "k", amount: "4096", want: RMResource{Name: "acme.com/npu", Sent: 4096, Value: 4, Units: "k"},
			warn: "so the ResourceManager reads 4k, not 4096"},
		{name: "milli", unit: "m", amount: "3", want: RMResource{Name: "acme.com/npu", Sent: 3, Value: 3000, Units: "m"},
			warn: "reads 3000m, not 3"},
		{name: "giga rounds to nothing", unit: "Gi", amount: "16", want: RMResource{Name: "acme.com/npu", Sent: 16, Value: 0, Units: "Gi"},
			warn: "reads 0Gi: the TaskManagers get none"},
		{name: "overflow", unit: "p", amount: "9007199254740992", want: RMResource{Name: "acme.com/npu", Sent: 9007199254740992, Value: 9007199254740992, Units: "p"},
			warn: "cannot convert"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kv := []string{"yarn.resource-types", "acme.com/npu"}
			if tc.unit != "" {
				kv = append(kv, "yarn.resource-types.acme.com/npu.units", tc.unit)
			}
			types, problems := LoadResourceTypes(hadoopConf(kv...))
			require.Empty(t, problems)
			fc := legacy(t, "taskmanager.memory.process.size: 2g\nexternal-resources: npu\nexternal-resource.npu.amount: "+tc.amount+
				"\nexternal-resource.npu.yarn.config-key: acme.com/npu\nexternal-resource.npu.driver-factory.class: x.Y\n")
			tr, err := Translate(fc, TranslateOptions{ResourceTypes: types})
			require.NoError(t, err, "Flink does not refuse it")
			sent, _ := tr.Resource.Get("acme.com/npu")
			assert.Equal(t, tc.want.Sent, sent, "the request keeps Flink's amount")
			assert.Equal(t, []RMResource{tc.want}, tr.RMRequest)
			if tc.warn == "" {
				assert.Empty(t, tr.Problems)
				return
			}
			require.Equal(t, []string{"warning " + CodeResourceTypeUnit}, codes(tr.Problems))
			p := tr.Problems[0]
			assert.Contains(t, p.Message, tc.warn)
			assert.Contains(t, p.Message, "yarn.resource-types.acme.com/npu.units")
			assert.Equal(t, "external-resource.npu.yarn.config-key", p.Key)
			assert.Equal(t, conf.Source{File: "flink-conf.yaml", Line: 4}, p.Source)
			assert.Contains(t, p.Fix, "declare acme.com/npu without a unit")
		})
	}

	// Without a cluster configuration there is no view of the RM.
	tr, err := Translate(legacy(t, issueExample), TranslateOptions{ResourceTypes: DefaultResourceTypes()})
	require.NoError(t, err)
	assert.Empty(t, tr.RMRequest)
}

// Flink sends an amount through a double: exact up to 2^53, rounded above, and near 2^63 wrapped
// to a negative number (the 1.20.0 golden case amount-max-long records it).
func TestFlinkAmount(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{
		{1, 1},
		{8, 8},
		{1 << 53, 1 << 53},
		{1<<53 + 1, 1 << 53},
		{1<<62 + 1, 4611686018427388000}, // Double.toString: 4.611686018427388E18
		{9223372036854775807, -9223372036854775616},
	} {
		assert.Equal(t, tc.want, flinkAmount(tc.in), "%d", tc.in)
	}
	fc := legacy(t, "taskmanager.memory.process.size: 2g\nexternal-resources: gpu\nexternal-resource.gpu.amount: 9007199254740993"+
		"\nexternal-resource.gpu.yarn.config-key: yarn.io/gpu\nexternal-resource.gpu.driver-factory.class: x.Y\n")
	tr, err := Translate(fc, TranslateOptions{})
	require.NoError(t, err)
	sent, _ := tr.Resource.Get("yarn.io/gpu")
	assert.Equal(t, int64(9007199254740992), sent)
	require.Equal(t, []string{"warning " + CodeAmountInvalid}, codes(tr.Problems))
	assert.Contains(t, tr.Problems[0].Message, "9007199254740993 reaches YARN as 9007199254740992")
	assert.Equal(t, int64(9007199254740993), tr.ExternalResources[0].Amount, "the configured amount is kept")
}
