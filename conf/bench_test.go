package conf

import (
	"os"
	"testing"
)

// BenchmarkLoadHadoop loads testdata/hadoop (all five files, with ${var} expansion and a final
// override): what every yarn-er command pays once.
func BenchmarkLoadHadoop(b *testing.B) {
	getenv := func(string) string { return "" }
	for b.Loop() {
		if _, err := LoadHadoop(HadoopOptions{Dir: "testdata/hadoop", Getenv: getenv}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadFlinkLegacy loads the legacy flink-conf.yaml of testdata/flink/legacy with two -D.
func BenchmarkLoadFlinkLegacy(b *testing.B) {
	benchLoadFlink(b, "testdata/flink/legacy")
}

// BenchmarkLoadFlinkYAML loads the nested config.yaml of testdata/flink/standard with two -D.
func BenchmarkLoadFlinkYAML(b *testing.B) {
	benchLoadFlink(b, "testdata/flink/standard")
}

func benchLoadFlink(b *testing.B, path string) {
	getenv := func(string) string { return "" }
	dyn := []string{"external-resource.gpu.amount=4", "parallelism.default=8"}
	for b.Loop() {
		if _, err := LoadFlink(FlinkOptions{Path: path, Dynamic: dyn, Getenv: getenv}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseHadoopXML parses yarn-site.xml from memory (no file system).
func BenchmarkParseHadoopXML(b *testing.B) {
	data, err := os.ReadFile("testdata/hadoop/yarn-site.xml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseHadoopXML("yarn-site.xml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSplitFlinkList splits a typical quoted list value.
func BenchmarkSplitFlinkList(b *testing.B) {
	for b.Loop() {
		if _, err := SplitFlinkList(`gpu; fpga; 'a;b'; "x""y"`); err != nil {
			b.Fatal(err)
		}
	}
}
