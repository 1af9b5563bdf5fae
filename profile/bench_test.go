package profile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yarn-er/yarn-er/conf"
)

// Run: go test -mod=mod -run '^$' -bench . -benchmem ./profile/

func BenchmarkParseMemorySize(b *testing.B) {
	for b.Loop() {
		if _, err := ParseMemorySize("4096 mb"); err != nil {
			b.Fatal(err)
		}
	}
}

// realisticFlinkConf is a production-sized legacy flink-conf.yaml: the issue's GPU/FPGA example plus
// the ~120 other settings a real deployment carries (checkpointing, HA, metrics, security, ...).
func realisticFlinkConf() []byte {
	var sb strings.Builder
	sb.WriteString(issueExample)
	sb.WriteString("taskmanager.cpu.cores: 3.5\nyarn.containers.vcores: 8\n")
	for i := range 120 {
		fmt.Fprintf(&sb, "# setting %d\nsection%d.option.key-%d: value-%d\n", i, i%12, i, i)
	}
	return []byte(sb.String())
}

func BenchmarkTranslate(b *testing.B) {
	data := realisticFlinkConf()
	fc, err := conf.ParseFlinkLegacy("flink-conf.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	types, problems := LoadResourceTypes(hadoopConf("yarn.resource-types", "yarn.io/gpu,yarn.io/fpga"))
	if len(problems) > 0 {
		b.Fatal(problems)
	}
	b.Run("translate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Translate(fc, TranslateOptions{ResourceTypes: types}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse+translate", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			fc, err := conf.ParseFlinkLegacy("flink-conf.yaml", data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Translate(fc, TranslateOptions{ResourceTypes: types}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLoadResourceTypes(b *testing.B) {
	hc := hadoopConf("yarn.resource-types", "yarn.io/gpu,yarn.io/fpga,example.com/ssd",
		"yarn.resource-types.example.com/ssd.units", "Gi",
		"yarn.resource-types.yarn.io/gpu.maximum-allocation", "8",
		"yarn.scheduler.maximum-allocation-mb", "65536",
		"yarn.nodemanager.resource-type.yarn.io/gpu", "8",
		"yarn.nodemanager.resource-type.example.com/ssd", "2Ti")
	b.ReportAllocs()
	for b.Loop() {
		types, problems := LoadResourceTypes(hc)
		if len(problems) > 0 {
			b.Fatal(problems)
		}
		if _, problems := LoadNodeResources(hc, types); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}
