package discovery_test

import (
	"strings"
	"testing"

	"github.com/yarn-er/yarn-er/discovery"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/ (real-format samples); run a target with
// go test -run '^$' -fuzz '^FuzzParseLedger$' -fuzztime 60s ./discovery/

// lineNumbered fails the run when a parser's error does not name the line at fault (a scanner's
// "token too long" names none, since the line never ended).
func lineNumbered(t *testing.T, err error) {
	t.Helper()
	if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "token too long") {
		t.Fatalf("error without a line number: %v", err)
	}
}

// fuzzList fuzzes a parser of a list of items: every item of an input it accepts must pass
// check; the error of an input it refuses goes to onErr (nil: any error will do).
func fuzzList[T any](f *testing.F, parse func([]byte) ([]T, error), onErr func(*testing.T, error), check func(*testing.T, T)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := parse(data)
		if err != nil {
			if onErr != nil {
				onErr(t, err)
			}
			return
		}
		for _, it := range items {
			check(t, it)
		}
	})
}

func FuzzParseLedger(f *testing.F) {
	f.Add([]byte(discovery.FormatLedgerEntry(entry("GPU-00000000-0000-0000-0000-000000000011", 4242)) + "\n1 4242\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, problems := discovery.ParseLedger(data)
		for _, e := range entries {
			// Every entry read survives a round trip unchanged: nothing is half-parsed.
			again, p := discovery.ParseLedger([]byte(discovery.FormatLedgerEntry(e)))
			if len(p) != 0 || len(again) != 1 || again[0] != e {
				t.Fatalf("entry %+v does not round-trip: %+v %+v", e, again, p)
			}
			if e.Key == "" || strings.ContainsAny(e.Key, " \t\n/") || e.Owner.PID <= 0 {
				t.Fatalf("implausible entry accepted: %+v", e)
			}
		}
		for _, p := range problems {
			if p.Line <= 0 || p.Reason == "" {
				t.Fatalf("problem without line or reason: %+v", p)
			}
			// A damaged line that keeps a device held names it by a whole, well-formed key.
			if p.Key != "" && (!strings.HasPrefix(p.Text, "v1 "+p.Key+" ") && p.Text != "v1 "+p.Key || strings.ContainsAny(p.Key, " /")) {
				t.Fatalf("damaged line %q held key %q", p.Text, p.Key)
			}
		}
	})
}

func FuzzParseNVIDIAInformation(f *testing.F) {
	f.Add([]byte("Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-1\nBus Location: \t 0000:07:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := discovery.ParseNVIDIAInformation(data)
		if err != nil {
			return
		}
		if info.UUID == "" && info.BusLocation == "" {
			t.Fatal("accepted a file naming no GPU")
		}
		if info.BusLocation != "" {
			if bdf, ok := discovery.NormalizePCIBusID(info.BusLocation); !ok || bdf != info.BusLocation {
				t.Fatalf("bus location %q is not normalised", info.BusLocation)
			}
		}
		if info.Minor != nil && *info.Minor < 0 {
			t.Fatalf("negative minor %d", *info.Minor)
		}
	})
}

func FuzzParseNVIDIASMICSV(f *testing.F) {
	f.Add([]byte("0, GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f, 00000000:07:00.0, 40960, NVIDIA A100-SXM4-40GB\n"))
	f.Add([]byte("1, GPU-x, 00000000:0F:00.0, [N/A], NVIDIA A100, with a comma\n"))
	fuzzList(f, discovery.ParseNVIDIASMICSV, lineNumbered, func(t *testing.T, g discovery.NVIDIASMIGPU) {
		if !strings.HasPrefix(g.UUID, "GPU-") || g.Index < 0 {
			t.Fatalf("implausible GPU accepted: %+v", g)
		}
		if _, ok := discovery.NormalizePCIBusID(g.PCIBusID); !ok {
			t.Fatalf("bus id %q not normalised", g.PCIBusID)
		}
	})
}

func FuzzParseKFDProperties(f *testing.F) {
	f.Add([]byte("simd_count 416\nunique_id 13176633465372622097\ndrm_render_minor 128\nlocation_id 768\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := discovery.ParseKFDProperties(data)
		if err != nil {
			lineNumbered(t, err)
			return
		}
		for k := range props {
			if k == "" || strings.ContainsAny(k, " \t\n") {
				t.Fatalf("bad key %q", k)
			}
		}
	})
}

func FuzzParseVisibleDevices(f *testing.F) {
	for _, s := range []string{"", "all", "none", "0,1", "2, 0", "GPU-5c89852c", "MIG-GPU-a/1/0", "0:1", "-1", "1,x,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := discovery.ParseVisibleDevices(s)
		if l.All && (len(l.Entries) > 0 || l.Truncated) {
			t.Fatalf("all with entries: %+v", l)
		}
		seen := map[discovery.VisibleEntry]bool{}
		for _, e := range l.Entries {
			if (e.ID == "") == (e.Index < 0) {
				t.Fatalf("entry is neither an index nor an id, or both: %+v", e)
			}
			if seen[e] {
				t.Fatalf("duplicate entry %+v", e)
			}
			seen[e] = true
		}
		if l.Truncated && !strings.Contains(s, l.Stopped) || !l.Truncated && l.Stopped != "" {
			t.Fatalf("stopped at %q, which is not in %q", l.Stopped, s)
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (java) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000000 100\n"))
	f.Add([]byte("7 (a) b (c) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = discovery.ParseProcStat(data)
	})
}

func FuzzParseNVIDIASMIList(f *testing.F) {
	f.Add([]byte("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5c89852c)\n  MIG 3g.20gb     Device  0: (UUID: MIG-c6d4f1ef)\n"))
	fuzzList(f, discovery.ParseNVIDIASMIList, nil, func(t *testing.T, m discovery.NVIDIASMIMIG) {
		if !strings.HasPrefix(m.UUID, "MIG-") || !strings.HasPrefix(m.ParentUUID, "GPU-") {
			t.Fatalf("implausible MIG device: %+v", m)
		}
	})
}

func FuzzParseAMDSMIList(f *testing.F) {
	f.Add([]byte(`[{"gpu": 0, "bdf": "0000:c4:00.0", "uuid": "00ff740f-0000-1000-8040-b2e1a9c0d3f4", "kfd_id": 42905, "node_id": 2, "partition_id": 0}]`))
	fuzzList(f, discovery.ParseAMDSMIList, nil, func(t *testing.T, g discovery.AMDSMIGPU) {
		if g.GPU < 0 || (g.BDF == "" && g.UUID == "") {
			t.Fatalf("implausible GPU: %+v", g)
		}
	})
}

func FuzzParseAOCLDiagnose(f *testing.F) {
	f.Add([]byte("----- acl0 -----\naclnalla_pcie0Passed   nalla_pcie (aclnalla_pcie0)\n  PCIe dev_id = 2494, bus:slot.func = 02:00.00, Gen3 x8\nDIAGNOSTIC_PASSED\n-----\n"))
	fuzzList(f, discovery.ParseAOCLDiagnose, nil, func(t *testing.T, b discovery.AOCLDevice) {
		if b.Name == "" || strings.ContainsAny(b.Name, "/ ") {
			t.Fatalf("implausible device name %q", b.Name)
		}
	})
}

// FuzzMIGProfileOfName: a MIG name gives a lower-case profile that is the rest of its last part;
// KindOfName agrees.
func FuzzMIGProfileOfName(f *testing.F) {
	for _, s := range []string{"nvidia.com/mig-1g.10gb", "MIG-3g.40gb", "gpu", "", "a/b/mig-x", "mig-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := discovery.MIGProfileOfName(s)
		if (p != "") != (discovery.KindOfName(s) == discovery.KindMIG) {
			t.Fatalf("%q: profile %q but kind %q", s, p, discovery.KindOfName(s))
		}
		if p != "" && (p != strings.ToLower(p) || !strings.HasSuffix(strings.ToLower(strings.TrimSpace(s)), p)) {
			t.Fatalf("%q: profile %q", s, p)
		}
	})
}
