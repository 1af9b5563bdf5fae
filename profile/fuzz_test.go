package profile

import (
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/; run each target with e.g.
// go test -run '^$' -fuzz '^FuzzConvertUnits$' -fuzztime 60s ./profile/

func FuzzParseMemorySize(f *testing.F) {
	for _, s := range []string{"4096m", " 4 gb ", "1", "8388608t", "9223372036854775808", "1.5g", "-1m", "", "4\u212A", "4 m b"} {
		f.Add(s)
	}
	multipliers := map[string]int64{"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
		"t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseMemorySize(s)
		if err != nil {
			if !errors.Is(err, ErrMemorySize) {
				t.Fatalf("ParseMemorySize(%q): error %v does not wrap ErrMemorySize", s, err)
			}
			return
		}
		// Recompute independently: digits, then a known unit, with big integers.
		trimmed := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
		i := strings.IndexFunc(trimmed, func(r rune) bool { return r < '0' || r > '9' })
		if i < 0 {
			i = len(trimmed)
		}
		unit := strings.ToLower(strings.ReplaceAll(strings.TrimFunc(trimmed[i:], func(r rune) bool { return r <= ' ' }), "\u212A", "k"))
		mult, known := multipliers[unit]
		n, ok := new(big.Int).SetString(trimmed[:i], 10)
		if !known || !ok {
			t.Fatalf("ParseMemorySize(%q) = %d, but unit %q / number %q are not valid", s, got, unit, trimmed[:i])
		}
		n.Mul(n, big.NewInt(mult))
		if !n.IsInt64() || n.Int64() != got {
			t.Fatalf("ParseMemorySize(%q) = %d, want %s", s, got, n)
		}
	})
}

func FuzzParseNodeResourceValue(f *testing.F) {
	for _, s := range []string{"5G", "5", "5 G", "5G1", "", "+5Gi", "-1", "9223372036854775808M", "5é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, unit, err := parseNodeResourceValue(s)
		if err != nil {
			return
		}
		if !records.IsKnownUnit(unit) || !strings.HasSuffix(s, unit) {
			t.Fatalf("parseNodeResourceValue(%q) = %d %q", s, v, unit)
		}
		prefix := strings.TrimSuffix(s, unit)
		n, perr := strconv.ParseInt(prefix, 10, 64)
		if perr != nil || n != v || strings.IndexFunc(prefix, isJavaLetter) >= 0 {
			t.Fatalf("parseNodeResourceValue(%q) = %d, %q: the number part is %q", s, v, unit, prefix)
		}
	})
}

func FuzzSplitHadoopList(f *testing.F) {
	for _, s := range []string{"yarn.io/gpu,yarn.io/fpga", " a , b ,", ",a", "a,,b", "a\nb", "", " ", "\t,\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, it := range conf.TrimmedStrings(s) {
			if strings.ContainsAny(it, ",\n") || (it != "" && strings.TrimFunc(it, func(r rune) bool { return strings.ContainsRune(" \t\n\v\f\r", r) }) != it) {
				t.Fatalf("conf.TrimmedStrings(%q) has item %q", s, it)
			}
		}
		for _, it := range hadoopGetStrings(s) {
			if it == "" || strings.Contains(it, ",") {
				t.Fatalf("hadoopGetStrings(%q) has item %q", s, it)
			}
		}
	})
}

// FuzzTranslate feeds arbitrary Flink configurations (legacy or YAML) to Translate: it must never panic,
// and what it returns must hold together.
func FuzzTranslate(f *testing.F) {
	f.Add([]byte(issueExample), false)
	f.Add([]byte("external-resources: 'a;b';c\nexternal-resource.a;b.amount: 1\nexternal-resource.c.amount: -3\n"), false)
	f.Add([]byte("taskmanager.cpu.cores: NaN\ntaskmanager.memory.process.size: 1.5g\n"), false)
	f.Add([]byte("external-resources: [gpu, gpu]\nexternal-resource: {gpu: {amount: 2, yarn: {config-key: yarn.io/gpu}}}\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, yamlFormat bool) {
		var (
			fc  *conf.FlinkConfig
			err error
		)
		if yamlFormat {
			fc, err = conf.ParseFlinkYAML("config.yaml", data)
		} else {
			fc, err = conf.ParseFlinkLegacy("flink-conf.yaml", data)
		}
		if err != nil {
			return
		}
		tr, err := Translate(fc, TranslateOptions{ResourceTypes: DefaultResourceTypes()})
		if tr == nil {
			t.Fatal("nil translation")
		}
		if (err != nil) != (len(Errors(tr.Problems)) > 0) {
			t.Fatalf("error %v but problems %v", err, tr.Problems)
		}
		for _, p := range tr.Problems {
			if p.Code == "" || p.Message == "" || p.Fix == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
		seen := map[string]bool{}
		for _, er := range tr.ExternalResources {
			if er.Amount <= 0 || er.Name == "" || seen[er.Name] || er.Params == nil {
				t.Fatalf("bad external resource %+v", er)
			}
			seen[er.Name] = true
		}
		raw, jerr := json.Marshal(tr.Resource)
		if jerr != nil {
			t.Fatal(jerr)
		}
		var back records.Resources
		if jerr := json.Unmarshal(raw, &back); jerr != nil || back.String() != tr.Resource.String() {
			t.Fatalf("vector %s does not round-trip: %v", raw, jerr)
		}
	})
}

// FuzzLoadResourceTypes feeds arbitrary resource-types and node-resources values to the loaders.
func FuzzLoadResourceTypes(f *testing.F) {
	f.Add("yarn.io/gpu,yarn.io/fpga", "", "COUNTABLE", "0", "8", "4")
	f.Add("a, b,,memory", "Gi", "countable", "abc", "0x10", "5G1")
	f.Add("foo", "k", "", "5", "2", "9223372036854775807M")
	f.Fuzz(func(t *testing.T, list, units, typ, minimum, maximum, node string) {
		hc := &conf.HadoopConfig{}
		src := conf.Source{File: "resource-types.xml", Line: 1}
		hc.Set("yarn.resource-types", list, src)
		for _, name := range conf.TrimmedStrings(list) {
			hc.Set("yarn.resource-types."+name+".units", units, src)
			hc.Set("yarn.resource-types."+name+".type", typ, src)
			hc.Set("yarn.resource-types."+name+".minimum-allocation", minimum, src)
			hc.Set("yarn.resource-types."+name+".maximum-allocation", maximum, src)
			hc.Set("yarn.nodemanager.resource-type."+name, node, src)
		}
		hc.Set("yarn.scheduler.maximum-allocation-mb", maximum, src)
		types, problems := LoadResourceTypes(hc)
		names := types.Names()
		if len(names) < 2 || names[0] != records.MemoryMB || names[1] != records.VCores {
			t.Fatalf("mandatory types missing: %v", names)
		}
		for _, rt := range types.All()[2:] {
			if records.ValidateResourceName(rt.Name) != nil || records.IsReservedName(rt.Name) || !records.IsKnownUnit(rt.Units) || rt.Minimum > rt.Maximum {
				t.Fatalf("invalid type accepted: %+v", rt)
			}
		}
		for _, p := range problems {
			if p.Code == "" || p.Message == "" || p.Fix == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
		nodes, _ := LoadNodeResources(hc, types)
		if len(nodes) < 2 {
			t.Fatalf("node resources %v", nodes)
		}
	})
}
