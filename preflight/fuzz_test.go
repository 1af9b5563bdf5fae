package preflight

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseHadoopVersion: never panics; a parsed version prints back as a prefix-compatible
// version and compares consistently.
func FuzzParseHadoopVersion(f *testing.F) {
	for _, s := range []string{"3.5.0", "3.1.1.3.1.0.0-78", "3.0.0-cdh6.3.2", "2.7", "v3.2.4", "", "3", "999999999.1.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseHadoopVersion(s)
		if err != nil {
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Patch < 0 {
			t.Fatalf("%q: negative part in %v", s, v)
		}
		back, err := ParseHadoopVersion(v.String())
		if err != nil || back != v {
			t.Fatalf("%q: %v does not round-trip: %v %v", s, v, back, err)
		}
		if v.Less(v) {
			t.Fatalf("%v < itself", v)
		}
	})
}

// FuzzScriptArgs: splitting never yields empty or blank-containing words, and the Flink script
// check never panics and gives every finding a message and a fix.
func FuzzScriptArgs(f *testing.F) {
	for _, s := range []string{"--enable-coordination-mode", "--enable-coordination", "--coordination-file", "--coordination-file=/x --a",
		"null", "null x", " \t--enable-coordination-mode\n--coordination-file /tmp/f "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words := SplitScriptArgs(s)
		for _, w := range words {
			if w == "" || strings.ContainsAny(w, " \t\n\r\f") {
				t.Fatalf("%q: bad word %q", s, w)
			}
		}
		if utf8.ValidString(s) && strings.Join(words, "") != strings.Map(func(r rune) rune {
			if strings.ContainsRune(" \t\n\r\f", r) {
				return -1
			}
			return r
		}, s) {
			t.Fatalf("%q: words %q lose text", s, words)
		}
		for _, fnd := range CheckFlinkScriptArgs(words) {
			if fnd.Message == "" || fnd.Fix == "" {
				t.Fatalf("%q: empty finding %+v", s, fnd)
			}
		}
	})
}

// FuzzParseFairAllocations: never panics; queue paths start at root.
func FuzzParseFairAllocations(f *testing.F) {
	for _, s := range []string{
		"<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy></allocations>",
		`<allocations><queue name="a"><queue name="b"><schedulingPolicy>fair</schedulingPolicy></queue></queue></allocations>`,
		`<allocations><pool name="p"><schedulingPolicy>fifo</schedulingPolicy></pool></allocations>`,
		"<configuration/>", "<allocations>", "", "<a><b></a>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseFairAllocations("fuzz.xml", data)
		if err != nil {
			return
		}
		for _, q := range a.Queues {
			if !strings.HasPrefix(q.Path, "root") {
				t.Fatalf("queue path %q", q.Path)
			}
		}
	})
}

// FuzzHadoopInt: never panics; a value read is an int32 and reads back from its decimal form, as
// Hadoop's Configuration.getInt would read it.
func FuzzHadoopInt(f *testing.F) {
	for _, s := range []string{"2", " 0x10 ", "-0X7fffffff", "+3", "abc", "", "2147483648", "-2147483648", "0x", "1_0", "\t5\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := hadoopInt(s)
		if err != nil {
			return
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			t.Fatalf("%q: %d is not an int32", s, v)
		}
		back, err := hadoopInt(strconv.FormatInt(v, 10))
		if err != nil || back != v {
			t.Fatalf("%q: %d does not read back: %d %v", s, v, back, err)
		}
	})
}

// FuzzMIGProfile: a profile is found only in names whose last part starts with mig-, and is the
// lower-cased rest of it.
func FuzzMIGProfile(f *testing.F) {
	for _, s := range []string{"nvidia.com/mig-1g.10gb", "mig-3g.40gb", "nvidia.com/mig-1g.10gb+me", "yarn.io/gpu", "", "/", "mig-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := MIGProfile(s)
		if !ok {
			return
		}
		local := s[strings.LastIndex(s, "/")+1:]
		if !isMIGType(s) || !strings.EqualFold("mig-"+p, local) || !migProfilePattern.MatchString(p) {
			t.Fatalf("%q: profile %q", s, p)
		}
	})
}

// FuzzParseHadoopMount: a mount entry of Flink's YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS reads as
// records.ParseDockerMount reads its plain form, propagation options dropped.
func FuzzParseHadoopMount(f *testing.F) {
	for _, s := range []string{"/a:/b", "/a:/b:ro+rslave", "/a:/b:rshared", "/a:/b:x+y", "a:/b", "::", "/a:/b:ro:rw"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseHadoopMount(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(s, m.Source[:1]) || strings.ContainsAny(m.Source+m.Target, ",:=\n") {
			t.Fatalf("%q: %+v", s, m)
		}
		if mode := s[strings.LastIndex(s, ":")+1:]; strings.HasPrefix(mode, "ro") && strings.Count(s, ":") == 2 && !m.ReadOnly {
			t.Fatalf("%q: read-only mode lost: %+v", s, m)
		}
	})
}
