package conf

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
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

// BenchmarkParseHadoopXMLCapacity1000 parses a 2.3 MB capacity-scheduler.xml of 1,000 queues (ten
// properties each, with descriptions) from memory: the largest configuration file real clusters have.
func BenchmarkParseHadoopXMLCapacity1000(b *testing.B) {
	data := []byte(capacitySchedulerXML(1000))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseHadoopXML("capacity-scheduler.xml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanXMLTags is the part of BenchmarkParseHadoopXMLCapacity1000 that checks the element
// limits before encoding/xml reads the file.
func BenchmarkScanXMLTags(b *testing.B) {
	data := []byte(capacitySchedulerXML(1000))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if f := scanXMLTags(data, DefaultMaxXMLAttributes, DefaultMaxXMLTagBytes); f != nil {
			b.Fatal(f.Detail)
		}
	}
}

// capacitySchedulerXML returns a capacity-scheduler.xml with the given number of queues under root,
// ten properties each with a description, as clusters write them (1,000 queues: about 2.3 MB).
func capacitySchedulerXML(queues int) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<?xml-stylesheet type=\"text/xsl\" href=\"configuration.xsl\"?>\n" +
		"<!--\n  Licensed under the Apache License, Version 2.0 (the \"License\").\n-->\n<configuration>\n")
	prop := func(name, value, desc string) {
		fmt.Fprintf(&b, "  <property>\n    <name>%s</name>\n    <value>%s</value>\n    <description>\n      %s\n    </description>\n  </property>\n\n", name, value, desc)
	}
	names := make([]string, queues)
	for i := range names {
		names[i] = fmt.Sprintf("team%04d", i)
	}
	prop("yarn.scheduler.capacity.root.queues", strings.Join(names, ","), "The queues at the this level (root is the root queue).")
	for _, q := range names {
		p := "yarn.scheduler.capacity.root." + q
		prop(p+".capacity", "0.1", "Default queue target capacity.")
		prop(p+".maximum-capacity", "100", "The maximum capacity of the default queue.")
		prop(p+".user-limit-factor", "1", "Default queue user limit a percentage from 0.0 to 1.0.")
		prop(p+".state", "RUNNING", "The state of the default queue. State can be one of RUNNING or STOPPED.")
		prop(p+".acl_submit_applications", "*", "The ACL of who can submit jobs to the default queue.")
		prop(p+".acl_administer_queue", "*", "The ACL of who can administer jobs on the default queue.")
		prop(p+".maximum-application-lifetime", "-1", "Maximum lifetime of an application which is submitted to a queue in seconds. Any value less than or equal to zero will be considered as disabled.")
		prop(p+".default-application-lifetime", "-1", "Default lifetime of an application which is submitted to a queue in seconds. Any value less than or equal to zero will be considered as disabled.")
		prop(p+".accessible-node-labels", "gpu", "Node labels this queue may use.")
		prop(p+".accessible-node-labels.gpu.capacity", "0.1", "Share of the gpu partition.")
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

// BenchmarkParseHadoopXMLShapes parses, from memory, Hadoop XML files of shapes that cost encoding/xml
// the most per byte, each as large as the file limit allows, beside real ones: B/op is what one
// parse allocates in all, peak-MB the most of the heap it held at once (sampled every millisecond),
// scan-ms the time of the element-limit scan alone (best of 3), which the parse includes.
// Run it with -benchtime 1x; the refused shapes end at the element limits before encoding/xml reads
// them (docs/benchmarks.md has the figures before the limits).
func BenchmarkParseHadoopXMLShapes(b *testing.B) {
	const size = DefaultMaxFileBytes - 1024
	fill := func(head, unit func(i int) string, tail string) func() string {
		return func() string {
			var s strings.Builder
			s.WriteString(head(0))
			for i := 0; ; i++ {
				u := unit(i)
				if s.Len()+len(u)+len(tail) > size {
					break
				}
				s.WriteString(u)
			}
			s.WriteString(tail)
			return s.String()
		}
	}
	root := func(int) string { return "<configuration>\n" }
	shapes := []struct {
		name string
		gen  func() string
	}{
		{"capacity-scheduler-1000-queues", func() string { return capacitySchedulerXML(1000) }},
		{"capacity-scheduler-7000-queues", func() string { return capacitySchedulerXML(7000) }},
		{"short-form-properties", fill(root, func(i int) string {
			return fmt.Sprintf("<property name=\"yarn.scheduler.capacity.root.q%d.capacity\" value=\"0.1\" final=\"true\"/>\n", i)
		}, "</configuration>\n")},
		{"one-element-many-attributes", fill(func(int) string { return "<configuration>\n<property " }, func(i int) string { return fmt.Sprintf("a%d=\"\" ", i) }, "/>\n</configuration>\n")},
		{"many-namespace-declarations", fill(func(int) string { return "<configuration " }, func(i int) string { return fmt.Sprintf("xmlns:p%d=\"u\" ", i) }, "/>\n")},
		{"one-huge-attribute-value", func() string {
			return "<configuration>\n<property name=\"a\" value=\"" + strings.Repeat("v", size-64) + "\"/>\n</configuration>\n"
		}},
		{"one-huge-value-text", func() string {
			return "<configuration>\n<property><name>a</name><value>" + strings.Repeat("v", size-80) + "</value></property>\n</configuration>\n"
		}},
		{"one-huge-element-name", func() string { return "<configuration>\n<" + strings.Repeat("n", size-64) + "/>\n</configuration>\n" }},
		{"deep-nesting", func() string { return "<configuration>" + strings.Repeat("<a>", size/3-16) + "</configuration>" }},
		{"tiny-elements", fill(root, func(int) string { return "<a/>" }, "\n</configuration>\n")},
		{"tiny-properties", fill(root, func(int) string { return "<property/>" }, "\n</configuration>\n")},
		{"elements-of-1000-attributes", fill(root, func(int) string { return "<a " + manyAttrs(1000) + "/>\n" }, "</configuration>\n")},
		{"comments", fill(root, func(int) string { return "<!---->" }, "\n</configuration>\n")},
		{"processing-instructions", fill(root, func(int) string { return "<?a?>" }, "\n</configuration>\n")},
		{"cdata-sections", fill(root, func(int) string { return "<![CDATA[]]>" }, "\n</configuration>\n")},
		{"doctype-internal-subset", func() string {
			return "<!DOCTYPE a [" + strings.Repeat("<!ENTITY a \"b\">", (size-64)/15) + "]>\n<configuration/>\n"
		}},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			data := []byte(sh.gen())
			b.SetBytes(int64(len(data)))
			var err error
			_, peak, _ := measureHeap(func() {
				for b.Loop() {
					_, err = ParseHadoopXML("yarn-site.xml", data)
				}
			}, nil)
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
			scan := time.Duration(1 << 62)
			for range 3 {
				start := time.Now()
				scanXMLTags(data, DefaultMaxXMLAttributes, DefaultMaxXMLTagBytes)
				scan = min(scan, time.Since(start))
			}
			b.ReportMetric(float64(scan)/1e6, "scan-ms")
			if err != nil {
				b.Log(shortened(err.Error()))
			}
		})
	}
}
